"""FlashInfer 0.7.4's DEBUG log as written on an H200 (cache_samples/h200_074, bench/h200_074)."""

from __future__ import annotations

from pathlib import Path

from tiletune.analysis.pipeline import inspect
from tiletune.core.records import Status
from tiletune.readers.interface import ReadContext

LOG = Path(__file__).resolve().parents[2] / "cache_samples" / "h200_074" / "autotune_074_debug.log"


def test_one_fallback_is_one_record_whatever_lines_say_it():
    # 0.7.4 says one fallback twice: DEBUG "Using fallback tactic ...; generated key ..." (key on the
    # same line) and WARNING "No tuned config covers ...": one call at M 5000, one record, runner named
    r = inspect([str(LOG)], ReadContext())
    fallbacks = [e.record for e in r.entries if e.record.status is Status.FALLBACK]
    assert len(fallbacks) == 1 and fallbacks[0].runner == "CublasFp8GemmRunner" and fallbacks[0].count == 1
    lead = r.verdicts[0].text
    assert lead.count("fallback tactic") == 1


def test_the_measured_range_is_in_microseconds():
    r = inspect([str(LOG)], ReadContext())
    lead = r.verdicts[0].text
    # in us for people; the log's own numbers beside them, as written, to find the lines by
    assert "5.19 us to 14.8 us measured (0.0051904-0.0147712 ms as logged)" in lead
