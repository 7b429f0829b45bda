"""The fleet view (`inspect --fleet`, analysis/fleet.py, formats/fleet.py).

Hosts are folders of files the named software wrote, none typed by hand:
- tests/data/engine_loaders/{independent,synced}/vllm: FlashInfer 0.7.4's own autotuner (driven on CPU by
  tools/engine_loaders, a B200 named), two ranks each under vLLM 0.34.0's file names; `independent`'s ranks
  tuned alone and chose different tactics, `synced`'s shared their timings (PROVENANCE.json there);
- tests/data/h200_warmups/{a,b}: real FlashInfer 0.7.2.post1 warm-ups on an H200 (cuBLAS tactics).
A fleet is made of symbolic links to those folders (one per host) or an index file naming them.
Expected figures are recomputed here from the files' raw JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiletune.analysis import fleet as fleet_mod
from tiletune.analysis.fleet import fleet

ROOT = Path(__file__).resolve().parents[2]
LOADERS = ROOT / "tests" / "data" / "engine_loaders"
H200 = ROOT / "tests" / "data" / "h200_warmups"


def _hosts(tmp_path: Path, hosts: dict, name: str = "fleet") -> Path:
    d = tmp_path / name
    d.mkdir()
    for name, target in hosts.items():
        (d / name).symlink_to(target, target_is_directory=True)
    return d


def _raw(folder: Path) -> dict:
    """rank file -> {key: (tactic, time_ms)} from the raw JSON."""
    out = {}
    for f in sorted(folder.glob("*.json")):
        doc = json.loads(f.read_text())
        out[f.name] = {k: (v[1], v[3]["time_ms"] if len(v) > 3 and isinstance(v[3], dict) else None)
                       for k, v in doc.items() if k.startswith("(")}  # not _metadata, _generation
    return out


@pytest.fixture
def small(tmp_path):
    return _hosts(tmp_path, {"b200-1": LOADERS / "independent" / "vllm", "b200-2": LOADERS / "synced" / "vllm",
                             "h200-a": H200 / "a", "h200-b": H200 / "b"})


def test_one_group_per_environment_with_hosts_and_units(small):
    r = fleet([small])
    assert r.hosts == 4 and not r.problems
    groups = {(g.gpu, g.release): g for g in r.groups}
    assert set(groups) == {("NVIDIA B200", "0.7.4"), ("NVIDIA H200", "0.7.2.post1")}
    b200, h200 = groups[("NVIDIA B200", "0.7.4")], groups[("NVIDIA H200", "0.7.2.post1")]
    assert (b200.hosts, b200.units) == (2, 4) and (h200.hosts, h200.units) == (2, 2)
    assert h200.cuda == "13.0"  # the caches' _metadata
    assert len(h200.keys) == len(_raw(H200 / "a")["autotune_config.json"])


def test_disagreements_in_tile_terms_match_the_raw_tactics(small):
    r = fleet([small])
    b200 = next(g for g in r.groups if g.gpu == "NVIDIA B200")
    files = {**{f"b200-1/{n}": v for n, v in _raw(LOADERS / "independent" / "vllm").items()},
             **{f"b200-2/{n}": v for n, v in _raw(LOADERS / "synced" / "vllm").items()}}
    keys = next(iter(files.values())).keys()
    differing = [k for k in keys if len({files[f][k][0] for f in files}) > 1]
    assert b200.disagreements == len(differing) > 0
    for k in b200.keys:
        assert sum(c.units for c in k.choices) == 4
        assert all("x" in c.tile for c in k.choices)  # decoded CUTLASS tiles, not tactic numbers
    # the measured range of the most chosen tile is the raw time_ms of the files that chose it (in us)
    times = sorted(t * 1000 for f in files for key, (tac, t) in files[f].items())
    k0 = b200.keys[0]
    top = k0.choices[0]
    assert top.fastest_us is not None and min(times) <= top.fastest_us <= (top.slowest_us or 0) <= max(times)


def test_index_file_and_bad_lines(tmp_path):
    idx = tmp_path / "hosts.txt"
    idx.write_text(f"# two hosts\n{LOADERS / 'independent' / 'vllm'}\n\n{H200 / 'a'}\n{tmp_path / 'gone'}\n")
    r = fleet([idx])
    assert r.hosts == 2
    (p,) = r.problems
    assert p.loses_data and p.message.startswith(f"{idx}:5: ") and "not a directory" in p.message


def test_minority_tiles_and_slow_units_are_outliers(tmp_path, monkeypatch):
    # ten hosts agree (synced), one host's two ranks chose alone (independent): 12 units per key
    hosts = {f"s{i:02d}": LOADERS / "synced" / "vllm" for i in range(5)}
    hosts["x"] = LOADERS / "independent" / "vllm"
    r = fleet([_hosts(tmp_path, hosts)])
    (g,) = r.groups
    assert g.units == 12
    minority = [o for o in g.outliers if o.kind == "minority tile"]
    assert minority and all(all(u.startswith("x/") for u in o.units) for o in minority)
    # the synced files hold identical times, so no unit is slow on its tile until the ratio is tiny
    assert not [o for o in g.outliers if o.kind == "slow"]
    monkeypatch.setattr(fleet_mod, "SLOW_RATIO", 1.001)
    g2 = fleet([_hosts(tmp_path, hosts, "again")]).groups[0]
    assert any(o.kind == "slow" and "measured" in o.text for o in g2.outliers)


def test_keys_past_the_bound_are_counted(small, monkeypatch):
    monkeypatch.setattr(fleet_mod, "MAX_KEYS", 3)
    r = fleet([small])
    assert sum(len(g.keys) for g in r.groups) == 3 and r.keys_left_out > 0
    assert any("past tiletune's bound" in n for n in r.notes)


def test_every_view_and_the_cli(small, tmp_path):
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    run = CliRunner()
    table = run.invoke(app, ["inspect", "--fleet", str(small)])
    assert table.exit_code == 0, table.output
    assert "DISAGREE" in table.output and "NVIDIA B200" in table.output and "us measured" in table.output
    md = run.invoke(app, ["inspect", "--fleet", str(small), "-f", "markdown"])
    assert md.exit_code == 0 and "### NVIDIA B200" in md.output and "DISAGREE" in md.output
    js = run.invoke(app, ["inspect", "--fleet", str(small), "-f", "json"])
    doc = json.loads(js.output)
    assert doc["schema"] == "tiletune.fleet/1" and doc["summary"]["hosts"] == 4
    assert doc["summary"]["headline"].split(";")[0] in table.output
    bad = run.invoke(app, ["inspect", "--fleet", str(small), "--all"])
    assert bad.exit_code == 2 and "--all" in bad.output
    missing = run.invoke(app, ["inspect", "--fleet", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "no such file or directory" in missing.output


def test_the_driver_comes_from_a_doctor_report_in_the_host_folder(tmp_path):
    # the report is written by tiletune doctor's own writer, with the GPU and driver of the H200 that wrote
    # tests/data/h200_warmups/a (its README: driver 580.159.04)
    from tiletune.analysis.doctor import DoctorReport, Gpu
    from tiletune.formats.doctor import to_json

    host = tmp_path / "fleet" / "node1"
    host.mkdir(parents=True)
    (host / "autotune_config.json").write_bytes((H200 / "a" / "autotune_config.json").read_bytes())
    (host / "doctor.json").write_text(to_json(DoctorReport((), (Gpu(0, "NVIDIA H200", "580.159.04", 143771, "9.0", "sm90"),))))
    r = fleet([tmp_path / "fleet"])
    (g,) = r.groups
    assert g.driver == "580.159.04 (doctor report doctor.json)" and g.units == 1 and not r.problems


def test_a_log_and_the_cache_its_run_saved_are_one_unit_of_winners(tmp_path):
    # FlashInfer 0.7.4's own timed cold start: slow.log and the slow.json it saved, plus hang.log (no cache)
    d = _hosts(tmp_path, {"a": ROOT / "tests" / "data" / "flashinfer_writers" / "0.7.4" / "timed"})
    r = fleet([d])
    b200 = next(g for g in r.groups if g.gpu == "NVIDIA B200")
    units = {u for k in b200.keys for c in k.choices for u in c.named}
    assert units == {"a/slow.json"}  # not slow.log too
    assert {f.tactic.split(" =")[0] for f in b200.failures} == {"tactic 5", "tactic 7"}  # failures from the log
