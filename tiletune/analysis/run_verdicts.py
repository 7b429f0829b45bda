"""Verdict lines about events: what ended a run, what the autotuner survived, what a progress-only
log says, what an INFO `Skipped N` count means against the release's catalog.

- `run_verdicts(events, analyzed, inputs)`: per input, built from facts that carry their evidence
  (`tiletune.core.events.Evidence`: input, line, words, how known):
  1. what ended the run (`InputFacts.run_end`: the line that shows the process stopping and the
     last unrecovered error before it) LEADS: "the run ended: the fp4_gemm CUTLASS runner failed
     to initialize on sm120/sm121, Error Internal; after autotuning ended (line 40); stage not shown".
     Stage, order ("after") and cause come from evidence lines, or the sentence says they are not
     shown; a traceback cut after its last frame is said to be cut there;
  2. errors the autotuner survived (a skip line followed them) are findings, never the end; a
     sticky CUDA error among them (700, 715, an illegal address or instruction) poisons the
     process's CUDA context, and the verdict says so even though the autotuner went on;
  3. every other error event gets a line of its own (printed errors, quoted errors), so no event
     reaches only the JSON; then progress-only logs and cache hits (OOM fallbacks are in their op's verdict).
- `skipped_phrase(failure)`: an INFO `Skipped N unsupported tactic(s)` count against the catalog of
  that release and arch: "N of M tactics failed", "every candidate failed" when N = M, and, where
  the shared-memory model explains exactly N tiles, which tiles those likely are, labelled as an
  inference with its basis (never as a decode).

Pure functions over events, entries and failures; no I/O.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from tiletune.analysis.results import Verdict
from tiletune.core.archs import arch_family
from tiletune.core.events import Event, Evidence, InputFacts, RunEnd
from tiletune.core.records import Status
from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE
from tiletune.core.words import quote_bounded

if TYPE_CHECKING:
    from tiletune.analysis.results import AnalyzedEntry, Failure

DEBUG_HINT = "set FLASHINFER_LOGGING_LEVEL=debug to log each tactic's time and failure"
ERROR_KINDS = ("runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "exception", "memory_error",
               "assertion_failed", "tuning_group_failed")
_KIND_WORDS = {"runner_init_failed": "runner failure", "cuda_error": "CUDA error", "tma_descriptor_failed":
               "TMA descriptor rejection", "smem_exceeded": "shared-memory overflow", "exception": "exception",
               "assertion_failed": "TensorRT-LLM assertion", "tuning_group_failed": "tuning-group disagreement"}
# a log line's prefix before the words that matter ("(EngineCore_0 pid=1) ERROR 09-07 00:59:17 [core.py:712] ")
_LOG_PREFIX = re.compile(r"^(?:\((?:\w+ )?pid=\d+\)\s*|\(\w+ pid=\d+\)\s*)*(?:(?:ERROR|WARNING|INFO|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d\s+\[[^\]]*\]\s*)?"
                         r"(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\]\s*)?")


def _fact_arch(ev: Event) -> Optional[str]:
    a = ev.fact("arch")
    return str(a) if a else None


def _how(ticket: bool) -> str:
    return "stated" if ticket else "decoded"


def event_evidence(ev: Event, ticket: bool = False) -> Evidence:
    """An event's first line as evidence."""
    from tiletune.readers.logs.run_end import clip_words  # (a pure helper of the reader's shape module)

    return Evidence(ev.source, ev.line, clip_words(ev.text or ev.summary, 400), _how(ticket))


def plain(words: str) -> str:
    """A log line's words without its process / level / time prefix."""
    return _LOG_PREFIX.sub("", words.strip()).strip() or words.strip()


_WRAPPER_PHRASE = re.compile(r"(?:\w+ )?hit an exception|Process \w+:|Engine core initialization failed|EngineCore failed to start|"
                             r"WorkerProc failed to start|Worker failed|Failed to initialize executor(?: on rank \d+)?|"
                             r"EngineDeadError|Capture cuda graph failed|See root cause above")


def wrapper_phrase(words: str) -> str:
    """The words of a line that report a process stopping ('Scheduler hit an exception')."""
    m = _WRAPPER_PHRASE.search(words)
    return m.group(0) if m else plain(words)


