"""The grouped (ptr-array, MoE-style) NVFP4 reproducer, compiled with nvcc for sm_120a.

Two builds of kernels/blockscaled_gemm.cu with TT_GROUPED=1 and the 128x128x256 tile, one after the
other: the type-only --query build (about 20 s) and the full run build (device code; 73 s on an
idle 2-core machine). Both must report the shared storage and stages that
tests/kernels/data/query_grid.json recorded for the grouped tile. The run binary is then started:
bad group counts are refused with exit status 2 before any CUDA call; on a machine without an
SM120/SM121 GPU it must say, in its one JSON line, that it could not run and why; on an SM12x GPU
(never available where this was written) it must run and match the float64 reference.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tiletune.core.records import TileConfig
from tiletune.tuner import cutlass_build as cb

pytestmark = pytest.mark.nvcc

TILE = (128, 128, 256)
GRID = Path(__file__).parent / "data" / "query_grid.json"


@pytest.fixture(scope="module")
def binaries(headers, tmp_path_factory):
    cache = tmp_path_factory.mktemp("grouped-builds")
    builds = [cb.kernel_build(TileConfig(tile=TILE), "sm120", "nvfp4", grouped=True, query=q) for q in (True, False)]
    query, run = cb.build_many(builds, jobs=1, headers=headers, cache=cache)  # one compile at a time
    for res in (query, run):
        assert res.ok, f"{res.build.label()} did not compile: {res.error}\n{res.log[-2000:]}"
    return {"query": query.binary, "run": run.binary}


def _recorded():
    cases = json.loads(GRID.read_text())["cases"]
    (case,) = [c for c in cases if c["grouped"] and c["arch"] == "sm120" and tuple(c["tile"]) == TILE]
    return case


def _one_json_line(proc: subprocess.CompletedProcess) -> dict:
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one JSON line, got {proc.stdout!r} (stderr {proc.stderr[-500:]!r})"
    return json.loads(lines[0])


def _start(binary: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("which", ["query", "run"])
def test_query_matches_the_recorded_grid(binaries, which):
    want = _recorded()
    proc = _start(binaries[which], "--query")
    got = _one_json_line(proc)
    assert proc.returncode == 0
    assert (got["mode"], got["grouped"], got["tile"]) == ("query", True, list(TILE))
    assert (got["stages"], got["smem_bytes"], got["smem_limit"]) == (want["stages"], want["smem_bytes"], want["smem_limit"])
    assert got["cutlass_version"] == want["cutlass_version"]


def test_run_refuses_a_bad_group_count_before_touching_cuda(binaries):
    proc = _start(binaries["run"], "--groups=0", "--m=128", "--n=128", "--k=256")
    got = _one_json_line(proc)
    assert proc.returncode == 2
    assert got["mode"] == "run" and got["groups"] == 0
    assert "--groups >= 1" in got["error"]
    assert got["cuda_error"] is None and got["can_implement"] is None


def test_run_reports_every_group_or_why_it_could_not(binaries):
    proc = _start(binaries["run"], "--groups=3", "--m=256", "--n=256", "--k=512", "--warmup=1", "--iters=3")
    got = _one_json_line(proc)
    assert got["mode"] == "run" and got["grouped"] is True
    assert got["groups"] == 3 and got["problem"] == {"m": 256, "n": 256, "k": 512}
    if got["device_cc"] in (120, 121):  # an SM12x GPU: the kernel must run and be right
        assert (got["can_implement"], got["initialize"], got["run"]) == ("Success", "Success", "Success"), got["error"]
        assert got["nonfinite"] == 0 and got["rel_error"] <= got["error_bound"]
        assert got["time_ms"] > 0 and len(got["times_ms"]) == 3 and got["tflops"] > 0
        assert proc.returncode == 0 and got["error"] is None
    else:  # no GPU, no driver, or another GPU: stopped before CUTLASS was asked anything
        assert proc.returncode == 1
        assert got["cuda_error"] and got["error"].startswith("no kernel image for this device")
        assert (got["can_implement"], got["initialize"], got["run"]) == (None, None, None)
        assert got["time_ms"] is None and got["rel_error"] is None
