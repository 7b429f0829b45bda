"""SGLang and vLLM directory layouts: version/arch/rank from the path, ranks kept apart."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tiletune.readers import read_inputs, sglang, vllm
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


def test_sglang_tree(sample):
    out = read_inputs([sample("layouts/sglang")], CTX)
    assert out.problems == ()
    kinds = Counter(k for _, k in out.sources)
    assert kinds == {"sglang": 4, "flashinfer-v2": 2}
    ranks = Counter((r.source_kind, r.env.flashinfer_version, r.rank) for r in out.records)
    assert ranks[("flashinfer-v1", "0.6.14", "tp0_pp0_dp0")] == ranks[("flashinfer-v1", "0.6.14", "tp1_pp0_dp0")] > 0
    assert ranks[("flashinfer-v1", "0.6.8", "rank0")] == ranks[("flashinfer-v1", "0.6.8", "rank1")] > 0
    assert ranks[("flashinfer-v2", "0.7.2.post1", "tp0_pp0_dp0")] == ranks[("flashinfer-v2", "0.7.2.post1", "tp1_pp0_dp0")] > 0
    # rank<N>.json writers recorded gpu "unknown": the arch comes from the path's "sm120"
    old = [r for r in out.records if r.rank == "rank0"]
    assert {(r.env.arch, r.env.arch_source, r.env.gpu) for r in old} == {("sm120", "path", None)}
    assert all(dict(r.detail)["layout"] == "sglang" for r in old)


def test_sglang_path_hints():
    h = sglang.hints(Path("/c/flashinfer/autotune/0.6.14/sm121/0123456789abcdef/rank_tp3_pp1_dp2.json"))
    assert (h.flashinfer_version, h.arch, h.rank) == ("0.6.14", "sm121", "tp3_pp1_dp2")
    h = sglang.hints(Path("/c/flashinfer/autotune/0.6.14/sm100/0123/runs/rank_tp0_pp0_dp0.20260101_120000.0f1e2d.json"))
    assert h.rank == "tp0_pp0_dp0" and h.arch == "sm100"
    h = sglang.hints(Path("/c/flashinfer/autotune/0.6.14/sm100/0123/rank_tp0_pp0_dp0_gpuGPU-1234-abcd.json"))
    assert h.rank == "tp0_pp0_dp0"
    assert sglang.hints(Path("/c/flashinfer/autotune/0.6.14/sm100/0123/config.json")) is None
    assert sglang.hints(Path("/tmp/rank0.json")) is None


def test_vllm_tree(sample):
    out = read_inputs([sample("layouts/vllm")], CTX)
    assert out.problems == ()
    assert Counter(k for _, k in out.sources) == {"vllm": 3}
    by_rank = Counter(r.rank for r in out.records)
    assert by_rank["dp0_rank0"] == by_rank["dp0_rank1"] > 0 and by_rank[None] > 0
    assert {r.env.flashinfer_version for r in out.records} == {"0.6.11.post2"}
    per_rank = [r for r in out.records if r.rank]
    # gpu "unknown" in _metadata: arch from the workspace-name part "120a"
    assert {(r.env.arch, r.env.arch_source) for r in per_rank} == {("sm120", "path")}


def test_vllm_path_hints():
    h = vllm.hints(Path("/v/flashinfer_autotune_cache/0.6.11.post2/103a/" + "a" * 64 + "/autotune_configs.json"))
    assert (h.flashinfer_version, h.arch, h.rank) == ("0.6.11.post2", "sm103", None)
    h = vllm.hints(Path("/v/flashinfer_autotune_cache/0.6.14/90a_100a/h/autotune_configs_dp1_rank3.json"))
    assert h.arch is None and h.rank == "dp1_rank3"  # two archs compiled: ambiguous
    h = vllm.hints(Path("/override/dir/" + "b" * 64 + "/autotune_configs.json"))  # VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR
    assert h.layout == "vllm" and h.flashinfer_version is None
    assert vllm.hints(Path("/x/autotune_config.json")) is None  # FlashInfer's own name elsewhere: plain v1
    h = vllm.hints(Path("/v/flashinfer_autotune_cache/0.6.18/120a/h/autotune_config.json"))  # mirrored (vllm#57579)
    assert (h.flashinfer_version, h.arch) == ("0.6.18", "sm120")


def test_arbitrary_name_still_read_as_v1(tmp_path, sample):
    p = tmp_path / "autotune_config.json"
    p.write_bytes(sample("v1/sm120-rtxpro6000-0.6.12-fp4-3part.json").read_bytes())
    out = read_inputs([tmp_path], CTX)
    assert out.sources == ((str(p), "flashinfer-v1"),) and out.records
