"""Source groups: inputs of two servers are never merged into one verdict, failure row or tile-map row.

Real text only: a FlashInfer ticket (flashinfer-ai/flashinfer#4049, SM120, 0.6.15.dev20260718,
20 failed fused-MoE gemm1 tactics), the real H200 FlashInfer cache and retry ledger, copied into
the folder layouts each test needs (the copies are byte for byte, in tmp_path).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tiletune.analysis.pipeline import inspect
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[1]
WILD = ROOT / "cache_samples" / "wild"
TICKET = WILD / "flashinfer-4049-sm120-moe-tma-descriptor-illegal-instruction" / "ticket.txt"  # sm120, 0.6.15.dev
OLD_TICKET = WILD / "flashinfer-2077-sm120-moe-tma-ws-grouped-gemm"  # sm120, FlashInfer 0.5.2
H200_CACHE = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
H200_LEDGER = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def _gemm1(result):
    return [f for f in result.failures if f.op == "trtllm::fused_moe::gemm1"]


def test_same_arch_and_release_in_two_folders_stay_apart(tmp_path):
    a = _copy(TICKET, tmp_path / "hostA" / "vllm.log")
    b = _copy(TICKET, tmp_path / "hostB" / "vllm.log")
    r = inspect([a, b], ReadContext())
    rows = _gemm1(r)
    # the same 20 failures on each machine: two rows of 20, never one of 40
    assert sorted((f.group, f.count) for f in rows) == [(str(a.parent), 20), (str(b.parent), 20)]
    assert all(f.arch == "sm120" and f.flashinfer_version == "0.6.15.dev20260718" for f in rows)
    texts = sorted(v.text for v in r.verdicts if v.op == "trtllm::fused_moe::gemm1")
    assert len(texts) == 2 and texts[0].startswith("sm120 trtllm::fused_moe::gemm1 (hostA): ")
    assert texts[1].startswith("sm120 trtllm::fused_moe::gemm1 (hostB): ")
    assert [(g.label, g.basis) for g in r.source_groups] == [("hostA", "folder"), ("hostB", "folder")]


def test_one_folder_with_agreeing_facts_is_one_server(tmp_path):
    # two logs of one folder that both name sm120 and 0.6.15.dev: nothing says they are two servers
    a = _copy(TICKET, tmp_path / "run" / "warmup-1.log")
    _copy(TICKET, tmp_path / "run" / "warmup-2.log")
    r = inspect([a.parent], ReadContext())
    (row,) = _gemm1(r)
    assert row.count == 40 and len(row.sources) == 2 and row.group == str(a.parent)
    assert len(r.source_groups) == 1
    assert all("(run)" not in v.text for v in r.verdicts)  # one group: nothing to name


def test_one_folder_split_where_the_releases_differ(tmp_path):
    new = _copy(TICKET, tmp_path / "tickets" / "new.txt")
    old = _copy(next(p for p in OLD_TICKET.iterdir() if p.name != "artifact.json"), tmp_path / "tickets" / "old.txt")
    r = inspect([new, old], ReadContext())
    assert len(r.source_groups) == 2
    assert {f.flashinfer_version: f.group for f in r.failures} == {"0.6.15.dev20260718": str(new.parent),
                                                                    "0.5.2": str(old)}
    assert "states another FlashInfer version" in r.source_groups[1].basis


def test_json_names_the_group_of_every_verdict_failure_and_not_tried(tmp_path, run):
    a = _copy(H200_CACHE, tmp_path / "hostA" / "cache.json")
    b = _copy(H200_CACHE, tmp_path / "hostB" / "cache.json")
    r = run("inspect", a, b, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [(g["label"], g["sources"]) for g in doc["source_groups"]] == [("hostA", [str(a)]), ("hostB", [str(b)])]
    groups = {str(a.parent), str(b.parent)}
    assert {v["group"] for v in doc["verdicts"]} == groups and len(doc["verdicts"]) == 2
    assert all(v["group"] for v in doc["verdicts"])
    table = run("inspect", a, b).stdout
    # the tile map keeps one row per server, named
    assert "sm90 fp8_gemm 4096x4096 (hostA)" in table and "sm90 fp8_gemm 4096x4096 (hostB)" in table


def test_layout_directories_and_server_cache_roots(tmp_path):
    r = inspect([ROOT / "cache_samples" / "layouts"], ReadContext())
    by_label = {g.label: g for g in r.source_groups}
    # the two ranks of each SGLang cache directory are one group; two releases are two servers
    sg = [g for lbl, g in by_label.items() if lbl.startswith("sglang/")]
    assert len(sg) == 3 and all(len(g.sources) == 2 and g.basis.startswith("layout directory") for g in sg)
    # rank disagreements are reported on the verdict of their own group only
    for v in r.verdicts:
        assert all(d.server == v.group for d in v.rank_disagreements)
    # the demo: a JIT workspace log and an SGLang cache under one cache root (flashinfer/, sglang/) are one run
    demo = inspect([ROOT / "cache_samples" / "demo"], ReadContext())
    assert len(demo.source_groups) == 1 and len(demo.source_groups[0].sources) == 2
    (mx,) = [v for v in demo.verdicts if v.op == "mxfp8_gemm"]
    assert "winners" in mx.text and "failed" in mx.text  # winners from the cache, failures from the log


def test_a_ledger_joins_the_only_server_else_its_folder(tmp_path):
    cache = _copy(H200_CACHE, tmp_path / "server" / "cache.json")
    ledger = _copy(H200_LEDGER, tmp_path / "retries" / "ledger.jsonl")
    r = inspect([cache, ledger], ReadContext())
    assert len(r.source_groups) == 1 and set(r.source_groups[0].sources) == {str(cache), str(ledger)}
    other = _copy(H200_CACHE, tmp_path / "server2" / "cache.json")
    r = inspect([cache, other, ledger], ReadContext())
    assert [g.name for g in r.source_groups] == [str(cache.parent), str(other.parent), str(ledger.parent)]


def test_diff_matches_servers_by_place(tmp_path, run):
    for side in ("old", "new"):
        for host in ("hostA", "hostB"):
            _copy(H200_CACHE, tmp_path / side / host / "cache.json")
    # the same cache on each server of each side: matched hostA-hostA, hostB-hostB, nothing changed
    r = run("diff", tmp_path / "old", tmp_path / "new", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["changes"] == [] and doc["notes"] == []
    # a side whose groups are other places: compared as one warm-up, and the note says so
    _copy(H200_CACHE, tmp_path / "new" / "hostC" / "cache.json")
    doc = json.loads(run("diff", tmp_path / "old", tmp_path / "new", "--format", "json").stdout)
    assert any("source group" in n and "hostC" in n for n in doc["notes"])


def test_a_groups_table_rows_show_its_own_gpus_model(tmp_path):
    # Two servers' caches holding the same key, one on an RTX PRO 6000, one on an RTX 5090 (same
    # arch and release, different GPUs: two groups). Each group's rows must show the time modelled
    # on its own GPU, as inspecting that cache alone does; the rows once looked the model up by
    # (problem, tile) alone and showed the last input's time in both groups.
    from tiletune.formats import markdown, table

    shapes = "((16, 2048), (2048, 4096), (-1, 256), (256, 4096), (), (0,), (-1, 4096), (0,), (0,), (-1,))"
    key = f"('fp4_gemm', 'CutlassFp4GemmRunner', {shapes}, ())"
    paths = []
    for host, gpu in (("hostA", "NVIDIA RTX PRO 6000 Blackwell Server Edition"), ("hostB", "NVIDIA GeForce RTX 5090")):
        p = tmp_path / host / "cache.json"
        p.parent.mkdir()
        p.write_text(json.dumps({"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": gpu},
                                 key: ["CutlassFp4GemmRunner", 11, ["l2_cache_policy", "cold"]]}))
        paths.append(p)

    def rows(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("16 ", "| 16 ", "9-16 ", "| 9-16 "))]

    for fmt in (table.format_inspect, markdown.format_inspect):
        alone = [rows(fmt(inspect([p], ReadContext()))) for p in paths]
        together = rows(fmt(inspect(paths, ReadContext())))
        assert len(alone[0]) == len(alone[1]) == 1 and alone[0] != alone[1]  # the two GPUs model differently
        assert sorted(together) == sorted(alone[0] + alone[1])
