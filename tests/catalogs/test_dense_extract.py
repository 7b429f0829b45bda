"""The dense extractor's C++ reading: constructor argument order, the getConfigs interpreter,
failing loudly on code it does not understand. (Agreement of the shipped data with a fresh
extraction from PyPI wheels: test_rebuild_from_pypi.py.)"""

from __future__ import annotations

import pytest

from tools.catalogs import dense as ex
from tools.catalogs.cpp import ExtractError

HEADER = """
enum class CutlassTileConfigSM120 { Undefined, ChooseWithHeuristic, CtaShape128x128x128B, CtaShape128x128x64B };
enum class MainloopScheduleType { AUTO, PINGPONG };
enum class EpilogueScheduleType { AUTO };
enum class ClusterShape { ClusterShape_1x1x1, ClusterShape_2x1x1 };
struct CutlassGemmConfig {
  CutlassGemmConfig() = default;
  // the argument order is read from here, not assumed
  CutlassGemmConfig(CutlassTileConfigSM120 tile_config_sm120, MainloopScheduleType mainloop_schedule,
                    EpilogueScheduleType epilogue_schedule, ClusterShape cluster_shape, bool swap_ab,
                    bool use_stream_k = false)
      : tile_config_sm120(tile_config_sm120), mainloop_schedule(mainloop_schedule),
        epilogue_schedule(epilogue_schedule), cluster_shape(cluster_shape), sm_version(120),
        is_tma_warp_specialized(true), swap_ab(swap_ab), use_stream_k(use_stream_k) {}
};
"""


def run(body: str):
    return ex.Interp(ex.parse_config_header(HEADER), "test").run(body)


def test_constructor_positions_and_defaults():
    h = ex.parse_config_header(HEADER)
    assert h.enums["CutlassTileConfigSM120"]["CtaShape128x128x64B"] == 3
    (cfg,) = run("""std::vector<CutlassGemmConfig> v;
        v.push_back(CutlassGemmConfig(CutlassTileConfigSM120::CtaShape128x128x64B, MainloopScheduleType::AUTO,
                                      EpilogueScheduleType::AUTO, ClusterShape::ClusterShape_1x1x1, true));
        return v;""")
    assert cfg["swap_ab"] is True and cfg["use_stream_k"] is False and cfg["sm_version"] == 120


def test_loops_and_best_first_reorder():
    configs = run("""
      std::vector<CutlassGemmConfig> c;
      std::vector<CutlassTileConfigSM120> tiles = {CutlassTileConfigSM120::CtaShape128x128x128B,
                                                   CutlassTileConfigSM120::CtaShape128x128x64B};
      std::vector<ClusterShape> cl = {ClusterShape::ClusterShape_1x1x1, ClusterShape::ClusterShape_2x1x1};
      for (auto const& t : tiles) { for (auto const& k : cl) {
          CutlassGemmConfig config(t, MainloopScheduleType::AUTO, EpilogueScheduleType::AUTO, k, false);
          c.push_back(config); } }
      std::vector<int64_t> best = {3, 1};
      std::vector<CutlassGemmConfig> out;
      for (auto const& i : best) { if (i >= 0 && i < static_cast<int64_t>(c.size())) { out.push_back(c[i]); } }
      for (int64_t i = 0; i < c.size(); i++) {
        if (std::find(best.begin(), best.end(), i) == best.end()) { out.push_back(c[i]); }
      }
      return out;""")
    got = [(c["tile_config_sm120"].name[8:], c["cluster_shape"].name[13:]) for c in configs]
    assert got == [("128x128x64B", "2x1x1"), ("128x128x128B", "2x1x1"), ("128x128x128B", "1x1x1"),
                   ("128x128x64B", "1x1x1")]


@pytest.mark.parametrize("body, msg", [
    ("std::vector<CutlassGemmConfig> c; while (true) { } return c;", "unsupported statement"),
    ("std::vector<CutlassGemmConfig> c; if (c.size() > 0) { } else { } return c;", "else"),
    ("std::vector<CutlassGemmConfig> c; c.push_back(CutlassGemmConfig(CutlassTileConfigSM120::CtaShape999B)); return c;",
     "unknown enum value"),
    ("std::vector<CutlassGemmConfig> c; c.insert(c.begin(), x); return c;", "unsupported statement"),
])
def test_unknown_code_fails_loudly(body, msg):
    with pytest.raises(ExtractError, match=msg):
        run(body)


