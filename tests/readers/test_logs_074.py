"""FlashInfer 0.7.4's new log lines and raised texts, as the release printed them
(tests/data/flashinfer_writers/0.7.4: flashinfer_jit.log of the tune, reload, foreign, v2tune and
v2replay runs, sticky.stderr.txt and group.rank<r>.stderr.txt; tools/flashinfer_writers made them)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tiletune.core.records import Status
from tiletune.readers import logs, read_inputs
from tiletune.readers.interface import ReadContext
from tiletune.readers.logs.cache_messages import environment_fields

CTX = ReadContext()
V074 = Path(__file__).resolve().parents[1] / "data" / "flashinfer_writers" / "0.7.4"
LOG = V074 / "flashinfer_jit.log"


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """No server cache variables (conftest.no_server_env)."""


def _read(path: Path):
    out = read_inputs([path], CTX)
    return out, {e.kind: [x for x in out.events if x.kind == e.kind] for e in out.events}


def _lines(pattern: str) -> list[str]:
    return [ln for ln in LOG.read_text().splitlines() if re.search(pattern, ln)]


def test_every_autotuner_line_of_0_7_4_is_read():
    p = logs.LogParser(str(LOG), CTX.environment())
    items = list(logs.read_log(LOG, CTX, parser=p))
    assert p.facts.unread == {}  # no [Autotuner] line fell through every rule
    assert not [i for i in items if getattr(i, "loses_data", False)]


def test_tie_retime_failures_are_events_and_failures():
    text = _lines(r"Not keeping tactic .* which failed while being re-timed")
    assert text  # the release printed them (tie_tolerance=0.05, a contender failing its re-timing)
    tactic = int(re.search(r"object at 0x[0-9a-f]+> (\d+), which", text[0]).group(1))
    out, ev = _read(LOG)
    (e,) = ev["tie_retime_failed"]
    assert e.count == len(text) and e.fact("tactic") == tactic and e.fact("runner") == "CutlassFp4GemmRunner"
    assert not e.is_fatal
    failed = [r for r in out.records if r.status is Status.FAILED and r.detail_dict().get("phase", "").startswith("re-timing")]
    assert {r.tactic for r in failed} == {tactic} and sum(r.count for r in failed) == len(text)


def test_a_revalidation_failure_is_a_cache_miss_of_that_key():
    (line,) = _lines(r"failed revalidation; treating as a cache miss")
    cached = int(re.search(r"cached tactic (\d+) for", line).group(1))
    out, ev = _read(LOG)
    (e,) = ev["cache_miss"]
    assert e.fact("cached_tactic") == cached and e.fact("op") == "fp4_gemm"
    # the fallback that followed is this miss, whatever FlashInfer's "outside the tuning bucket range" says
    fb = [r for r in out.records if r.status is Status.FALLBACK and r.detail_dict().get("cache_miss")]
    assert len(fb) == 1 and fb[0].detail_dict()["cached_tactic"] == cached
    assert not fb[0].detail_dict().get("out_of_bucket") and "revalidation" in fb[0].detail_dict()["reason"]
    assert not [r for r in out.records if r.status is Status.FAILED and r.tactic == cached
                and "revalidation" in (r.error or "")]  # not a tactic that failed


def test_the_different_environment_line_is_a_verdict_naming_each_field(run):
    (line,) = _lines(r"Cache file foreign.json was created in a different environment")
    fields = environment_fields(line[line.index("(") + 1:line.index("). Ignoring")])
    out, ev = _read(LOG)
    (e,) = ev["cache_ignored"]
    assert e.fact("path") == "foreign.json" and list(e.fact("fields")) == fields
    assert e.fact("severity") == "hard"  # flashinfer_version 0.7.2.post1 vs 0.7.4 is definite
    for k, _saved, _cur in fields:
        assert k in e.summary
    r = run("inspect", str(LOG))
    assert r.exit_code == 0 and "FlashInfer ignored the cache foreign.json" in " ".join(r.stdout.split())
    # the running environment is 0.7.4's, not the foreign cache's (its GPU and version are clues only as current=)
    assert out.records[0].env.flashinfer_version == "0.7.4"


def test_managed_store_lines_are_events():
    store = next((V074 / "v2root" / "v2").iterdir())
    n_entries = len(list((store / "entries").glob("*.json")))
    out, ev = _read(LOG)
    attached = [e for e in ev["managed_cache"] if e.fact("env_hash")]
    assert attached and {e.fact("env_hash") for e in attached} == {store.name}
    (pre,) = [e for e in ev["managed_cache"] if e.fact("preloaded") is not None]
    assert (pre.fact("preloaded"), pre.fact("entries")) == (n_entries, n_entries)


def test_a_lost_cuda_context_is_what_ended_the_run(run):
    out, ev = _read(V074 / "sticky.stderr.txt")
    (e,) = [x for x in ev["cuda_error"] if x.fact("ended_run") is True]
    assert e.is_fatal and e.fact("op") == "fp4_gemm" and e.fact("runner") == "CutlassFp4GemmRunner"
    assert "illegal memory access" in e.fact("cuda_error") and isinstance(e.fact("tactic"), int)
    r = run("inspect", str(V074 / "sticky.stderr.txt"))
    assert r.exit_code == 0 and "the CUDA context became unusable" in " ".join(r.stdout.split())


def test_tuning_group_mismatch_is_fatal_with_its_phase():
    for rank in (0, 1):
        path = V074 / f"group.rank{rank}.stderr.txt"
        last = [ln for ln in path.read_text().splitlines() if "_TuningGroupError" in ln][-1]
        out, ev = _read(path)
        (e,) = ev["tuning_group_failed"]
        assert e.is_fatal and e.fact("phase") == "'operation'" and e.fact("failure") == "plan mismatch"
        assert e.fact("local_selection") == last.split("local selection=", 1)[1]


def test_the_v2_store_and_cache_written_in_the_same_run_agree_with_the_log():
    # the log's chosen lines name the winners the cache holds (the same process wrote both)
    raw = json.loads((V074 / "cache.json").read_text())
    out, _ = _read(LOG)
    chosen = {(r.op, r.shapes, r.tactic) for r in out.records if r.status is Status.CHOSEN}
    cache = {(r.op, r.shapes, r.tactic) for r in read_inputs([V074 / "cache.json"], CTX).records}
    assert cache <= chosen and len(cache) == len([k for k in raw if not k.startswith("_")])
