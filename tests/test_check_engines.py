"""`tiletune check` against what FlashInfer's, vLLM's and SGLang's own loaders decided on the same files.

tests/data/engine_loaders (tools/engine_loaders; PROVENANCE.json there): per-rank caches written by
FlashInfer 0.7.4's AutoTuner (and by 0.7.2.post1, and by 0.7.4 with one more package installed), and
verdicts.json: what FlashInfer 0.7.4's `load_configs`, vLLM 0.34.0's `_load_shared_autotune_cache` and
SGLang 0.5.23's `_drop_diverged_autotune_cache` did with them, run on CPU in gloo process groups.
target_env.json is doctor's report of the environment that loaded them.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "engine_loaders"
ENV = DATA / "target_env.json"
SETS = sorted(p.name for p in DATA.iterdir() if (p / "verdicts.json").is_file())


def tiletune(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tiletune", *args], capture_output=True, text=True, cwd=ROOT)


RANKS = {name: str(s["ranks"]) for name, s in json.loads((DATA / "PROVENANCE.json").read_text())["sets"].items()}


def checked(name: str) -> dict:
    r = tiletune("check", str(DATA / name), "--env", str(ENV), "--ranks", RANKS[name], "-f", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_every_set_is_there():
    assert SETS == ["extra_key", "independent", "missing_rank", "other_env", "other_release", "seeded", "synced"]


@pytest.mark.parametrize("name", SETS)
def test_flashinfer_verdict_per_file_matches_load_configs(name):
    truth = json.loads((DATA / name / "verdicts.json").read_text())["flashinfer"]
    got = {str(Path(f["path"]).relative_to(DATA / name)): f for f in checked(name)["files"]}
    assert set(got) == set(truth)
    for rel, t in truth.items():
        f = got[rel]
        assert f["verdict"] == ("used" if t["loaded"] else "ignored"), (rel, f["reason"])
        if not t["loaded"]:
            # the fields FlashInfer's own warning names are the ones check says decide
            (msg,) = [m for m in t["log"] if "different environment" in m]
            named = re.findall(r"(\w+): saved=", msg)
            assert sorted(f["deciding"]) == sorted(named), (rel, msg)


def _engine_groups(name: str) -> dict:
    return {g["engine"]: g for g in checked(name)["groups"]}


@pytest.mark.parametrize("name", SETS)
def test_vllm_group_verdict_matches_vllm(name):
    truth = json.loads((DATA / name / "verdicts.json").read_text())["vllm"]["loaded_by_rank"]
    g = _engine_groups(name)["vllm"]
    assert len(set(truth)) == 1  # vLLM decides group-wide
    assert g["verdict"] == ("kept" if truth[0] else "discarded"), g["reason"]


@pytest.mark.parametrize("name", SETS)
def test_sglang_group_verdict_matches_sglang(name):
    truth = json.loads((DATA / name / "verdicts.json").read_text())["sglang"]
    g = _engine_groups(name)["sglang"]
    kept = all(truth["kept_by_rank"]) and all(truth["loaded_by_rank"])
    assert g["verdict"] == ("kept" if kept else "discarded"), g["reason"]
    if not all(truth["kept_by_rank"]):  # SGLang deleted the files: the reason says the digests differ or a rank lacks one
        assert "delete" in g["reason"]


def test_rank_differences_in_tile_terms():
    """independent: the keys whose tactic differs between the two vLLM rank files, read plainly, are
    the keys check lists, each with the decoded tile of each rank's tactic."""
    files = sorted((DATA / "independent" / "vllm").glob("*.json"))
    tables = [{k: v[1] for k, v in json.loads(p.read_text()).items() if not k.startswith("_")} for p in files]
    differ = {k for k in tables[0] if tables[0][k] != tables[1].get(k)}
    assert differ  # the set is only useful if the ranks disagree somewhere
    g = _engine_groups("independent")["vllm"]
    assert g["verdict"] == "kept"  # vLLM's fingerprint does not look at tactics: it loads disagreeing ranks
    assert g["differences_total"] == len(differ) and g["same_keys"] == len(tables[0]) - len(differ)
    ms = sorted(int(re.search(r"\(\((\d+), ", k).group(1)) for k in differ)
    # the problem names the key's M bucket (M=2, M 17-32): its top is the key's M
    assert [int(re.search(r"M[= ](?:\d+-)?(\d+) ", d["problem"]).group(1)) for d in g["differences"]] == ms
    for d in g["differences"]:
        assert [c["rank"] for c in d["choices"]] == ["dp0_rank0", "dp0_rank1"]
        assert all(c["tile"] and re.match(r"\d+x\d+x\d+", c["tile"]) for c in d["choices"])
        assert d["choices"][0]["tactic"] != d["choices"][1]["tactic"]


def test_fail_on_miss_and_the_first_sentence():
    r = tiletune("check", str(DATA / "synced"), "--env", str(ENV), "--fail-on", "miss")
    assert r.returncode == 0 and r.stdout.startswith("0 of 4 cache files will be ignored by FlashInfer 0.7.4")
    r = tiletune("check", str(DATA / "other_env"), "--env", str(ENV), "--fail-on", "miss")
    assert r.returncode == 1
    lines = r.stdout.splitlines()  # the first sentence, wrapped to the width (continuations indented)
    first = " ".join([lines[0], *(ln.strip() for ln in itertools.takewhile(lambda s: s.startswith("    "), lines[1:]))])
    assert first.startswith("4 of 4 cache files will be ignored by FlashInfer 0.7.4") and "cudnn_frontend_version" in first
    assert "2 of 2 rank groups will be discarded" in first
    r = tiletune("check", str(DATA / "missing_rank"), "--env", str(ENV), "--ranks", "3", "-f", "markdown")
    assert r.returncode == 0 and "dp0_rank2 has no file" in r.stdout and "tp2_pp0_dp0 has no file" in r.stdout
    r = tiletune("check", str(DATA / "missing_rank"), "--env", str(ENV))  # without --ranks the caveat is said
    # (the text view wraps to the terminal's width: the caveat is read with its line breaks undone)
    assert "give --ranks to check for missing ones" in " ".join(r.stdout.split())


def test_bad_env_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "env.json"
    bad.write_text('{"schema": "tiletune.inspect/1"}')
    r = tiletune("check", str(DATA / "synced"), "--env", str(bad))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a `tiletune doctor -f json` report" in r.stderr