def run_verdicts(events: Sequence[Event], analyzed: Sequence["AnalyzedEntry"],
                 inputs: Sequence[InputFacts] = (), read: Optional[Sequence[Any]] = None) -> Iterable["Verdict"]:
    """Verdicts about runs (see the module docstring): what ended each run first, then a lead for each
    input in which nothing failed (what it holds), then findings and each input's stated setup.
    `read`: every entry the inputs gave (`Entry`s) when `analyzed` holds only a filter's part: what
    a log holds is judged from all of it."""
    by_source: "OrderedDict[str, list[Event]]" = OrderedDict()
    facts_of = {i.source: i for i in inputs}
    for ev in events:
        by_source.setdefault(ev.source, []).append(ev)
    for i in inputs:
        by_source.setdefault(i.source, [])
    if not by_source:  # no input has events or facts: no line (and no pass over the entries)
        return
    arch_of: dict[str, Optional[str]] = {}
    tactic_lines: set[str] = set()
    held: dict[str, _Held] = {}
    for e in (read if read is not None else (a.entry for a in analyzed)):
        r = e.record
        arch_of.setdefault(r.source, r.env.arch)
        if r.tactic is not None and r.status is not Status.FALLBACK:  # a fallback says no tuned config covered it
            tactic_lines.add(r.source)
        if r.source in by_source:
            held.setdefault(r.source, _Held()).add(r)
    fatal_lines: list[Verdict] = []
    quiet_leads: list[Verdict] = []
    other_lines: list[Verdict] = []
    for source, evs in by_source.items():
        inp = facts_of.get(source)
        ticket = bool(inp and inp.ticket)
        arch = arch_of.get(source) or (str(inp.arch.value) if inp and inp.arch else None) \
            or next((_fact_arch(e) for e in evs if _fact_arch(e)), None)
        end = inp.run_end if inp else None
        cause_ev = _cause_event(end, evs)
        if end is not None:
            fatal_lines.append(_end_verdict(end, cause_ev, arch, source, ticket, inp.stated_stage if inp else None,
                                            before=_before(end, evs, inp), after_tune=inp.after_tune if inp else None,
                                            quoted=inp.quoted_errors if inp else ()))
        examples = list(inp.examples) if inp is not None else []
        ex_lines = {f.line for f in examples}
        # errors a ticket quotes as examples ("A typical error is:") are not lines of a run: never its end
        errors = [e for e in evs if e.kind in ERROR_KINDS and e is not cause_ev and e.line not in ex_lines]
        survived = [e for e in errors if e.fact("survived") is not None]
        raised = [e for e in errors if e.fact("survived") is None and e.is_fatal]
        printed = [e for e in errors if e.fact("survived") is None and not e.is_fatal]
        if end is None and raised:
            fatal_lines.append(_raised_verdict(raised, arch, source, ticket, inp.stated_stage if inp else None,
                                               inp.call_named if inp else None, inp.literals if inp else ()))
            raised = []
        for group in _by_kind(survived):
            v = _survived_verdict(group, arch, source, ticket)
            (fatal_lines if v.fatal and end is None and not fatal_lines else other_lines).append(v)
        for e in raised:  # fatal errors that are not what ended the run (an earlier rank, a quote)
            if end is not None and e.line is not None and end.stopped is not None and e.line == end.stopped.line:
                continue  # the stop line itself (its wrapper carries this error): already the lead
            other_lines.append(Verdict(arch=arch, op=str(e.fact("op") or ""), source=source, text=(
                f"also raised: {e.summary}" + _times(e) + f" ({_at(e)})"), evidence=(event_evidence(e, ticket),)))
        for group in _by_kind(printed):
            other_lines.append(_printed_verdict(group, arch, source, ticket, inp.stated_stage if inp else None))
        for w in (inp.warned if inp else ()):  # a warning that printed a traceback: the run went on
            other_lines.append(Verdict(arch=arch, op="", source=source, text=(
                f"a warning logged a traceback and the run went on (a finding, not the end): '{_clip(plain(w.value), 200)}' "
                f"(line {w.line}) ({source})"), evidence=(Evidence(source, w.line, w.words, _how(ticket)),)))
        if examples:
            (quiet_leads if end is None and not raised else other_lines).append(_examples_verdict(examples, arch, source))
        ev_lines_at = {ln for e in evs if e.kind in ERROR_KINDS for ln in (e.line, *e.lines) if ln is not None}
        said_lines = {f.line for f in (inp.says_fail if inp is not None else ())}  # quoted already where a line says it failed
        said_errors = [q for q in (inp.quoted_errors if inp is not None else ())
                       if q.line not in ev_lines_at and q.line not in said_lines and _intro_line(q) not in said_lines]
        if said_errors and end is None and not raised:  # an error the text quotes in its words, no log line of it
            quiet_leads.append(_said_errors_verdict(said_errors, arch, source))
        h = held.get(source, _Held())
        says = [f for f in (inp.says_fail if inp else ()) if not any(e.line == f.line and e.kind in ERROR_KINDS for e in evs)]
        quiet = end is None and not errors and not h.failed and not (inp and inp.stated) and not says \
            and not (inp and inp.warned) and not examples and not said_errors
        if says and end is None and not errors and not h.failed:
            # a ticket that states failures in words only (no log line): what it says, never "no failure"
            went = [f for f in (inp.went_on if inp else ()) if all(f.line != s.line for s in says[:3])][:1] or \
                [f for f in (inp.went_on if inp else ())][:1]
            # the measurements it reports in its prose (the sentences not quoted already)
            stage = inp.stated_stage if inp is not None else None  # where the prose places it, when it says one
            went = [f for f in went if all(plain(str(f.value)) != plain(str(s.value)) for s in says[:3])]  # (said once)
            quoted = [str(s.value) for s in [*says[:3], *went]]
            measured = [f for f in (inp.reported if inp else ())
                        if not any(str(f.value).strip(". ") in q or q.strip(". ") in str(f.value) for q in quoted)][:2]
            same: "OrderedDict[str, list[Any]]" = OrderedDict()  # one line printed twice is one quote, counted
            for f in says:
                same.setdefault(plain(str(f.value)), []).append(f)
            pasted = all(f.source == "an error the ticket quotes in a code block" for f in says)
            # a sentence that ends at the colon introducing an error ("... fails immediately with:"): the error it
            # introduces follows it in the lead, so the quote never stops before what it announces
            introduced = _introduced_errors(inp.quoted_errors if inp else (), list(same.values())[:3])
            head = ("the ticket pastes log lines that state a failure, not read as an event of a run (the text does "
                    "not show the run ending): " if pasted else
                    "the ticket states a failure in words and quotes the error: " if introduced else
                    "the ticket states a failure in words (no log line of it): ")
            named = next((n for n in (_op_named_at(inp.literals if inp else (), f.line, str(f.value)) for f in says[:3])
                          if n), None)
            # a report (a status page, a benchmark) that also states failures: the author's own summary, conclusion or
            # count of outcomes follows the failures it states, in place of its measurement sentences (findings.py)
            key = [x for x in (inp.literals if inp else ()) if x.kind == "finding" and x.mark.startswith(_KEY_FINDING)
                   and not any(q.strip(". ")[:60] in x.value or x.value.strip(". ") in q for q in quoted)][:2]
            if key:
                measured = []  # (its own summary says what it reports: the measurement sentences are said below it)
            other_lines.append(Verdict(arch=arch, op="", source=source, text=(
                head + "; ".join(
                    (f"'{_clip(v, 260)}' (line {fs[0].line})" if len(fs) == 1 else
                     f"'{_clip(v, 260)}' ({len(fs)} times: lines {_join_and([str(f.line) for f in fs])})")
                    + "".join(f" '{_clip(plain(str(q.value)), 200)}' (line {q.line})" for q in introduced.get(fs[0].line, ()))
                    for v, fs in list(same.items())[:3])
                + (f"; the op named next to it: {named.value} (line {named.line})" if named is not None else "")
                + "".join(f"; it says the run went on (a fallback or skip, not an abort): '{_clip(f.value, 200)}' "
                          f"(line {f.line})" for f in went)
                + "".join(f"; it reports: '{_clip(f.value, 200)}' (line {f.line})" for f in measured)
                + ("; its own summary, in its words: " + "; ".join(f"'{_clip(x.value, 300)}' (line {x.line})" for x in key)
                   if key else "")
                + (f"; {_STAGE_SAID.get(str(stage.value), str(stage.value))}, as the ticket says "
                   f"({re.sub(r'^the ticket says ', '', stage.source).replace(' (line', ', line')}"
                   if stage is not None else "") + f" ({source})"),
                evidence=tuple([Evidence(source, f.line, f.words, "stated") for f in [*says[:2], *went]][:1]
                               + [Evidence(source, x.line, x.words, "stated", f"a finding ({x.mark})") for x in key[:1]]
                               + [Evidence(source, q.line, q.words, "stated", q.source)
                                  for qs in introduced.values() for q in qs][:1]
                               + [Evidence(source, f.line, f.words, "stated") for f in [*says[:2], *went]][1:2])))
        if quiet:
            quiet_leads.append(_quiet_lead(source, evs, h, inp, arch, ticket, source in tactic_lines))
        else:
            parts, ev_lines = [], []
            progress = [e for e in evs if e.kind == "tuning_progress" and e.fact("op")]
            if progress and source not in tactic_lines:
                parts.append(f"tuning progress only: tuned {_tuned(progress)}; which tactics won or failed is not in "
                             f"this log ({DEBUG_HINT})")
                ev_lines.append(event_evidence(progress[0], ticket))
            hits = [e for e in evs if e.kind == "config_cache_hit"]
            if hits and source not in tactic_lines:
                parts.append(_hits(evs, hits))
                ev_lines.append(event_evidence(hits[0], ticket))
            if parts:
                other_lines.append(Verdict(arch=arch, op="", text="; ".join(parts) + f" ({source})", source=source,
                                           evidence=tuple(ev_lines[:2])))
        for e in evs:  # FlashInfer 0.7.x: a cache it ignored (which fields differ), entries it treated as misses
            if e.kind in ("cache_ignored", "cache_miss"):
                other_lines.append(Verdict(arch=arch, op=str(e.fact("op") or ""), source=source,
                                           text=e.summary + _times(e) + f" ({_at(e)})", evidence=(event_evidence(e, ticket),)))
        if inp is not None and inp.stated:  # what the ticket's prose states: a finding with its line
            st = list(dict.fromkeys(f.value for f in inp.stated))
            other_lines.append(Verdict(arch=arch, op="", source=source, text=(
                "the ticket states: " + "; ".join(st[:4]) + (f" and {len(st) - 4} more" if len(st) > 4 else "")
                + f" ({source})"), evidence=tuple(Evidence(source, f.line, f.words, "stated") for f in inp.stated[:2])))
        if inp is not None and inp.reported:  # the measurements its prose reports, where no verdict quoted them
            mine = [v for v in (*fatal_lines, *quiet_leads, *other_lines) if v.source == source]
            said = " ".join(v.text for v in mine)
            # (a sentence an evidence line shows whole is not repeated: a view quotes evidence within a quarter over 240)
            shown = " ".join(" ".join(e.words.split()) for v in mine for e in v.evidence[:2] if len(e.words) <= 300)
            rest = [f for f in inp.reported if _clip(f.value, 200)[:80] not in said
                    and " ".join(str(f.value).split()).strip(". ")[-80:] not in shown]
            if rest:
                other_lines.append(Verdict(arch=arch, op="", source=source, text=(
                    "the text also reports (its words, not checked): " + "; ".join(
                        f"'{_clip(f.value, 200)}' (line {f.line})" for f in rest) + f" ({source})"),
                    evidence=tuple(Evidence(source, f.line, f.words, "stated") for f in rest[:1])))
    yield from fatal_lines
    yield from quiet_leads
    yield from other_lines


def setup_verdicts(inputs: Sequence[InputFacts], analyzed: Sequence["AnalyzedEntry"],
                   read: Optional[Sequence[Any]] = None) -> Iterable["Verdict"]:
    """Each input's stated setup (arch with the clue it came from, GPU, versions), after every other
    verdict: where no tuning verdict (which names the arch per op) already carries it, for a ticket,
    or where arch clues disagreed (which won and why)."""
    if not inputs:
        return
    with_records = {e.record.source for e in (read if read is not None else (a.entry for a in analyzed))}
    for inp in inputs:
        if inp.source in with_records and inp.arch_why is None and not inp.ticket:
            continue
        arch = str(inp.arch.value) if inp.arch else None
        v = _setup_verdict(inp, arch, inp.source, inp.ticket)
        if v is not None:
            yield v


