"""The fused-MoE extractor (tools/catalogs/moe.py): the shared C++ scanner and evaluator on small
snippets, and, on a real release wheel from PyPI, its refusal to read code it was not checked
against. (Agreement of the shipped data with a fresh extraction: test_rebuild_from_pypi.py.)"""

from __future__ import annotations

import re

import pytest

from tools.catalogs import moe as X
from tools.catalogs.cpp import ExtractError, drop_fast_build
from tools.catalogs.sources import Source

NEW = "0.7.2.post1"  # a release with the mixed-input enum-tile dispatcher (v0.6.18rc1 and later)


class Patched(Source):
    """A release with some of its files edited: C++ the extractor has not been checked against."""

    def __init__(self, base: Source, edit) -> None:
        self.base, self.edit = base, edit
        self.kind, self.version, self.ref, self.commit = base.kind, base.version, base.ref, base.commit

    def read(self, path: str):
        text = self.base.read(path)
        return self.edit(path, text) if text is not None else None

    def describe(self):
        return self.base.describe()


def test_cexpr_short_circuits_like_cpp():
    env = {"d": "Undefined"}
    # the right side would fail (no shape in "Undefined") if || evaluated it
    assert X.cexpr("d == ClusterShape::Undefined || std::get<0>(enum_to_shape_tuple(d)) % 2 == 0", env) is True
    assert X.cexpr("std::get<0>(enum_to_shape_tuple(d)) % 2 == 0", {"d": "ClusterShape_4x1x1"}) is True
    assert X.cexpr("(sm == 89) ? 3 : int8 ? 3 : 2", {"sm": 120, "int8": False}) == 2
    assert X.cexpr("(sm == 89) ? 3 : int8 ? 3 : 2", {"sm": 89, "int8": False}) == 3
    assert X.cexpr("(config & CutlassGemmConfig::FP4_ONLY) != 0", {"config": X.FLAGS["FP4_ONLY"]}) is True
    with pytest.raises(ExtractError, match="unknown name"):
        X.cexpr("mystery && true", {})


def test_scan_tracks_if_else_and_early_returns():
    body = """
      std::vector<T> v{A::CtaShape1x1x1B};
      if (x) { v.push_back(A::CtaShape2x2x2B); } else { v.push_back(A::CtaShape3x3x3B); }
      if (y) return {};
      for (auto t : ts) { if (x && z) { v.push_back(A::CtaShape4x4x4B); } }
      return v;
    """
    items = X.scan(body, re.compile(r"A::(CtaShape\w+)"))
    run = lambda **env: [t.split("::")[-1] for t in X.run_items(items, env, "t")]  # noqa: E731
    assert run(x=True, y=False, z=True) == ["CtaShape1x1x1B", "CtaShape2x2x2B", "CtaShape4x4x4B"]
    assert run(x=False, y=False, z=True) == ["CtaShape1x1x1B", "CtaShape3x3x3B"]
    assert run(x=True, y=True, z=True) == ["CtaShape1x1x1B", "CtaShape2x2x2B"]  # stops at return {}


def test_scan_refuses_else_if():
    with pytest.raises(ExtractError, match="else if"):
        X.scan("if (a) { f(); } else if (b) { g(); }", re.compile("x"))


def test_drop_fast_build_keeps_release_branch():
    text = "a;\n#ifdef FAST_BUILD\nfast;\n#else\nslow;\n#endif\nb;\n#if X\nkeep;\n#endif\n"
    out = drop_fast_build(text)
    assert "slow;" in out and "fast;" not in out and "keep;" in out


def test_shape_hash_ignores_list_contents_but_not_logic():
    a = "return {CutlassTileConfigSM90::CtaShape128x16x128B, CutlassTileConfigSM90::CtaShape128x32x128B};"
    b = "return {CutlassTileConfigSM90::CtaShape64x16x128B};"
    c = "if (z) return {}; " + a
    assert X.shape_hash(a) == X.shape_hash(b)
    assert X.shape_hash(a) != X.shape_hash(c)


@pytest.mark.pypi
def test_changed_cpp_is_refused_loudly(flashinfer_wheel):
    rel = flashinfer_wheel(NEW)

    def read(path: str, text: str) -> str:
        if path == X.HEUR:  # an extra cluster case nobody has checked
            text = text.replace(
                "if (has_m_mcast && has_n_mcast) {",
                "if (has_m_mcast) { candidate_configs.push_back(candidate); }\n      if (has_m_mcast && has_n_mcast) {",
            )
        return text

    bad = Patched(rel, read)
    with pytest.raises(ExtractError, match=r"get_candidate_configs_sm90\(\) has a structure"):
        X.release_catalogs(bad)


@pytest.mark.pypi
def test_mixed_input_variants_need_the_enum_tile_dispatcher(flashinfer_wheel):
    # a release whose mixed-input dispatcher derives K from the GEMM at run time (as v0.6.7..v0.6.15
    # do) keeps its other lists and records why the W4A8 / W4A16 ones are missing
    rel = flashinfer_wheel(NEW)

    def read(path: str, text: str) -> str:
        if path == X.DISPATCH_MIXED:
            text = text.replace("static_cast<void>(UnusedScalePackFactor);",
                                "constexpr int Ktile = 128 * UnusedScalePackFactor / sizeof(T);")
        return text

    entries, _, ck = X.release_catalogs(Patched(rel, read))
    sm90 = {(e["variant"]["act"], e["variant"]["weight"]) for e in entries if e["arch"] == "sm90"}
    assert ("bf16", "int4") in sm90 and ("fp8", "int4") not in sm90 and ("bf16", "mxfp4") not in sm90
    skipped = {(n["variant"]["act"], n["variant"]["weight"]) for n in ck.skipped if n["arch"] == "sm90"}
    assert {("fp8", "int4"), ("bf16", "mxfp4"), ("fp8", "mxfp4")} <= skipped


@pytest.mark.pypi
def test_weight_only_schedule_choice_it_does_not_know_is_refused(flashinfer_wheel):
    rel = flashinfer_wheel(NEW)

    def read(path: str, text: str) -> str:
        if path == X.HEUR:  # a second schedule per cooperative tile
            text = text.replace("mainloop_schedules.insert(MainloopScheduleType::COOPERATIVE);",
                                "mainloop_schedules.insert(MainloopScheduleType::COOPERATIVE);\n"
                                "        mainloop_schedules.insert(MainloopScheduleType::PINGPONG);")
        return text

    with pytest.raises(ExtractError, match="structure|cooperative branch"):
        X.release_catalogs(Patched(rel, read))


@pytest.mark.pypi
def test_gemm2_id_reading_is_read_from_the_binding(flashinfer_wheel):
    # 0.6.14 reads a GEMM2 id below the GEMM2 length as relative; 0.6.15 reads it as absolute
    *_, old = X.release_catalogs(flashinfer_wheel("0.6.14"))
    *_, new = X.release_catalogs(flashinfer_wheel("0.6.15"))
    assert old.gemm2_relative is True and new.gemm2_relative is False

    def read(path: str, text: str) -> str:  # a third way of reading the id: refused, not guessed
        if path == X.BINDING:
            text = text.replace("best_gemm2_profile = mAllProfiles.at(id2);", "best_gemm2_profile = mAllProfiles.at(id2 % 7);")
        return text

    with pytest.raises(ExtractError, match="setRunnerProfiles.. reads the GEMM2 id in a way"):
        X.release_catalogs(Patched(flashinfer_wheel("0.6.15"), read))
