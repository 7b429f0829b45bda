"""The compact (per-bucket) table's shortcuts write exactly what the plain computation writes.

`glance.compact_rows` / `usual_cells` (a usual line's cells made inline, its model result read
from its own entry unless `ModelByChoice.overridden` says a later entry of its key holds one)
against each line's cells from the cell functions with the model looked up by key over every
entry; `ModelByChoice` keyed over the overview's crowded buckets only against keyed over every
entry; and `table._usual_table` against `table._compact_table`. Over the samples, the bench
workloads and hand-made odd results: duplicate keys, later entries of a key with another result
or none, two runners of one op, two servers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec import structs
from wild_split import without_held_out  # (held-out artifacts are never read)

from tiletune.analysis.overview import choice_key, overview
from tiletune.analysis.pipeline import inspect
from tiletune.analysis.results import AnalyzedEntry
from tiletune.analysis.source_groups import group_names
from tiletune.core.records import Entry, Status
from tiletune.formats import glance, table
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "cache_samples"


def _key(ae, group_of):
    rec = ae.entry.record
    return (group_of.get(rec.source), rec.env.arch, rec.op, ae.entry.problem, choice_key(ae.entry.config, rec.tactic))


def _plain_model(result):
    """The model result of each (group, arch, op, problem, choice): the last entry's with one (the
    calibrated model where the inputs' times calibrate it: what the views show, issue 25 item 3)."""
    group_of = group_names(result.source_groups)
    return {_key(ae, group_of): ae.calibrated or ae.analysis for ae in result.entries
            if ae.analysis is not None and ae.entry.problem is not None}


def _plain_rows(group, model):
    rows = []
    for line in group.lines:
        a = None
        if len(line.chosen) == 1:
            pick = line.chosen[0]
            a = model.get((group.source_group, group.arch, group.op, line.problem, choice_key(pick.config, pick.tactic)))
        if a is None or a.time_expected_s is None:
            t, eff = "-", "-"
        else:
            t = f"{a.time_expected_s * 1e6:.1f}"
            eff = "-" if a.efficiency_compute is None else f"{a.efficiency_compute * 100:.0f}"
        rows.append([glance.m_cell(line), glance.chosen_cell(line), glance._us(line.chosen_time_ms), t, eff,
                     line.runner_up.label() if line.runner_up is not None else "-", glance.margin_cell(line),
                     str(line.failed) if line.failed else "-", "?" if line.never_tried is None else str(line.never_tried)])
    return rows


def _odd(result):
    """`result` with entries that make keys collide: each chosen entry again later as a profiled
    record with another entry's model result, or with none; some again with a second runner."""
    entries = list(result.entries)
    others = [ae.analysis for ae in entries if ae.analysis is not None]
    extra = []
    for i, ae in enumerate(entries):
        rec = ae.entry.record
        if rec.status is not Status.CHOSEN or ae.entry.problem is None:
            continue
        profiled = Entry(structs.replace(rec, status=Status.PROFILED), ae.entry.problem, ae.entry.decode)
        if i % 3 == 0 and others:
            extra.append(AnalyzedEntry(profiled, others[(i * 7) % len(others)]))  # a later result for the key
        elif i % 3 == 1:
            extra.append(AnalyzedEntry(profiled, None, "none"))  # a later entry of the key without one
            extra.append(AnalyzedEntry(ae.entry, None, "none"))  # the winner again, without a result
    return _with_entries(result, tuple(entries + extra))


def _two_runners(result):
    entries = list(result.entries)
    again = [AnalyzedEntry(Entry(structs.replace(ae.entry.record, runner="OtherRunner"), ae.entry.problem,
                                 ae.entry.decode), ae.analysis) for ae in entries[::2]]
    return _with_entries(result, tuple(entries + again))


def _with_entries(result, entries):
    """The result with other entries, and its overview made anew from them (as the pipeline makes it)."""
    return structs.replace(result, entries=entries, overview=overview(entries, result.source_groups))


