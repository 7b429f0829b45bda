"""A report cuts a text only when the ticket would not fit otherwise (issue 25, item 11).

Markdown never cuts: the report, sized for a GitHub issue, cut every text at 300 characters from
its first try, so the demo's calibration notes lost their held-out error (the evidence for the
calibrated column) in a report of a few kilobytes. Now the first try cuts no text; a report that
would not fit still steps down (tests/formats/test_report_hostile.py holds that side).
"""

from __future__ import annotations

from tiletune.formats import report as report_format


def test_the_demo_reports_notes_are_whole(run, sample, tmp_path):
    out = tmp_path / "r.md"
    assert run("report", sample("demo"), "-o", out).exit_code == 0
    text = out.read_text(encoding="utf-8")
    assert len(text) < report_format.TICKET_CHARS and "\u2026" not in text
    notes = [ln for ln in text.splitlines() if ln.startswith("- ") and "calibrated on" in ln and "held-out" in ln]
    assert len(notes) == 2 and all("L2 state" in ln for ln in notes), notes


def test_the_first_try_cuts_nothing_and_every_later_one_cuts():
    first, *later = report_format.TICKET_STEPS
    assert first.text is None and all(step.text is not None for step in later)
