"""Every dense kernel family of the SM120 and SM100 catalogs maps to a reproducer build that honours
what the catalog records (swap-AB, stream-K, stage count, schedule, 2-SM MMA), and a reproducer
folder says what the built kernel is and which problem it runs. CPU only (no nvcc): the compiled
facts are in test_families_nvcc.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiletune import catalogs
from tiletune.core.errors import TunerError
from tiletune.core.records import Problem, TileConfig
from tiletune.tuner import cutlass_build as cb
from tiletune.tuner import cutlass_engine as ce
from tiletune.tuner import cutlass_toolchain as toolchain
from tiletune.tuner import reproducer
from tiletune.tuner.engine import RetryTarget

ROOT = Path(__file__).resolve().parents[2]


def _defines(kb: cb.KernelBuild) -> dict:
    return dict(kb.defines)


def test_swap_ab_and_stream_k_reach_the_build():
    plain = _defines(cb.kernel_build(TileConfig(tile=(128, 128, 256)), "sm120", "nvfp4"))
    swapped = _defines(cb.kernel_build(TileConfig(tile=(128, 128, 256), swap_ab=True, stream_k=True), "sm120", "nvfp4"))
    assert (plain["TT_SWAP_AB"], plain["TT_STREAM_K"]) == (0, 0)
    assert (swapped["TT_SWAP_AB"], swapped["TT_STREAM_K"]) == (1, 1)
    sm90 = _defines(cb.kernel_build(TileConfig(tile=(128, 128, 64), swap_ab=True, stream_k=True), "sm90", "bf16"))
    assert (sm90["TT_SWAP_AB"], sm90["TT_STREAM_K"]) == (1, 1)
    with pytest.raises(TunerError, match="stream-K needs the cooperative"):
        cb.kernel_build(TileConfig(tile=(64, 128, 64), stream_k=True), "sm90", "bf16", schedule="pingpong")


def test_sm120_mxfp8_gets_flashinfers_schedule_and_stage_count():
    kb = cb.kernel_build(TileConfig(tile=(256, 128, 128), stages=2, mainloop_schedule="KernelScheduleAuto"),
                         "sm120", "mxfp8", query=True)
    d = _defines(kb)
    assert kb.source == "blockscaled_gemm.cu" and kb.arch == "sm_120a"
    assert (d["TT_FORMAT"], d["TT_STAGES"], d["TT_SCHEDULE"]) == (1, 2, 2)
    # no schedule recorded: SM120 MXFP8 is built as FlashInfer builds it (KernelScheduleAuto)
    assert _defines(cb.kernel_build(TileConfig(tile=(128, 128, 128)), "sm120", "mxfp8"))["TT_SCHEDULE"] == 2
    assert _defines(cb.kernel_build(TileConfig(tile=(128, 128, 256)), "sm120", "nvfp4"))["TT_SCHEDULE"] == 0


def test_sm100_bf16_and_fp8_get_their_own_reproducer():
    kb = cb.kernel_build(TileConfig(tile=(128, 256, 128), cluster=(2, 1, 1), swap_ab=True, mma_tile=(256, 256, 128)),
                         "sm100", "fp8")
    d = _defines(kb)
    assert kb.source == "sm100_gemm.cu" and kb.arch == "sm_100a"
    assert (d["TT_DTYPE"], d["TT_2SM"], d["TT_CLUSTER_M"], d["TT_SWAP_AB"]) == (1, 1, 2, 1)
    assert _defines(cb.kernel_build(TileConfig(tile=(64, 64, 128), swap_ab=True), "sm100", "bf16"))["TT_DTYPE"] == 0
    with pytest.raises(TunerError, match="no stream-K"):
        cb.kernel_build(TileConfig(tile=(128, 128, 128), stream_k=True), "sm100", "bf16")


def test_sm90_fp8_is_built_with_fast_accumulation_unless_told_otherwise():
    fast = _defines(cb.kernel_build(TileConfig(tile=(128, 256, 128)), "sm90", "fp8"))
    plain = _defines(cb.kernel_build(TileConfig(tile=(128, 256, 128)), "sm90", "fp8", fast_accum=False))
    named = _defines(cb.kernel_build(TileConfig(tile=(128, 256, 128), mainloop_schedule="KernelTmaWarpSpecializedCooperative"),
                                     "sm90", "fp8"))
    assert (fast["TT_FAST_ACCUM"], plain["TT_FAST_ACCUM"], named["TT_FAST_ACCUM"]) == (1, 0, 0)
    assert _defines(cb.kernel_build(TileConfig(tile=(128, 128, 64)), "sm90", "bf16"))["TT_FAST_ACCUM"] == 0
    nosmem = TileConfig(tile=(256, 128, 128), cluster=(2, 2, 1), epilogue_schedule="PtrArrayNoSmemWarpSpecialized")
    assert _defines(cb.kernel_build(nosmem, "sm90", "fp8"))["TT_EPILOGUE"] == 1


OPERANDS = {"fp4_gemm": "nvfp4", "mxfp8_gemm": "mxfp8", "fp8_gemm": "fp8", "bf16_gemm": "bf16"}


@pytest.mark.parametrize("release", ["0.6.11", "0.7.2.post1"])
@pytest.mark.parametrize("arch", ["sm100", "sm120"])
def test_every_dense_catalog_config_has_a_reproducer(release, arch):
    """Each config of each dense CUTLASS list FlashInfer ships for the arch maps to a build."""
    seen = set()
    for key in catalogs.keys():
        rel, a, op, runner = key
        if (rel, a) != (release, arch) or op not in OPERANDS:
            continue
        for cat in catalogs.lookup(rel, a, op, runner):
            for cfg in cat.configs:
                kb = cb.kernel_build(cfg, arch, OPERANDS[op])
                d = _defines(kb)
                assert d.get("TT_SWAP_AB", 0) == int(bool(cfg.swap_ab)), (op, cfg)
                assert d.get("TT_STREAM_K", 0) == int(bool(cfg.stream_k)), (op, cfg)
                assert d["TT_STAGES"] == int(cfg.stages or 0), (op, cfg)
                seen.add(op)
    expected = {"fp4_gemm", "mxfp8_gemm", "fp8_gemm", "bf16_gemm"} if arch == "sm100" else {"fp4_gemm", "mxfp8_gemm"}
    assert seen == expected


def test_an_mxfp8_cache_key_gets_the_mxfp8_reproducer_not_its_output_dtype():
    target = RetryTarget(key="mxfp8_gemm|CutlassMxfp8GemmRunner|6|1x16x7168x4096|bfloat16", op="mxfp8_gemm",
                         runner="CutlassMxfp8GemmRunner", tactic=6, arch="sm120", flashinfer_version="0.6.11",
                         problem=Problem(m=16, n=7168, k=4096), config=TileConfig(tile=(256, 128, 128), stages=2),
                         dtype="bfloat16")
    assert ce.operand_dtype(target) == "mxfp8"
    kb = ce.CutlassEngine().build_for(target)
    assert kb.source == "blockscaled_gemm.cu" and _defines(kb)["TT_FORMAT"] == 1


def test_reproducer_folder_says_what_the_swapped_kernel_runs(tmp_path):
    headers = toolchain.CutlassHeaders(tmp_path / "include", tmp_path / "util", "4.5.0", "test")
    cfg = TileConfig(tile=(256, 128, 128), swap_ab=True, stages=2, mainloop_schedule="KernelScheduleAuto")
    paths = reproducer.write_reproducer(cfg, "sm120", "mxfp8", tmp_path / "r", problem=(16, 7168, 4096), headers=headers)
    build, run, readme = (paths[k].read_text() for k in ("build", "run", "readme"))
    assert "-DTT_SWAP_AB=1" in build and "-DTT_FORMAT=1" in build and "-DTT_STAGES=2" in build
    assert "--m=16 --n=7168 --k=4096" in run  # the problem's M, N, K: the binary swaps them
    assert "its M runs over the problem's N: it runs M=7168 N=16 K=4096" in readme
    assert "tiletune has never run it: compiled only" in readme
    assert "compiled only" in build and "compiled only" in run  # build.sh and run.sh say it too (run.sh on stderr)
    unswapped = reproducer.write_reproducer(TileConfig(tile=(128, 128, 256), stream_k=True), "sm120", "nvfp4",
                                    tmp_path / "u", problem=(16, 7168, 4096), headers=headers)
    text = unswapped["readme"].read_text()
    assert "not swapped" in text and "StreamKScheduler" in text and "-DTT_STREAM_K=1" in unswapped["build"].read_text()
    sm90 = reproducer.write_reproducer(TileConfig(tile=(128, 128, 64)), "sm90", "bf16", tmp_path / "h", headers=headers)
    assert "compiled only" not in sm90["readme"].read_text()


def test_retry_reproducers_of_the_demos_mxfp8_failures_are_mxfp8(tmp_path, monkeypatch):
    """`retry cache_samples/demo --engine cutlass --op mxfp8_gemm --reproducer DIR` on the real demo
    (its keys record the output dtype, 'bfloat16'): every folder builds the MXFP8 kernel. Writing a
    folder compiles nothing; a CUTLASS tree with only its version header stands in for the headers."""
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    inc = tmp_path / "cutlass" / "include" / "cutlass"
    inc.mkdir(parents=True)
    (inc / "version.h").write_text("#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 5\n#define CUTLASS_PATCH 0\n")
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(tmp_path / "cutlass"))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "repro"
    r = CliRunner().invoke(app, ["retry", str(ROOT / "cache_samples" / "demo"), "--engine", "cutlass", "--op",
                                 "mxfp8_gemm", "--no-run", "--reproducer", str(out)])
    assert r.exit_code == 0, r.output
    builds = sorted(out.glob("*/build.sh"))
    assert builds, r.output
    for b in builds:
        text = b.read_text()
        assert "-DTT_FORMAT=1" in text and "blockscaled_gemm.cu" in text, b
        assert "dtype mxfp8" in (b.parent / "README.txt").read_text()
    assert "bfloat16': the" not in r.output  # the old refusal named the output dtype
