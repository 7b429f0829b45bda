"""The log reader's clock: each line's stamp, and the spans of tuning they bound (-> `core.timeline.Timeline`).

The parser calls `stamp()` once per line segment before it reads the message, then the marks its
handlers find on that line: a window's start or end, an op's `generated profile` lines, a tactic
line, the end of a profile (`chosen` at DEBUG, `Skipped N` at INFO), a JIT build, a cache hit, a
tqdm bar. Stamps are read from FlashInfer's logger header (the parser's match, to the millisecond)
or, on any other line, from vLLM's, SGLang's, TensorRT-LLM's, Python logging's and glog's headers
(to the second; glog to the microsecond).

Lines of several processes interleave in one server log ("(Worker_TP0 pid=289) ..."): distances
are taken between lines of one process, told apart by the prefix before the stamp. Memory is
bounded: a fixed number of spans, tactics, builds and silences is kept, whatever the log's size.
"""

from __future__ import annotations

import heapq
import re
from datetime import datetime
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from tiletune.core.records import Tactic
from tiletune.core.timeline import (
    BarTime,
    JitBuild,
    OpenProfile,
    ProfileSpan,
    Silence,
    Stamp,
    TacticTime,
    Timeline,
    Window,
)

MAX_SPANS = 4096  # profile spans kept per kind (chosen / skipped); past it they are counted
MAX_TACTICS = 20_000
MAX_WINDOWS = 256
MAX_JIT = 64
MAX_STREAMS = 256
SILENCES_KEPT = 5
WORDS = 200

# a header that is not FlashInfer's (its own is the parser's HEADER match), at the start of a line after
# an optional process prefix; each alternative names its fields
_OTHER = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[,.](?P<f>\d{1,6}))?"
    r"|\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?P<mo2>\d\d)-(?P<d2>\d\d) (?P<h2>\d\d):(?P<mi2>\d\d):(?P<s2>\d\d)\b"
    r"|\[(?P<mo3>\d\d)/(?P<d3>\d\d)/(?P<y3>\d{4})-(?P<h3>\d\d):(?P<mi3>\d\d):(?P<s3>\d\d)\]"
    r"|^\s*[IWEF](?P<mo4>\d\d)(?P<d4>\d\d) (?P<h4>\d\d):(?P<mi4>\d\d):(?P<s4>\d\d)\.(?P<f4>\d{6})\b"
)
_PREFIX_END = 160  # a stamp further into the line is a time quoted in a message, not the line's own
_STREAM = re.compile(r"\s*(\((?:[A-Za-z_]+[\w ]*?)?(?: ?pid=\d+)\)|\[rank\d+\]:?|\([A-Za-z_]+\d* pid=\d+\))")
_CLOCKS = {"y": "Python logging / SGLang (1 s)", "mo2": "vLLM (1 s)", "mo3": "TensorRT-LLM (1 s)", "mo4": "glog (1 us)"}
FLASHINFER_CLOCK = "FlashInfer logger (1 ms)"
_BAR = re.compile(r"Tuning (?P<op>[\w:.]+?):\s*(?:\d+%\s*(?:\|[^|]*\|)?)?\s*(?P<done>\d+)/(?P<total>\d+)\s*"
                  r"\[(?P<el>(?:\d+:)?\d\d:\d\d)")
_BASE = datetime(2000, 1, 1)


@lru_cache(maxsize=8192)  # many lines share one second
def _second(mo: int, d: int, h: int, mi: int, s: int) -> Optional[float]:
    """Seconds from 1 January of a leap year (vLLM prints no year: the year is never used)."""
    try:
        return (datetime(2000, mo, d, h, mi, s) - _BASE).total_seconds()
    except ValueError:
        return None


def flashinfer_seconds(ts: str) -> Optional[float]:
    """`2026-07-18 19:34:26,189` -> seconds (see `_second`)."""
    base = _second(int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19]))
    return None if base is None else base + int(ts[20:23]) / 1000.0


