"""`tiletune diff`: constructed pairs in the exact v1 cache format (release changes, winner moves,
buckets added and removed, failures and recoveries), checked through the CLI and its JSON contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

KEY = "('fp4_gemm', 'CutlassFp4GemmRunner', (({m}, 1024), (1024, 7168), (-1, 128), (128, 7168), (), (0,), (-1, 7168), (0,), (0,), (-1,)))"
META = {"cuda_version": "13.0", "cublas_version": "13.1.0.3", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}


def _cache(path: Path, version: str, winners: dict[int, int], **meta: str) -> Path:
    data: dict = {"_metadata": {"flashinfer_version": version, **META, **meta}}
    for m, tactic in winners.items():
        data[KEY.format(m=m)] = ["CutlassFp4GemmRunner", tactic]
    path.write_text(json.dumps(data))
    return path


def _diff(run, *args):
    res = run("diff", *args, "--format", "json")
    return res.exit_code, json.loads(res.stdout)


def test_same_inputs_exit_0_and_nothing_differs(run, tmp_path):
    a = _cache(tmp_path / "a.json", "0.6.11", {16: 0, 128: 12})
    code, out = _diff(run, a, a)
    assert code == 0
    assert out["schema"] == "tiletune.diff/1"
    assert out["changes"] == [] and out["environment"] == {} and out["unchanged"] == 2


def test_same_tactic_number_across_releases_is_a_different_tile(run, tmp_path):
    # tactic 2 is 128x128x256 in 0.6.10's SM120 fp4 list and 128x32x128 swapAB streamK in 0.6.11's
    old = _cache(tmp_path / "old.json", "0.6.10", {16: 2})
    new = _cache(tmp_path / "new.json", "0.6.11", {16: 2})
    code, out = _diff(run, old, new)
    assert code == 1
    [c] = out["changes"]
    assert c["kind"] == "winner_changed"
    assert c["before"]["tactic"] == c["after"]["tactic"] == 2
    assert c["before"]["config"]["tile"] == [128, 128, 256]
    assert c["after"]["config"]["tile"] == [128, 32, 128] and c["after"]["config"]["swap_ab"] is True
    assert c["problem"]["m"] == 16 and c["problem"]["n"] == 7168
    assert out["environment"]["flashinfer_version"] == {"before": ["0.6.10"], "after": ["0.6.11"]}


def test_different_tactic_numbers_for_the_same_config_are_unchanged(run, tmp_path):
    # 0.6.10 tactic 0 and 0.6.11 tactic 17 are both 128x128x128, no swap, no stream-K
    old = _cache(tmp_path / "old.json", "0.6.10", {16: 0})
    new = _cache(tmp_path / "new.json", "0.6.11", {16: 17})
    code, out = _diff(run, old, new)
    assert out["changes"] == [], out["changes"]
    assert out["unchanged"] == 1
    assert code == 0  # environment differences alone keep 0
    assert "flashinfer_version" in out["environment"]


def test_buckets_added_removed_and_winner_moves_in_one_release(run, tmp_path):
    old = _cache(tmp_path / "old.json", "0.6.11", {16: 8, 128: 12, 1024: 17})
    new = _cache(tmp_path / "new.json", "0.6.11", {16: 9, 128: 12, 2048: 17}, cuda_version="13.1")
    code, out = _diff(run, old, new)
    assert code == 1
    kinds = sorted((c["kind"], (c["problem"] or {}).get("m")) for c in out["changes"])
    assert kinds == [("added", 2048), ("removed", 1024), ("winner_changed", 16)]
    assert out["environment"] == {"cuda_version": {"before": ["13.0"], "after": ["13.1"]}}
    assert out["unchanged"] == 1


def test_undecodable_winners_across_releases_are_undetermined_not_changes(run, tmp_path):
    # a release no catalog covers: the tactic numbers cannot be compared
    old = _cache(tmp_path / "old.json", "0.6.11", {16: 8})
    new = _cache(tmp_path / "new.json", "9.9.9", {16: 9})
    code, out = _diff(run, old, new)
    assert out["changes"] == []
    [u] = out["undetermined"]
    assert "cannot be compared" in u["reason"]
    assert code == 0


def _ledger_line(tactic: int, diagnosis: str, version: str = "0.7.2.post1") -> str:
    return json.dumps({
        "schema": "tiletune.ledger/1", "key": f"fp8_gemm|CublasFp8GemmRunner|{tactic}|1x128x4096x4096|bfloat16",
        "engine": "flashinfer", "op": "fp8_gemm", "runner": "CublasFp8GemmRunner", "tactic": tactic, "arch": "sm90",
        "flashinfer_version": version, "dtype": "bfloat16", "source": "command line",
        "problem": {"m": 128, "n": 4096, "k": 4096, "batch": 1}, "config": None, "diagnosis": diagnosis,
        "passed": diagnosis == "passed", "message": "constructed for the diff test",
        "time_s": 3.8e-05 if diagnosis == "passed" else None, "env": {"gpu": "NVIDIA H200", "driver": "580.1"},
    })


def test_newly_failing_and_recovered_from_ledgers(run, tmp_path):
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    old.write_text(_ledger_line(3, "passed") + "\n" + _ledger_line(5, "can_implement") + "\n")
    new.write_text(_ledger_line(3, "can_implement") + "\n" + _ledger_line(5, "passed") + "\n")
    code, out = _diff(run, old, new)
    assert code == 1
    kinds = sorted((c["kind"], c["after"]["tactic"] if c["after"] else None) for c in out["changes"])
    assert kinds == [("newly_failing", 3), ("recovered", 5)]


def test_a_failure_absent_from_new_is_not_called_recovered(run, tmp_path):
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    old.write_text(_ledger_line(5, "can_implement") + "\n")
    new.write_text(_ledger_line(3, "passed") + "\n")
    _, out = _diff(run, old, new)
    assert [c["kind"] for c in out["changes"]] == []


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_formats_name_both_tiles(run, tmp_path, fmt):
    old = _cache(tmp_path / "old.json", "0.6.10", {16: 2})
    new = _cache(tmp_path / "new.json", "0.6.11", {16: 2})
    res = run("diff", old, new, "--format", fmt)
    assert res.exit_code == 1
    assert "128x128x256" in res.stdout and "128x32x128 swapAB streamK" in res.stdout
    assert "winner changed" in res.stdout


def test_unusable_input_exits_2(run, tmp_path):
    good = _cache(tmp_path / "a.json", "0.6.11", {16: 0})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = run("diff", good, bad)
    assert res.exit_code == 2


def test_json_matches_the_shipped_schema(run, tmp_path):
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("tiletune.schemas").joinpath("diff.schema.json").read_text())
    old = _cache(tmp_path / "old.json", "0.6.10", {16: 2, 128: 0})
    new = _cache(tmp_path / "new.json", "0.6.11", {16: 2, 256: 17})
    _, out = _diff(run, old, new)
    jsonschema.validate(out, schema)
    assert {c["kind"] for c in out["changes"]} == {"winner_changed", "added", "removed"}


# --- real warm-ups on one H200 (tests/data/h200_warmups/README.md) ---------------------------------

REAL = Path(__file__).parent / "data" / "h200_warmups"
RANKS = REAL / "ranks" / "flashinfer" / "autotune" / "0.7.2.post1" / "sm90" / "5f3a9c1e07b2d4a8"


def test_real_warmups_with_the_same_settings_do_not_differ(run):
    code, out = _diff(run, REAL / "a", REAL / "b")
    assert code == 0 and out["changes"] == [] and out["unchanged"] == 27
    assert out["environment"] == {}


def test_real_warmups_with_more_profile_replays_keep_their_winners(run):
    code, out = _diff(run, REAL / "a", REAL / "c")
    assert code == 0 and out["unchanged"] == 27


def test_real_rank_files_that_disagree_are_winner_changes_in_bucket_order(run):
    code, out = _diff(run, RANKS / "rank_tp0_pp0_dp0.json", RANKS / "rank_tp1_pp0_dp0.json")
    assert code == 1
    changed = [(c["problem"]["n"], c["problem"]["k"], c["problem"]["m"], c["before"]["tactic"], c["after"]["tactic"])
               for c in out["changes"]]
    assert changed == [(7168, 2048, 32, 0, 1), (7168, 2048, 256, 1, 0)]
    assert all(c["before"]["not_a_cutlass_tactic"] and c["before"]["config"] is None for c in out["changes"])
    assert any("different ranks" in n for n in out["notes"])


def test_winner_change_carries_measured_times_and_the_old_winners_margin(run, tmp_path):
    import shutil

    root = Path(__file__).resolve().parent.parent / "cache_samples" / "demo"
    cache = json.loads((root / "sglang" / "flashinfer_autotune" / "autotune_config.json").read_text())
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        shutil.copy(root / "flashinfer" / "0.6.17" / "120f" / "flashinfer_jit.log", tmp_path / side / "flashinfer_jit.log")
    (tmp_path / "old" / "cache.json").write_text(json.dumps(cache))
    key = next(k for k in cache if k.startswith("('fp4_gemm'") and "((16, " in k)
    cache[key] = ["CutlassFp4GemmRunner", 9]  # the runner-up of that bucket in the demo's DEBUG log
    (tmp_path / "new" / "cache.json").write_text(json.dumps(cache))
    code, out = _diff(run, tmp_path / "old", tmp_path / "new", "--arch", "sm120",
                      "--old-flashinfer-version", "0.6.17", "--new-flashinfer-version", "0.6.17")
    assert code == 1
    [c] = out["changes"]
    assert (c["before"]["tactic"], c["after"]["tactic"]) == (8, 9)
    assert c["before"]["time_basis"] == c["after"]["time_basis"] == "measured"
    assert c["before"]["won_by_noise"] is True and 0 < c["before"]["margin"] < 0.05
    assert c["time_change"] == pytest.approx(c["before"]["margin"])  # the new winner is the old runner-up
    assert c["beyond_noise"] is False


def test_time_change_noise_is_at_least_5_percent_and_widens_with_the_samples_spread():
    """Across two runs a within-run sample spread may widen the noise threshold, never narrow it."""
    from tiletune.analysis.diff import Side, _time_change

    def side(t_ms, spread=None):
        return Side(tactic=1, config=None, flashinfer_version="0.7.2.post1", time_ms=t_ms, spread=spread)

    assert _time_change(side(1.0), side(1.07)) == (pytest.approx(0.07), 0.05, "default 5 %")
    assert _time_change(side(1.0, 0.01), side(1.07, 0.02)) == (pytest.approx(0.07), 0.05, "default 5 %")
    change, noise, basis = _time_change(side(1.0, 0.12), side(1.07, 0.03))
    assert (noise, basis) == (0.12, "samples") and abs(change) < noise
    assert _time_change(side(None), side(1.0)) == (None, None, None)


def test_fail_on_gates_on_the_new_warm_up_not_on_changes(run):
    """--fail-on: the findings in NEW decide 0 or 1 (as inspect --fail-on on NEW); without it, changes do."""
    root = Path(__file__).resolve().parents[1]
    h200 = root / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"  # no failures
    fatal = root / "cache_samples" / "wild" / "flashinfer-2065-gb10-moe-fp4-illegal-instruction" / "ticket.txt"
    skipped = root / "cache_samples" / "wild" / "flashinfer-4049-sm120-moe-tma-descriptor-illegal-instruction" / "ticket.txt"
    assert run("diff", h200, fatal).exit_code == 1  # entries removed: a change
    r = run("diff", h200, fatal, "--fail-on", "fatal")
    assert r.exit_code == 1 and "--fail-on fatal: NEW: " in r.output
    assert run("diff", fatal, h200, "--fail-on", "fatal").exit_code == 0  # NEW is clean, though entries changed
    assert run("diff", fatal, h200, "--fail-on", "failed").exit_code == 0
    # NEW with failed tactics but nothing fatal: failed gates, fatal does not
    assert run("diff", h200, skipped, "--fail-on", "failed").exit_code == 1
    assert run("diff", h200, skipped, "--fail-on", "fatal").exit_code == 0
    assert run("diff", h200, skipped, "--fail-on", "never").exit_code == 2


# --- one side held at a time (docs/bounded_memory.md) ------------------------------------------------


@pytest.mark.parametrize("old,new", [
    (RANKS, RANKS), (RANKS, RANKS / "rank_tp0_pp0_dp0.json"), (RANKS / "rank_tp0_pp0_dp0.json", RANKS),
    (REAL, REAL), (REAL, REAL / "a"), (REAL / "a", REAL), (REAL / "ranks", REAL / "a"),
])
def test_the_old_sides_summary_compares_as_its_whole_result(run, old, new):
    # the CLI keeps only OLD's DiffSide while NEW is read: every way NEW may ask for OLD's winners
    # (per rank or not, per source group or not) must be there, and give what the whole result gives
    from tiletune.analysis.diff import diff
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats import render
    from tiletune.readers.interface import ReadContext

    whole = diff(inspect([old], ReadContext()), inspect([new], ReadContext()))
    expected = json.loads(b"".join(c if isinstance(c, bytes) else c.encode() for c in render("diff", whole, "json")))
    code, out = _diff(run, old, new)
    assert out == expected and code == (1 if whole.differs else 0)