def test_dispatch_switch_reads_elements_and_throws():
    text = ex.strip_comments("""
      switch (gemmConfig.tile_config_sm120) {
        case CutlassTileConfigSM120::CtaShape128x128x64B:
          DISPATCH_WITH_SCHEDULER(128, 128, 128);
        case CutlassTileConfigSM120::CtaShape128x128x128B:
          return launch<T, cute::Int<128>, cute::Int<128>, cute::Int<256>>(D, A, B);
        default:
          throw std::runtime_error("[Error] Config is " "invalid");
      }""")
    ((cases, default),) = ex.parse_switch(text, "gemmConfig.tile_config_sm120")
    assert cases["CtaShape128x128x64B"].tile == (128, 128, 128)
    assert cases["CtaShape128x128x128B"].tile == (128, 128, 256)
    assert default.tile is None and default.throws == "[Error] Config is invalid"


def test_supported_capabilities_and_pdl_auto_op_read_from_gemm_base():
    py = '''
@supported_compute_capability([100, 103, 107])
def _cutlass_mm_bf16_requirement(a, b):
    return True


def mm_bf16(a, b, pdl=None):
    runners = []
    if "cutlass" in runner_names:
        runners.append(get_gemm_sm100_module_cutlass_bf16().cutlass_bf16_gemm_runner())
    custom_op = "bf16_gemm"
    if pdl is None:
        custom_op = "bf16_gemm_pdl_auto"
    runner, tactic = tuner.choose_one(
        custom_op,
        runners,
        CONFIG,
        inputs,
    )
'''
    assert ex.supported_capabilities(py, "_cutlass_mm_bf16_requirement") == {100, 103, 107}
    assert ex.supported_capabilities(py, "_cutlass_gemm_fp4_requirement") == set()
    bf16 = next(s for s in ex.RUNNERS if s.runner == "CutlassBf16GemmRunner")
    assert ex.ops_tuned_with(py, bf16) == ["bf16_gemm_pdl_auto"]
    # the op name alone is not enough: the CUTLASS runner must be among the runners tuned under it
    assert ex.ops_tuned_with(py.replace("cutlass_bf16_gemm_runner()", "other_runner()"), bf16) == []
    fp4 = next(s for s in ex.RUNNERS if s.op == "fp4_gemm")
    assert ex.ops_tuned_with(py, fp4) == []


class _Files:
    """A release made of a few files (the extractor reads by repository path)."""

    ref = "test"

    def __init__(self, files):
        self.files = files

    def read(self, path):
        return self.files.get(path)


def test_svdquant_unknown_shapes_are_refused():
    h = ("enum class Nvfp4SvdquantGemmTactic : int { kA = 0, kB = 1 };\n"
         "inline constexpr int kNvfp4SvdquantGemmNumTactics = 2;")
    t = ("using TA = SvdquantGemmConfig<Shape<_128, _256, _128>, cutlass::epilogue::TmaWarpSpecialized1Sm,\n"
         "  cutlass::gemm::KernelTmaWarpSpecialized1SmNvf4Sm100>;\n"
         "inline RuntimeTactic resolve_tactic(int tactic) { switch (static_cast<Nvfp4SvdquantGemmTactic>(tactic)) {\n"
         "  case Nvfp4SvdquantGemmTactic::kA: return {KernelShape::kA, dim3(1, 1, 1), dim3(1, 1, 1)};\n"
         "  default: throw 1; } }")
    c = ("void nvfp4_svdquant_gemm_run(int tactic) { switch (x) {\n"
         "  case KernelShape::kA: return svdquant_detail::run_tactic<svdquant_detail::TA>(1); } }\n"
         "int const tacticId = tactic < 0 ? 0 : static_cast<int>(tactic);")
    G = "include/flashinfer/gemm/"
    files = {G + "nvfp4_svdquant_gemm_cutlass.h": h, G + "nvfp4_svdquant_gemm_template_sm100.h": t,
             "csrc/nvfp4_svdquant_gemm_cutlass_sm100.cu": c,
             "flashinfer/gemm/gemm_svdquant.py": "@supported_compute_capability([100])\n"
                                                 "def _cutlass_nvfp4_svdquant_requirement(*a):\n    return True\n"}
    with pytest.raises(ExtractError, match="resolve_tactic.. has no case for kB"):
        ex.extract_svdquant(_Files(files))
    files[G + "nvfp4_svdquant_gemm_template_sm100.h"] = t.replace(
        "  default:", "  case Nvfp4SvdquantGemmTactic::kB: return {KernelShape::kA, dim3(2, 1, 1), dim3(1, 1, 1)};\n  default:")
    lst, archs = ex.extract_svdquant(_Files(files))
    assert archs == ("sm100",) and [c["cluster"] for c in lst["configs"]] == [[1, 1, 1], [2, 1, 1]]
    assert lst["configs"][0]["tile"] == [128, 256, 128] and lst["fallback"] == 0
    assert ex.extract_svdquant(_Files({})) is None  # before 0.6.16: no SVDQuant GEMM
