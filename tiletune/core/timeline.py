"""A log's clock: what the timestamps of its lines say about where a start-up's time went.

The log reader (`tiletune.readers.logs.timeline`) fills one `Timeline` per text input from the
stamps its lines carry (FlashInfer's logger `2026-07-18 19:34:26,189` to the millisecond; vLLM
`INFO 07-18 19:34:26`, SGLang `[2026-04-16 04:18:09 TP5]`, TensorRT-LLM `[01/14/2026-10:12:11]`
to the second; tqdm's elapsed `[00:25<00:00` to the second). Every number here is a distance
between two printed stamps: wall time as the log saw it, never a kernel's measured time.
`tiletune.analysis.warmup_cost` turns a Timeline into what a user reads.

A stamp's `at_s` counts seconds from the start of the year it names, in a leap year: vLLM prints no
year, so the year is never used (a log that spans New Year gets a negative distance, which the
reader treats as unknown). Records layer: no I/O, no parsing.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from msgspec import Struct

from tiletune.core.records import Tactic


class Stamp(Struct, frozen=True, gc=False):
    """One stamped line: its number, its time, and its words (clipped) as evidence."""

    line: int
    at_s: float
    words: str = ""


class ProfileSpan(Struct, frozen=True, gc=False):
    """One profile's tuning (one bucket of one op): from the line that opened it to the line that
    closed it. `closed_by` is "chosen" (DEBUG: the `profiling chosen runner` line, opened by the
    previous profile's end, the op's `generated profile` lines or the window's start) or "skipped"
    (INFO: consecutive `Skipped N unsupported tactic(s)` lines, so a span may hold more than one
    profile when a profile skipped none)."""

    op: str
    bucket: str  # the profile's first input shape as the key prints it ("(8, 256)"), "" when not known
    start: Stamp
    end: Stamp
    closed_by: str
    timed: int = 0  # timing lines inside it
    failed: int = 0  # failure lines inside it
    shapes: Any = None  # the profile key's shapes (frozen), for the analysis to name its M bucket

    @property
    def seconds(self) -> float:
        return max(0.0, self.end.at_s - self.start.at_s)


class TacticTime(Struct, frozen=True, gc=False):
    """The wall time the log's stamps give one (op, runner, tactic): each of its lines' distance to
    the autotuner line before it (the time FlashInfer spent on that tactic before printing it)."""

    op: str
    runner: str
    tactic: Tactic
    failed: int = 0
    failed_s: float = 0.0
    timed: int = 0
    timed_s: float = 0.0
    first_line: int = 0


class Window(Struct, frozen=True, gc=False):
    """`Autotuning process starts ...` to `... ends` (None: the text shows no end)."""

    start: Stamp
    end: Optional[Stamp] = None


class Silence(Struct, frozen=True, gc=False):
    """Two consecutive stamped lines of one process during tuning, and nothing between them."""

    before: Stamp
    after: Stamp

    @property
    def seconds(self) -> float:
        return max(0.0, self.after.at_s - self.before.at_s)


class BarTime(Struct, frozen=True, gc=False):
    """What tqdm's `Tuning <op>` bars say: passes, and the elapsed time of each finished one (1 s steps)."""

    op: str
    passes: int
    complete: int
    elapsed_s: float  # sum over the finished passes of their last printed elapsed time
    longest_s: float
    last_done: int
    last_total: int
    last_elapsed_s: float
    line: int


class JitBuild(Struct, frozen=True, gc=False):
    """`Building JIT module <name>` and the next stamped line of that process (the build's end is not logged)."""

    module: str
    start: Stamp
    next: Optional[Stamp] = None


class OpenProfile(Struct, frozen=True, gc=False):
    """The profile being tuned when the text ends inside an autotuning window."""

    op: str
    timed: int  # tactics timed since the last profile ended
    failed: int
    last_tactic: Tactic
    last: Stamp  # its last tactic line
    bucket: str = ""  # its tactics' first input shape ("(4, 256)"), "" when the lines do not print it


class Timeline(Struct, frozen=True, gc=False):
    source: str
    clocks: Tuple[str, ...]  # the stamp formats read ("FlashInfer logger (1 ms)", "vLLM (1 s)")
    resolution_s: float  # the coarsest step among the stamps the spans use
    stamped_lines: int
    first: Optional[Stamp] = None
    last: Optional[Stamp] = None
    windows: Tuple[Window, ...] = ()
    profiles: Tuple[ProfileSpan, ...] = ()
    profiles_left_out: int = 0  # spans past the reader's bound (counted in no total)
    tactics: Tuple[TacticTime, ...] = ()
    silences: Tuple[Silence, ...] = ()  # the longest during tuning, longest first
    last_progress: Optional[Stamp] = None  # the last autotuner line
    after_progress: Optional[Stamp] = None  # the first stamped line (any logger) after it
    open_profile: Optional[OpenProfile] = None
    bars: Tuple[BarTime, ...] = ()
    jit: Tuple[JitBuild, ...] = ()
    cache_hits: int = 0  # `Config cache hit` lines
    streams: int = 1  # processes told apart by their line prefix ("(Worker_TP0 pid=289)")


__all__ = ["BarTime", "JitBuild", "OpenProfile", "ProfileSpan", "Silence", "Stamp", "TacticTime", "Timeline", "Window"]
