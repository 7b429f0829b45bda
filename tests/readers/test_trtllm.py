"""TensorRT-LLM autotuner caches: per-rank files (#7738) and one merged file with rank_N sections (#10336+)."""

from __future__ import annotations

import json
from collections import Counter

from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


def test_per_rank_files(sample):
    out = read_inputs([sample("trtllm/autotuner_cache.rank0.json"), sample("trtllm/autotuner_cache.rank1.json")], CTX)
    assert out.problems == ()
    assert Counter(r.rank for r in out.records) == {"rank0": 12, "rank1": 12}
    r = out.records[0]
    assert r.source_kind == "trtllm" and r.env.arch == "sm100" and r.env.arch_source == "metadata.device_capability"
    assert r.env.flashinfer_version is None and ("lib_version", "1.1.0rc5") in r.env.metadata
    raw = json.loads(sample("trtllm/autotuner_cache.rank0.json").read_text())["cache_data"][r.raw_key]
    assert r.time_ms == raw["min_time"] and r.tactic == raw["tactic"] and dict(r.detail)["runner_id"] == 0
    assert isinstance(r.shapes, tuple) and r.op.startswith("trtllm::")
    assert "runner_hash" in dict(r.detail)


def test_merged_file_with_rank_sections(sample):
    """#10336 layout: metadata + rank_N sections, unique_id() strings in keys, repr() tactics."""
    out = read_inputs([sample("trtllm/autotuner_cache.json")], CTX)
    assert out.problems == ()
    assert Counter(r.rank for r in out.records) == {"rank0": 7, "rank1": 6}
    assert all(isinstance(r.tactic, (int, tuple)) for r in out.records)  # repr() strings parsed back
    fallback = next(r for r in out.records if r.op == "flashinfer::trtllm_fp4_block_scale_moe")
    assert fallback.tactic == (8, 34) and fallback.time_ms is None and dict(fallback.detail)["min_time"] == "inf"
    assert dict(fallback.detail)["runner_hash"] == "('MoERunner', 0)"
    assert {r.env.gpu for r in out.records} == {"NVIDIA GB200"}


def test_shared_section_and_string_tactics(tmp_path):
    key = str(("trtllm::op", "Runner", "('Runner', 1)", ((8, 16),)))
    doc = {"metadata": {"device_capability": [12, 0]},
           "shared": {key: {"runner_id": 0, "tactic": "{'tile': (128, 64)}", "min_time": 0.1}},
           "rank_2": {key: {"runner_id": 0, "tactic": "not a literal", "min_time": 0.2}}}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    out = read_inputs([p], CTX)
    by_rank = {r.rank: r for r in out.records}
    assert dict(by_rank[None].detail)["section"] == "shared"
    assert by_rank["rank2"].tactic == "not a literal"
    assert by_rank[None].env.arch == "sm120"


def test_rank_section_nested_in_cache_data(tmp_path):
    entry = {"runner_id": 1, "tactic": [4, 2], "min_time": 0.5}
    key = str(("trtllm::op", "Runner", 123, ((8, 16),)))
    doc = {"metadata": {"lib_version": "1.2", "device_name": "NVIDIA H100", "device_capability": [9, 0]},
           "cache_data": {key: entry, "rank_3": {"cache_data": {key: entry}}}}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    out = read_inputs([p], CTX)
    assert sorted((r.rank or "") for r in out.records) == ["", "rank3"]
    assert out.records[0].tactic == (4, 2) and out.records[0].env.arch == "sm90"
