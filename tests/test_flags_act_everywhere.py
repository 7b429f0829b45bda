"""Every flag acts in every format; the ledger is checked like an input; -o creates no folders
(issue 25, item 10).

Before: `--m` changed nothing in `-f json` (byte-identical output); a garbage `--ledger` was
accepted (exit 0) while `inspect` of the same file exited 2; `-o /nonexistent-dir/x.txt` created
the directory.
"""

from __future__ import annotations

import json


def test_runtime_m_reaches_the_json(run, sample):
    plain = run("inspect", sample("demo"), "-f", "json").output
    asked = run("inspect", sample("demo"), "--m", "12,37", "-f", "json").output
    assert plain != asked
    rows = json.loads(asked)["at_runtime_m"]
    fp4 = {r["m"]: r for r in rows if r["op"] == "fp4_gemm"}
    assert fp4[12]["bucket"] == 16 and fp4[12]["chosen"][0]["label"] == "128x64x128 swapAB"
    assert fp4[37]["bucket"] == 64 and fp4[37]["runs"].startswith("fallback") and fp4[37]["chosen"] == []
    assert "at_runtime_m" not in json.loads(plain)


def test_a_ledger_that_is_not_one_is_refused_like_an_input(run, sample, tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("hello world\nnot json\n")
    before = garbage.read_bytes()
    assert run("inspect", garbage).exit_code == 2
    res = run("retry", sample("demo"), "--ledger", garbage, "--no-run")
    assert res.exit_code == 2 and "not a tiletune ledger" in res.output
    assert garbage.read_bytes() == before  # nothing appended


def test_a_real_ledger_is_accepted(run, sample, tmp_path):
    ledger = tmp_path / "l.jsonl"
    ledger.write_bytes(sample("ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl").read_bytes())
    assert run("retry", sample("demo"), "--ledger", ledger, "--no-run").exit_code == 0


def test_output_never_creates_a_folder(run, sample, tmp_path):
    missing = tmp_path / "nonexistent-dir"
    for args in (("inspect", sample("demo"), "-o", missing / "x.txt"),
                 ("report", sample("demo"), "-o", missing / "r.md", "--no-plot"),
                 ("retry", sample("demo"), "--no-run", "--ledger", missing / "l.jsonl"),
                 ("catalog", "-o", missing / "c.txt")):
        res = run(*args)
        assert res.exit_code == 2 and "does not exist" in res.output, (args, res.output)
        assert not missing.exists(), args