class _Held:
    """What one input's records hold, for the verdicts about the input as a whole."""

    def __init__(self) -> None:
        self.failed = 0
        self.chosen = 0
        self.fallbacks: "OrderedDict[tuple[str, str, bool], list[Any]]" = OrderedDict()  # (op, runner, oom) -> records
        self.profiled: "OrderedDict[tuple[str, str], list[Any]]" = OrderedDict()  # (op, runner) -> records
        self.no_config: list[Any] = []  # TensorRT-LLM "Have not found any valid GEMM config for shape" records

    def add(self, r: Any) -> None:
        if r.status is Status.FAILED and r.tactic is None and r.detail_dict().get("skipped_per_profile") is not None:
            return  # an INFO "Skipped N unsupported tactic(s)" count: skips, not failures (its event says them)
        if r.status is Status.FAILED and r.detail_dict().get("failure_kind") == "no_valid_config":
            self.no_config.append(r)  # a TensorRT-LLM warning: it uses its default config (or fails later)
            return
        if r.status is Status.FAILED:
            self.failed += r.count
        elif r.status is Status.CHOSEN:
            self.chosen += 1
        elif r.status is Status.FALLBACK:
            self.fallbacks.setdefault((r.op, r.runner, bool(r.detail_dict().get("oom"))), []).append(r)
        elif r.status is Status.PROFILED:
            self.profiled.setdefault((r.op, r.runner), []).append(r)


def no_config_phrase(details: Sequence[dict], n: int) -> str:
    """TensorRT-LLM's 'Have not found any valid GEMM config for shape (m, n, k)' warnings: its GEMM plugin profiler
    logs one when no tactic passed profiling for that shape, a tuning failure per shape (issue 22). The shapes
    grouped by (n, k): 'no tactic passed TensorRT-LLM's GEMM profiling for 9 shapes (n=6144, k=4096, m = 1, ...)'."""
    by_nk: "OrderedDict[tuple[Any, Any], list[Any]]" = OrderedDict()
    for d in details:
        ms = by_nk.setdefault((d.get("n"), d.get("k")), [])
        if d.get("m") not in ms:
            ms.append(d.get("m"))
    k = sum(len(ms) for ms in by_nk.values())
    shapes = "; ".join(f"n={nn}, k={kk}, m = {_join_and([str(m) for m in sorted(ms, key=lambda x: (x is None, x or 0))][:12])}"
                       for (nn, kk), ms in list(by_nk.items())[:4])
    return (f"no tactic passed TensorRT-LLM's GEMM profiling for {k} shape{'s' if k != 1 else ''} ({shapes}): "
            f"{n} warning{'s' if n != 1 else ''} 'Have not found any valid GEMM config for shape'; in its words it "
            "'will try to use default or fail at runtime' (which tactics it tried and why each failed is not logged)")


def _tuned(progress: Sequence[Event]) -> str:
    return ", ".join(f"{e.fact('op')} ({_profiles(e)})" for e in progress[:6]) + (" and more" if len(progress) > 6 else "")


def _hits(evs: Sequence[Event], hits: Sequence[Event]) -> str:
    loaded = [e.fact("configs") for e in evs if e.kind == "configs_loaded" and e.fact("configs") is not None]
    return (f"{len(hits)} op(s) used tuned configs from a cache ({', '.join(str(e.fact('op')) for e in hits[:4])})"
            + (f", {sum(loaded)} config(s) loaded" if loaded else ""))


def _duration(ms: float) -> str:
    """A measured time as people read it: 3 significant digits, in us below a millisecond."""
    return f"{ms * 1000:.3g} us" if ms < 1 else f"{ms:.3g} ms"


def _quiet_lead(source: str, evs: Sequence[Event], h: _Held, inp: Optional[InputFacts], arch: Optional[str],
                ticket: bool, has_tactics: bool) -> Verdict:
    """The lead for an input in which nothing failed and nothing ended a run: what it does hold."""
    parts: list[str] = []
    evidence: list[Evidence] = []
    for (op, runner, oom), recs in h.fallbacks.items():
        n = sum(r.count for r in recs)
        where = None
        who = op or "an op the text does not name"
        if oom:
            where = next((c for c in (inp.chains if inp else ()) if re.search(r"\bOOM|out of memory", c.source)), None)
            parts.append(f"tuning {who} ran out of memory {_n_times(n)} and FlashInfer fell back to its default tactic "
                         "(a fallback, not a failure)"
                         + (f", in {where.value} (the ticket marks it, line {where.line})" if where is not None else ""))

        else:
            parts.append(f"FlashInfer used its fallback tactic for {who}{f' ({runner})' if runner else ''} "
                         f"{_n_times(n)}: no tuned config covered the call (a fallback, not a failure)")
        evidence.append(Evidence(source, recs[0].line, str(recs[0].detail_dict().get("said") or ""), _how(ticket)))
        if oom and where is not None:
            evidence.append(Evidence(source, where.line, where.words, "stated", where.source))
    tuning_failed = ""
    if h.no_config:  # a tuning failure per shape (issue 22): it leads, as the header's and Failures' count says
        tuning_failed = no_config_phrase([r.detail_dict() for r in h.no_config], sum(r.count for r in h.no_config))
        if all(e.kind == "no_valid_config" for e in evs):
            tuning_failed += "; nothing else tiletune reads is in the text (warning lines only)"
        warned = next((e for e in evs if e.kind == "no_valid_config"), None)
        if warned is not None:
            evidence.append(event_evidence(warned, ticket))
    progress = [e for e in evs if e.kind == "tuning_progress" and e.fact("op")]
    if progress:
        parts.append(f"tuned {_tuned(progress)}")  # (each op with its passes and profiles)
        evidence.append(event_evidence(progress[-1], ticket))
    skipped = [e for e in evs if e.kind == "tactics_skipped"]
    if skipped:
        per_op: "OrderedDict[str, list[Event]]" = OrderedDict()
        for e in skipped:
            per_op.setdefault(str(e.fact("op")), []).append(e)
        for op, es in per_op.items():
            dist = ", ".join(f"{e.fact('skipped')} in {e.count} profile{'s' if e.count != 1 else ''}" for e in es)
            parts.append(f"{op}: unsupported tactics skipped per profile: {dist} (skips, not failures)")
        evidence.append(event_evidence(skipped[0], ticket))
    for kind, verb in (("configs_saved", "saved"), ("configs_loaded", "loaded")):
        for e in (x for x in evs if x.kind == kind):
            path = str(e.fact("path") or "")
            short = path.rstrip("/").rsplit("/", 1)[-1] or path  # the words with the whole path are the evidence
            n = e.fact("configs")  # None: the line names no count (TensorRT-LLM's "Successfully saved cache to P")
            parts.append(f"{verb} {'its cache' if n is None else f'{n} configs'} {'to' if verb == 'saved' else 'from'} {short}")
            evidence.append(event_evidence(e, ticket))
    hits = [e for e in evs if e.kind == "config_cache_hit"]
    if hits:
        parts.append(_hits(evs, hits))
    for (op, runner), recs in h.profiled.items():
        tactics = list(dict.fromkeys(str(r.tactic) for r in recs))
        times = sorted({r.time_ms for r in recs if r.time_ms is not None})
        # in us for people, and the log's own numbers beside them, so a reader can find the lines
        raw = f"{times[0]:g}" + ("" if len(times) == 1 else f"-{times[-1]:g}") if times else ""
        t = (f", {_duration(times[0])}" + ("" if len(times) == 1 else f" to {_duration(times[-1])}")
             + f" measured ({raw} ms as logged)") if times else ""
        parts.append(f"{op or 'op not named'} {runner}: tactic{'s' if len(tactics) > 1 else ''} "
                     f"{_join_and(tactics[:6])}{' and more' if len(tactics) > 6 else ''} profiled{t}")
    if h.chosen:
        parts.append(f"{h.chosen} chosen tactic(s) (see below)")
    starts = [e for e in evs if e.kind == "tuning_progress" and not e.fact("op")]
    if starts and not progress:
        said = "; ".join(dict.fromkeys(e.summary for e in starts))
        parts.append(said + ("; its end is not in the text" if not any("ended" in e.summary for e in starts) else ""))
        evidence.append(event_evidence(starts[0], ticket))
    if inp is not None and inp.torch_warning is not None:
        parts.append(str(inp.torch_warning.value))
        evidence.append(Evidence(source, inp.torch_warning.line, inp.torch_warning.words, _how(ticket)))
    banners = [e for e in evs if e.kind == "version_banner"]
    lits = inp.literals if inp is not None else ()
    if not parts and not tuning_failed and inp is not None:
        findings = [x for x in lits if x.kind == "finding"]
        if findings:  # a report: what it found, in its words, before anything else it holds
            return _findings_lead(findings, inp, source, arch)
        stop = next((x for x in lits if x.kind == "stops_at"), None)
        if stop is not None:  # a log with no error: what it is and where it stops
            setup = ("only its setup and versions (" + ", ".join(dict.fromkeys(e.summary.split(':')[0] for e in banners[:3]))
                     + ")") if banners else ""
            return _log_tail_lead(stop, lits, inp.summary, setup, source, arch, ticket)
    reports = list(inp.reported) if not parts and inp is not None else []
    # a ticket with nothing else to lead with: its own first sentence, quoted (what the person wrote, not judged)
    summary = inp.summary if inp is not None and not parts and not reports and not tuning_failed else None
    if not parts and banners:
        parts.append("only its setup and versions (" + ", ".join(dict.fromkeys(e.summary.split(':')[0] for e in banners[:3])) + ")")
    if reports:  # a report in prose: what it measured, in its words (it may tell of a failure: quoted, not judged)
        parts.append("; ".join(f"'{f.value}' (line {f.line})" for f in reports))
        evidence += [Evidence(source, f.line, f.words, "stated") for f in reports[:2]]
    went = list(inp.went_on[:2]) if inp is not None and not parts and not tuning_failed else []
    if went:  # a text with no failure line that says the run went on another way ("silently ... fell back to Triton")
        first = [summary] if summary is not None and all(str(f.value).strip(". ") not in str(summary.value)
                                                         and str(summary.value).strip(". ") not in str(f.value)
                                                         for f in went) else []
        text = ("no failure line in the text; "
                + "".join(f"what the ticket says first: '{_clip(f.value, 220)}' (line {f.line}); " for f in first)
                + "it says the run went on by a fallback or skip (not an abort): " + "; ".join(
                    f"'{_clip(f.value, 200)}' (line {f.line})" for f in went))
        return Verdict(arch=arch, op="", text=f"{text} ({source})", source=source, evidence=tuple(
            Evidence(source, f.line, f.words, "stated") for f in [*first, *went][:2]))
    if not parts and not tuning_failed and inp is not None and (inp.arch or inp.gpu or inp.flashinfer_version):
        parts.append("only its setup")
    if not parts and not tuning_failed:
        parts.append("nothing tiletune reads (no autotuner, error or tuning line)")
    if progress and not has_tactics and not h.fallbacks:
        parts.append(f"which tactics won is not in this log ({DEBUG_HINT})")
    text = "no failure in the text; it shows: " + "; ".join(parts)
    if summary is not None and not went:
        text = (f"no failure line in the text; what the ticket says first: '{_clip(summary.value, 220)}' (line "
                f"{summary.line}); it shows {'; '.join(parts)}")
        evidence.insert(0, Evidence(source, summary.line, summary.words, "stated", summary.source))
    if tuning_failed:  # nothing ended the run, but tuning failed for these shapes: never "no failure"
        text = (f"{tuning_failed}; the text does not show the run ending"
                + (f"; it also shows: {'; '.join(p for p in parts if p != 'only its setup')}"
                   if any(p != "only its setup" for p in parts) else ""))
    elif reports:
        text = ("a report in prose with no log line of a run; what it states: " + parts[-1]
                + "".join(f"; {p}" for p in parts[:-1]))
    return Verdict(arch=arch, op="", text=f"{text} ({source})", source=source, evidence=tuple(evidence[:2]))


