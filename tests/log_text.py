"""Read quoted log or ticket lines the way `tiletune inspect` reads a text file, for tests that quote
real text inline: `read_lines` gives the reader's events, input facts and tuning records; `verdicts_of`
runs them through the same pipeline to the verdicts a person reads."""

from __future__ import annotations

from tiletune.analysis.pipeline import build
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import TuningRecord
from tiletune.decode import decode_all
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext


def read_lines(lines: list[str], source: str = "t.txt") -> tuple[list[Event], list[InputFacts], list[TuningRecord]]:
    items = list(logs.parse_lines(enumerate(lines, 1), source, ReadContext().environment()))
    return ([i for i in items if isinstance(i, Event)], [i for i in items if isinstance(i, InputFacts)],
            [i for i in items if isinstance(i, TuningRecord)])


def verdicts_of(lines: list[str]):
    events, inputs, records = read_lines(lines)
    return build(decode_all(records), events=events, inputs=inputs).verdicts
