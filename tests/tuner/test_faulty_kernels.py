"""Real CUDA faults, classified: the H200 recording replayed, the fixture compiled, and run live on a GPU.

bench/faults_h200/results/run1/faults.jsonl holds what each mode of tests/fixtures/faulty_kernels.cu left behind
on an H200 (the CUDA runtime's own words, exit status, timeout). Replaying it through
`classify_exit` pins the classifier to real CUDA text, not to strings a test invented.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tiletune.tuner.classify import classify_exit

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "faults_h200" / "faults.jsonl"
FIXTURE = ROOT / "tests" / "fixtures" / "faulty_kernels.cu"


def _recorded():
    return [json.loads(line) for line in RECORDING.read_text().splitlines() if line.strip()]


def test_recording_covers_every_fault_class_the_h200_produced():
    diagnoses = {r["diagnosis"] for r in _recorded()}
    assert diagnoses == {"passed", "illegal_address", "launch_failure", "timeout", "out_of_memory"}


@pytest.mark.parametrize("row", [r for r in _recorded() if r["diagnosis"] != "passed"], ids=lambda r: r["mode"])
def test_recorded_fault_classifies_as_recorded(row):
    v = classify_exit(text=row["stderr_tail"] + "\n" + row["stdout_tail"], exit_code=row["exit_code"],
                      signal=row["signal"], timed_out=row["timed_out"], timeout_s=8)
    assert v.diagnosis.value == row["expected"] == row["diagnosis"]


@pytest.mark.nvcc
def test_fixture_compiles_for_sm90a(tmp_path):
    out = tmp_path / "faulty"
    subprocess.run(["nvcc", "-O2", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(out), str(FIXTURE)],
                   check=True, capture_output=True, timeout=600)
    assert out.stat().st_size > 0


@pytest.mark.gpu
@pytest.mark.nvcc
def test_live_faults_classify_as_expected(tmp_path):
    import faulty_driver  # the same driver that made the recording (bench/faults_h200/run_faults.py)

    binary = faulty_driver.build("sm_90a", tmp_path)
    for mode in ("ok", "illegal_address", "trap", "out_of_memory"):
        row = faulty_driver.run_mode(binary, mode, timeout_s=30)
        assert row["diagnosis"] == row["expected"], row