_KEY_FINDING = ("under ", "a conclusion marker", "a count of outcomes")  # the author's own summary of a report
_FINDING_WEIGHT = (("under ", 0), ("a conclusion marker", 1), ("the author's bold", 3), ("a count of outcomes", 3))


def _findings_lead(findings: Sequence[Any], inp: InputFacts, source: str, arch: Optional[str]) -> Verdict:
    """The lead of a text that states no failure but reports findings (readers/logs/findings.py): the author's summary
    and conclusions first, then the measurements its prose reports, then what it puts in bold or counts (at most 3,
    whole, in the text's order), after the text's own first sentence when that comes before them ("I ran a validation
    ...") and before what it says went on by a fallback."""
    def weight(f: Any) -> int:
        return next((w for m, w in _FINDING_WEIGHT if str(getattr(f, "mark", "")).startswith(m)), 2)

    def same(a: str, b: str) -> bool:
        a, b = a.strip(". "), b.strip(". ")
        return a in b or b in a or a[:80] == b[:80]

    pool: list[Any] = []
    for f in sorted([*findings, *inp.reported], key=weight):
        if not any(same(str(f.value), str(g.value)) for g in pool):
            pool.append(f)
    shown = sorted(pool[:3], key=lambda f: f.line or 0)
    # what the text says it is: the first sentence under its "## Summary" heading, else its own first sentence
    summary = next((x for x in inp.literals if x.kind == "about"), None) or inp.summary
    first = [summary] if summary is not None and summary.line is not None and summary.line <= (shown[0].line or 0) \
        and not any(same(str(summary.value), str(f.value)) for f in shown) else []
    went = [f for f in inp.went_on if not any(same(str(f.value), str(g.value)) for g in [*shown, *first])][:1]
    text = ("no failure in the text; "
            + "".join(f"what it says first: '{_clip(f.value, 220)}' (line {f.line}); " for f in first)
            + "what it reports, in its words: " + "; ".join(f"'{_clip(f.value, 500)}' (line {f.line})" for f in shown)
            + "".join(f"; it says the run went on by a fallback or skip (not an abort): '{_clip(f.value, 200)}' "
                      f"(line {f.line})" for f in went))
    return Verdict(arch=arch, op="", text=f"{text} ({source})", source=source, evidence=tuple(
        [Evidence(source, f.line, f.words, "stated", f"a finding ({f.mark})" if getattr(f, "mark", "") else "")
         for f in shown[:2]]))


def _log_tail_lead(stop: Any, lits: Sequence[Any], summary: Optional[Any], setup: str, source: str,
                   arch: Optional[str], ticket: bool) -> Verdict:
    """The lead of a log with no error: what it is, where it stops, the warnings it logged and the versions it shows
    (after the ticket's own first sentence, when it has one: "I ... encountered the following error."; an
    environment report of 'key : value' lines shows only its setup and versions: its last line is said, not a stop)."""
    last_warned = any(x.kind == "warning" and x.line == stop.line for x in lits)  # it stops on a warning
    warnings = [x for x in lits if x.kind == "warning" and x.line != stop.line][:2]
    versions = list(dict.fromkeys(str(x.value) for x in lits if x.kind == "version"))[:3]
    first = [summary] if summary is not None and summary.line is not None else []
    report = stop.mark.startswith("a 'key")
    if report and not setup:
        setup = f"only its setup and versions ({', '.join(versions) or 'none named'})"
    text = ("no failure line in the text (no error line, no autotuner line); "
            + "".join(f"what the ticket says first: '{_clip(f.value, 220)}' (line {f.line}); " for f in first)
            + (f"it shows {setup}; " if setup else "")
            + f"it {'pastes' if first else 'is'} {stop.mark}"
            + (f", its last line {stop.line}" if report else f" that stops at line {stop.line}")
            + (", a warning: " if last_warned else ": ") + f"'{_clip(stop.value, 260)}'"
            + ("; warnings it logged, and went on: " + "; ".join(f"'{_clip(w.value, 200)}' (line {w.line})" for w in warnings)
               if warnings else "")
            + (f"; versions it shows: {', '.join(versions)}" if versions and not setup else ""))
    return Verdict(arch=arch, op="", text=f"{text} ({source})", source=source, evidence=tuple(
        [Evidence(source, f.line, f.words, "stated", f.source) for f in first]
        + [Evidence(source, x.line, x.words, _how(ticket)) for x in [stop, *warnings]])[:2])


_ARCH_KIND = (("jit path", "a JIT workspace path"), ("cache path", "a cache path"), ("compute capability", "the compute capability"),
              ("arch named", "a literal arch token"), ("gpu line", "a GPU line of this machine"),
              ("gpu named in prose", "a GPU the text names"), ("gpu name", "this machine's GPU name"),
              ("kernel file name", "a kernel file name"), ("kernel name", "a kernel name carrying the arch"),
              ("module name", "a module name carrying the arch"), ("error text", "an error naming the archs"),
              ("build flag", "a build flag"))


