"""catalog's known failures and short view, doctor's versions, variables and CUTLASS, value completion,
FlashInfer's blocklist naming (issue 25, item 14).

Before: `catalog --flashinfer-version 0.6.17 --arch sm120 --op mxfp8_gemm` left tactics 6-9's
known-failure cells empty (they fail at initialize on every SM12x part), `catalog` alone printed
282 lines, doctor showed no variables, no tiletune/Python version and not where CUTLASS headers
are, had no Markdown, and option values did not complete.
"""

from __future__ import annotations

import json

import pytest


def test_catalog_marks_sm120_mxfp8_tactics_6_to_9_by_the_model(run):
    res = run("catalog", "--flashinfer-version", "0.6.17", "--arch", "sm120", "--op", "mxfp8_gemm", "-f", "json")
    (table,) = json.loads(res.output)["tables"]
    failing = {c["index"] for c in table["configs"] if c.get("model_failure")}
    assert failing == {6, 7, 8, 9}
    assert all("111,616 B > 101,376 B (model)" in c["model_failure"] for c in table["configs"] if c["index"] in failing)
    text = run("catalog", "--flashinfer-version", "0.6.17", "--arch", "sm120", "--op", "mxfp8_gemm").output
    assert text.count("(model)") == 4


def test_catalog_default_view_is_short_and_all_gives_every_release(run):
    short = run("catalog").output.splitlines()
    full = run("catalog", "--all").output.splitlines()
    assert len(short) < 40 < len(full)
    assert any(ln.startswith("fp4_gemm") for ln in short) and "--all" in short[0]


def test_doctor_shows_versions_variables_and_cutlass(run, monkeypatch):
    monkeypatch.setenv("FLASHINFER_LOGGING_LEVEL", "debug")
    monkeypatch.setenv("SGLANG_API_KEY", "s3cr3t")
    out = run("doctor").output
    for item in ("tiletune", "Python", "OS", "CUTLASS headers", "FLASHINFER_LOGGING_LEVEL=debug"):
        assert item in out, item
    assert "s3cr3t" not in out and "SGLANG_API_KEY=(set; value hidden" in out
    md = run("doctor", "-f", "markdown").output
    assert md.startswith("## tiletune doctor") and "| item | state | value |" in md and "FLASHINFER_LOGGING_LEVEL=debug" in md
    doc = json.loads(run("doctor", "-f", "json").output)
    assert ["FLASHINFER_LOGGING_LEVEL", "debug"] in doc["variables"]


@pytest.mark.parametrize("args, incomplete, want", [
    (["inspect", "--op"], "fp", {"fp4_gemm", "fp8_gemm"}),
    (["inspect", "--status"], "f", {"failed", "fallback"}),
    (["inspect", "--gpu"], "NVIDIA H2", {"NVIDIA H20", "NVIDIA H200"}),
    (["report", "--arch"], "sm12", {"sm120", "sm121"}),
    (["retry", "--op"], "mxfp", {"mxfp8_gemm"}),
])
def test_option_values_complete(args, incomplete, want):
    import typer.main
    from click.shell_completion import ShellComplete

    from tiletune.cli.typer_app import app

    got = {i.value for i in ShellComplete(typer.main.get_command(app), {}, "tiletune", "_TILETUNE_COMPLETE")
           .get_completions(args, incomplete)}
    assert want <= got and all(v.startswith(incomplete) for v in got)


def test_a_blocklist_folder_gets_flashinfers_name(run, sample, tmp_path):
    out = tmp_path / "blocklists"
    out.mkdir()
    res = run("retry", sample("ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"), "--no-run", "--blocklist", out,
              "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 0, res.output
    assert [p.name for p in out.iterdir()] == ["tactics_NVIDIA_H200.json"]
