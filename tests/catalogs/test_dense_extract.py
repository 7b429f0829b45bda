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