def _clue_phrase(source_text: str) -> str:
    """'text: arch named 'SM120' (line 3)' -> "'SM120', a literal arch token, line 3"."""
    m = re.match(r"text: (?P<kind>.+?) '(?P<text>.*)'(?: \(line (?P<line>\d+)\))?$", source_text)
    if not m:
        return source_text
    kind = next((w for k, w in _ARCH_KIND if m.group("kind").startswith(k)), m.group("kind"))
    return f"'{m.group('text')}', {kind}" + (f", line {m.group('line')}" if m.group("line") else "")


def _setup_verdict(inp: InputFacts, arch: Optional[str], source: str, ticket: bool) -> Optional[Verdict]:
    """What the text states about the machine and software it ran on, each with where it says so."""
    parts: list[str] = []
    evidence: list[Evidence] = []
    if inp.arch is not None:
        fam = re.search(r"_sm(\d{3})f\b", str(inp.arch.source)) if "kernel name" in str(inp.arch.source) else None
        if fam and f"sm{fam.group(1)}" == inp.arch.value:  # only a family target ("..._sm100f"): not one GPU's arch
            parts.append(f"arch sm{fam.group(1)}f, a family target ({_clue_phrase(inp.arch.source)}): the kernel "
                         f"runs on each arch of the sm{fam.group(1)} family; which one this machine is, the text "
                         "does not say")
        else:
            parts.append(f"arch {inp.arch.value} ({_clue_phrase(inp.arch.source)})")
        if inp.arch.line is not None:
            evidence.append(Evidence(source, inp.arch.line, inp.arch.words, _how(ticket)))
    if inp.gpu is not None and (inp.arch is None or str(inp.gpu.value) not in inp.arch.source):
        parts.append(f"GPU {inp.gpu.value}")
    if inp.flashinfer_version is not None:
        fv = inp.flashinfer_version
        parts.append(f"FlashInfer {fv.value}" + (" (inferred from a server release's pin)" if fv.how == "inferred" else ""))
        if fv.line is not None and len(evidence) < 2 and all(e.line != fv.line for e in evidence):
            evidence.append(Evidence(source, fv.line, fv.words, _how(ticket)))
    for name, ver in inp.servers:
        parts.append(f"{name} {ver.value}")
    if inp.driver is not None:
        parts.append(f"driver {inp.driver.value}")
    if inp.cuda is not None:
        parts.append(f"CUDA {inp.cuda.value}")
    if inp.settings:  # named, not necessarily in effect (a reply may suggest one): each with its line
        parts.append("settings the text names: " + ", ".join(
            f"{st.value}" + (f" (line {st.line})" if st.line is not None else "") for st in inp.settings))
        first = inp.settings[0]
        if first.line is not None and len(evidence) < 3 and all(e.line != first.line for e in evidence):
            evidence.append(Evidence(source, first.line, first.words, _how(ticket)))
    if inp.arch_why is not None:  # arch clues disagreed: which won and why
        lost = str(inp.arch_why.value).split("; ", 1)
        if len(lost) > 1:
            parts.append(lost[1])
    if not parts:
        return None
    return Verdict(arch=arch, op="", source=source, text="setup stated: " + "; ".join(parts) + f" ({source})",
                   evidence=tuple(evidence))


def _clip(text: str, limit: int) -> str:
    """A quote of `text` within about `limit` characters: whole when it nearly fits, else cut at a sentence's or a
    clause's end (never mid-word), saying how many words were left out (`tiletune.core.words.quote_bounded`)."""
    return quote_bounded(text, limit)


