"""The overview's shortcuts give exactly what the plain computation gives.

`overview._Picks` (Picks shared by decode and detail identity) against `overview._pick`, the
one-winner bucket shortcut of `_bucket_line` (and `_Picks.one_winner_line`) against
`_any_bucket_line`, `_Uncovered` against `uncovered`, and the whole `overview` against the plain
one built from those references, over every entry of the samples, the bench workloads and
hand-made odd records (ints that equal True or 1.0, timed records, sample spreads, undecoded and
non-CUTLASS tactics, crowded buckets, fallbacks). Compared by repr, so 1 and True or 1 and 1.0 differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec import structs
from wild_split import without_held_out

from tiletune.analysis import overview as ov
from tiletune.analysis import results
from tiletune.analysis.pipeline import build, inspect
from tiletune.core.records import Environment, Status, TuningRecord
from tiletune.decode import decode
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"


KEY = ((16, 1024), (1024, 7168), (-1, 128), (128, 7168), (), (0,), (-1, 7168), (0,), (0,), (-1,))
ENV = Environment(flashinfer_version="0.7.2.post1", arch="sm120", gpu="NVIDIA RTX PRO 6000 Blackwell Server Edition")


def _odd_entries():
    """Records whose Picks must not be shared wrongly: equal-but-different tactics, times, samples."""
    policy = (("profiling_policy", (("l2_cache_policy", "cold"),)),)
    recs = []
    for i, (tactic, time_ms, detail) in enumerate([
        (3, None, policy), (3, None, policy), (True, None, policy), (1, None, policy), (1.0, None, policy),
        (3, 0.5, policy), (3, 0.5, (("samples_ms", (0.5, 0.6, 0.55)),)), (3, None, (("times_ms", (1.0, 2.0)),)),
        (3, None, (("times_ms", (1.0, 2.0)), ("samples_ms", (4.0, 5.0)))), (3, -0.0, ()), (3, 0.0, ()),
        (999, None, policy), ((1, (2, 3)), None, policy), ("cublas", None, ()), (-1, None, policy), (None, None, ()),
    ]):
        recs.append(TuningRecord(source=f"odd{i % 3}.json", source_kind="flashinfer-v1", op="fp4_gemm",
                                 runner="CutlassFp4GemmRunner", tactic=tactic, status=Status.CHOSEN, env=ENV,
                                 shapes=KEY, extras=(), time_ms=time_ms, detail=detail))
    recs.append(TuningRecord(source="moe.json", source_kind="flashinfer-v1", op="trtllm::fused_moe::gemm2",
                             runner="MoERunner", tactic=7, status=Status.CHOSEN,
                             env=Environment(flashinfer_version="0.6.8", arch="sm120"),
                             shapes=((128, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), extras=None))
    entries = [decode(r) for r in recs]
    # the same record objects again: shared decodes and details, as a reader's are
    return build(entries + [decode(r) for r in recs]).entries


def _results():
    out = [inspect(without_held_out(SAMPLES / name), ReadContext()) for name in
           ("demo", "v1", "v2store", "layouts", "trtllm", "logs", "jit", "real", "ledgers", "wild")]
    return out


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory, big_caches):
    tmp = tmp_path_factory.mktemp("big")
    big = big_caches
    big.make_cache(2000, tmp / "mixed.json")
    big.make_fp4_distinct(2000, tmp / "fp4.json")
    entries = list(_odd_entries())
    for res in _results() + [inspect([tmp / "mixed.json", tmp / "fp4.json"], ReadContext())]:
        entries += res.entries
    return entries


def test_shared_picks_are_the_plain_picks(analyzed):
    picks = ov._Picks()
    assert len(analyzed) > 4000
    for ae in analyzed + analyzed:  # the second round is answered from the memo
        assert repr(picks(ae)) == repr(ov._pick(ae)), ae.entry.record


def test_a_shared_pick_is_only_shared_where_all_it_holds_is_equal(analyzed):
    picks = ov._Picks()
    got = [picks(ae) for ae in analyzed]
    assert len({id(p) for p in got}) < len(got) / 4  # the memo is really used on the big caches
    odd = [picks(ae) for ae in _odd_entries()]
    assert {type(p.tactic) for p in odd} >= {int, bool, float}  # 1, True and 1.0 each keep their own Pick


def test_one_winner_shortcut_is_the_general_bucket_line(analyzed):
    sizes = ov._CatalogSizes(analyzed)
    picks = ov._Picks()
    seen = 0
    for ae in analyzed:
        if ae.entry.problem is None:
            continue
        fast = ov._bucket_line((ae,), sizes, picks)
        plain = ov._any_bucket_line((ae,), sizes)
        assert repr(fast) == repr(plain), ae.entry.record
        seen += ae.entry.record.status is Status.CHOSEN
    assert seen > 4000


def test_one_winner_line_in_one_call_is_the_plain_line(analyzed):
    picks = ov._Picks()
    sizes = ov._CatalogSizes(analyzed)
    seen = 0
    for ae in analyzed + analyzed:  # the second round is answered from the memo
        if ae.entry.problem is None or ae.entry.record.status is not Status.CHOSEN:
            continue
        fast, plain = picks.one_winner_line(ae), ov._any_bucket_line((ae,), sizes)
        assert repr(fast) == repr(plain) and type(fast) is results.BucketLine and fast == plain, ae.entry.record
        assert fast.winner_entry is plain.winner_entry and hash(fast) == hash(plain)
        seen += 1
    assert seen > 8000


def _plain_overview(result):
    """`overview` the plain way: each bucket's entries through `_any_bucket_line`, each group's gaps
    through `uncovered`, no memo."""
    from tiletune.analysis.source_groups import group_names

    group_of = group_names(result.source_groups)
    buckets: dict = {}
    for ae in result.entries:
        p = ae.entry.problem
        if p is not None:
            rec = ae.entry.record
            key = (rec.env.arch, rec.op, rec.runner, p.n, p.k, group_of.get(rec.source), p.batch, p.experts, p.top_k, p.m)
            buckets.setdefault(key, []).append(ae)
    sizes = ov._CatalogSizes(result.entries)
    groups: dict = {}
    versions: dict = {}
    for key, aes in buckets.items():
        versions.setdefault(key[:6], aes[0].entry.record.env.flashinfer_version)
        line = ov._any_bucket_line(aes, sizes)
        if line is not None:
            groups.setdefault(key[:6], []).append(line)
    out = []
    for gkey in sorted(groups, key=lambda g: (g[0] or "", g[1], g[2], g[3], g[4], g[5] or "")):
        arch, op, runner, n, k, group = gkey
        held = tuple(sorted(groups[gkey], key=lambda line: line.problem.m))
        out.append(results.Group(arch, op, runner, n, k, versions[gkey], held, ov.uncovered(held, versions[gkey], "moe" in op),
                            group, result.group_label(group)))
    crowded = [[id(ae) for ae in aes] for aes in buckets.values() if len(aes) > 1]
    return out, crowded


def _fallback_result():
    """A log's fallback lines beside cache buckets, and buckets of one M under two batch sizes."""
    recs = []
    for i, (status, m, batch) in enumerate([(Status.CHOSEN, 16, 1), (Status.FALLBACK, 16, 1), (Status.CHOSEN, 32, 1),
                                            (Status.CHOSEN, 32, 2), (Status.FALLBACK, 300, 1), (Status.PROFILED, 64, 1)]):
        shapes = ((batch, m, 1024), (batch, 1024, 7168)) if batch > 1 else ((m, 1024), (1024, 7168), (-1, 128),
                                                                          (128, 7168), (), (0,), (-1, 7168), (0,), (0,), (-1,))
        recs.append(TuningRecord(source="f.log", source_kind="flashinfer-log", op="fp4_gemm", runner="CutlassFp4GemmRunner",
                                 tactic=-1 if status is Status.FALLBACK else i, status=status, env=ENV, shapes=shapes,
                                 extras=(), time_ms=0.01 * (i + 1)))
    return build([decode(r) for r in recs])


