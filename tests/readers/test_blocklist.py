"""The tactics blocklist reader on the bundled blocklists and on malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiletune.core.records import InputProblem, Status, TuningRecord
from tiletune.readers import blocklist
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]


def read_all(path, ctx=None):
    ctx = ReadContext() if ctx is None else ctx
    items = list(blocklist.read(Path(path), ctx))
    return [i for i in items if isinstance(i, TuningRecord)], [i for i in items if isinstance(i, InputProblem)]


def write(tmp_path, obj, name="bl.json"):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


def test_sm120_blocklist(sample):
    p = sample("blocklists/tactics_NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition.json")
    recs, probs = read_all(p)
    assert probs == []
    assert all(r.status is Status.BLOCKED and r.source_kind == "blocklist" and r.count == 1 for r in recs)
    got = {(r.op, r.runner, r.tactic) for r in recs}
    raw = json.loads(p.read_text())["invalid_tactics"]
    # op split on the LAST "::" (ops contain "::" themselves)
    want = {(k.rsplit("::", 1)[0], k.rsplit("::", 1)[1], t) for k, ts in raw.items() for t in ts}
    assert got == want and ("trtllm::fused_moe::gemm1", "MoERunner", 2) in got
    r = recs[0]
    assert r.env.flashinfer_version == "0.6.17" and r.env.arch == "sm120"
    assert r.env.gpu == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert r.raw_key == "trtllm::fused_moe::gemm1::MoERunner"
    assert r.detail_dict()["generated_at"].startswith("2026-08-03T10:31:07")
    assert dict(r.env.metadata)["cudnn_version"] == "91900"


def test_wildcards_and_compound_tactics(sample):
    recs, probs = read_all(sample("blocklists/tactics_NVIDIA_B200_wildcard.json"))
    assert probs == []
    tg = [r for r in recs if r.op == "flashinfer::trtllm_fp4_block_scale_moe"]
    assert [r.tactic for r in tg] == [(8, 34), (16, 35), (256, 12)]
    assert recs[0].env.arch == "sm100" and recs[0].env.cuda_version is None  # "*" is not a version
    assert recs[0].detail_dict()["metadata_wildcards"] == ("cublas_version", "cuda_version", "cudnn_frontend_version", "cudnn_version")


def test_duplicates_are_counted(tmp_path):
    recs, _ = read_all(write(tmp_path, {"invalid_tactics": {"fp4_gemm::CutlassFp4GemmRunner": [24, 24, 25]}}))
    assert {(r.tactic, r.count) for r in recs} == {(24, 2), (25, 1)}
    assert recs[0].env.flashinfer_version is None  # no _metadata: unknown, not guessed


def test_override_beats_metadata(sample):
    recs, _ = read_all(sample("blocklists/tactics_NVIDIA_B200_wildcard.json"),
                       ReadContext(arch="sm103", flashinfer_version="0.7.0"))
    assert recs[0].env.arch == "sm103" and recs[0].env.flashinfer_version == "0.7.0"
    assert recs[0].env.version_source == "--flashinfer-version"


@pytest.mark.parametrize("content,fragment", [
    ('{"invalid_tactics": {"a::B": [1, 2]', "invalid JSON at line 1"),
    ("[1, 2]", "top level is a JSON list"),
    ('{"_metadata": {}}', '"invalid_tactics" is missing'),
    ('{"invalid_tactics": [1]}', '"invalid_tactics" is a JSON list'),
    (b"{\"a\xff\xfe\": 1}", "not UTF-8"),
    (b"\xff\xfe{", "not UTF-16-LE"),
])
def test_bad_files_are_one_fatal_line(tmp_path, content, fragment):
    p = tmp_path / "bl.json"
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    recs, probs = read_all(p)
    assert recs == [] and len(probs) == 1 and probs[0].fatal
    assert probs[0].message.startswith(f"{p}: ") and fragment in probs[0].message and "\n" not in probs[0].message


def test_bad_entries_are_skipped_with_a_note(tmp_path):
    p = write(tmp_path, {"_metadata": "oops", "invalid_tactics": {
        "noseparator": [1], "a::B": 3, "ok::Runner": [1, {"x": 1}, None, 2]}})
    recs, probs = read_all(p)
    assert {(r.op, r.runner, r.tactic) for r in recs} == {("ok", "Runner", 1), ("ok", "Runner", 2)}
    msgs = [m.message for m in probs]
    assert all(not m.fatal for m in probs) and len(msgs) == 5
    assert any("key 'noseparator'" in m for m in msgs) and any("key 'a::B': expected a list" in m for m in msgs)
    assert any('"_metadata" is not an object' in m for m in msgs)


def test_missing_file(tmp_path):
    recs, probs = read_all(tmp_path / "none.json")
    assert recs == [] and probs[0].fatal and "cannot open blocklist (No such file" in probs[0].message


def test_sniff(sample, tmp_path):
    for name in ("tactics_NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition.json", "tactics_NVIDIA_B200_wildcard.json"):
        p = sample("blocklists/" + name)
        assert blocklist.sniff(p, p.read_bytes()[:4096])
    cache = ROOT.parent / "shared/samples/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
    if cache.exists():
        assert not blocklist.sniff(cache, cache.read_bytes()[:4096])
    log = sample("logs/sm120_0.6.17_warmup_debug.log")
    assert not blocklist.sniff(log, log.read_bytes()[:4096])
    compact = write(tmp_path, {"_metadata": {"gpu": "NVIDIA B200"}, "invalid_tactics": {}}, "c.json")
    assert blocklist.sniff(compact, compact.read_bytes())
    assert list(blocklist.read(compact, ReadContext())) == []  # an empty blocklist is valid and says nothing


def test_file_is_not_modified(sample):
    p = sample("blocklists/tactics_NVIDIA_B200_wildcard.json")
    before = (p.stat().st_mtime_ns, p.read_bytes())
    read_all(p)
    assert (p.stat().st_mtime_ns, p.read_bytes()) == before