def _tail(text: str, limit: int) -> str:
    """The end of `text` (the words that lead into what follows), cut at a word, marked with '... '."""
    t = " ".join(str(text).split())
    if len(t) <= limit:
        return t
    cut = t[-limit:]
    sp = cut.find(" ")
    return "... " + (cut[sp + 1:] if 0 <= sp < limit // 2 else cut)


def _n_times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _join_and(xs: Sequence[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _cause_event(end: Optional[RunEnd], evs: Sequence[Event]) -> Optional[Event]:
    if end is None or end.cause_line is None:
        return None
    return next((e for e in evs if e.kind in ERROR_KINDS and (e.line == end.cause_line or end.cause_line in e.lines)), None)


def _frames_phrase(end: RunEnd) -> str:
    frames = list(end.frames[-4:])
    if end.in_autotuner is not None and "choose_one" in end.in_autotuner.words and "choose_one" not in frames:
        frames.append("choose_one")  # the last frame's code line calls the autotuner
    inner = re.match(r"in (\w+)$", end.innermost.words) if end.innermost is not None and end.cut is None else None
    if frames and inner and inner.group(1) not in frames:
        frames.append(inner.group(1))  # the innermost frame the traceback shows (where it was raised or reported)
    return " -> ".join(frames)


def _stage_phrase(stage: str, end: RunEnd, detail: str = "") -> str:
    """Where the run was when it stopped, as far as the evidence shows (`detail`: what the evidence names
    of the stage when no frame does: 'CUDA-graph capture')."""
    frames = _frames_phrase(end)
    if stage == "autotune":
        owner = (end.in_autotuner.basis if end.in_autotuner is not None and end.in_autotuner.basis
                 else "FlashInfer's autotuner")
        inside = f"inside {owner}" if end.in_autotuner is not None and (
            "choose_one" in end.in_autotuner.words or any(f in ("choose_one", "_profile_single_kernel") for f in end.frames)) \
            else f"during {owner.replace('autotuner', 'autotune')}"
        what = f" while tuning {end.op}" if end.op else ""
        bar = re.search(r"Tuning [\w:.]+?:.*?(\d+)/(\d+)", end.op_evidence.words) if end.op_evidence is not None else None
        if what and bar and int(bar.group(1)) < int(bar.group(2)):  # the unfinished bar it stopped in
            what += f", {bar.group(1)}/{bar.group(2)} profiles done"
        return f"{inside}{what}" + (f" ({frames})" if frames else "")
    if stage == "warm-up":
        return "during warm-up" + (f" ({frames})" if frames else f" ({detail})" if detail else "")
    if stage == "serving":
        return "while serving" + (f" ({frames})" if frames else "")
    if stage == "start-up":
        return "at start-up" + (f" ({frames})" if frames else "")
    return "stage not shown" + (f" ({frames})" if frames else "")


# a signal handler's line ("Caught signal 8 (Floating point exception: ...)", "[host:pid] Signal: Aborted (6)")
_SIGNAL = re.compile(r"Caught signal \d+|\bSignal: [A-Z]\w+(?: [a-z]+)* \(\d+\)|received signal SIG[A-Z]+")
_SIGNAL_PREFIX = re.compile(r"^(?:\[[^\]]*\]\s*)+")  # the handler's "[host:pid:tid]" tags
_ROOT_ABOVE = re.compile(r"See root cause above|See stack trace \(above\)|root cause", re.I)
_STAGE_WORDS = {"warm-up": "warm-up", "serving": "serving"}


_STAGE_SAID = {"serving": "while serving", "warm-up": "at warm-up (start-up)"}


def _said_stage(source: str, said: Optional[Any]) -> Optional[tuple[str, Evidence]]:
    """The stage a ticket's prose states (InputFacts.stated_stage) with its evidence, or None."""
    if said is None:
        return None
    return str(said.value), Evidence(source, said.line, said.words, "stated", said.source)


def _before(end: RunEnd, evs: Sequence[Event], inp: Optional[InputFacts]) -> list[tuple[str, Evidence]]:
    """What the text shows leading to an escaping error: the OOM fallback it followed, the call chain a
    ticket states for it (within 10 lines above). Each as (clause, evidence)."""
    out: list[tuple[str, Evidence]] = []
    cause = end.cause
    if cause is None or cause.line is None or end.cause_kind != "memory_error":
        return out
    at = cause.line
    fb = next((e for e in reversed(evs) if e.kind == "oom_fallback" and e.line is not None and e.line < at), None)
    if fb is not None:
        out.append((f"after an out-of-memory the autotuner caught, falling back to the default tactic (line {fb.line}): "
                    "running that tactic failed and the handler did not catch it", event_evidence(fb, bool(inp and inp.ticket))))
    chain = next((c for c in reversed(inp.chains if inp else ()) if c.line is not None and at - 10 <= c.line <= at), None)
    if chain is not None and not end.frames:
        out.append((f"via {chain.value} (stated, line {chain.line})",
                    Evidence(cause.source, chain.line, chain.words, "stated", chain.source)))
    return out


def _end_verdict(end: RunEnd, cause: Optional[Event], arch: Optional[str], source: str, ticket: bool,
                 facts_of_stage: Optional[Any] = None, before: Sequence[tuple[str, Evidence]] = (),
                 after_tune: Optional[Any] = None, quoted: Sequence[Any] = ()) -> Verdict:
    """What ended the run, each clause backed by an evidence line or said to be unknown. `quoted`: the errors
    a ticket quotes after saying it failed ("fails during startup with ... error:"), for a paste whose traceback
    is cut before its own exception line."""
    evidence: list[Evidence] = []
    if cause is not None:
        what = cause.summary
        if end.cause is not None:
            evidence.append(end.cause)
    elif end.cause is not None:
        what = _clip(plain(end.cause.words), 240)  # (an error line's code middle folded before anything is cut)
        evidence.append(end.cause)
    else:
        what = ""
    signal = _SIGNAL.search(end.stopped.words) if not what and end.stopped is not None else None
    if signal is not None and end.stopped is not None:  # a signal ended it: the handler's line is the ending, named
        what = f"the process died on a signal: '{_clip(_SIGNAL_PREFIX.sub('', plain(end.stopped.words)), 160)}' " \
               f"(line {end.stopped.line})"
        evidence.append(end.stopped)
    stage, stage_ev = end.stage, end.stage_evidence
    if stage == "unknown" and cause is not None and cause.fact("stage") in _STAGE_WORDS:
        sf = cause.facts_dict()["stage"]  # the lines around the error place it (the event's own inference)
        stage = str(sf.value)
        m = re.match(r"line (\d+)", sf.source)
        stage_ev = Evidence(source, int(m.group(1)) if m else None, sf.words or sf.source, "inferred", sf.source)
    said = _said_stage(source, facts_of_stage)
    if stage == "unknown" and said is not None:
        stage, stage_ev = said
    oom = next((ev for clause, ev in before if clause.startswith("after an out-of-memory the autotuner caught")), None)
    if stage == "unknown" and oom is not None:  # the autotuner's OOM fallback came first: it was tuning at warm-up
        stage, stage_ev = "warm-up", Evidence(source, oom.line, oom.words, "inferred",
                                              "FlashInfer's autotuner logged its OOM fallback before it (it tunes at warm-up)")
    if cause is not None:
        what = re.sub(r"; (?:at warm-up|while serving)\)$", ")", re.sub(r" \((?:at warm-up|while serving)\)$", "", what))
    said_how = f"{stage_ev.basis} {stage_ev.words}" if stage_ev is not None else ""
    detail = "CUDA-graph capture" if re.search(r"graph capture|capture_end|Capturing CUDA graph", said_how, re.I) else ""
    if oom is not None and stage_ev is not None and stage_ev.line == oom.line:
        detail = "FlashInfer's autotuning: inferred from its OOM fallback before it"
    clauses = [_stage_phrase(stage, end, detail)]
    for clause, ev in before:
        clauses.append(clause)
        evidence.append(ev)
    if not evidence and end.stopped is not None:
        evidence.append(end.stopped)  # no error shown: the line that shows the stop is what it rests on
    if stage_ev is not None and stage_ev not in evidence and not (
            oom is not None and stage_ev.line == oom.line and any(e.line == oom.line for e in evidence)):
        evidence.append(stage_ev)
    if end.after_autotune is not None:
        clauses.append(f"after autotuning ended (line {end.after_autotune.line})")
        evidence.append(end.after_autotune)
    if end.after_autotune is None and after_tune is not None and stage not in ("autotune",):
        clauses.append(f"after autotuning ended (the ticket says so, line {after_tune.line})")
        evidence.append(Evidence(source, after_tune.line, after_tune.words, "stated", after_tune.source))
    poisoned = cause.fact("poisons_context") if cause is not None else None
    if poisoned and cause is not None and cause.kind != "tma_descriptor_failed":
        clauses.append(f"{poisoned}: it poisons the CUDA context and may be reported late, by a later call, so the "
                       "kernel that faulted is not shown")
    if cause is not None and end.innermost is not None and end.cut is None and end.innermost.line is not None \
            and ((cause.line or 0) >= end.innermost.line  # a Python traceback's frames come before its exception
                 or ("::" in end.innermost.words and 0 < end.innermost.line - (cause.line or 0) <= 12)):  # C++: after
        verb = "reported in" if poisoned else "raised in"  # a sticky error is reported by whichever call comes next
        clauses.append(f"{verb} {end.innermost.words}")
        if end.innermost not in evidence:
            evidence.append(end.innermost)
    if signal is not None and end.innermost is not None:  # where the signal's backtrace says it struck
        if end.innermost.basis.startswith("only system libraries"):
            clauses.append(f"its backtrace shows only system libraries ({end.innermost.words}): the error that raised "
                           "it is not in the text")
        else:
            clauses.append(f"in {end.innermost.words} (line {end.innermost.line}, its backtrace's first frame outside "
                           "the system libraries)")
        evidence.append(end.innermost)
    line_of = end.cause or end.stopped or end.wrapper
    # the innermost of nested prefixes: "(EngineCore pid=689) (RayWorkerWrapper pid=890) ERROR ..." is the Ray worker's
    proc = re.match(r"(?:\([A-Za-z][\w-]*? pid=\d+\) )*\((?P<p>[A-Za-z][\w-]*?) pid=\d+\)", line_of.words) \
        if line_of is not None else None
    stop_words = (end.stopped or end.wrapper).words if (end.stopped or end.wrapper) is not None else ""  # type: ignore[union-attr]
    rank = re.search(r"\[[\d: -]+ (?P<r>(?:TP|DP|PP|EP)\d+(?: (?:TP|DP|PP|EP)\d+)*)\]", stop_words)
    if proc and proc.group("p") not in ("APIServer",):
        clauses.append(f"in process {proc.group('p')}")
    elif rank:
        clauses.append(f"on rank {rank.group('r')}")
    if end.stopped is not None and end.stopped.words.startswith("terminate called"):
        clauses.append(f"the process aborted: {_clip(plain(end.stopped.words), 120)} (line {end.stopped.line})")
    if end.shutdown is not None:
        clauses.append(f"then the server shut down ('{_clip(plain(end.shutdown.words), 60)}', line {end.shutdown.line})")
    if end.elided is not None:
        clauses.append(f"the author cut lines from the paste ('{end.elided.words}', line {end.elided.line})")
    root = end.stopped is not None and _ROOT_ABOVE.search(end.stopped.words) and not what
    if root:
        clauses.append("its root cause is not in the text")
    said_error = quoted[-1] if end.cut == "after_last_frame" and not what and quoted else None
    if said_error is not None:  # the ticket quotes the error in its words above the cut paste: say it, as stated
        intro = re.match(r"the error the ticket quotes after '(?P<w>.*)' \(line \d+\)$", said_error.source)
        what = (f"'{_clip(plain(str(said_error.value)), 200)}' (the error the ticket quotes, line {said_error.line}"
                + (f", after '{_tail(intro.group('w'), 100)}'" if intro else "") + ")")
        evidence.insert(0, Evidence(source, said_error.line, said_error.words, "stated", said_error.source))
    if end.cut == "after_last_frame":
        last = (f"its last frame ({end.last_frame.words})" if end.last_frame is not None
                else (end.frames[-1] if end.frames else "its last frame"))
        clauses.append(f"the traceback is cut after {last}: " + (
            "its own exception line is not in the text" if said_error is not None else "the error itself is not in the text"))
    elif end.cut == "before_traceback":
        clauses.append("the traceback's start is not in the text")
    elif not what and not root:
        clauses.append("the text does not show the error that ended it")
    if what and end.wrapper is not None and end.cause is not None and end.wrapper.line != end.cause.line:
        clauses.append(f"the engine reported it: {wrapper_phrase(end.wrapper.words)} (line {end.wrapper.line})")
    stop_said = end.wrapper is not None or (end.stopped is not None and (
        _WRAPPER_PHRASE.search(end.stopped.words) or end.stopped.words.startswith("terminate called")))
    if not what and not stop_said and not root and end.cut == "after_last_frame" and stage == "unknown" \
            and end.in_autotuner is None and end.after_autotune is None and after_tune is None:
        # frames alone: an exception was raised, but neither it nor where the run was is in the text; it may have
        # been caught: never "the run ended" (issue 23: a sentence asserts only what its facts hold)
        last = (end.last_frame.words if end.last_frame is not None else (end.frames[-1] if end.frames else ""))
        chain = _frames_phrase(end)
        return Verdict(arch=arch, op=end.op or "", source=source, evidence=tuple(evidence), text=(
            "a traceback's frames with no exception line" + (f" ({chain})" if chain else "")
            + (f", cut after its last frame ({last})" if last else "") + ": what failed, and whether it ended the run, "
            f"is not in the text; stage not shown ({source})"))
    if what:
        text = f"the run ended: {what}; " + "; ".join(clauses)
    elif end.wrapper is not None or (end.stopped is not None and _WRAPPER_PHRASE.search(end.stopped.words)):
        w = end.wrapper if end.wrapper is not None else end.stopped
        assert w is not None
        text = f"the run ended ({wrapper_phrase(w.words)}) " + "; ".join(clauses)
    else:
        text = ("the run ended; " if clauses[0].startswith("stage not shown") else "the run ended ") + "; ".join(clauses)
    if cause is not None and cause.count > 1:
        text += f" ({cause.count} times)"
    op = str(cause.fact("op") or "") if cause is not None else (end.op or "")
    return Verdict(arch=arch, op=op, text=f"{text} ({source})", fatal=True, source=source, evidence=tuple(evidence))


# an op's identifier ("flashinfer::trtllm_bf16_moe", "cutlass_gemm_caller"), not a library's bare name ("TRTLLM")
_OP_LIKE = re.compile(r"::|(?=\w*_)\w*(?:trtllm|fp4|fp8|mxfp8|nvfp4|bf16|moe|gemm|bmm|cutlass|fmha|attention)", re.I)


def _op_named_at(literals: Sequence[Any], line: Optional[int], said: str = "") -> Optional[Any]:
    """The op a text names next to a failure it states: in the words quoted from that line (`said`, when
    given), or on one of the two lines after it, where the author's wraps or next sentence put it ("crashes with
    `cudaErrorIllegalAddress` during the / AutoTuner sweep for `flashinfer::trtllm_bf16_moe`"); never one it
    names only in passing."""
    if line is None:
        return None
    return next((lit for lit in literals if lit.kind == "op" and not lit.mark and lit.line is not None
                 and (line < lit.line <= line + 2 or (lit.line == line and (not said or lit.value in said)))
                 and _OP_LIKE.search(lit.value)), None)


def _raised_verdict(raised: Sequence[Event], arch: Optional[str], source: str, ticket: bool,
                    said_stage: Optional[Any] = None, call: Optional[Any] = None,
                    literals: Sequence[Any] = ()) -> Verdict:
    """Fatal errors with no line that shows the process stopping (a ticket quoting an error)."""
    first = raised[-1] if len(raised) > 1 and raised[-1].line and raised[0].line and raised[-1].line > raised[0].line else raised[0]
    evidence = [event_evidence(first, ticket)]
    stage = first.fact("stage")
    sf = first.facts_dict().get("stage")
    said = _said_where(said_stage, source) if stage is None else None
    if said is not None:  # where the ticket's prose places it, with its words and line
        where, sf = said[0], None
        if all(e.line != said[1].line for e in evidence):
            evidence.append(said[1])
    else:
        where = {"warm-up": "at warm-up", "serving": "while serving"}.get(str(stage), "stage not shown")
    if sf is not None and sf.line is not None:
        evidence.append(Evidence(source, sf.line, sf.words, sf.how if sf.how == "stated" else "inferred", sf.source))
    what = re.sub(r"; (?:at warm-up|while serving)\)$", ")", re.sub(r" \((?:at warm-up|while serving)\)$", "", first.summary))
    if call is not None:  # where the ticket says it happened
        what += f" in `{call.value}` (the ticket says so, line {call.line})"
        evidence.append(Evidence(source, call.line, call.words, "stated", call.source))
    named = _op_named_at(literals, first.line) if call is None and not first.fact("op") else None
    if named is not None:  # the op the sentence that states the error names
        what += f" (the op named next to it: {named.value}, line {named.line})"
        if all(e.line != named.line for e in evidence):
            evidence.append(Evidence(source, named.line, named.words, "stated", "an op the text names"))
    poisoned = first.fact("poisons_context")
    verb = "the ticket states" if ticket else "the log shows"
    text = f"the run ended: {what}; {where}" + (f"; {poisoned}: it poisons the CUDA context" if poisoned else "")
    text += f" ({verb} it at line {first.line}; it does not show the process stopping)" if first.line else ""
    others = [e for e in raised if e is not first and e.summary != first.summary]
    if others:
        text += "; also " + "; ".join(e.summary for e in others[:2])
    return Verdict(arch=arch, op=str(first.fact("op") or ""), text=f"{text} ({source})", fatal=True, source=source,
                   evidence=tuple(evidence))


def _introduced_errors(quoted: Sequence[Any], said: Sequence[Sequence[Any]]) -> dict[int, list[Any]]:
    """For each quoted sentence that ends at a colon (`said`: the lead's quotes, each a list of the lines saying it),
    the error the text quotes right after it (`quoted`: InputFacts.quoted_errors, each naming the line that introduced
    it), by the sentence's first line; a sentence wrapped over lines may introduce it from its last line."""
    out: dict[int, list[Any]] = {}
    quoted_lines = {f.line for fs in said for f in fs}  # an error the lead quotes already as a sentence of its own
    for fs in said:
        f = fs[0]
        words = " ".join(str(f.value).split())
        if not words.endswith(":") or f.line is None:
            continue
        lines = range(f.line, f.line + max(1, str(f.words or "").count("\n") + 1) + 3)  # its own lines and the wraps
        q = next((q for q in quoted if _intro_line(q) in lines and q.line is not None and q.line > f.line
                  and q.line not in quoted_lines and plain(str(q.value)) not in words), None)
        if q is not None:
            out[f.line] = [q]
    return out


def _intro_line(q: Any) -> Optional[int]:
    """The line that introduced a quoted error ("... fails with the error:" (line 8)), or None."""
    m = re.search(r"\(line (\d+)\)$", str(q.source))
    return int(m.group(1)) if m else None


def _said_errors_verdict(said: Sequence[Any], arch: Optional[str], source: str) -> Verdict:
    """Errors a text quotes in its words ('the error literally says "..."'), no log line of a run."""
    quoted = "; ".join(f"'{_clip(f.value, 200)}' (line {f.line})" for f in said[:3])
    return Verdict(arch=arch, op="", source=source, text=(
        f"the text quotes {'an error' if len(said) == 1 else f'{len(said)} errors'} in its words, no log line of a run "
        f"(it does not show a run ending): {quoted} ({source})"),
        evidence=tuple(Evidence(source, f.line, f.words, "stated", f.source) for f in said[:2]))


def _examples_verdict(examples: Sequence[Any], arch: Optional[str], source: str) -> Verdict:
    """Errors a ticket quotes as examples: what such runs print, each with the words that introduce it."""
    said = "; ".join(f"'{_clip(f.value, 160)}' (line {f.line}, {re.sub(r'^an error the ticket quotes as an example ', '', f.source)})"
                     for f in examples[:4])
    return Verdict(arch=arch, op="", source=source, text=(
        f"the ticket quotes {len(examples)} error{'s' if len(examples) != 1 else ''} as example{'s' if len(examples) != 1 else ''} "
        f"(typical errors, not lines of one run; the text shows no run ending): {said} ({source})"),
        evidence=tuple(Evidence(source, f.line, f.words, "stated", f.source) for f in examples[:2]))


def _by_kind(evs: Sequence[Event]) -> list[list[Event]]:
    groups: "OrderedDict[str, list[Event]]" = OrderedDict()
    for e in evs:
        groups.setdefault(e.kind, []).append(e)
    return list(groups.values())


def _survived_verdict(group: Sequence[Event], arch: Optional[str], source: str, ticket: bool) -> Verdict:
    """Errors the autotuner went on after: findings; a sticky one poisons the context."""
    n = sum(e.count for e in group)
    first = group[0]
    skip = first.facts_dict()["survived"]
    distinct = list(dict.fromkeys(_survived_what(e) for e in group))
    what = distinct[0] + (f" (and {len(distinct) - 1} other kind(s))" if len(distinct) > 1 else "")
    word = _KIND_WORDS.get(first.kind, first.kind)
    text = (f"the autotuner survived {n} {word}{'s' if n != 1 else ''}: {what}; it skipped and went on "
            f"(line {skip.line})")
    sticky = next((e.facts_dict()["poisons_context"] for e in group if "poisons_context" in e.facts_dict()), None)
    fatal = sticky is not None
    if sticky is not None:
        text += (f"; but {sticky.value}: it poisons the process's CUDA context, so what this process did after "
                 f"line {sticky.line or first.line} is suspect")
    evidence = [event_evidence(first, ticket), Evidence(source, skip.line, skip.words, skip.how)]
    return Verdict(arch=arch, op=str(first.fact("op") or ""), text=f"{text} ({source})", fatal=fatal, source=source,
                   evidence=tuple(evidence))


def _survived_what(e: Event) -> str:
    """An error the autotuner caught, in its own words (a tactic's CUDA error: its error text)."""
    if e.kind == "cuda_error" and e.fact("where"):
        return str(e.fact("error"))
    return e.summary


def _printed_verdict(group: Sequence[Event], arch: Optional[str], source: str, ticket: bool,
                     said_stage: Optional[Any] = None) -> Verdict:
    """Error lines printed (not shown raised, not survived): findings of their own."""
    n = sum(e.count for e in group)
    first = group[0]
    distinct = list(dict.fromkeys(e.summary for e in group))
    verb = "the ticket quotes" if ticket else "printed"
    what = [d.replace(_NOT_RAISED, "") for d in distinct]
    text = f"{verb}: {what[0]}" + (f"; and {len(what) - 1} other(s)" if len(what) > 1 else "") \
        + (f" ({n} times)" if n > 1 else "")
    sticky = next((e.fact("poisons_context") for e in group if e.fact("poisons_context")), None)
    if sticky:
        text += f"; {sticky}: it poisons the process's CUDA context (every later CUDA call in it fails)"
    evidence = [event_evidence(first, ticket)]
    where = _said_where(said_stage, source) if first.fact("stage") is None else None
    if where is not None:  # where the ticket's prose places it ("fail ... every model load": warm-up)
        text += f"; {where[0]}"
        if all(e.line != where[1].line for e in evidence):
            evidence.append(where[1])
    text += "; the text does not show it ending the run"
    return Verdict(arch=arch, op=str(first.fact("op") or ""), text=f"{text} ({_at(first)})", source=source,
                   evidence=tuple(evidence))


def _said_where(said: Optional[Any], source: str) -> Optional[tuple[str, Evidence]]:
    """The stage a ticket's prose states, as a clause that says so and its evidence line ('at warm-up (CUDA-graph
    capture), as the ticket says: 'inside cudagraph capture' (line 12)'), or None."""
    if said is None or str(said.value) not in _STAGE_SAID:
        return None
    words = re.sub(r"^the ticket says '(.*)' \(line \d+\)$", r"\1", str(said.source))
    capture = re.search(r"graph capture|capture_end", str(said.words or ""), re.I) and str(said.value) == "warm-up"
    stage = "at warm-up (CUDA-graph capture at start-up)" if capture else _STAGE_SAID[str(said.value)]
    clause = f"{stage}, as the ticket says: '{words}' (line {said.line})"
    return clause, Evidence(source, said.line, str(said.words or words), "stated", str(said.source))


_NOT_RAISED = " (printed, not shown raised: not shown to end the run)"


def _times(e: Event) -> str:
    return f" ({e.count} times)" if e.count > 1 else ""


def _at(e: Event) -> str:
    return f"{e.source}:{e.line}" if e.line else e.source


def _profiles(ev: Event) -> str:
    """'21 profiles', '16 passes, each 21 of 21 profiles', '4 passes of 21 profiles, 3 complete, the last stopped
    at 18', or '0 of 21 profiles' for one bar the log shows unfinished."""
    done, total = ev.fact("profiles_done"), ev.fact("profiles")
    passes, complete = ev.fact("passes"), ev.fact("complete_passes")
    if not (isinstance(done, int) and isinstance(total, int)):
        return "profiles unknown"
    pace, el = ev.fact("s_per_profile"), ev.fact("elapsed")
    slow = f", {el} in at {pace:g} s per profile" if isinstance(pace, float) and el and done < total else ""
    if not isinstance(passes, int) or passes <= 1:
        return (f"{done}/{total} profiles" if done < total else f"{total}/{total} profiles") + slow
    if complete == passes:
        return f"{passes} passes, each {total}/{total} profiles"
    tail = f", the last stopped at {done}/{total}{slow}" if done < total else ""
    return f"{passes} passes of {total} profiles, {complete} complete{tail}"


# --- INFO "Skipped N" against the catalog --------------------------------------------------------


def skipped_phrase(f: "Failure", detail: Optional[dict[str, Any]] = None) -> Optional[str]:
    """What an INFO-only failure count means for its release/arch catalog, or None if unknown."""
    if f.tactic is not None:
        return None
    per = dict((detail or {}).get("skipped_per_profile") or ())
    if not per:
        return None
    ns = sorted(per, reverse=True)
    head = "INFO 'Skipped N unsupported tactic(s)': which tactics and their runner are not named"
    if not f.arch or not f.flashinfer_version:
        return f"{head}: {_dist(per)}; pass --arch and --flashinfer-version to compare with the catalog; {DEBUG_HINT}"
    cat = _one_catalog(f.flashinfer_version, f.arch, f.op)
    if cat is None:
        return f"{head}: {_dist(per)} ({DEBUG_HINT})"
    m = len(cat.configs)
    phrases = []
    for n in ns:
        k = per[n]
        where = f" in {k} profile{'s' if k != 1 else ''}"
        if n >= m:
            phrases.append(f"{n} of {m}{where}: every candidate of the {cat.ref.runner} catalog skipped" + (" (and other runners' tactics)" if n > m else ""))
        else:
            phrases.append(f"{n} of {m} tactics skipped{where}")
    text = f"{head}: " + ", ".join(phrases) + f" ({f.arch}, FlashInfer {cat.ref.flashinfer_version})"
    if len(ns) == 1 and ns[0] < m:
        inf = _smem_inference(cat, f.arch, f.op, ns[0])
        if inf:
            text += "; " + inf
    return text + f"; {DEBUG_HINT}"


def _dist(per: dict) -> str:
    """The per-profile skip counts as a distribution: '4 tactics failed in 1 profile, 3 in 2 profiles'."""
    parts = []
    for i, n in enumerate(sorted(per, reverse=True)):
        k = per[n]
        parts.append(f"{n}{' tactic(s) skipped' if i == 0 else ''} in {k} profile{'s' if k != 1 else ''}")
    return ", ".join(parts)


def _one_catalog(version: str, arch: str, op: str) -> Any:
    try:
        from tiletune import catalogs

        canon = catalogs.canonical_version(version)
        if canon is None:
            return None
        fam = arch_family(arch)
        runners = sorted({r for (v, a, o, r) in catalogs.keys() if v == canon and a == fam and o == op})
        if len(runners) != 1:
            return None
        cats = catalogs.lookup(canon, fam, op, runners[0])
        return cats[0] if len(cats) == 1 else None
    except Exception:  # noqa: BLE001 - a catalog hiccup must not hide the count itself
        return None


def _smem_inference(cat: Any, arch: str, op: str, n: int) -> Optional[str]:
    """Inference: the tiles the shared-memory model says cannot run, when there are exactly n."""
    dtype = DENSE_GEMM_OPERAND_DTYPE.get(op)
    if dtype is None:
        return None
    from tiletune.model.smem import smem_fit

    bad, limit = [], None
    for i, cfg in enumerate(cat.configs):
        try:
            fit = smem_fit(cfg, arch, dtype)
        except Exception:  # noqa: BLE001 - a tile the model cannot size: no inference from it
            return None
        if fit.verdict is None:
            return None
        limit = fit.limit_bytes
        if fit.verdict != "fits":
            bad.append((i + cat.index_offset, cfg.label()))
    if len(bad) != n:
        return None
    tiles = ", ".join(f"{t} ({lbl})" for t, lbl in bad)
    return (f"likely tactics {tiles}: an inference, not a decode (basis: the shared-memory model says exactly {n} "
            f"catalog tile(s) exceed the {limit:,} B per-block limit on {arch})")


__all__ = ["DEBUG_HINT", "run_verdicts", "setup_verdicts", "skipped_phrase"]
