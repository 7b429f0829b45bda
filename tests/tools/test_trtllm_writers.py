"""tools/trtllm_writers, offline: the committed bytes were made by this tool's driver from the pinned
TensorRT-LLM sources, and a source file whose bytes differ from the pinned sha256 is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tools.trtllm_writers import __main__ as writers

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = ROOT / "tests" / "data" / "trtllm_writers" / writers.WRITER_COMMIT[:12]


def test_committed_bytes_name_the_pinned_sources_stand_ins_and_driver():
    prov = json.loads((WRITTEN / "PROVENANCE.json").read_text())
    assert [(s["commit"], s["path"], s["sha256"]) for s in prov["sources"]] == [
        (s.commit, s.path, s.sha256) for s in writers.SOURCES]
    assert set(prov["stand_ins"]) == set(writers.STANDINS)
    assert prov["drive_sha256"] == hashlib.sha256(writers.DRIVE.read_bytes()).hexdigest()  # rerun the tool if not
    assert sorted(prov["files"]) == sorted(str(p.relative_to(WRITTEN)) for p in WRITTEN.rglob("*")
                                           if p.is_file() and p.name != "PROVENANCE.json")
    assert "DERIVED" in prov["substituted"]["autotuner+candidates.rank<r>.log"]


def test_stand_ins_replace_imports_never_a_source_file():
    assert not {s.path for s in writers.SOURCES} & set(writers.STANDINS)


def test_a_source_with_other_bytes_is_refused(tmp_path):
    for s in writers.SOURCES:
        p = tmp_path / s.commit / s.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("# not the file\n")
    with pytest.raises(SystemExit, match=r"sha256 .* expected .*refused"):
        writers.checked_sources(tmp_path)
    with pytest.raises(SystemExit, match="missing; get it with `git show"):
        writers.checked_sources(tmp_path / "absent")
