"""The analysis stage's identity shortcuts change nothing: the same entries with nothing shared.

Readers share objects between records (one Environment, one path string and one op string per
input; one decode per tactic answer), and the analysis leans on it: verdicts works a record's key
out once per run of records sharing env, op and input, and counts a key's chosen entries per
distinct decode (its label worked out once); not_tried looks a group up once per run of one input
and sorts out each distinct decode of a run once; the per-arch GPU names are read once per run of
one Environment. Each is only a shortcut if the answers equal those for entries that share
nothing, which is what this builds (fresh copies of every env, string and decode) and compares;
with nothing shared, every decode is counted one entry at a time: the plain way.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from msgspec import structs
from wild_split import without_held_out

from tiletune.analysis import pipeline
from tiletune.analysis.never_tried import not_tried
from tiletune.analysis.pipeline import inspect
from tiletune.analysis.results import AnalyzedEntry
from tiletune.analysis.verdicts import verdicts
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"


def _fresh(s):
    """An equal string that is another object (so identity shortcuts cannot fire)."""
    return s if s is None or len(s) < 2 else s[:1] + s[1:]


def _unshared(ae: AnalyzedEntry) -> AnalyzedEntry:
    r = ae.entry.record
    rec = structs.replace(r, env=copy.copy(r.env), op=_fresh(r.op), source=_fresh(r.source))
    entry = structs.replace(ae.entry, record=rec, decode=copy.copy(ae.entry.decode))
    return structs.replace(ae, entry=entry)


def _results(tmp_path, big):
    big.make_cache(1500, tmp_path / "mixed.json")
    big.make_fp4_distinct(600, tmp_path / "fp4.json")
    # (the wild corpus's held-out artifacts are never read: wild_split.without_held_out)
    inputs = [without_held_out(SAMPLES / n) for n in ("demo", "v1", "layouts", "logs", "jit", "real", "ledgers", "wild", "blocklists")]
    inputs += [[tmp_path / "mixed.json", tmp_path / "fp4.json", SAMPLES / "logs"]]
    return [inspect(paths, ReadContext()) for paths in inputs]


@pytest.fixture(scope="module")
def results(tmp_path_factory, big_caches):
    return _results(tmp_path_factory.mktemp("unshared"), big_caches)


def test_verdicts_of_unshared_entries_are_the_same(results):
    for res in results:
        group_of = {s: g.name for g in res.source_groups for s in g.sources}
        labels_of = {g.name: g.label for g in res.source_groups} if len(res.source_groups) > 1 else None
        plain = [_unshared(ae) for ae in res.entries]
        got = list(verdicts(res.entries, res.failures, res.not_tried, group_of, labels_of))
        want = list(verdicts(plain, res.failures, res.not_tried, group_of, labels_of))
        assert got == want
    assert sum(len(res.entries) for res in results) > 2000


def test_not_tried_and_gpu_names_of_unshared_entries_are_the_same(results):
    for res in results:
        group_of = {s: g.name for g in res.source_groups for s in g.sources}
        plain = [_unshared(ae) for ae in res.entries]
        assert list(not_tried(res.entries, group_of)) == list(not_tried(plain, group_of))
        assert pipeline._gpu_named_per_arch([ae.entry for ae in res.entries]) == \
            pipeline._gpu_named_per_arch([ae.entry for ae in plain])


def test_interleaved_and_reversed_entries_give_what_unshared_ones_give(results):
    """Runs broken up (two results' entries dealt alternately, then reversed): keys and inputs
    come back many times, and counts made per distinct decode must still fill each counter in the
    order one entry at a time fills it (most_common keeps that order for ties)."""
    import itertools

    mixed = [r for r in results if len(r.entries) > 1000][0]
    for other in results:
        dealt = [ae for pair in itertools.zip_longest(mixed.entries, other.entries) for ae in pair if ae is not None]
        for entries in (dealt, dealt[::-1]):
            names = {s: g.name for res in (mixed, other) for g in res.source_groups for s in g.sources}
            plain = [_unshared(ae) for ae in entries]
            fails = mixed.failures + other.failures
            nts = mixed.not_tried + other.not_tried
            assert list(verdicts(entries, fails, nts, names)) == list(verdicts(plain, fails, nts, names))
            assert list(not_tried(entries, names)) == list(not_tried(plain, names))