def other_seconds(text: str) -> Optional[Tuple[float, int, str]]:
    """(seconds, where the stamp starts, which clock) of a line's own non-FlashInfer header, else None."""
    m = _OTHER.search(text, 0, _PREFIX_END)
    if m is None:
        return None
    g = m.groupdict()
    for key, suffix in (("y", ""), ("mo2", "2"), ("mo3", "3"), ("mo4", "4")):
        if g[key if key != "y" else "mo"] is not None:
            mo, d = int(g["mo" + suffix]), int(g["d" + suffix])
            base = _second(mo, d, int(g["h" + suffix]), int(g["mi" + suffix]), int(g["s" + suffix]))
            if base is None:
                return None
            frac = g.get("f" + suffix) if suffix in ("", "4") else None
            if frac:
                base += int(frac) / 10 ** len(frac)
            return base, m.start(), _CLOCKS[key]
    return None


def _elapsed(text: str) -> float:
    parts = [int(p) for p in text.split(":")]
    return float(parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0))


def _stream(prefix: str) -> str:
    m = _STREAM.match(prefix) if prefix else None
    return m.group(1) if m else ""


class _Bar:
    __slots__ = ("passes", "complete", "elapsed", "longest", "done", "total", "last", "line")

    def __init__(self) -> None:
        self.passes = self.complete = self.done = self.total = self.line = 0
        self.elapsed = self.longest = self.last = 0.0


