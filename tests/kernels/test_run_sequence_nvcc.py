"""The CUTLASS step sequence every reproducer shares (tt::run_gemm in kernels/tt_common.hpp).

The sequence is written once, in the header; these tests hold it there and pin the texts the
engine's diagnosis reads (tiletune/tuner/cutlass_engine.py interpret, classify.py):
- each kernels/*.cu run mode hands its GEMM to tt::run_gemm and asks CUTLASS nothing itself;
- a stand-in GEMM (data/run_sequence_stub.cu: each step's answer chosen on its command line,
  compiled with nvcc against the real header, about 15 s) prints, for a can_implement refusal,
  exactly the error line the real sm90_gemm printed on the H200 (bench/cutlass_sm90_grid/results/run2/raw.jsonl)
  and gets the same diagnosis. Without a GPU the initialize step is not reached (the workspace
  cannot be allocated) and the line says so; on a GPU the probe after a failed initialize must
  print what the real 8-stage kernel printed there.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tiletune.core.records import Problem, TileConfig
from tiletune.tuner import cutlass_engine as ce
from tiletune.tuner.engine import ChildResult, Diagnosis, RetryTarget

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels"
STUB = Path(__file__).parent / "data" / "run_sequence_stub.cu"
RUN2 = ROOT / "tests" / "data" / "cutlass_sm90_grid" / "run2" / "raw.jsonl"


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def test_the_sequence_is_written_once_in_the_header():
    header = _strip_comments((KERNELS / "tt_common.hpp").read_text())
    for step in ("can_implement(args)", "\"first run\"", "time_launches(out, launch"):
        assert header.count(step) == 1, step
    # initialize once before the first run, and again before every timed run (as FlashInfer does)
    assert header.count("gemm.initialize(args, ws)") == 2
    # blockscaled: dense and grouped through run_gemm; the dense bf16/fp8 files through run_dense
    # (which calls run_gemm once, in the header).
    assert (header + _strip_comments((KERNELS / "tt_dense.hpp").read_text())).count("run_gemm(r, gemm, args") == 1
    for cu, call, modes in (("sm90_gemm.cu", "tt::run_dense<", 1), ("sm100_gemm.cu", "tt::run_dense<", 1),
                            ("blockscaled_gemm.cu", "tt::run_gemm(", 2)):
        src = _strip_comments((KERNELS / cu).read_text())
        assert src.count(call) == modes, cu
        for step in ("can_implement(", ".initialize(", "cudaDeviceSynchronize", "time_launches", "probe_kernel"):
            assert step not in src, f"{cu} runs {step} itself instead of through tt::run_gemm"


def _recorded(key: str) -> dict:
    for line in RUN2.read_text().splitlines():
        raw = json.loads(line)
        if raw["key"] == key:
            return raw["result"]
    raise AssertionError(f"{key} not in {RUN2}")


@pytest.fixture(scope="module")
def stub(headers, tmp_path_factory):
    out = tmp_path_factory.mktemp("stub") / "stub"
    cmd = ["nvcc", "-std=c++17", "-O1", "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr",
           f"-I{headers.include}", f"-I{KERNELS}", str(STUB), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _run(stub: Path, *args: str):
    proc = subprocess.run([str(stub), *args], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, (proc.stdout, proc.stderr[-500:])
    return proc, json.loads(lines[0])


def _interpret(proc, line: dict):
    target = RetryTarget(key="stub", op="cutlass_gemm", runner="kernels/sm90_gemm", tactic=None, arch="sm90",
                         flashinfer_version=None, problem=Problem(m=4096, n=4096, k=4100),
                         config=TileConfig(tile=(128, 128, 64)), dtype="bf16", source="test")
    child = ChildResult(argv=("stub",), exit_code=proc.returncode, signal=None, timed_out=False, duration_s=0.0,
                        stdout_tail="", stderr_tail="", result=line)
    return ce.CutlassEngine().interpret(target, child)


@pytest.mark.nvcc
def test_can_implement_refusal_prints_what_the_real_kernel_printed(stub):
    proc, got = _run(stub, "can_implement", "--m=4096", "--n=4096", "--k=4100")
    real = _recorded("bf16-128x128x64-k4100")
    assert proc.returncode == 1
    assert got["error"] == real["error"]
    assert (got["can_implement"], got["initialize"], got["run"]) == (real["can_implement"], None, None)
    assert got["problem"] == {"m": 4096, "n": 4096, "k": 4100}
    assert got["time_ms"] is None and got["rel_error"] is None
    attempt = _interpret(proc, got)
    assert attempt.diagnosis is Diagnosis.CAN_IMPLEMENT
    assert "8200 B are not a multiple of the 16 B TMA needs" in attempt.message


@pytest.mark.nvcc
def test_aligned_problem_gets_no_alignment_note(stub):
    proc, got = _run(stub, "can_implement", "--m=4096", "--n=4096", "--k=4096")
    assert proc.returncode == 1 and got["error"] == "can_implement: Invalid status"


@pytest.mark.nvcc
def test_failed_initialize_is_probed_or_the_workspace_says_why(stub):
    proc, got = _run(stub, "initialize")
    assert proc.returncode == 1 and got["can_implement"] == "Success" and got["run"] is None
    if got["initialize"] is None:  # no usable GPU: the workspace allocation is what failed, and says so
        assert got["cuda_error"] and got["error"].startswith(f"cudaMalloc: {got['cuda_error']} (")
    else:  # an SM90 GPU: the probe must find what it found for the real 8-stage kernel on the H200
        real = _recorded("bf16-128x256x64-8stages")
        assert (got["initialize"], got["cuda_error"], got["error"]) == (real["initialize"], real["cuda_error"], real["error"])
