"""TensorRT-LLM autotuner caches as TensorRT-LLM's own code wrote them (tools/trtllm_writers,
tests/data/trtllm_writers): per-rank files (#7738, NVIDIA/TensorRT-LLM@b35ac1b) and the one file with
`shared` and `rank_<r>` sections (#10336 on, hyukn/TensorRT-LLM@5619fce) that two ranks merged into
the path TensorRT-LLM's own _bootstrap.py derives from TRTLLM_CACHE_DIR."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


WRITERS = Path(__file__).resolve().parents[1] / "data" / "trtllm_writers"
WRITTEN = WRITERS / "b35ac1b64368" / "TRTLLM_CACHE_DIR" / "autotuner"
SECTIONS_ROOT = WRITERS / "5619fce9f304" / "TRTLLM_CACHE_DIR"  # what TRTLLM_CACHE_DIR held after the run


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


def test_one_file_with_shared_and_rank_sections_as_trtllm_wrote_it(sample):
    """hyukn/TensorRT-LLM@5619fce's own save_cache(path, rank), ranks 0 and 1 merging into the one
    <TRTLLM_CACHE_DIR>/autotuner/cache.json: every entry of every section, with its rank (None for
    `shared`, the BROADCAST op's section), runner, repr()-stored tactic parsed back and min_time."""
    path = SECTIONS_ROOT / "autotuner" / "cache.json"
    assert sample("trtllm/autotuner_cache.json").read_bytes() == path.read_bytes()  # the sample is these bytes
    raw = json.loads(path.read_text())
    assert sorted(raw) == ["metadata", "rank_0", "rank_1", "shared"]
    out = read_inputs([path], CTX)
    assert out.problems == ()
    sections = {None: "shared", "rank0": "rank_0", "rank1": "rank_1"}
    assert Counter(r.rank for r in out.records) == {k: len(raw[v]) for k, v in sections.items()} == {
        None: 5, "rank0": 13, "rank1": 13}
    for r in out.records:
        entry = raw[sections[r.rank]][r.raw_key]
        assert isinstance(entry["tactic"], str) and r.tactic == ast.literal_eval(entry["tactic"])
        assert (r.time_ms, dict(r.detail)["runner_id"]) == (entry["min_time"], entry["runner_id"])
        assert r.env.arch == "sm100" and r.env.gpu == "NVIDIA B200" and ("lib_version", "unknown") in r.env.metadata
    shared = [r for r in out.records if r.rank is None]
    assert {(r.op, dict(r.detail)["section"]) for r in shared} == {("trtllm::broadcast_gemm::gemm", "shared")}
    # an op the writer excluded from the cache (exclude_from_cache, #14458) is in neither section, so not read
    assert not any(r.op == "trtllm::fp8_swap_ab_gemm::gemm" for r in out.records)
    by = {(r.rank, r.op, r.shapes): r.tactic for r in out.records}
    fp8_m2 = ("trtllm::fp8_rowwise_gemm::gemm", ((2, 512), (1024, 512)))
    assert (by[("rank0", *fp8_m2)], by[("rank1", *fp8_m2)]) == (1, 3)  # each rank's own winner, kept apart


def test_the_cache_root_is_read_whole_lock_file_and_all(run):
    """Pointing inspect at TRTLLM_CACHE_DIR (as the run left it: cache.json and the writer's empty
    cache.json.lock sibling) reads the one cache and says nothing of the lock file."""
    res = run("inspect", SECTIONS_ROOT, "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["entries"]) == 31 and doc["problems"] == [] and doc["notes"] == []
    assert [s["path"].rsplit("/", 2)[-2:] for s in doc["sources"]] == [["autotuner", "cache.json"]]
    assert "cache.json.lock" not in res.output


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
