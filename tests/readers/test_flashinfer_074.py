"""What FlashInfer 0.7.4's own writers wrote (tests/data/flashinfer_writers/0.7.4, made by
tools/flashinfer_writers from the PyPI wheel: its PROVENANCE.json has the command and wheel sha256):
the v1 cache with selection records and `_generation`, the managed v2 store, and the log of the
same runs. Nothing here is typed to match the parser; the newer-writer cases change a copy of the
release's own file programmatically and say how."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tiletune.core.records import Status
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()
V074 = Path(__file__).resolve().parents[1] / "data" / "flashinfer_writers" / "0.7.4"


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """No server cache variables (conftest.no_server_env)."""


def _entries(raw: dict) -> dict:
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def test_the_fixture_is_what_0_7_4_writes():
    prov = json.loads((V074 / "PROVENANCE.json").read_text())
    assert prov["release"] == "0.7.4" and prov["wheel"]["file"] == "flashinfer_python-0.7.4-py3-none-any.whl"
    raw = json.loads((V074 / "cache.json").read_text())
    assert set(raw) >= {"_metadata", "_generation"}
    # 0.7.4's save_configs: [runner, tactic, policy, selection] for every freshly tuned entry
    assert all(len(v) == 4 and set(v[3]) == {"time_ms", "runner_up_ms", "margin", "candidates"}
               for v in _entries(raw).values())


def test_every_0_7_4_entry_is_read_with_its_recorded_times():
    raw = json.loads((V074 / "cache.json").read_text())
    out = read_inputs([V074 / "cache.json"], CTX)
    assert out.problems == ()
    assert len(out.records) == len(_entries(raw))
    for r in out.records:
        sel = raw[r.raw_key][3]
        d = r.detail_dict()
        assert r.status is Status.CHOSEN and r.tactic == raw[r.raw_key][1]
        assert r.time_ms == sel["time_ms"]  # measured, as FlashInfer recorded it
        assert dict(d["selection"]) == sel
        assert "recorded by FlashInfer's autotuner" in d["time_source"]
        assert dict(d["profiling_policy"]) == dict(zip(raw[r.raw_key][2][::2], raw[r.raw_key][2][1::2]))
    assert dict(out.records[0].env.metadata)["_generation"] == raw["_generation"]


def test_inspect_shows_the_recorded_race_in_every_view(run, tmp_path):
    raw = json.loads((V074 / "cache.json").read_text())
    fp4 = [v for k, v in _entries(raw).items() if "fp4_gemm" in k]
    r = run("inspect", str(V074 / "cache.json"))
    assert r.exit_code == 0, r.output
    # winner time (us), the runner-up as FlashInfer's record gives it, its margin: tie_tolerance kept a slower tactic
    margin = f"{fp4[0][3]['margin'] * 100:+.1f}%"
    assert margin.startswith("-") and margin in r.stdout and "~" in r.stdout
    assert f"FlashInfer record: fastest of {fp4[0][3]['candidates'] - 1} other(s)" in r.stdout
    assert f"{fp4[0][3]['time_ms'] * 1000:.1f}" in r.stdout
    assert "Recorded by FlashInfer" in r.stdout and raw["_generation"] in r.stdout
    md = run("inspect", str(V074 / "cache.json"), "--format", "markdown")
    assert md.exit_code == 0 and "## Recorded by FlashInfer" in md.stdout and margin in md.stdout
    rep = run("report", str(V074 / "cache.json"), "-o", str(tmp_path / "r.md"))
    assert rep.exit_code == 0, rep.output
    text = (tmp_path / "r.md").read_text()
    first = fp4[0][3]
    assert (f"{first['time_ms'] * 1000:.1f} vs {first['runner_up_ms'] * 1000:.1f} ({margin} \\~, "
            f"{first['candidates']} timed)") in text
    doc = json.loads(run("inspect", str(V074 / "cache.json"), "--format", "json").stdout)
    line = doc["overview"]["groups"][0]["lines"][0]
    sel = next(v[3] for v in fp4 if v[3]["time_ms"] == line["chosen_time_ms"])
    assert line["runner_up"]["time_ms"] == sel["runner_up_ms"] and line["margin"] == sel["margin"]
    assert line["runner_up"]["candidates_timed"] == sel["candidates"] and line["won_by_noise"] is True
    assert "tie_tolerance" in line["noise_basis"]


def test_the_0_7_4_store_is_read_with_its_measurement_policy(run):
    store = next((V074 / "v2root" / "v2").iterdir())
    manifest = json.loads((store / "manifest.json").read_text())
    entries = [json.loads(p.read_text()) for p in sorted((store / "entries").glob("*.json"))]
    out = read_inputs([store], CTX)
    assert out.problems == () and len(out.records) == len(entries)
    assert dict(out.records[0].env.metadata)["measure_execution_mode"] == manifest["measure_execution_mode"]
    by_key = {e["key"]: e for e in entries}
    for rec in out.records:
        e = by_key[rec.raw_key]
        assert rec.tactic == e["tactic"] and rec.runner == e["runner"]
        assert "key_fields_mismatch" not in rec.detail_dict()  # the structured key agrees with the string
    r = run("inspect", str(store))
    assert r.exit_code == 0, r.output
    assert f"measure_execution_mode={manifest['measure_execution_mode']}" in r.stdout


def _copy(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "cache.json"
    shutil.copyfile(V074 / "cache.json", path)
    return path, json.loads(path.read_text())


def test_a_newer_writer_is_not_bad_input(tmp_path, run):
    # a copy of 0.7.4's own cache with what a later writer might add: a fifth value element, a
    # selection key, a _metadata key and a top-level section (added here by program, said so)
    path, raw = _copy(tmp_path)
    keys = list(_entries(raw))
    raw[keys[0]].append({"future": 1})
    raw[keys[1]][3]["variance_ms"] = 0.0001
    raw["_metadata"]["nccl_version"] = "2.28"
    raw["_future_section"] = {"x": 1}
    path.write_text(json.dumps(raw, indent=2))
    out = read_inputs([path], CTX)
    assert len(out.records) == len(keys)  # nothing dropped
    (note,) = out.problems
    assert not note.loses_data and not note.fatal
    for part in ("value[4]", "selection.variance_ms", "_metadata.nccl_version", "_future_section"):
        assert part in note.message
    by_key = {r.raw_key: r for r in out.records}
    assert dict(by_key[keys[0]].detail_dict()["extras"])["value[4]"] == (("future", 1),)
    assert by_key[keys[1]].time_ms == raw[keys[1]][3]["time_ms"]  # the known part still read
    assert dict(by_key[keys[1]].detail_dict()["extras"])["selection.variance_ms"] == 0.0001
    r = run("inspect", str(path), "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert any(e["detail"].get("extras") for e in doc["entries"])


def test_data_loss_is_still_bad_input(tmp_path):
    path, raw = _copy(tmp_path)
    raw[next(iter(_entries(raw)))] = {"runner": "CutlassFp4GemmRunner"}  # no [runner, tactic, ...] at all
    path.write_text(json.dumps(raw))
    out = read_inputs([path], CTX)
    assert [p.loses_data for p in out.problems] == [True]


def test_a_newer_store_entry_key_is_kept(tmp_path):
    store = tmp_path / "store"
    shutil.copytree(next((V074 / "v2root" / "v2").iterdir()), store)
    first = sorted((store / "entries").glob("*.json"))[0]
    entry = json.loads(first.read_text())
    entry["selection"] = {"time_ms": 0.004}
    first.write_text(json.dumps(entry))
    out = read_inputs([store], CTX)
    (note,) = out.problems
    assert not note.loses_data and "entry.selection" in note.message
    assert any("extras" in r.detail_dict() for r in out.records)
