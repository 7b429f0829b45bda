"""Warm-up cost: where a start-up's tuning time went, estimated from the log's own timestamps.

One `WarmupCost` per text input whose lines carry stamps around tuning (`core.timeline.Timeline`,
filled by the log reader). Every figure is a distance between two printed stamps, so each says
"estimated from these timestamps" and its basis (which lines, which logger, its step); none is a
kernel's measured time, and none is modelled.

- tuning: the `Autotuning process starts` .. `ends` windows (the text's own markers);
- per op and per profile: DEBUG logs close a profile with `profiling chosen runner` (opened by the
  previous profile's end, the op's `generated profile` lines or the window's start); INFO logs only
  with `Skipped N unsupported tactic(s)`, so a span there may hold several profiles; tqdm's bars
  add their elapsed time per op (1 s steps);
- JIT builds: `Building JIT module X` to the next line of that process (the build's end is not logged);
- silences and stalls: the longest distance between consecutive lines of one process during tuning;
  a stall is one of at least `STALL_S`, or a window that the text never closes (what followed its
  last progress line, and how long after, or that nothing did);
- where a hung or killed run stopped: the op, the profiles it finished, the tactics timed in the
  profile it was in, its last progress line;
- what skipping always-failing tactics would have saved (a blocklist as `tiletune retry --blocklist`
  writes and FlashInfer's FLASHINFER_TACTICS_BLOCKLIST filters before profiling): the spans of the
  failure lines of tactics that never timed in this text; and what a warm cache would have saved:
  the profiles' spans (FlashInfer looks every profile up in the loaded cache before profiling it),
  less the JIT builds inside them, which a tuning cache does not avoid.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from msgspec import Struct

from tiletune.core.events import Event, InputFacts
from tiletune.core.records import Status
from tiletune.core.timeline import ProfileSpan, Silence, TacticTime, Timeline

LABEL = "estimated from these timestamps"
STALL_S = 60.0  # a silence this long inside tuning is called a stall (a FlashInfer profile logs far more often)
SLOWEST = 3
WORDS = 120


class Figure(Struct, frozen=True, gc=False):
    """One estimated duration and how it was taken."""

    seconds: float
    basis: str
    lines: tuple[int, ...] = ()


class OpCost(Struct, frozen=True, gc=False):
    op: str
    seconds: float  # the sum of its profiles' spans
    profiles: int
    timed: int  # tactic timing lines in them (DEBUG)
    failed: int  # tactic failure lines in them (DEBUG)
    bar_seconds: Optional[float] = None  # tqdm's elapsed over its finished passes (1 s steps)
    bar_passes: int = 0


class ProfileCost(Struct, frozen=True, gc=False):
    op: str
    bucket: str  # "M=8" when the key decodes, else the first input's shape
    seconds: float
    start_line: int
    end_line: int


class JitCost(Struct, frozen=True, gc=False):
    module: str
    seconds: Optional[float]  # None: no line of that process followed
    line: int
    next_line: Optional[int] = None


class Quiet(Struct, frozen=True, gc=False):
    """A silence: `seconds` from `before` to `after`; `after` None and `seconds` None: the text ends."""

    seconds: Optional[float]
    before_line: int
    before_words: str
    after_line: Optional[int] = None
    after_words: str = ""
    stall: bool = False
    text: str = ""


class StopPoint(Struct, frozen=True, gc=False):
    """Where a run that never closed its autotuning window stopped."""

    op: Optional[str]
    profiles_done: int  # profiles of that op finished in the open window
    timed: int  # tactics timed in the profile it was in
    failed: int
    last_tactic: Any
    last_line: int
    last_words: str
    window_line: int
    seconds_in_window: float  # from the window's start to the last progress line
    text: str


class Saving(Struct, frozen=True, gc=False):
    """What would not have been spent; `seconds` None when these timestamps cannot tell (`basis` says why)."""

    seconds: Optional[float]
    basis: str
    share: Optional[float] = None  # of `share_of`
    items: tuple[str, ...] = ()  # the tactics, or the profiles, it counts
    share_of: str = ""  # what `share` is a fraction of: "the 3.96 s of tuning", or a hung run's finished profiles


class WarmupCost(Struct, frozen=True, gc=False):
    source: str
    group: Optional[str]
    label: str  # LABEL: every figure below is a distance between printed stamps
    clock: str  # which stamps, and their step
    headline: str  # the sentence a user reads first
    tuning: Optional[Figure] = None  # the closed autotuning windows together
    windows: int = 0
    open_window: bool = False
    ops: tuple[OpCost, ...] = ()
    profile_basis: str = ""
    slowest: tuple[ProfileCost, ...] = ()
    jit: tuple[JitCost, ...] = ()
    longest_silence: Optional[Quiet] = None
    stall: Optional[Quiet] = None
    stopped: Optional[StopPoint] = None
    blocklist: Optional[Saving] = None
    warm_cache: Optional[Saving] = None
    cache_hits: int = 0
    notes: tuple[str, ...] = ()


def _s(x: float) -> str:
    """Seconds as text: 3 significant figures below 100 s, then whole seconds (minutes beside long ones)."""
    if x >= 100:
        text = f"{x:.0f} s"
        return text + (f" ({x / 60:.1f} min)" if x >= 600 else "")
    if x >= 10:
        return f"{x:.1f} s"
    return f"{x:.2f} s" if x >= 0.1 else f"{x * 1000:.0f} ms"


def seconds_text(x: Optional[float]) -> str:
    return "unknown" if x is None else _s(x)


def _clip(words: str) -> str:
    words = " ".join(words.split())
    return words if len(words) <= WORDS else words[: WORDS - 2].rstrip() + " …"


def _clock(t: Timeline) -> str:
    step = "1 ms" if t.resolution_s <= 0.001 else ("1 s" if t.resolution_s >= 1 else f"{t.resolution_s:g} s")
    return f"{', '.join(t.clocks) or 'tqdm bars only'}; spans in {step} steps"


def _bucket_labels(entries: Iterable[Any], source: str) -> dict[tuple[str, Any], str]:
    """(op, profile shapes) -> "M=8" from the decoded CHOSEN entries of this source."""
    out: dict[tuple[str, Any], str] = {}
    for ae in entries:
        r = ae.record
        if r.source != source or r.status is not Status.CHOSEN:
            continue
        p = ae.entry.problem
        if p is not None:
            try:
                out[(r.op, r.shapes)] = f"M={p.m} (N={p.n}, K={p.k})"
            except TypeError:  # unhashable shapes
                continue
    return out


def _ops(t: Timeline) -> list[OpCost]:
    per: dict[str, list[Any]] = {}
    for p in t.profiles:
        v = per.setdefault(p.op or "op not named", [0.0, 0, 0, 0])
        v[0] += p.seconds
        v[1] += 1
        v[2] += p.timed
        v[3] += p.failed
    bars = {b.op: b for b in t.bars}
    out = [OpCost(op, round(v[0], 6), v[1], v[2], v[3],
                  bars[op].elapsed_s if op in bars and bars[op].complete else None, bars[op].passes if op in bars else 0)
           for op, v in per.items()]
    for op, b in bars.items():  # ops only the bars show (INFO logs whose profiles skipped nothing)
        if op not in per:
            out.append(OpCost(op, 0.0, 0, 0, 0, b.elapsed_s if b.complete else None, b.passes))
    return sorted(out, key=lambda o: (-(o.seconds or o.bar_seconds or 0.0), o.op))


def _quiet(s: Silence, stall: bool, jit: Sequence[JitCost] = ()) -> Quiet:
    build = next((j for j in jit if j.line == s.before.line), None)
    text = (f"{'stall' if stall else 'longest silence during tuning'}: {_s(s.seconds)} with no line between line "
            f"{s.before.line} and line {s.after.line}" + (f" (the JIT build of {build.module})" if build else "")
            + f" ({LABEL})")
    return Quiet(round(s.seconds, 6), s.before.line, _clip(s.before.words), s.after.line, _clip(s.after.words), stall, text)


def _always_failing(tactics: Sequence[TacticTime]) -> list[TacticTime]:
    return [t for t in tactics if t.failed and not t.timed]


def _tactic_name(t: TacticTime) -> str:
    return f"{t.op or 'op not named'} {t.runner or 'runner not named'} tactic {t.tactic} ({t.failed} failure line{'s' if t.failed != 1 else ''})"


def _blocklist(t: Timeline, tuning: Optional[float], share_of: str) -> Saving:
    bad = _always_failing(t.tactics)
    if not t.tactics and t.cache_hits and not t.profiles:
        return Saving(0.0, f"nothing was profiled in this text ({t.cache_hits} `Config cache hit` line(s)): no "
                           "failing tactic took time")
    if not t.tactics:
        return Saving(None, "per-tactic lines are DEBUG: this text has none, so the time failing tactics took is not in "
                            "it (FLASHINFER_LOGGING_LEVEL=debug logs each tactic and its failure)")
    if not bad:
        return Saving(0.0, "no tactic failed every time it was tried in this text: nothing to skip", 0.0 if tuning else None)
    secs = sum(x.failed_s for x in bad)
    return Saving(round(secs, 6), f"{LABEL}: each failure line's distance to the autotuner line before it, for the "
                                  f"{len(bad)} tactic(s) that failed every time and never timed here (a blocklist "
                                  "as `tiletune retry --blocklist` writes them; FlashInfer drops them before profiling)",
                  round(secs / tuning, 4) if tuning else None, tuple(_tactic_name(x) for x in bad),
                  share_of if tuning else "")


def _warm(t: Timeline, spans: Sequence[ProfileSpan], jit_in: float, ignored: Sequence[str]) -> Saving:
    if not spans:
        if t.cache_hits:
            return Saving(0.0, f"already warm: {t.cache_hits} `Config cache hit` line(s) and no profile tuned in this text")
        return Saving(None, "no profile's span is in this text (no `profiling chosen runner` or `Skipped N` lines with stamps)")
    total = sum(p.seconds for p in spans)
    secs = max(0.0, total - jit_in)
    basis = (f"{LABEL}: the {len(spans)} tuned profile(s)' spans, which FlashInfer skips when a loaded cache holds their "
             "keys (it looks each profile up in the cache before profiling it)")
    if jit_in:
        basis += f", less {_s(jit_in)} of JIT builds inside them (a tuning cache does not avoid a build)"
    if ignored:
        basis += "; this run ignored a cache (" + "; ".join(_clip(x) for x in ignored[:2]) + "): `tiletune check` says so in advance"
    return Saving(round(secs, 6), basis, None, ())


def _last_bar(t: Timeline) -> Optional[Any]:
    """The progress bar printed last (INFO logs: where tuning was, when no tactic line says it)."""
    return max(t.bars, key=lambda b: b.line, default=None)


def _stop(t: Timeline, ticket: bool = False) -> Optional[StopPoint]:
    """Where tuning was when the text ends inside an autotuning window. The text alone cannot tell a hang, a
    kill and a cut excerpt apart, so this says where tuning was last and what follows, never why."""
    open_windows = [w for w in t.windows if w.end is None]
    if not open_windows or t.last_progress is None:
        return None
    w = open_windows[-1]
    op_prof = t.open_profile
    done = 0
    if op_prof is not None:
        done = sum(1 for p in t.profiles if p.op == op_prof.op and p.end.line >= w.start.line)
    last = t.last_progress
    in_window = max(0.0, last.at_s - w.start.at_s)
    bar = _last_bar(t)
    if op_prof is not None:
        where = (f"in {op_prof.op}'s profile {done + 1}" + (f", first input {op_prof.bucket}" if op_prof.bucket else "")
                 + f" (after {done} finished; {op_prof.timed} tactic(s) timed"
                 + (f", {op_prof.failed} failed" if op_prof.failed else "") + f" in it, the last tactic {op_prof.last_tactic})")
    elif bar is not None and bar.line >= w.start.line:
        where = f"in {bar.op}, {bar.last_done} of {bar.last_total} profiles done by its progress bar (line {bar.line})"
    else:
        where = "inside the window (no line says which op)"
    after = t.after_progress
    then = ("nothing follows it in this text" if after is None else
            f"the next line, {_s(max(0.0, after.at_s - last.at_s))} later, is line {after.line}")
    text = (f"no `Autotuning process ends` follows the window opened at line {w.start.line} in this text: tuning was "
            f"last {where}; its last autotuner line is line {last.line}, {_s(in_window)} after the window opened, and "
            f"{then} ({LABEL}; "
            + ("this text is a ticket's excerpt" if ticket else "a hang, a kill and a cut excerpt look alike here")
            + ")")
    return StopPoint(op_prof.op if op_prof else (bar.op if bar is not None else None), done,
                     op_prof.timed if op_prof else 0, op_prof.failed if op_prof else 0,
                     op_prof.last_tactic if op_prof else None, last.line, _clip(last.words), w.start.line,
                     round(in_window, 6), text)


def _after_stop(t: Timeline) -> Quiet:
    last = t.last_progress
    assert last is not None
    after = t.after_progress
    if after is None:
        return Quiet(None, last.line, _clip(last.words), None, "", False,
                     f"after the last autotuner line (line {last.line}): nothing follows in this text, so how long "
                     "tuning stayed there is not in it")
    gap = max(0.0, after.at_s - last.at_s)
    return Quiet(round(gap, 6), last.line, _clip(last.words), after.line, _clip(after.words), gap >= STALL_S,
                 f"{'stall' if gap >= STALL_S else 'after the last autotuner line'}: no autotuner line after line "
                 f"{last.line}; the next line, {_s(gap)} later, is line {after.line} ({LABEL})")


def warmup_cost(facts: InputFacts, entries: Sequence[Any] = (), events: Sequence[Event] = (),
                group: Optional[str] = None) -> Optional[WarmupCost]:
    """The warm-up cost of one text input (None when its lines carry no stamp around tuning)."""
    t = facts.timeline
    if t is None:
        return None
    closed = [w for w in t.windows if w.end is not None]
    tuning = None
    if closed:
        secs = sum(max(0.0, w.end.at_s - w.start.at_s) for w in closed if w.end is not None)
        first, last = closed[0], closed[-1]
        basis = (f"`Autotuning process starts` (line {first.start.line}) to `ends` (line {last.end.line})"  # type: ignore[union-attr]
                 if len(closed) == 1 else f"{len(closed)} `Autotuning process starts` .. `ends` windows, lines "
                 f"{first.start.line}-{last.end.line}")  # type: ignore[union-attr]
        tuning = Figure(round(secs, 6), f"{LABEL}: {basis}",
                        tuple(x for w in closed for x in (w.start.line, w.end.line if w.end else 0)))
    labels = _bucket_labels(entries, facts.source)
    spans = list(t.profiles)
    ops = _ops(t)
    profile_total = sum(p.seconds for p in spans)
    if spans and spans[0].closed_by == "chosen":
        profile_basis = (f"{LABEL}: each profile from the line that opened it (the previous profile's `chosen runner` "
                         "line, the op's `generated profile` lines or the window's start) to its own `profiling chosen "
                         "runner` line")
    elif spans:
        profile_basis = (f"{LABEL}: from one `Skipped N unsupported tactic(s)` line to the next (INFO logs print "
                         "nothing else per profile, so a span may hold several profiles, and a profile that skipped "
                         "nothing is inside the next one's span)")
    else:
        profile_basis = "no profile's span: the text has no stamped `chosen runner` or `Skipped N` lines" + (
            "; tqdm's bars give each op's elapsed time (1 s steps)" if t.bars else "")
    slowest = tuple(ProfileCost(p.op, _label(p, labels), round(p.seconds, 6), p.start.line, p.end.line)
                    for p in sorted(spans, key=lambda p: (-p.seconds, p.end.line))[:SLOWEST])
    jit = tuple(JitCost(j.module, round(j.next.at_s - j.start.at_s, 6) if j.next and j.next.at_s >= j.start.at_s else None,
                        j.start.line, j.next.line if j.next else None) for j in t.jit)
    jit_in = sum(c.seconds or 0.0 for c in jit if any(p.start.line <= c.line <= p.end.line for p in spans))
    silence = _quiet(t.silences[0], t.silences[0].seconds >= STALL_S, jit) if t.silences else None
    stopped = _stop(t, facts.ticket)
    stall = _after_stop(t) if stopped is not None else (silence if silence is not None and silence.stall else None)
    ignored = [e.summary for e in events if e.kind == "cache_ignored" and e.source == facts.source]
    # a share is of the tuning window; a run that never closed its window has only its finished profiles
    reference = tuning.seconds if tuning is not None else (profile_total or None)
    share_of = (f"the {_s(tuning.seconds)} of tuning" if tuning is not None else
                f"the finished profiles' {_s(profile_total)}" if profile_total else "")
    blocklist = _blocklist(t, reference, share_of)
    warm = _warm(t, spans, jit_in, ignored)
    if warm.seconds is not None and reference:
        warm = Saving(warm.seconds, warm.basis, round(warm.seconds / reference, 4), warm.items, share_of)
    notes = []
    if t.profiles_left_out:
        notes.append(f"{t.profiles_left_out} more profile span(s) past tiletune's bound are in no total")
    if t.streams > 1:
        notes.append(f"lines of {t.streams} processes interleave: each distance is taken between lines of one process")
    cost = WarmupCost(facts.source, group, LABEL, _clock(t), "", tuning, len(t.windows), any(w.end is None for w in t.windows),
                      tuple(ops), profile_basis, slowest, jit, silence, stall, stopped, blocklist, warm, t.cache_hits,
                      tuple(notes))
    if not (cost.tuning or cost.ops or cost.jit or cost.stopped or cost.stall or cost.cache_hits):
        return None
    return _with_headline(cost, profile_total)


def _label(p: ProfileSpan, labels: Mapping[tuple[str, Any], str]) -> str:
    try:
        found = labels.get((p.op, p.shapes))
    except TypeError:
        found = None
    return found or (f"first input {p.bucket}" if p.bucket else "")


def _with_headline(c: WarmupCost, profile_total: float) -> WarmupCost:
    from msgspec import structs

    parts = []
    if c.stopped is not None:
        parts.append(c.stopped.text)
    elif c.tuning is not None:
        parts.append(f"autotuning took about {_s(c.tuning.seconds)} ({c.tuning.basis})")
    elif profile_total:
        parts.append(f"the profiles' spans add up to about {_s(profile_total)} ({LABEL})")
    elif c.ops and any(o.bar_passes for o in c.ops):
        bars = [o for o in c.ops if o.bar_passes]
        parts.append("tqdm's bars: " + ", ".join(
            f"{o.op} {o.bar_passes} pass(es), " + ("none finished in this text" if o.bar_seconds is None else
                                                  f"{_s(o.bar_seconds)} in all" if o.bar_seconds else "each under 1 s")
            for o in bars[:3]) + " (1 s steps; estimated from tqdm's elapsed times)")
    if c.ops and c.ops[0].profiles and c.stopped is None:
        top = c.ops[0]
        parts.append(f"{top.op} took the most: {_s(top.seconds)} over {top.profiles} profile(s)")
    if c.blocklist is not None and c.blocklist.seconds:
        parts.append(f"skipping the always-failing tactics would have saved about {_s(c.blocklist.seconds)}"
                     + (f" ({c.blocklist.share:.0%} of {c.blocklist.share_of})" if c.blocklist.share is not None else ""))
    if c.warm_cache is not None and c.warm_cache.seconds and c.stopped is None:
        parts.append(f"a warm cache about {_s(c.warm_cache.seconds)}")
    if c.stall is not None and c.stopped is None:
        parts.append(c.stall.text)
    if not parts:
        parts.append(f"{c.cache_hits} cache hit(s), nothing tuned" if c.cache_hits else "stamped lines, no tuning span")
    headline = "; ".join(parts)
    return structs.replace(c, headline=headline[0].upper() + headline[1:])


def warmup_costs(inputs: Sequence[InputFacts], entries: Sequence[Any] = (), events: Sequence[Event] = (),
                 group_of: Optional[Mapping[str, str]] = None) -> tuple[WarmupCost, ...]:
    out = []
    for facts in inputs:
        c = warmup_cost(facts, entries, events, (group_of or {}).get(facts.source))
        if c is not None:
            out.append(c)
    return tuple(out)


__all__ = ["LABEL", "STALL_S", "Figure", "JitCost", "OpCost", "ProfileCost", "Quiet", "Saving", "StopPoint",
           "WarmupCost", "seconds_text", "warmup_cost", "warmup_costs"]