def test_overview_is_the_plain_overview(analyzed, tmp_path, big_caches):
    big_caches.make_cache(3000, tmp_path / "mixed.json")
    results = _results() + [inspect([tmp_path / "mixed.json"], ReadContext()), build([ae.entry for ae in _odd_entries()]),
                            build([ae.entry for ae in analyzed]), _fallback_result()]
    flagged = plain_lines = crowd_seen = 0
    for result in results:
        fast = result.overview
        plain, crowded = _plain_overview(result)
        # (the plain way does not flag one-winner groups: compared apart below)
        assert [repr(structs.replace(g, one_winner_lines=False)) for g in fast.groups] == [repr(g) for g in plain]
        if fast.crowded is not None:  # the entries of crowded buckets, each bucket's in input order
            got = [id(ae) for ae in fast.crowded]
            assert sorted(got) == sorted(i for aes in crowded for i in aes)
            at = {i: n for n, i in enumerate(got)}
            assert all([at[i] for i in aes] == sorted(at[i] for i in aes) for aes in crowded)
            crowd_seen += len(got)
        for g in fast.groups:
            if g.one_winner_lines:  # the flag holds only where every line is one chosen entry alone in its bucket
                flagged += len(g.lines)
                assert all(line.winner_entry is not None and line.runner_up is None and line.margin is None
                           and not line.failed and line.never_tried is None and not line.fallback_only
                           and line.chosen == (ov._pick(line.winner_entry),) for line in g.lines), g
            else:
                plain_lines += len(g.lines)
    assert flagged > 5000 and plain_lines > 50 and crowd_seen > 100


def test_uncovered_once_per_set_of_buckets_is_uncovered(analyzed):
    gaps = ov._Uncovered()
    groups = [g for res in _results() + [build([ae.entry for ae in _odd_entries()]), _fallback_result()] for g in res.overview.groups]
    groups += list((build([ae.entry for ae in analyzed])).overview.groups)
    moe = 0
    for g in groups + groups:  # the second round is answered from the memo
        is_moe = "moe" in g.op
        moe += is_moe
        no_fallback = not any(line.fallback_only for line in g.lines)
        for version in (g.flashinfer_version, "0.6.8", None):
            assert gaps(g.lines, version, is_moe, no_fallback) == ov.uncovered(g.lines, version, is_moe), g
    assert moe > 10 and len(gaps._memo) < len(groups) / 2
