"""The CUTLASS engine on CPU: which reproducer a config maps to, the nvcc line, header discovery,
compiler-error extraction, and the reproducer folder. No nvcc needed (see test_query_nvcc.py and
test_h200_grid_replay.py for compiled and GPU-run behaviour)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tiletune.core.errors import TunerError
from tiletune.core.records import TileConfig
from tiletune.tuner import cutlass_build as cb
from tiletune.tuner import cutlass_engine as ce
from tiletune.tuner import cutlass_toolchain as toolchain
from tiletune.tuner import reproducer


def test_sm90_build_carries_tile_cluster_stages_schedule():
    kb = cb.kernel_build(TileConfig(tile=(128, 256, 64), cluster=(2, 1, 1), stages=8), "sm90", "bf16",
                         schedule="pingpong")
    d = dict(kb.defines)
    assert kb.source == "sm90_gemm.cu" and kb.arch == "sm_90a"
    assert (d["TT_TILE_M"], d["TT_TILE_N"], d["TT_TILE_K"]) == (128, 256, 64)
    assert (d["TT_CLUSTER_M"], d["TT_CLUSTER_N"], d["TT_STAGES"], d["TT_SCHEDULE"], d["TT_DTYPE"]) == (2, 1, 8, 1, 0)
    assert dict(cb.kernel_build(TileConfig(tile=(128, 128, 128)), "sm90", "torch.float8_e4m3fn").defines)["TT_DTYPE"] == 1


def test_sm120_build_and_its_limits():
    kb = cb.kernel_build(TileConfig(tile=(128, 128, 256)), "sm121", "nvfp4", grouped=True, query=True)
    assert kb.source == "blockscaled_gemm.cu" and kb.arch == "sm_120a" and kb.query
    assert dict(kb.defines)["TT_ARCH"] == 120
    assert dict(kb.defines)["TT_GROUPED"] == 1 and dict(kb.defines)["TT_STAGES"] == 0
    with pytest.raises(TunerError, match="no thread-block clusters"):
        cb.kernel_build(TileConfig(tile=(128, 128, 256), cluster=(2, 1, 1)), "sm120", "nvfp4")
    with pytest.raises(TunerError, match="block-scaled NVFP4 or MXFP8"):
        cb.kernel_build(TileConfig(tile=(128, 128, 128)), "sm120", "bf16")
    with pytest.raises(TunerError, match="bf16 or fp8"):
        cb.kernel_build(TileConfig(tile=(128, 128, 256)), "sm90", "nvfp4")
    with pytest.raises(TunerError, match=r"sm90 \(bf16, fp8\), sm100 .* and sm120/sm121"):
        cb.kernel_build(TileConfig(tile=(128, 128, 256)), "sm103", "nvfp4")
    kb = cb.kernel_build(TileConfig(tile=(128, 256, 256), cluster=(2, 1, 1), mma_tile=(256, 256, 256)), "sm100", "nvfp4")
    assert kb.arch == "sm_100a"
    assert {k: v for k, v in kb.defines if k in ("TT_ARCH", "TT_2SM", "TT_CLUSTER_M")} == {"TT_ARCH": 100, "TT_2SM": 1, "TT_CLUSTER_M": 2}
    with pytest.raises(TunerError, match="positive"):
        cb.kernel_build(TileConfig(tile=(128, 0, 64)), "sm90", "bf16")


def _fake_cutlass(root: Path, version=(4, 5, 0)) -> Path:
    inc = root / "include" / "cutlass"
    inc.mkdir(parents=True)
    (inc / "version.h").write_text(
        "#define CUTLASS_MAJOR {}\n#define CUTLASS_MINOR {}\n#define CUTLASS_PATCH {}\n".format(*version))
    (root / "tools" / "util" / "include").mkdir(parents=True)
    return root


def test_env_cutlass_dir_wins_and_names_its_version(tmp_path, monkeypatch):
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(_fake_cutlass(tmp_path / "c", (4, 7, 1))))
    h = toolchain.find_cutlass()
    assert (h.version, h.origin) == ("4.7.1", toolchain.CUTLASS_DIR_ENV)
    assert h.util_include == tmp_path / "c" / "tools" / "util" / "include"


def test_bad_env_cutlass_dir_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(tmp_path))
    with pytest.raises(TunerError, match="no include/cutlass/version.h"):
        toolchain.find_cutlass()


def test_nvcc_command_is_exact(tmp_path, monkeypatch):
    h = toolchain.CutlassHeaders(tmp_path / "inc", tmp_path / "util", "4.5.0", "test")
    kb = cb.kernel_build(TileConfig(tile=(256, 128, 128)), "sm120", "nvfp4", query=True)
    cmd = cb.nvcc_command(kb, h, tmp_path / "q", kdir=tmp_path / "k")
    assert cmd[0] == "nvcc" and "-gencode=arch=compute_120a,code=sm_120a" in cmd
    assert "-DTILETUNE_QUERY_ONLY" in cmd and "-O1" in cmd
    assert {"-DTT_TILE_M=256", "-DTT_TILE_N=128", "-DTT_TILE_K=128", "-DTT_GROUPED=0"} <= set(cmd)
    assert f"-I{tmp_path / 'inc'}" in cmd and f"-I{tmp_path / 'util'}" in cmd
    assert cmd[-3:] == [str(tmp_path / "k" / "blockscaled_gemm.cu"), "-o", str(tmp_path / "q")]


# Real nvcc 13.0 output for the 256x128x256 SM120 NVFP4 query build (CUTLASS 4.5), trimmed.
NVCC_LOG = """\
.cutlass/include/cutlass/gemm/kernel/sm100_static_tile_scheduler.hpp(53): warning #20012-D: __device__ annotation is ignored on a non-virtual function("StaticPersistentTileScheduler100") that is explicitly defaulted on its first declaration
.cutlass/include/cutlass/gemm/collective/sm120_blockscaled_mma_tma.hpp(220): error: static assertion failed with "Specialization requires Stages set to value 2 or more."
    static_assert(Stages >= 2, "Specialization requires Stages set to value 2 or more.");
    ^