@pytest.fixture(scope="module")
def results(tmp_path_factory, big_caches):
    tmp = tmp_path_factory.mktemp("big")
    big = big_caches
    big.make_cache(1500, tmp / "mixed.json")
    big.make_fp4_distinct(1500, tmp / "fp4.json")
    out = [inspect(without_held_out(SAMPLES / name), ReadContext()) for name in
           ("demo", "v1", "v2store", "layouts", "trtllm", "logs", "jit", "real", "ledgers", "wild", "blocklists")]
    out.append(inspect([tmp / "mixed.json", tmp / "fp4.json"], ReadContext()))  # two servers
    out.append(inspect([tmp / "mixed.json"], ReadContext()))
    out += [_odd(r) for r in out[:]] + [_two_runners(r) for r in out[:]] + [_two_runners(_odd(out[-1]))]
    return out


def test_compact_rows_are_the_plain_rows(results):
    usual = overridden = 0
    for result in results:
        ov = result.overview
        plain = _plain_model(result)
        for model in (glance.analyses_by_choice(result, ov), glance.analyses_by_choice(result)):
            overridden += len(model.overridden)
            labels: dict = {}
            m_texts: dict = {}
            for g in ov.groups:
                want = _plain_rows(g, plain)
                assert glance.compact_rows(g, model, labels, m_texts) == want, g
                cells = glance.usual_cells(g, model, labels, m_texts)
                if cells is not None:
                    usual += len(cells)
                    assert [[*c, *glance.USUAL_TAIL] for c in cells] == want
    assert usual > 5000 and overridden > 500  # the shortcuts really ran, and so did the overrides


def test_only_crowded_entries_can_share_a_key(results):
    """What `ModelByChoice` relies on: an entry outside `Overview.crowded` is its key's only holder."""
    checked = 0
    for result in results:
        ov = result.overview
        if ov.crowded is None:
            assert len({(ae.entry.record.env.arch, ae.entry.record.op, ae.entry.record.runner)
                        for ae in result.entries if ae.entry.problem is not None}) > 1
            continue
        group_of = group_names(result.source_groups)
        crowded = {id(ae) for ae in ov.crowded}
        counts: dict = {}
        for ae in result.entries:
            if ae.entry.problem is not None:
                k = _key(ae, group_of)
                counts[k] = counts.get(k, 0) + 1
        for ae in result.entries:
            if ae.entry.problem is not None and id(ae) not in crowded:
                assert counts[_key(ae, group_of)] == 1, ae.entry.record
                checked += 1
    assert checked > 3000


def _odd_cells():
    row = ("1-16", "128x128x256 swapAB", "12.5", "10.1", "43")

    def cells(**at):
        r = list(row)
        for i, v in at.items():
            r[int(i[1:])] = v
        return tuple(r)

    return [
        [row], [row, cells(c1="x" * 70)], [cells(c1="y" * 100)], [cells(c1="z" * 59)], [cells(c1="z" * 60)],
        [cells(c0="")], [cells(c4="")], [cells(c1=" lead")], [cells(c4="5 ")], [cells(c1="mid dle")],
        [cells(c1="caf\u00e9")], [cells(c1="tab\there")], [cells(c1="cut\u2026")], [cells(c1="x\x00y")],
        [cells(c1="100%"), cells(c1="%s %d %%")], [cells(c3="nan", c4="inf")],
    ]


@pytest.mark.parametrize("width", [40, 80, 100, 120, 200])
def test_usual_table_is_the_compact_table(results, width):
    sets = list(_odd_cells())
    for result in results[:13]:
        ov = result.overview
        model = glance.analyses_by_choice(result, ov)
        sets += [c for c in (glance.usual_cells(g, model) for g in ov.groups) if c]
    layouts: dict = {}
    fast = 0
    for cells in sets + sets:  # the second round takes its layouts from the memo
        text = table._usual_table(cells, width, layouts)
        if text is not None:
            fast += 1
            assert text == table._compact_table([[*c, *glance.USUAL_TAIL] for c in cells], width), cells
    if width >= 100:  # (narrower, a compact table drops columns: the plain path's work)
        assert fast > 100
