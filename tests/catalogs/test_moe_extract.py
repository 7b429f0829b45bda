"""The fused-MoE generator: its C++ scanner and evaluator on small snippets, its refusal to read
code it was not checked against, and (where the FlashInfer git mirror exists) agreement between
the shipped JSON and a fresh extraction."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from importlib import resources

import pytest

from tiletune.catalogs import extract_moe as X
from tiletune.errors import CatalogError

REPO = os.environ.get("TILETUNE_FLASHINFER_REPO", X.DEFAULT_REPO)
needs_repo = pytest.mark.skipif(not os.path.isdir(REPO), reason=f"no FlashInfer git mirror at {REPO}")


def test_cexpr_short_circuits_like_cpp():
    env = {"d": "Undefined"}
    # the right side would fail (no shape in "Undefined") if || evaluated it
    assert X.cexpr("d == ClusterShape::Undefined || std::get<0>(enum_to_shape_tuple(d)) % 2 == 0", env) is True
    assert X.cexpr("std::get<0>(enum_to_shape_tuple(d)) % 2 == 0", {"d": "ClusterShape_4x1x1"}) is True
    assert X.cexpr("(sm == 89) ? 3 : int8 ? 3 : 2", {"sm": 120, "int8": False}) == 2
    assert X.cexpr("(sm == 89) ? 3 : int8 ? 3 : 2", {"sm": 89, "int8": False}) == 3
    assert X.cexpr("(config & CutlassGemmConfig::FP4_ONLY) != 0", {"config": X.FLAGS["FP4_ONLY"]}) is True
    with pytest.raises(CatalogError, match="unknown name"):
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
    with pytest.raises(CatalogError, match="else if"):
        X.scan("if (a) { f(); } else if (b) { g(); }", re.compile("x"))


def test_drop_fast_build_keeps_release_branch():
    text = "a;\n#ifdef FAST_BUILD\nfast;\n#else\nslow;\n#endif\nb;\n#if X\nkeep;\n#endif\n"
    out = X.drop_fast_build(text)
    assert "slow;" in out and "fast;" not in out and "keep;" in out


def test_shape_hash_ignores_list_contents_but_not_logic():
    a = "return {CutlassTileConfigSM90::CtaShape128x16x128B, CutlassTileConfigSM90::CtaShape128x32x128B};"
    b = "return {CutlassTileConfigSM90::CtaShape64x16x128B};"
    c = "if (z) return {}; " + a
    assert X.shape_hash(a) == X.shape_hash(b)
    assert X.shape_hash(a) != X.shape_hash(c)


def _release(tag: str) -> X.Release:
    rels = {r.ref: r for r in X.git_releases(REPO)}
    return rels[tag]


@needs_repo
def test_changed_cpp_is_refused_loudly():
    rel = _release("v0.6.18rc7")

    def read(path: str) -> str:
        text = rel.read(path)
        if path == X.HEUR:  # an extra cluster case nobody has checked
            text = text.replace(
                "if (has_m_mcast && has_n_mcast) {",
                "if (has_m_mcast) { candidate_configs.push_back(candidate); }\n      if (has_m_mcast && has_n_mcast) {",
            )
        return text

    bad = dataclasses.replace(rel, read=read)
    with pytest.raises(CatalogError, match=r"get_candidate_configs_sm90\(\) has a structure"):
        X.release_catalogs(bad)


@needs_repo
def test_shipped_json_matches_a_fresh_extraction():
    doc = json.loads(resources.files("tiletune.catalogs").joinpath("data/fused-moe.json").read_text())
    for tag, version in (("v0.6.7", "0.6.7"), ("v0.6.18rc7", "0.6.18rc7")):
        entries, lists, _ = X.release_catalogs(_release(tag))
        shipped = doc["releases"][version]
        assert len(entries) == len(shipped["catalogs"])
        for e, s in zip(entries, shipped["catalogs"]):
            assert (e["op"], e["arch"], e["variant"]) == (s["op"], s["arch"], s["variant"])
            fresh = {k: v for k, v in lists[e["list"]].items() if k != "id"}
            assert fresh == doc["lists"][s["list"]], (tag, s["list"])


@needs_repo
def test_mixed_input_variants_need_the_enum_tile_dispatcher():
    # a release whose mixed-input dispatcher derives K from the GEMM at run time (as v0.6.7..v0.6.15
    # do) keeps its other lists and records why the W4A8 / W4A16 ones are missing
    rel = _release("v0.6.18rc7")

    def read(path: str) -> str:
        text = rel.read(path)
        if path == X.DISPATCH_MIXED:
            text = text.replace("static_cast<void>(UnusedScalePackFactor);",
                                "constexpr int Ktile = 128 * UnusedScalePackFactor / sizeof(T);")
        return text

    entries, _, ck = X.release_catalogs(dataclasses.replace(rel, read=read))
    sm90 = {(e["variant"]["act"], e["variant"]["weight"]) for e in entries if e["arch"] == "sm90"}
    assert ("bf16", "int4") in sm90 and ("fp8", "int4") not in sm90 and ("bf16", "mxfp4") not in sm90
    skipped = {(n["variant"]["act"], n["variant"]["weight"]) for n in ck.skipped if n["arch"] == "sm90"}
    assert {("fp8", "int4"), ("bf16", "mxfp4"), ("fp8", "mxfp4")} <= skipped


@needs_repo
def test_weight_only_schedule_choice_it_does_not_know_is_refused():
    rel = _release("v0.6.18rc7")

    def read(path: str) -> str:
        text = rel.read(path)
        if path == X.HEUR:  # a second schedule per cooperative tile
            text = text.replace("mainloop_schedules.insert(MainloopScheduleType::COOPERATIVE);",
                                "mainloop_schedules.insert(MainloopScheduleType::COOPERATIVE);\n"
                                "        mainloop_schedules.insert(MainloopScheduleType::PINGPONG);")
        return text

    with pytest.raises(CatalogError, match="structure|cooperative branch"):
        X.release_catalogs(dataclasses.replace(rel, read=read))
