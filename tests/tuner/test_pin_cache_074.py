"""--pin-cache on a cache FlashInfer 0.7.4 wrote (tests/data/flashinfer_writers/0.7.4): a selection
record never follows a tactic it did not time, and the `_metadata` verdict agrees with what
FlashInfer 0.7.4 itself printed when it loaded another environment's cache (its own log, same run)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tiletune.readers.logs.cache_messages import environment_fields
from tiletune.tuner import exports
from tiletune.tuner.pin_metadata import classify, load_env, verdict

DATA = Path(__file__).resolve().parents[1] / "data" / "flashinfer_writers"
V074 = DATA / "0.7.4"
FOREIGN = Path(__file__).resolve().parents[2] / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"


def _fp4_keys(raw: dict) -> list[str]:
    return [k for k in raw if k.startswith("('fp4_gemm'")]


def _m(key: str) -> int:
    return int(re.search(r"\(\((\d+), ", key).group(1))


def _attempts(key: str, tactic: int, time_s: float) -> list[dict]:
    prob = {"batch": 1, "m": _m(key), "n": 256, "k": 512}
    return [{"key": "a", "op": "fp4_gemm", "runner": "CutlassFp4GemmRunner", "tactic": tactic, "passed": True,
             "time_s": time_s, "problem": prob}]


def test_a_pinned_tactic_does_not_inherit_the_selection_record(tmp_path):
    raw = json.loads((V074 / "cache.json").read_text())
    key, other = _fp4_keys(raw)[:2]
    new_tactic = 6 if raw[key][1] != 6 else 3
    ident = ("fp4_gemm", "CutlassFp4GemmRunner", (1, _m(key), 256, 512))
    out = tmp_path / "pinned.json"
    pinned = exports.write_pinned_cache(V074 / "cache.json", _attempts(key, new_tactic, 3e-6), out,
                                        key_problems={key: ident})
    data = json.loads(out.read_text())
    assert pinned.changed == [(key, raw[key][1], new_tactic)] and pinned.dropped_selections == 1
    # runner and profiling policy kept; the record of the race the old tactic won is gone
    assert data[key] == [raw[key][0], new_tactic, raw[key][2]]
    assert data[other] == raw[other]  # untouched entries keep theirs (it timed their own tactic)
    assert data["_generation"] == exports._generation({k: v for k, v in data.items() if k != "_generation"})


def test_the_same_tactic_keeps_its_record(tmp_path):
    raw = json.loads((V074 / "cache.json").read_text())
    key = _fp4_keys(raw)[0]
    ident = ("fp4_gemm", "CutlassFp4GemmRunner", (1, _m(key), 256, 512))
    out = tmp_path / "pinned.json"
    pinned = exports.write_pinned_cache(V074 / "cache.json", _attempts(key, raw[key][1], 3e-6), out,
                                        key_problems={key: ident})
    assert pinned.changed == [] and json.loads(out.read_text())[key] == raw[key]


def test_the_metadata_verdict_is_flashinfer_0_7_4s_own():
    """FlashInfer 0.7.4 loaded the 0.7.2.post1 H200 cache (the 'foreign' scenario) and printed which
    fields differ; tiletune's prediction from the two `_metadata` objects names the same fields,
    with the same values, in FlashInfer's order."""
    env_074 = json.loads((V074 / "cache.json").read_text())["_metadata"]  # the running environment, as 0.7.4 collected it
    line = next(ln for ln in (V074 / "flashinfer_jit.log").read_text().splitlines()
                if "Cache file foreign.json was created in a different environment" in ln)
    printed = environment_fields(line[line.index("(") + 1:line.index("). Ignoring")])
    foreign = json.loads(FOREIGN.read_text())["_metadata"]
    hard, soft = classify(foreign, env_074)
    predicted = {**hard, **soft}
    assert [k for k, _a, _b in printed] == list(predicted)  # FlashInfer prints {**hard, **soft}
    for k, saved, current in printed:
        assert (str(predicted[k][0]), str(predicted[k][1])) == (saved, current)
    (text,) = verdict(foreign, env_074)
    assert "would IGNORE it" in text and all(k in text for k, _a, _b in printed)


def test_env_file_stamps_the_metadata_the_target_compares(tmp_path):
    raw = json.loads((V074 / "cache.json").read_text())
    key = _fp4_keys(raw)[0]
    ident = ("fp4_gemm", "CutlassFp4GemmRunner", (1, _m(key), 256, 512))
    # the pinned cache is for the H200 that wrote the 0.7.2.post1 cache: its _metadata is the --env
    env = load_env(FOREIGN)
    out = tmp_path / "pinned.json"
    pinned = exports.write_pinned_cache(V074 / "cache.json", _attempts(key, raw[key][1], 3e-6), out,
                                        key_problems={key: ident}, env=env)
    data = json.loads(out.read_text())
    assert list(data)[0] == "_metadata" and all(data["_metadata"][k] == v for k, v in env.items())
    assert set(pinned.metadata_from_env) == {k for k in env if raw["_metadata"].get(k) != env[k]}
    (text,) = pinned.verdict
    assert "will load it" in text


def test_without_env_it_says_what_loading_depends_on():
    meta = json.loads((V074 / "cache.json").read_text())["_metadata"]
    lines = verdict(meta, None)
    assert "pass --env" in lines[0] and "cutlass_dsl_version" in lines[0]
    # 0.7.4's cutlass_dsl_version is an environment fingerprint (Python ABI, tvm-ffi, torch with hashes)
    assert any("fingerprint" in line for line in lines)
    # cuda_version etc. are "unknown" in this CPU-written cache: ignored wherever the loading
    # environment reports them otherwise (a GPU server does), never claimed for every FlashInfer
    vague = [k for k, v in meta.items() if v in ("unknown", None, "None")]
    assert vague and any(line.startswith("where the loading environment reports") and all(k in line for k in vague)
                         for line in lines)
    assert not any("ignored by every FlashInfer" in line for line in lines)
    # FlashInfer's own rule: an indeterminate value equal to the running one is no mismatch
    assert classify(meta, {k: meta[k] for k in vague}) == ({}, {})
    assert set(classify(meta, {k: "9.1" for k in vague})[1]) == set(vague)


H200 = Path(__file__).resolve().parents[2] / "cache_samples" / "h200_074"


def test_flashinfer_0_7_4_on_the_h200_kept_the_pinned_cache_tiletune_wrote():
    """bench/h200_074: FlashInfer 0.7.4 loaded (8 of 8 kept) the pinned cache whose
    cudnn_frontend_version was "unknown", because its own environment said "unknown" too."""
    pinned = json.loads((H200 / "fp8_gemm_cache_074_pinned.json").read_text())
    meta = pinned["_metadata"]
    assert meta["cudnn_frontend_version"] == "unknown"
    log = (H200 / "reload_pinned_debug.log").read_text()
    assert "Loaded 8 configs" in log and "Ignoring cached configs" not in log
    # what FlashInfer compared it with is the machine's own metadata, the one its fresh cache recorded
    machine = json.loads((H200 / "fp8_gemm_cache_074.json").read_text())["_metadata"]
    assert classify(meta, machine) == ({}, {})
    (text,) = verdict(meta, machine)
    assert "will load it" in text


def test_env_without_pin_cache_is_a_usage_error(run, tmp_path):
    r = run("retry", "--no-run", "--env", str(FOREIGN), str(V074 / "cache.json"), "--ledger", str(tmp_path / "l.jsonl"))
    assert r.exit_code == 2 and "--env describes where a --pin-cache file will be loaded" in r.output