1 error detected in the compilation of "kernels/blockscaled_gemm.cu".
"""  # noqa: E501 - verbatim compiler output


def test_first_error_line_skips_warnings():
    line = cb.first_error_line(NVCC_LOG)
    assert line.startswith(".cutlass/include/cutlass/gemm/collective/sm120_blockscaled_mma_tma.hpp(220): error:")
    assert "Stages set to value 2 or more" in line
    assert cb.first_error_line("") == "build failed with no compiler output"


def test_build_without_nvcc_says_so(monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    with pytest.raises(TunerError, match="nvcc not found"):
        cb.build(cb.kernel_build(TileConfig(tile=(128, 128, 64)), "sm90", "bf16"))
    assert "nvcc" in ce.CutlassEngine().unavailable_reason()


def test_reproducer_folder_has_exact_lines(tmp_path, monkeypatch):
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(_fake_cutlass(tmp_path / "cutlass")))
    out = tmp_path / "repro"
    paths = reproducer.write_reproducer(TileConfig(tile=(128, 256, 64), stages=8), "sm90", "bf16", out, problem=(4096, 4096, 4100))
    build = paths["build"].read_text()
    assert 'CUTLASS_DIR=${CUTLASS_DIR:-' in build and '-I"$CUTLASS_DIR/include"' in build
    assert "-DTT_STAGES=8" in build and "-gencode=arch=compute_90a,code=sm_90a" in build
    assert "sm90_gemm.cu -o sm90_gemm" in build
    assert "./sm90_gemm --m=4096 --n=4096 --k=4100" in paths["run"].read_text()
    assert (out / "sm90_gemm.cu").read_bytes() == (toolchain.kernels_dir() / "sm90_gemm.cu").read_bytes()
    assert (out / "tt_common.hpp").is_file() and (out / "tt_dense.hpp").is_file()  # every header the .cu includes
    assert "CUTLASS 4.5.0" in paths["readme"].read_text()
    for p in (paths["build"], paths["run"]):
        assert subprocess.run(["bash", "-n", str(p)]).returncode == 0  # valid shell
        assert p.stat().st_mode & 0o100
