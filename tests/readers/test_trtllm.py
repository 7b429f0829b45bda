"""TensorRT-LLM autotuner caches: per-rank files (#7738) as TensorRT-LLM's own code wrote them
(tests/data/trtllm_writers), and one merged file with rank_N sections (#10336+, constructed: see
cache_samples/README.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


WRITTEN = Path(__file__).resolve().parents[1] / "data" / "trtllm_writers" / "b35ac1b64368" / "TRTLLM_CACHE_DIR" / "autotuner"


def test_per_rank_files_as_trtllm_wrote_them():
    """NVIDIA/TensorRT-LLM@b35ac1b's own save_cache, one file per rank (tools/trtllm_writers): every entry with
    its rank, runner, tactic and min_time as the file holds them; the two ranks' winners are not copies."""
    paths = [WRITTEN / "cache.rank0.json", WRITTEN / "cache.rank1.json"]
    out = read_inputs(paths, CTX)
    assert out.problems == ()
    raw = {f"rank{r}": json.loads(p.read_text()) for r, p in enumerate(paths)}
    assert Counter(r.rank for r in out.records) == {k: len(v["cache_data"]) for k, v in raw.items()} == {"rank0": 14, "rank1": 14}
    for r in out.records:
        entry = raw[r.rank]["cache_data"][r.raw_key]
        assert (r.tactic, r.time_ms, dict(r.detail)["runner_id"]) == (entry["tactic"], entry["min_time"], entry["runner_id"])
        assert r.source_kind == "trtllm" and r.env.arch == "sm100" and r.env.arch_source == "metadata.device_capability"
        assert r.env.flashinfer_version is None and ("lib_version", "1.2.0rc2") in r.env.metadata
        assert isinstance(r.shapes, tuple) and r.op.startswith("trtllm::") and "runner_hash" in dict(r.detail)
    by = {(r.rank, r.op, r.runner, r.shapes): r.tactic for r in out.records}
    fp8_m2 = ("trtllm::fp8_rowwise_gemm::gemm", "FP8RowwiseGemmRunner", ((2, 512), (1024, 512)))
    assert (by[("rank0", *fp8_m2)], by[("rank1", *fp8_m2)]) == (1, 3)  # each rank's own winner
    # the second runner of the op won: runner_id 1 names it, and the key names its class
    fp4 = [r for r in out.records if r.op == "trtllm::fp4_gemm::gemm"]
    assert {(r.runner, dict(r.detail)["runner_id"]) for r in fp4} == {("CutlassFP4GemmRunner", 1)}
    assert {s[2][0] for s in (r.shapes for r in fp4)} == {-1}  # the constrained dimension, as the key stores it


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
