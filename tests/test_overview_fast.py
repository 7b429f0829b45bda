"""The overview's shortcuts give exactly what the plain computation gives.

`overview._Picks` (Picks shared by decode and detail identity) against `overview._pick`, and the
one-winner bucket shortcut of `_bucket_line` against `_any_bucket_line`, over every entry of the
samples, the bench workloads and hand-made odd records (ints that equal True or 1.0, timed
records, sample spreads, undecoded and non-CUTLASS tactics). Compared by repr, so 1 and True or
1 and 1.0 differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiletune import overview as ov
from tiletune.decode import decode
from tiletune.pipeline import build, inspect
from tiletune.readers.interface import ReadContext
from tiletune.records import Environment, Status, TuningRecord

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
    out = [inspect([SAMPLES / name], ReadContext()) for name in
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
    sizes = ov._CatalogSizes(type("R", (), {"entries": analyzed})())
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
