"""tools/trtllm_writers, offline: the committed bytes of each writer were made by this tool's driver from
the pinned TensorRT-LLM sources, and a source file whose bytes differ from the pinned sha256 is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tools.trtllm_writers import __main__ as writers
from tools.trtllm_writers.writer import Writer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "trtllm_writers"
WRITERS = writers.writers()


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_committed_bytes_name_the_pinned_sources_stand_ins_and_driver(name):
    w: Writer = WRITERS[name]
    written = DATA / name
    prov = json.loads((written / "PROVENANCE.json").read_text())
    assert [(s["repository"], s["commit"], s["path"], s["sha256"]) for s in prov["sources"]] == [
        (s.repository, s.commit, s.path, s.sha256) for s in w.sources]
    assert set(prov["stand_ins"]) == set(w.standins)
    assert prov["drive_sha256"] == hashlib.sha256(w.drive.read_bytes()).hexdigest()  # rerun the tool if not
    assert prov.get("helpers_sha256", {}) == {h.name: hashlib.sha256(h.read_bytes()).hexdigest() for h in w.helpers}
    assert sorted(prov["files"]) == sorted(str(p.relative_to(written)) for p in written.rglob("*")
                                           if p.is_file() and p.name != "PROVENANCE.json")
    assert prov["command"] == "python3 -m tools.trtllm_writers --sources SOURCES --out tests/data/trtllm_writers"


def test_only_the_b35ac1b_logs_carry_derived_candidate_lines():
    """#19162's `[Autotuner] Candidate:` code is in no stored source: its lines are derived, labelled so, and only
    in the b35ac1b writer's autotuner+candidates.rank<r>.log; every other log is the release's own output."""
    prov = json.loads((DATA / "b35ac1b64368" / "PROVENANCE.json").read_text())
    assert "DERIVED" in prov["substituted"]["autotuner+candidates.rank<r>.log"]
    for log in DATA.rglob("*.log"):
        derived = "[Autotuner] Candidate:" in log.read_text()
        assert derived == log.name.startswith("autotuner+candidates."), log


def test_the_cache_path_is_the_one_trtllm_bootstrap_derived():
    """The single-file writer's cache path came from TensorRT-LLM's own _bootstrap._setup_unified_cache()
    (TRTLLM_CACHE_DIR -> <root>/autotuner/cache.json, FlashInfer's workspace base <root>/flashinfer), each rank."""
    prov = json.loads((DATA / "5619fce9f304" / "PROVENANCE.json").read_text())
    assert [r["bootstrap"] for r in prov["ranks"]] == [
        {"TLLM_AUTOTUNER_CACHE_PATH": "TRTLLM_CACHE_DIR/autotuner/cache.json",
         "FLASHINFER_WORKSPACE_BASE": "TRTLLM_CACHE_DIR/flashinfer"}] * 2
    assert "tensorrt_llm/_bootstrap.py" in {s["path"] for s in prov["sources"]}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_stand_ins_replace_imports_never_a_source_file(name):
    w = WRITERS[name]
    assert not {s.path for s in w.sources} & set(w.standins)
    assert all(why for _text, why in w.standins.values())  # each says why it stands in


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_source_with_other_bytes_is_refused(tmp_path, name):
    w = WRITERS[name]
    for s in w.sources:
        p = tmp_path / s.commit / s.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("# not the file\n")
    with pytest.raises(SystemExit, match=r"sha256 .* expected .*refused"):
        writers.checked_sources(tmp_path, w)
    with pytest.raises(SystemExit, match="missing; get it with `git show"):
        writers.checked_sources(tmp_path / "absent", w)
