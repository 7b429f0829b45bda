"""FlashInfer managed v2 store: manifest -> environment, entries -> records, bad entries -> notes."""

from __future__ import annotations

import hashlib
import json

from tiletune.readers import read_inputs
from tiletune.readers.flashinfer_v2 import decode_key_fields, is_store
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


def test_store_root_is_walked_and_store_read(sample):
    root = sample("v2store")
    out = read_inputs([root], CTX)
    assert out.problems == ()
    assert [k for _, k in out.sources] == ["flashinfer-v2"]
    store = next((root / "v2").iterdir())
    assert is_store(store)
    # the directory name is sha256 of the canonical manifest, as ManagedAutotuneCache computes it
    manifest = json.loads((store / "manifest.json").read_text())
    assert hashlib.sha256(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16] == store.name
    recs = out.records
    assert len(recs) == len(list((store / "entries").glob("*.json")))
    r = next(r for r in recs if r.op == "mxfp8_gemm")
    assert r.source_kind == "flashinfer-v2" and r.source == str(store)
    assert r.env.flashinfer_version == "0.7.2.post1" and r.env.arch == "sm120"
    assert r.env.version_source == "manifest.flashinfer_version"
    assert ("measure_execution_mode", "cuda_graph") in r.env.metadata
    assert dict(r.detail)["profiling_policy"] == (("cuda_graph_profile_replays", 1), ("l2_cache_policy", "cold"))
    # each entry file is named sha256(key)[:24]
    assert dict(r.detail)["entry"] == hashlib.sha256(r.raw_key.encode()).hexdigest()[:24] + ".json"
    assert "key_fields_mismatch" not in dict(r.detail)
    fp8 = next(r for r in recs if r.op == "fp8_gemm")
    assert fp8.extras == ("torch.float8_e4m3fn", "torch.float8_e4m3fn", "torch.bfloat16")


def test_single_entry_file(sample):
    store = next((sample("v2store") / "v2").iterdir())
    entry = sorted((store / "entries").glob("*.json"))[0]
    out = read_inputs([entry], CTX)
    assert len(out.records) == 1 and out.records[0].env.gpu.startswith("NVIDIA RTX PRO 6000")


def test_key_fields_decoding():
    enc = {"__tuple__": ["fp8_gemm", "R", {"__tuple__": [{"__tuple__": [1, 2]}]}, {"__tuple__": [{"__dtype__": "bfloat16"}, True]}]}
    assert decode_key_fields(enc) == ("fp8_gemm", "R", ((1, 2),), ("torch.bfloat16", True))


def test_corrupt_entries_are_skipped_with_notes(sample):
    out = read_inputs([sample("bad/v2-corrupt")], CTX)
    assert len(out.records) == 3
    msgs = [p.message for p in out.problems]
    assert all(not p.fatal for p in out.problems) and len(msgs) == 2
    assert any("000000000000000000000000.json: invalid JSON" in m for m in msgs)
    assert any("111111111111111111111111.json: key 'garbage'" in m for m in msgs)


def test_missing_manifest_is_a_note(tmp_path, sample):
    import shutil

    store = next((sample("v2store") / "v2").iterdir())
    copy = tmp_path / "v2" / "abcd"
    shutil.copytree(store, copy)
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").write_text("{not json")
    out = read_inputs([copy], CTX)
    assert out.records and all(r.env.flashinfer_version is None for r in out.records)
    assert any("manifest.json: invalid JSON" in p.message and not p.fatal for p in out.problems)
