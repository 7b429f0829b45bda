"""The new kernel families and kernel identities, compiled (type-only --query builds, no GPU).

Numbers are CUTLASS 4.5.0's (FlashInfer 0.7.2.post1's bundle), read from the same builds on the
H200 machine's nvcc (bench/h200_tile_campaign/results/run1/builds.jsonl):
- SM120 MXFP8 256x128x128 with StageCount<2> and KernelScheduleAuto (FlashInfer 0.6.8-0.6.18.post1):
  2 stages, 111,616 B against the 101,376 B SM12x limit;
- SM120 MXFP8 128x32x128 swap-AB: the kernel runs the problem transposed (kernel_problem);
- SM120 NVFP4 128x128x256 swap-AB stream-K: the stream-K tile scheduler, swapped problem;
- SM100 bf16 1SM 128x128x128 swap-AB (sm100_gemm.cu): 3 stages, 231,424 B; SM100 MXFP8 1SM
  128x128x256 (blockscaled_gemm.cu): 3 stages, 220,160 B (results/run2/builds.jsonl).
Five type-only compiles, two at a time: a few minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tiletune.core.records import TileConfig
from tiletune.tuner import cutlass_build as cb

pytestmark = pytest.mark.nvcc

CASES = {
    "mxfp8_256x128_fixed2": (TileConfig(tile=(256, 128, 128), stages=2, mainloop_schedule="KernelScheduleAuto"),
                             "sm120", "mxfp8"),
    "mxfp8_128x32_swap": (TileConfig(tile=(128, 32, 128), swap_ab=True), "sm120", "mxfp8"),
    "nvfp4_swap_streamk": (TileConfig(tile=(128, 128, 256), swap_ab=True, stream_k=True), "sm120", "nvfp4"),
    "sm100_bf16_swap": (TileConfig(tile=(128, 128, 128), swap_ab=True), "sm100", "bf16"),
    "sm100_mxfp8": (TileConfig(tile=(128, 128, 256)), "sm100", "mxfp8"),
}


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("tiletune-cache")  # $TILETUNE_CACHE_DIR layout: <root>/cutlass-builds


@pytest.fixture(scope="module")
def binaries(headers, cache_root):
    builds = {name: cb.kernel_build(cfg, arch, dt, query=True) for name, (cfg, arch, dt) in CASES.items()}
    results = cb.build_many(list(builds.values()), jobs=2, headers=headers, cache=cache_root / "cutlass-builds")
    return dict(zip(builds, results))


def _query(binaries, name, *args):
    res = binaries[name]
    assert res.ok, res.error
    out = subprocess.run([str(res.binary), "--query", *args], capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sm120_mxfp8_256x128_two_fixed_stages_overflow_the_sm12x_limit(binaries):
    q = _query(binaries, "mxfp8_256x128_fixed2")
    assert (q["dtype"], q["stages"], q["smem_bytes"], q["smem_limit"]) == ("mxfp8", 2, 111_616, 101_376)
    assert q["schedule"] == "auto" and q["stage_policy"] == "explicit" and q["cutlass_version"].startswith("4.5")


def test_swap_ab_build_runs_the_transposed_problem(binaries):
    q = _query(binaries, "mxfp8_128x32_swap", "--m=16", "--n=7168", "--k=4096")
    assert q["swap_ab"] is True
    assert q["problem"] == {"m": 16, "n": 7168, "k": 4096}
    assert q["kernel_problem"] == {"m": 7168, "n": 16, "k": 4096}
    plain = _query(binaries, "mxfp8_256x128_fixed2", "--m=16", "--n=7168", "--k=4096")
    assert plain["swap_ab"] is False and plain["kernel_problem"] == plain["problem"]


def test_stream_k_build_has_the_stream_k_scheduler(binaries):
    q = _query(binaries, "nvfp4_swap_streamk", "--m=16", "--n=7168", "--k=4096")
    assert (q["tile_scheduler"], q["swap_ab"]) == ("stream_k", True)
    assert (q["stages"], q["smem_bytes"]) == (2, 83_968)
    assert _query(binaries, "mxfp8_128x32_swap")["tile_scheduler"] == "persistent"


def test_sm100_bf16_and_mxfp8_families_build(binaries):
    bf16 = _query(binaries, "sm100_bf16_swap")
    assert (bf16["kernel"], bf16["dtype"], bf16["stages"], bf16["smem_bytes"]) == ("sm100_gemm", "bf16", 3, 231_424)
    mx = _query(binaries, "sm100_mxfp8")
    assert (mx["kernel"], mx["dtype"], mx["schedule"]) == ("blockscaled_gemm", "mxfp8", "1sm")
    assert (mx["stages"], mx["smem_bytes"], mx["smem_limit"]) == (3, 220_160, 232_448)


def test_model_exact_takes_sm120_mxfp8(binaries, cache_root, monkeypatch):
    """`model --exact --dtype mxfp8 --arch sm120` (refused as 'NVFP4 only' before) compiles the MXFP8
    kernel type FlashInfer's SM120 runner builds (the build above, found in the same cache)."""
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    monkeypatch.setenv(cb.CACHE_DIR_ENV, str(cache_root))
    r = CliRunner().invoke(app, ["model", "--dtype", "mxfp8", "--arch", "sm120", "--m", "16", "--n", "7168", "--k",
                                 "4096", "--tile", "256x128x128", "--stage-policy", "fixed:2", "--exact",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)["smem"]
    assert s["kind"] == "compiled" and (s["stages"], s["bytes"], s["fits"]) == (2, 111_616, False)
    assert s["verdict"] == "overflows_at_initialize" and s["cutlass_version"].startswith("4.5")
