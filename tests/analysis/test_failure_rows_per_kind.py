"""One failure row per (tactic, diagnosis class) (issue 25, item 4).

The real H200 ledger (cache_samples/ledgers/) holds tactic 0 failing four ways: wrong results
(512,087 NaN/Inf), out of memory, a timeout and a cuBLAS invalid-value rejection. Before, they
were one row "an unsupported value or parameter was passed"; only --all told them apart.
"""

from __future__ import annotations

import json
import shlex

LEDGER = "ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"


def test_each_kind_of_failure_of_one_tactic_is_its_own_row(run, sample):
    data = json.loads(run("inspect", sample(LEDGER), "-f", "json").output)
    zero = [f for f in data["failures"] if f["tactic"] == 0]
    assert sorted(f["diagnosis"] for f in zero) == ["can_implement", "out_of_memory", "timeout", "wrong_results"]
    assert all(f["count"] == 1 for f in zero)
    # a retry later passed tactic 0: every one of its rows says so
    assert all(f["passed_later"] for f in zero)
    # what the ledger counted in all is kept: 9 failed attempts
    assert sum(f["count"] for f in data["failures"]) == 9


def test_the_table_and_markdown_show_the_kinds_apart(run, sample):
    table = run("inspect", sample(LEDGER)).output
    failures = table[table.index("Failures"):]
    # one row each (cells wrap, so single words are looked for)
    for word in ("NaN/Inf", "memory", "timed", "unsupported"):
        assert word in failures, word
    verdict = " ".join(table[table.index("Verdicts"):table.index("Failures")].split())
    assert "wrong results" in verdict and "timed out" in verdict
    md = run("inspect", sample(LEDGER), "-f", "markdown").output
    assert "NaN/Inf" in md and "out of memory" in md.lower()


def test_the_suggested_retry_names_each_tactic_once(run, sample):
    # the command is one line, whatever the path's length or the width (tests/formats/test_suggested_commands.py)
    (line,) = [ln for ln in run("inspect", sample(LEDGER)).output.splitlines() if ln.strip().startswith("tiletune retry ")]
    args = shlex.split(line)
    tactics = args[args.index("--tactic") + 1].split(",")
    assert len(tactics) == len(set(tactics)) and "0" in tactics


# A ledger of CUTLASS grid targets (no tactic: tiles no autotuner numbered), written by `retry`'s
# Ray integration on an H100 (tests/data/ray_gpu_h100: provenance in its README).
GRID_LEDGER = "tests/data/ray_gpu_h100/ledger.jsonl"


def test_grid_targets_without_a_tactic_are_told_apart_by_the_kernel_they_built(run):
    from pathlib import Path

    ledger = Path(__file__).resolve().parents[2] / GRID_LEDGER
    data = json.loads(run("inspect", ledger, "-f", "json").output)
    rows = {tuple(f["config"]["tile"]) + (f["config"]["stages"],): f for f in data["failures"]}
    # three kernels failed, each its own row with the tile the ledger recorded (not "not CUTLASS")
    assert set(rows) == {(256, 256, 128, None), (128, 128, 64, None), (128, 256, 64, 8)}
    assert all(f["tactic"] is None for f in rows.values())
    # the compile error and the 8-stage kernel never passed; the 128x128x64 kernel did (on 4096^3)
    assert not rows[(256, 256, 128, None)]["passed_later"] and not rows[(128, 256, 64, 8)]["passed_later"]
    assert rows[(128, 128, 64, None)]["passed_later"]
    table = run("inspect", ledger).output
    failures = table[table.index("Failures"):]
    assert "256x256x128" in failures and "n/a (not CUTLASS)" not in failures
    # the verdict names the kernels that passed by their tiles, not "tactic None"
    verdict = " ".join(table[table.index("Verdicts"):table.index("Failures")].split())
    assert "128x128x128, 128x128x64 and 128x256x64 passed on retry" in verdict and "tactic None" not in verdict