class TimelineRecorder:
    """Fed line by line by `LogParser`; `finish()` gives the Timeline (None when no line was stamped)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.stamped = 0
        self.clocks: Dict[str, None] = {}
        self.resolution = 0.0
        self.first: Optional[Stamp] = None
        self._cur: Optional[Tuple[int, float, str, str]] = None  # (line, seconds, stream, text) of this line
        self._line_no = -1
        self._line_stream = ""
        self._last: Dict[str, Tuple[int, float, str]] = {}  # stream -> its previous stamped line
        self._last_any: Optional[Tuple[int, float, str]] = None
        self._auto_prev: Dict[str, float] = {}  # stream -> its previous autotuner line's seconds
        self.span_s: Optional[float] = None  # this autotuner line's distance to the one before it
        self._open: Dict[str, Stamp] = {}  # stream -> its open window's start
        self.windows: List[Window] = []
        self.windows_seen = False
        self._bound: Dict[Tuple[str, str], Stamp] = {}  # (stream, "chosen"|"skipped") -> where the next span starts
        self._since: Dict[str, List[int]] = {}  # stream -> [timed, failed] since its last chosen line
        self.spans: Dict[str, List[ProfileSpan]] = {"chosen": [], "skipped": []}
        self.left_out = {"chosen": 0, "skipped": 0}
        self._tactics: Dict[Tuple[Any, ...], List[Any]] = {}
        # min-heaps of the longest silences: inside a window (True), and between autotuner lines outside any
        # (False: used only when the text shows no window, e.g. a log cut before `Autotuning process starts`)
        self._silences: Dict[bool, List[Tuple[float, int, Stamp, Stamp]]] = {True: [], False: []}
        self.last_progress: Optional[Stamp] = None
        self._progress_stream = ""
        self.after_progress: Optional[Stamp] = None
        self._last_tactic: Optional[Tuple[str, Tactic, int, Any]] = None  # op, tactic, line, shapes of the latest tactic line
        self._bars: Dict[str, _Bar] = {}
        self._jit: List[List[Any]] = []  # [module, start Stamp, stream, next Stamp]
        self.cache_hits = 0
        self._generating: set = set()  # streams inside a run of `generated profile` lines

    # ----- every line --------------------------------------------------------------------------
    def stamp(self, lineno: int, text: str, flashinfer_ts: Optional[str] = None, header_at: int = 0,
              autotuner: bool = False) -> None:
        """This line's stamp: FlashInfer's header (`flashinfer_ts`, starting at `header_at`) or another logger's."""
        self._cur = None
        self.span_s = None
        if lineno != self._line_no:  # a line's first segment: its process prefix holds for the tqdm segments after \r
            self._line_no = lineno
            self._line_stream = _stream(text) if text[:1] in "([ " else ""
        if flashinfer_ts is not None:
            at = flashinfer_seconds(flashinfer_ts)
            where, clock, step = header_at, FLASHINFER_CLOCK, 0.001
        else:
            if not text or not any(c.isdigit() for c in text[:_PREFIX_END]):
                return
            found = other_seconds(text)
            if found is None:
                return
            at, where, clock = found
            step = 1e-6 if "glog" in clock else 1.0
        if at is None:
            return
        stream = _stream(text[:where]) or self._line_stream
        if stream not in self._last and len(self._last) >= MAX_STREAMS:
            stream = ""
        self.stamped += 1
        if clock not in self.clocks:
            self.clocks[clock] = None
        words = text.strip()[:WORDS]
        self._cur = (lineno, at, stream, words)
        prev = self._last.get(stream)
        # a silence counts inside an autotuning window (or, in a text that shows none, between autotuner lines;
        # which of the two is decided at the end: a line before the first window is not "during tuning")
        inside = stream in self._open
        if prev is not None and (inside or autotuner) and at - prev[1] > 0:
            self._silence(prev, (lineno, at, words), inside)
        self._last[stream] = (lineno, at, words)
        self._last_any = (lineno, at, words)
        if self.first is None:
            self.first = Stamp(lineno, at, words)
        if self._jit and self._jit[-1][3] is None and self._jit[-1][2] == stream and self._jit[-1][1].line != lineno:
            self._jit[-1][3] = Stamp(lineno, at, words)
        if autotuner:
            if "generated profile" not in text:
                self._generating.discard(stream)
            self.resolution = max(self.resolution, step)
            p = self._auto_prev.get(stream)
            self.span_s = at - p if p is not None and at >= p else None
            self._auto_prev[stream] = at
            self.last_progress = Stamp(lineno, at, words)
            self._progress_stream = stream
            self.after_progress = None
        elif self.last_progress is not None and self.after_progress is None:
            self.after_progress = Stamp(lineno, at, words)

    def _here(self) -> Optional[Stamp]:
        c = self._cur
        return Stamp(c[0], c[1], c[3]) if c is not None else None

    def _silence(self, a: Tuple[int, float, str], b: Tuple[int, float, str], inside: bool) -> None:
        gap = b[1] - a[1]
        item = (gap, b[0], Stamp(*a), Stamp(*b))
        heap = self._silences[inside]
        if len(heap) < SILENCES_KEPT:
            heapq.heappush(heap, item)
        elif gap > heap[0][0]:
            heapq.heapreplace(heap, item)

    # ----- marks on the current line ---------------------------------------------------------------
    def window_start(self) -> None:
        here = self._here()
        if here is None:
            return
        stream = self._cur[2]  # type: ignore[index]
        self._close(stream, None)
        self._open[stream] = here
        self.windows_seen = True
        for kind in ("chosen", "skipped"):
            self._bound[(stream, kind)] = here
        self._since[stream] = [0, 0]

    def window_end(self) -> None:
        here = self._here()
        if here is not None:
            self._close(self._cur[2], here)  # type: ignore[index]

    def _close(self, stream: str, end: Optional[Stamp]) -> None:
        start = self._open.pop(stream, None)
        if start is not None and len(self.windows) < MAX_WINDOWS:
            self.windows.append(Window(start, end))

    def op_start(self) -> None:
        """An op's `generated profile` lines: its first profile starts at the first of them (not at the previous
        op's end, nor at the last of the run)."""
        here = self._here()
        if here is None:
            return
        stream = self._cur[2]  # type: ignore[index]
        if stream not in self._generating:
            self._generating.add(stream)
            self._bound[(stream, "chosen")] = here

    def tactic_line(self, failed: bool) -> Optional[float]:
        """A tactic's timing or failure line: its span (seconds since the autotuner line before it)."""
        c = self._cur
        if c is None:
            return None
        since = self._since.setdefault(c[2], [0, 0])
        since[1 if failed else 0] += 1
        return self.span_s

    def tactic(self, op: str, runner: str, tactic: Tactic, failed: bool, span_s: Optional[float], line: int,
               shapes: Any = None) -> None:
        """One tactic line, once the parser knows its op (when the profile block closed)."""
        if self._last_tactic is None or line >= self._last_tactic[2]:
            self._last_tactic = (op, tactic, line, shapes)
        if span_s is None:
            return
        try:
            key: Tuple[Any, ...] = (op, runner, tactic)
            hash(key)
        except TypeError:
            key = (op, runner, repr(tactic))
        t = self._tactics.get(key)
        if t is None:
            if len(self._tactics) >= MAX_TACTICS:
                return
            t = self._tactics[key] = [0, 0.0, 0, 0.0, line, tactic]
        if failed:
            t[0] += 1
            t[1] += span_s
        else:
            t[2] += 1
            t[3] += span_s

    def profile_end(self, kind: str, op: str, shapes: Any = None) -> None:
        """The end of one profile: `chosen` (DEBUG) or `skipped` (INFO's `Skipped N ...` line)."""
        here = self._here()
        if here is None:
            return
        stream = self._cur[2]  # type: ignore[index]
        start = self._bound.get((stream, kind))
        self._bound[(stream, kind)] = here
        timed, failed = self._since.get(stream, (0, 0)) if kind == "chosen" else (0, 0)
        if kind == "chosen":
            self._since[stream] = [0, 0]
        if start is None or here.at_s < start.at_s:
            return
        if len(self.spans[kind]) >= MAX_SPANS:
            self.left_out[kind] += 1
            return
        self.spans[kind].append(ProfileSpan(op, bucket_text(shapes), start, here, kind, timed, failed, shapes))

    def jit(self, module: str) -> None:
        here = self._here()
        if here is not None and len(self._jit) < MAX_JIT:
            self._jit.append([module, here, self._cur[2], None])  # type: ignore[index]

    def cache_hit(self) -> None:
        self.cache_hits += 1

    def bars(self, lineno: int, text: str) -> None:
        """tqdm `Tuning <op>: 40%|...| 4/10 [00:12<00:18, ...]` states: passes and their elapsed time."""
        if "[" not in text:
            return
        for m in _BAR.finditer(text):
            op, done, total, el = m["op"], int(m["done"]), int(m["total"]), _elapsed(m["el"])
            b = self._bars.get(op)
            if b is None:
                if len(self._bars) >= MAX_STREAMS:
                    continue
                b = self._bars[op] = _Bar()
            elif (done, total) == (b.done, b.total) and done >= total and lineno == b.line:
                # tqdm prints a finished bar again when it closes (on the same line, after a carriage return)
                if el > b.last:
                    b.elapsed += el - b.last
                    b.longest = max(b.longest, el)
                    b.last = el
                continue
            elif done < b.done or total != b.total or b.done >= b.total:  # a new pass (as events.progress counts)
                b.passes += 1
            if b.passes == 0:
                b.passes = 1
            if done >= total and total > 0:
                b.complete += 1
                b.elapsed += el
                b.longest = max(b.longest, el)
            b.done, b.total, b.last, b.line = done, total, el, lineno

    # ----- the end ----------------------------------------------------------------------------------
    def finish(self) -> Optional[Timeline]:
        if not self.stamped and not self._bars:
            return None
        for stream in list(self._open):
            self._close(stream, None)
        windows = sorted(self.windows, key=lambda w: w.start.line)
        open_profile = None
        ended_inside = any(w.end is None for w in windows)
        if ended_inside and self._last_tactic is not None and self.last_progress is not None:
            op, tactic, line, shapes = self._last_tactic
            timed, failed = self._since.get(self._progress_stream, (0, 0))
            if line >= max((s.end.line for s in self.spans["chosen"]), default=0):
                open_profile = OpenProfile(op, timed, failed, tactic, self.last_progress, bucket_text(shapes))
        tactics = tuple(TacticTime(k[0], k[1], v[5], v[0], round(v[1], 6), v[2], round(v[3], 6), v[4])
                        for k, v in self._tactics.items())
        last = Stamp(*self._last_any) if self._last_any is not None else None
        kind = "chosen" if self.spans["chosen"] else "skipped"
        return Timeline(
            self.source, tuple(self.clocks), self.resolution or (1.0 if self.stamped else 0.0), self.stamped,
            self.first, last, tuple(windows), tuple(self.spans[kind]), self.left_out[kind], tactics,
            tuple(Silence(a, b) for _gap, _line, a, b in sorted(self._silences[self.windows_seen], key=lambda s: (-s[0], s[1]))),
            self.last_progress, self.after_progress, open_profile,
            tuple(BarTime(op, b.passes, b.complete, b.elapsed, b.longest, b.done, b.total, b.last, b.line)
                  for op, b in self._bars.items()),
            tuple(JitBuild(j[0], j[1], j[3]) for j in self._jit), self.cache_hits, max(1, len(self._auto_prev)))


def bucket_text(shapes: Any) -> str:
    """A profile's first input shape as the key prints it, e.g. `(8, 256)` ("" when the key holds none)."""
    if isinstance(shapes, tuple) and shapes and isinstance(shapes[0], tuple):
        return "(" + ", ".join(str(x) for x in shapes[0]) + ")"
    return ""


__all__ = ["FLASHINFER_CLOCK", "TimelineRecorder", "bucket_text", "flashinfer_seconds", "other_seconds"]
