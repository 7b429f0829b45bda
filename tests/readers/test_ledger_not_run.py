"""A ledger's engine_error attempts (the engine could not even start the tactic) read back as
status not_run, not failed: inspect's verdicts and failures leave them out and say so apart, the
JSON carries the status (schema enum), and a retry takes them again by default.

Real ledger: bench/retry_h200_x2/results/run1/ledger.jsonl, written on 2x H200 by `tiletune retry`
(3 engine_error lines: the Blackwell-only CUTLASS fp4/mxfp8 runners refused on SM90).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from tiletune.cli.typer_app import app
from tiletune.core.records import Status
from tiletune.decode import decode
from tiletune.readers import ledger as reader
from tiletune.readers.interface import ReadContext
from tiletune.tuner.targets import targets_from_entries

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "tests" / "data" / "retry_h200_x2" / "ledger.jsonl"


def _records(path):
    return [r for r in reader.read(path, ReadContext()) if hasattr(r, "status")]


def test_engine_error_lines_are_not_run_with_their_reason():
    lines = [json.loads(x) for x in LEDGER.read_text().splitlines()]
    recs = _records(LEDGER)
    assert len(recs) == len(lines) == 30
    for line, rec in zip(lines, recs):
        want = Status.PASSED if line["passed"] else Status.NOT_RUN if line["diagnosis"] == "engine_error" else Status.FAILED
        assert rec.status is want
    not_run = [r for r in recs if r.status is Status.NOT_RUN]
    assert sorted((r.op, r.tactic) for r in not_run) == [("fp4_gemm", 0), ("fp4_gemm", 1), ("mxfp8_gemm", 0)]
    assert all("runs only on SM100" in r.error and "H200" in r.error for r in not_run)
    assert sum(r.status is Status.FAILED for r in recs) == 4  # not_instantiated x3, can_implement x1


def test_one_real_engine_error_line_alone(tmp_path):
    (line,) = [x for x in LEDGER.read_text().splitlines() if '"mxfp8_gemm"' in x]
    path = tmp_path / "one.jsonl"
    path.write_text(line + "\n")
    (rec,) = _records(path)
    assert rec.status is Status.NOT_RUN and rec.op == "mxfp8_gemm" and rec.detail_dict()["diagnosis"] == "engine_error"


def test_inspect_does_not_count_not_run_as_failures(tmp_path):
    r = CliRunner().invoke(app, ["inspect", str(LEDGER), "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    schema = json.loads(resources.files("tiletune.schemas").joinpath("inspect.schema.json").read_text())
    jsonschema.validate(out, schema)  # "not_run" is in the status enum
    assert sum(e["status"] == "not_run" for e in out["entries"]) == 3
    assert {f["op"] for f in out["failures"]} == {"bf16_gemm"}  # fp4/mxfp8 never ran: no failure rows
    by_op = {v["op"]: v for v in out["verdicts"]}
    assert by_op["fp4_gemm"]["failed"] == 0 and by_op["mxfp8_gemm"]["failed"] == 0
    assert "tactic 0 and tactic 1 not run by retry (the engine could not start them: " in by_op["fp4_gemm"]["text"]
    assert "failed" not in by_op["fp4_gemm"]["text"]
    assert by_op["bf16_gemm"]["failed"] == 4 and "not run" not in by_op["bf16_gemm"]["text"]

    table = CliRunner().invoke(app, ["inspect", str(LEDGER), "--all"])
    assert table.exit_code == 0 and "3 not_run" in table.output and "not run by retry" in table.output
    md = CliRunner().invoke(app, ["inspect", str(LEDGER), "--format", "markdown", "--all"])
    assert md.exit_code == 0 and "| not_run \\[" in md.output  # with a footnote: why it did not run


def test_retry_takes_not_run_tactics_by_default():
    entries = [decode(r) for r in _records(LEDGER)]
    picked = {(t.op, t.tactic) for t in targets_from_entries(entries)}
    assert {("fp4_gemm", 0), ("fp4_gemm", 1), ("mxfp8_gemm", 0)} <= picked
    assert all(op != "fp8_gemm" for op, _ in picked)  # passed ones stay out

