"""CutlassEngine.interpret on what real kernels printed on the H200 (bench/cutlass_sm90_grid/).

raw.jsonl holds each child's exit status and JSON line exactly as the H200 run recorded them
(`run_grid.py`, see the account in bench/cutlass_sm90_grid/README.md). Replaying them through
`interpret` must give the diagnosis each config was put in the grid to produce: passes with
times, shared memory over the limit, can_implement, no kernel image (sm_120a binary on SM90) and
a compile error. run3_refactor/ is the same grid re-run after the reproducers' CUTLASS steps moved
into one function (tt::run_gemm): replayed the same way, and compared line by line with run 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from h200_grid_targets import grid  # the grid definition the runs used (bench/cutlass_sm90_grid/run_grid.py runs it)

from tiletune.tuner.cutlass_engine import CutlassEngine
from tiletune.tuner.engine import ChildResult, Diagnosis

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "tests" / "data" / "cutlass_sm90_grid"  # copies of bench/cutlass_sm90_grid/results/*/raw.jsonl


RUNS = ["run2", "run3_refactor"]


def _lines(name):
    path = GRID / name
    if not path.is_file():
        pytest.skip(f"{path} not recorded yet")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _replay(run=""):

    targets = {t.key: t for t in grid()}
    eng = CutlassEngine()
    out = []
    for raw in _lines(f"{run}/raw.jsonl"):
        child = ChildResult(argv=tuple(raw["argv"]), exit_code=raw["exit_code"], signal=raw["signal"],
                            timed_out=raw["timed_out"], duration_s=0.0, stdout_tail="",
                            stderr_tail=raw.get("stderr_tail") or "", result=raw["result"])
        out.append((targets[raw["key"]], eng.interpret(targets[raw["key"]], child)))
    return out


@pytest.mark.parametrize("run", RUNS)
def test_every_config_gets_the_diagnosis_it_was_chosen_for(run):
    replayed = _replay(run)
    assert len(replayed) >= 15
    for target, attempt in replayed:
        expected = target.source.split("expect ", 1)[1].rstrip(")")
        assert attempt.diagnosis.value == expected, (target.key, attempt.message)


@pytest.mark.parametrize("run", RUNS)
def test_passes_carry_times_throughput_and_error(run):
    passed = [a for _, a in _replay(run) if a.diagnosis is Diagnosis.PASSED]
    assert len(passed) >= 10
    for a in passed:
        assert a.time_s and a.time_s > 0 and len(a.times_s) >= 10
        assert a.tflops and 50 < a.tflops < 1000  # a real 4096^3 GEMM on an H200, dense peak ~990 bf16
        assert a.rel_error is not None and a.rel_error < a.error_bound
        assert dict(a.env)["device"].startswith("NVIDIA H200")


@pytest.mark.parametrize("run", RUNS)
def test_failures_say_why_with_numbers(run):
    by_key = {t.key: a for t, a in _replay(run)}
    smem = by_key["bf16-128x256x64-8stages"]
    assert smem.smem_bytes > smem.smem_limit == 232_448
    assert f"{smem.smem_bytes:,} B" in smem.message and "232,448 B" in smem.message
    assert "no kernel image" in by_key["nvfp4-sm120a-128x128x256-on-sm90"].message
    assert "Stages set to value 2 or more" in by_key["bf16-256x256x128-auto"].message
    assert "4100 elements = 8200 B are not a multiple of the 16 B TMA needs" in by_key["bf16-128x128x64-k4100"].message


def test_refactor_run_printed_what_run_2_printed():
    """Every reproducer line of run 3 equals run 2's, field by field, apart from the timings; the same
    exit statuses; medians within 10% of run 2's (both runs: 50 timed runs each on an H200)."""
    run2 = {r["key"]: r for r in _lines("run2/raw.jsonl")}
    run3 = {r["key"]: r for r in _lines("run3_refactor/raw.jsonl")}
    assert run3.keys() == run2.keys()
    measured = {"time_ms", "times_ms", "tflops"}
    for key, r2 in run2.items():
        r3 = run3[key]
        assert r3["exit_code"] == r2["exit_code"], key
        a, b = r2["result"], r3["result"]
        assert {k: v for k, v in a.items() if k not in measured} == {k: v for k, v in b.items() if k not in measured}, key
        if a.get("time_ms"):
            assert 0.9 < b["time_ms"] / a["time_ms"] < 1.1, (key, a["time_ms"], b["time_ms"])
