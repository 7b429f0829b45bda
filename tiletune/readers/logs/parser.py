"""The autotuner message parser: one log's lines -> tuning records, events and clues.

Messages turned into records (the tag is `[Autotuner]`, `[AutoTuner]` or, before v0.6.8, the
typo `[AutoTunner]`):

- `profiling <runner repr> <tactic>, shapes=..., avg_time <ms>` (and 0.7.x
  `cupti-profiling ... median_time <ms>`)                                   -> PROFILED (aggregated:
  one record per (op, runner, tactic, bucket, L2 state) with a count and bounded time samples, `tiletune.core.timings`)
- `use_cold_l2_cache=True, use N different tensors for profiling` (v0.6.5+, printed only for an op
  whose config asks for a cold L2: before every tactic's timing up to v0.6.17, once before a
  profile's tactic loop after) and `profile-arena cold-L2 profiling uses ...` (after v0.6.17)
                                                                            -> detail `l2` / `l2_source`
  of the next timing and the following ones with the same tensor shapes (one profile)
- `profiling chosen runner: <repr> <tactic> for <key>`; the key is a tuple
  `(op, runner, hash, profile[, extras])` before v0.6.15 and `ProfilingCacheKey(...)` after -> CHOSEN
- `Skipping tactic <repr> <tactic>, due to failure while profiling: <error>` (WARNING before
  v0.6.8, DEBUG after) and the paired DEBUG `Failed when profiling <repr> <tactic>, shapes=....
  Error occurred: <error>`; HEAD's `Skipping tactic <repr> <tactic> while ranking <op>: <error>` -> FAILED
- `Skipped N unsupported tactic(s) for <op>` (INFO, v0.6.8+)               -> FAILED summary: runner ""
  (the line names no runner), tactic None, count = the N minus the failures the block named itself
- `Using fallback tactic ...`, `Skipping autotuning for '<op>' (in skip_ops)`, `No tuned config
  covers <op> ...; falling back to runner=R tactic=-1`                      -> FALLBACK
- `[TacticsBlocklist]: Filtered n invalid tactic(s) for <op>::<Runner>`     -> BLOCKED
- `OOM detected, falling back to default tactic`                          -> FAILED
- 0.7.x `cached tactic T for <op> (runner=R, source=S) failed revalidation; treating as a cache
  miss`: a `cache_miss` event, and the next fallback of that op (FlashInfer then runs runner 0 /
  tactic -1 and may warn the shape is "outside the tuning bucket range": it is not) says why
- 0.7.4 `Not keeping tactic <repr> T, which failed while being re-timed: <error>` (tie_tolerance
  re-times near-tied tactics)                                               -> FAILED (phase
  re-timing) and a `tie_retime_failed` event
- 0.7.4 `the CUDA context is unusable (<error>), detected when <Runner> tactic T failed while
  tuning <op> with input shapes S; ...` (`_StickyCudaError`, raised)      -> a fatal `cuda_error`
  event: what ended the run
- cache and store messages (different environment, managed store, tuning-group failures):
  `tiletune.readers.logs.cache_messages`. An autotuner line none of these reads is counted and
  named in one note (`LogFacts.unread`): a newer release's line is not bad input.

Per-tactic lines do not name the op: it is learnt from the end of each profile block (the
`Skipped N ... for <op>` summary or the `chosen runner` key, which also gives the bucketed
profile), so a block's records wait in a small buffer until it closes. Every other line is
offered to the event scanner (fatal errors, banners, cache paths: `events`) and the clue set
(arch and versions: `clues`); a cache pasted into the text (`"(key)": [runner, tactic]`
lines, with `...` elisions) is recovered entry by entry. Records are built at the end, with the
environment the whole text implies. Memory holds one profile block and the distinct facts,
never the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from msgspec import structs

from tiletune.core.events import Event, Fact, InputFacts
from tiletune.core.records import Environment, InputProblem, Status, Tactic, TuningRecord
from tiletune.core.timings import TimeSamples
from tiletune.core.vocabulary import FUSED_MOE_FAMILY, MOE_RUNNER, RUNNER_OP
from tiletune.core.words import quote_bounded
from tiletune.readers.interface import ReadItem
from tiletune.readers.logs import cache_messages, trtllm_text
from tiletune.readers.logs.clues import ClueSet
from tiletune.readers.logs.events import EventLog, repeats
from tiletune.readers.logs.findings import FindingReader
from tiletune.readers.logs.fragments import CacheFragment
from tiletune.readers.logs.grammar import (
    ANSI,
    HEADER,
    HEX,
    OTHER_HEADER,
    TAG,
    UNNAMED_FAILURES,
    ErrorText,
    frozen_detail,
    parse_log_literal,
    parse_profiling_key,
    parse_tactic,
    split_runner,
)
from tiletune.readers.logs.literals import LiteralReader
from tiletune.readers.logs.run_end import RunTracker
from tiletune.readers.logs.ticket import TicketReader
from tiletune.readers.logs.timeline import TimelineRecorder

KIND = "log"
# autotuner lines that carry no tuning fact tiletune uses, known so that they are not counted as unread
_QUIET = ("use_global_timer", "generated profile:", "Loading configs for ", "Skipping ranking for ",
          "globaltimer kernel unavailable", "the cupti timer requires", "a CUPTI tracing session",
          "cupti timer requested", "CUPTI activity tracing failed", "Tuning ",
          "No tensor inputs or zero-sized tensors",
          # TensorRT-LLM's torch autotuner: its profiles, the cache path before the save/load line that
          # says it happened; whether ranks share tuning (distributed tuning is read from where it acts:
          # the cache's shared section), why no tactic went to a subprocess pool, and a debug print of a type
          "Generated profile: ", "Saving cache to ", "Loading cache from ",
          "Whether using distributed tuning:", "Multiprocess tactic profiling ", "independent_op: ")
MAX_PENDING = 4096  # per-block buffer cap; a block never closes only in a truncated/corrupt log
MAX_CONTINUATION = 400  # backtrace lines examined after a failure line
MAX_PROBLEMS = 20  # unparsable-line notes per file; then one summary note
MAX_AGGREGATES = 200_000  # distinct (op, runner, tactic, bucket, error) facts per file; past it only counts grow

Item = ReadItem

# --- facts about the whole file ------------------------------------------------------------------
@dataclass
class LogFacts:
    """What a log says about its run rather than about one tactic (for doctor / report)."""

    lines: int = 0
    autotuner_lines: int = 0
    levels: Dict[str, int] = field(default_factory=dict)  # autotuner lines per level
    runs: int = 0  # "Autotuning process starts" count
    caches_loaded: List[str] = field(default_factory=list)
    caches_saved: List[str] = field(default_factory=list)
    blocklists_loaded: List[str] = field(default_factory=list)
    blocklist_notes: List[str] = field(default_factory=list)  # not found / different environment
    modules_built: List[str] = field(default_factory=list)  # "Building JIT module <name>"
    cache_env_mismatches: List[str] = field(default_factory=list)  # "Cache file X was created in a different environment (...)"
    truncated_lines: int = 0
    unread: Dict[str, int] = field(default_factory=dict)  # autotuner lines no rule reads: their first words -> count

    @property
    def has_debug(self) -> bool:
        """Per-tactic failures and timings are DEBUG (since v0.6.8): without them only counts are known."""
        return self.levels.get("DEBUG", 0) > 0

    def add_unique(self, lst: List[str], value: str, cap: int = 64) -> None:
        if value not in lst and len(lst) < cap:
            lst.append(value)


# --- the parser ------------------------------------------------------------------------------
@dataclass
class _Event:
    """A per-tactic fact waiting for its profile block to say which op it belongs to."""

    status: Status
    runner: str
    runner_repr: str
    tactic: Tactic
    line: int
    time_ms: Optional[float] = None
    tensor_shapes: Optional[Tuple[Any, ...]] = None
    error: Optional[ErrorText] = None
    detail: Dict[str, Any] = field(default_factory=dict)
    op: Optional[str] = None  # known up front only for "while ranking <op>" lines
    span_s: Optional[float] = None  # seconds since the autotuner line before it (its stamps), for warm-up cost


@dataclass
class _Agg:
    record: Dict[str, Any]
    count: int = 1
    lines: List[int] = field(default_factory=list)
    times: Optional[TimeSamples] = None  # PROFILED: every timing of this (op, runner, tactic, bucket)


def _clue_fact(c: Any) -> Optional[Fact]:
    """A clue as a fact with its evidence line, or None."""
    return Fact(c.value, c.how, c.where(), line=c.line, words=c.context or c.text) if c is not None else None


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


# PyTorch's UserWarning for a GPU its build does not cover (torch/cuda/__init__.py)
_TORCH_GPU = re.compile(r"Found GPU(?P<gpu>\d+ [^\n]*?) which is of cuda capability (?P<cc>\d+\.\d+)")
_TORCH_RANGE = re.compile(r"\((\d+\.\d+)\) - \((\d+\.\d+)\)")


class LogParser:
    """Streams one log's lines into records: `feed()` each line, then `finish()`; `facts` is complete after that."""

    def __init__(self, source: str, env: Environment, rank: Optional[str] = None) -> None:
        self.source = source
        self.env = env
        self.rank = rank  # a per-rank workspace slot's rank (jit_identity.slot_rank), for every record
        self.facts = LogFacts()
        self._problem_count = 0
        self._pending: List[_Event] = []
        self._block_op: Optional[str] = None  # set by "Skipped N ... for <op>"; chosen line may follow
        self._block_closing = False
        self._op_hint: Optional[str] = None  # tqdm "[AutoTuner]: Tuning <op>" bars in stderr captures
        self._op_by_repr: Dict[str, str] = {}  # runner object (repr incl. address) -> op, from chosen keys
        self._op_by_class: Dict[str, Optional[str]] = {}  # runner class -> op (None when ambiguous)
        self._aggs: Dict[Tuple[Any, ...], _Agg] = {}
        self._cont: Optional[_Event] = None  # failure event collecting backtrace lines
        self._cont_prefix = ""
        self._cont_left = 0
        self._last_fail: Optional[_Event] = None  # for pairing "Skipping tactic" with "Failed when profiling"
        self._last_fallback_key: Optional[Tuple[Any, ...]] = None
        self._out: List[Union[TuningRecord, InputProblem]] = []
        self.events = EventLog(source)
        self.run = RunTracker(source)  # the text's shape: tracebacks, stops, autotuning windows
        self.ticket = TicketReader()  # what a ticket states in tables and prose
        self.literals = LiteralReader()  # the literal facts the text states, as written
        self.findings = FindingReader()  # what a report says it found; where a pasted log stops
        self.clock = TimelineRecorder(source)  # the lines' stamps: where the start-up's time went
        self._arch_why: Optional[Fact] = None  # which arch clue won over which, and why
        self._warn_lines: Dict[int, str] = {}  # WARNING lines (a warning that prints a traceback names what failed)
        self._arch_clue: Any = None  # the clue the arch was taken from (its line and words are the evidence)
        self._version_clue: Any = None
        self.clues = ClueSet()
        self.torch_warning: Optional[Fact] = None  # PyTorch's warning that the GPU is outside its build's range
        self._torch_gpu: Optional[Tuple[int, str, str, str]] = None  # (line, "0 NVIDIA GB10", "12.1", words)
        self._torch_pending = 0  # the line of "... supported by this version of PyTorch is" (its range follows)
        self._skipped: Dict[str, List[int]] = {}  # op -> distinct N of its "Skipped N" lines (bounded)
        self._fragment = CacheFragment()
        self._agg_overflow = 0
        self._late_notes: List[str] = []
        self._prefix_op: Optional[str] = None
        # the L2 state a "use_cold_l2_cache=..." line states: it applies to the next profiling line and
        # to the ones after it with the same tensor shapes (one profile), see `_l2_of`
        self._l2_next: Optional[Tuple[str, int]] = None
        self._l2_profile: Optional[Tuple[str, int, str]] = None
        self._revalidated: Dict[str, Tuple[str, Any, str, int]] = {}  # op -> (runner, cached tactic, source, line)
        # TensorRT-LLM's candidates until a line names their op, one buffer per `[RANK r]` of the logger's prefix
        # (ranks' lines interleave in one server log); None: lines with no rank
        self._trt_bufs: Dict[Optional[str], trtllm_text.TrtProfileBuffer] = {}
        self._trt_rank: Optional[str] = None  # the rank of the line being read
        self._trt_loaded_parts: List[str] = []  # `Loaded N shared/rank-specific cache entries` before the load line
        self._trt_failure_lines: Dict[Tuple[Optional[str], str], int] = {}  # (rank, op) -> failure lines read (TRT-LLM)

    # ----- public ---------------------------------------------------------------------------
    def feed(self, lineno: int, raw: str) -> Iterator[Item]:
        """Process one line; yield problems as they are found (records and events come at `finish`)."""
        self.facts.lines += 1
        if "\x1b" in raw:
            raw = ANSI.sub("", raw)
        if "\\_" in raw:  # a log pasted into Markdown with its underscores escaped
            raw = raw.replace("\\_", "_")
        # tqdm redraws with carriage returns: each segment is a line of its own
        for seg in raw.split("\r") if "\r" in raw else (raw,):
            self.run.feed(lineno, seg)
            if "WARNING" in seg and len(self._warn_lines) < 256:
                self._warn_lines[lineno] = quote_bounded(seg.strip(), 240)
            self.ticket.feed(lineno, seg)
            self.findings.feed(lineno, seg)
            if "apability" in seg or self._torch_pending:
                self._torch_capability(lineno, seg)
            read, cont = self.facts.autotuner_lines, self._cont
            self._line(lineno, seg)
            if self.facts.autotuner_lines == read and (cont is None or self._cont is not cont):
                # (an autotuner message or its failure's backtrace is decoded and shown as entries and failures: the
                # literal facts are what the rest of the text states)
                self.literals.feed(lineno, seg)
        if self._out:
            out, self._out = self._out, []
            yield from out

    def finish(self) -> Iterator[Item]:
        self._end_continuation()
        self._flush_block()
        for rank in list(self._trt_bufs):  # a log cut mid-profile: its candidates, op unknown
            self._trt_rank = rank
            self._trt_close(None, None)
        timeline = self.clock.finish()
        yield from self._out
        self._out = []
        self._fragment_clues()
        self.env = self._final_env()
        aggs = sorted(self._aggs.values(), key=lambda a: a.lines[0] if a.lines else 0)
        for agg in aggs:
            yield self._agg_record(agg)
        yield from self._fragment.records(self)
        self.ticket.finish()
        yield from self.ticket.records(self.source, self.env)
        self._summary_events(aggs)
        self.events.mark_survived(self.run)
        events = self.events.events()
        yield from events
        facts = self._input_facts(events)
        if timeline is not None and (timeline.windows or timeline.profiles or timeline.bars or timeline.jit):
            facts = structs.replace(facts, timeline=timeline)
        if self.facts.lines:  # every text read says something about its run, if only that nothing failed
            yield facts
        if self._problem_count > MAX_PROBLEMS:
            yield InputProblem(
                self.source,
                f"{self.source}: {self._problem_count - MAX_PROBLEMS} more autotuner lines could not be parsed (first {MAX_PROBLEMS} reported)",
                fatal=False,
                loses_data=True,
            )
        if self._agg_overflow:
            yield InputProblem(self.source, f"{self.source}: {self._agg_overflow} autotuner facts past the limit of "
                                            f"{MAX_AGGREGATES} distinct ones were counted only", fatal=False, loses_data=True)
        for m in self._fragment.problems + self._late_notes:
            yield InputProblem(self.source, f"{self.source}: {m}", fatal=False, loses_data=False)
        yield from self._pending_revalidations()
        if self.facts.unread:
            n = sum(self.facts.unread.values())
            kinds = "; ".join(f"'{k}…'" + (f" ({c}x)" if c > 1 else "") for k, c in list(self.facts.unread.items())[:6])
            yield InputProblem(self.source, f"{self.source}: {n} autotuner line(s) tiletune does not read (a newer "
                                            f"FlashInfer?): {kinds}; the rest of the log was read", fatal=False,
                               loses_data=False)  # a newer writer's line is not bad input
        yield from self._notes()

    def _notes(self) -> Iterator[InputProblem]:
        """Notes that lose nothing: what the text holds when it has no tuning lines, what is missing."""
        if not self.facts.lines:
            return
        has_events = bool(self.events.events())
        if not self.facts.autotuner_lines and not self._fragment.entries and not self.ticket.tables and not self._aggs:
            setup = [f"{w} {v}" for w, v in (("GPU", self.env.gpu), ("arch", self.env.arch),
                                             ("FlashInfer", self.env.flashinfer_version)) if v]
            if has_events or self.run.tracebacks or self.ticket.says_fail or self.ticket.stated:
                held = "no autotuner tuning lines; what the text shows is in the verdicts and the Events section"
            elif self.findings.found():
                held = "no failure line; what it reports (its findings, in its words) is in the verdicts"
            elif (self.run.is_ticket or not self.run.log_lines) and self.ticket.reports():
                held = "no log line of a run; the measurements its prose reports are in the verdicts"
            elif self.findings.stops_at():
                held = "no error and no autotuner line; what the log is and where it stops are in the verdicts"
            elif setup:  # a ticket that states its setup only: say what it does state
                held = f"only the setup it states ({', '.join(setup)})"
            else:
                held = ("nothing tiletune reads: looked for FlashInfer autotuner lines ([Autotuner] ...), errors of "
                        "FlashInfer / CUTLASS / TensorRT-LLM kernels, tracebacks, a pasted cache and GPU, arch and "
                        "version clues")
            yield InputProblem(
                self.source,
                f"{self.source}: {held} in {self.facts.lines} line{'s' if self.facts.lines != 1 else ''}"
                + ("" if has_events or not setup or self.ticket.says_fail else "; no tuning lines")
                + (" (per-tactic tuning results need FLASHINFER_LOGGING_LEVEL=debug; INFO gives only counts)"
                   if has_events or setup else ""),
                fatal=False,
                loses_data=False,  # the whole text was read: there was nothing to lose
            )

    def _final_env(self) -> Environment:
        """The environment the whole text implies; flags and a JIT path given up front win."""
        env = self.env
        changes: Dict[str, Any] = {}
        if env.arch is None:
            best, conflicts = self.clues.best_arch()
            if best is not None and not conflicts:
                changes.update(arch=best.value, arch_source=f"text: {best.where()}")
                self._arch_clue = best
                lost = self.clues.overruled(best)
                if lost:
                    self._arch_why = Fact(f"{best.value} from {self.clues.why(best)} '{best.text}'"
                                          + (f" (line {best.line})" if best.line is not None else "") + "; " + "; ".join(lost),
                                          "inferred", "arch clues weighed by kind", line=best.line,
                                          words=best.context or best.text)
            elif best is not None:
                named = self.clues.archs_named()
                if len(named) >= 3:  # a comparison or a status page across machines: not one machine's clues disagreeing
                    self._out_note(f"the text names the archs of several machines ({', '.join(named)}), not one machine's: "
                                   f"no arch is taken for this text ({'; '.join(c.where() for c in [best] + conflicts)}); "
                                   "pass --arch for the one you mean")
                else:
                    self._out_note(f"arch clues disagree ({', '.join(sorted({c.value for c in [best] + conflicts}))}: "
                                   f"{'; '.join(c.where() for c in [best] + conflicts)}); pass --arch")
        if env.gpu is None:
            gpu = self.clues.best_gpu()
            if gpu is not None:
                changes["gpu"] = gpu.value
        if env.flashinfer_version is None:
            best, conflicts = self.clues.best_version()
            if best is not None and not conflicts:
                how = "inferred from " if best.how == "inferred" else "text: "
                changes.update(flashinfer_version=best.value, version_source=how + best.where())
                self._version_clue = best
            elif best is not None:
                self._out_note("FlashInfer version clues disagree ("
                               + "; ".join(f"{c.value} from {c.where()}" for c in [best] + conflicts)
                               + "); pass --flashinfer-version")
        for c in self.clues.clues:
            if c.what == "server" or (c.what == "flashinfer_version" and c.kind == "package version"):
                server, ver = c.value if c.what == "server" else ("flashinfer", c.value)
                facts = {"server": Fact(server, "decoded", c.where()), "version": Fact(ver, "decoded", c.where())}
                summary = f"{server} {ver}"
                if c.what == "server":
                    from tiletune.readers.logs.clues import pinned_flashinfer

                    pin = pinned_flashinfer(server, ver)
                    if pin is None:
                        summary += ": its FlashInfer pin is not in tiletune's table"
                    elif pin.get("pin"):
                        facts["flashinfer_version"] = Fact(pin["pin"], "inferred", f"{server} {ver} pins {pin.get('spec')} ({pin.get('source')})")
                        summary += f" pins FlashInfer {pin['pin']}"
                    else:
                        summary += f" allows FlashInfer {pin.get('spec') or 'of an unknown version'} (no exact pin)"
                self.events.add("version_banner", c.line, c.text, summary, facts, key=(server, ver))
        return structs.replace(env, **changes) if changes else env

    def _fragment_clues(self) -> None:
        from tiletune.readers.logs.clues import Clue

        md = self._fragment.metadata
        if isinstance(md.get("flashinfer_version"), str):
            self.clues.add(Clue("flashinfer_version", md["flashinfer_version"], "decoded", "cache path", None,
                                "pasted _metadata.flashinfer_version"))
        if isinstance(md.get("gpu"), str):
            self.clues.feed(None, md["gpu"])

    def _input_facts(self, events: Sequence[Event] = ()) -> InputFacts:
        env = self.env
        arch = version = gpu = None
        if env.arch:
            how = "decoded" if env.arch_source and (env.arch_source.startswith("--") or "path" in env.arch_source
                                                    or "kernel file" in env.arch_source) else "inferred"
            c = self._arch_clue
            if c is not None and c.kind in ("arch named", "compute capability", "kernel name"):
                how = "decoded"
            arch = Fact(env.arch, how, env.arch_source or "?", line=c.line if c else None,
                        words=(c.context or c.text) if c else "")
        if env.flashinfer_version:
            vs = env.version_source or "?"
            c = self._version_clue
            version = Fact(env.flashinfer_version, "inferred" if vs.startswith("inferred") else "decoded", vs,
                           line=c.line if c else None, words=(c.context or c.text) if c else "")
        if env.gpu:
            g = self.clues.best_gpu()
            gpu = Fact(env.gpu, "decoded", g.where() if g else (env.arch_source or "?"), line=g.line if g else None,
                       words=(g.context or g.text) if g else "")
        servers = tuple((c.value[0], Fact(c.value[1], "decoded", c.where())) for c in self.clues.servers())
        # a process ended where the text's shape shows one stopping (run_end.RunTracker): a traceback, a
        # stop line; not any line that merely looks like one (a quoted "Traceback" in prose)
        run_end = self.run.conclude(events)
        ended = None
        if run_end is not None and run_end.stopped is not None:
            during = self.events.tuning_at(run_end.stopped.line) if run_end.stopped.line else None
            ended = Fact(True, "decoded", f"line {run_end.stopped.line} shows a process ending" + (
                f" during FlashInfer's autotune of {during[0]}, {during[1]}/{during[2]} profiles done" if during else ""),
                line=run_end.stopped.line, words=run_end.stopped.words)
        # what a person wrote: a ticket, or a text with no log line at all (its measurements, in its words)
        prose = self.run.is_ticket or not self.run.log_lines
        return InputFacts(self.source, arch, gpu, version, servers, tuple(self._late_notes), ended,
                          run_end=run_end, ticket=self.run.is_ticket, arch_why=self._arch_why,
                          stated=tuple(self.ticket.stated),
                          stated_stage=self.ticket.stated_stage() if self.run.is_ticket else None,
                          says_fail=tuple(self.ticket.failure_lines()) if self.run.is_ticket else (),
                          call_named=self.ticket.call_named if self.run.is_ticket else None,
                          chains=tuple(self.ticket.chains) if self.run.is_ticket else (),
                          examples=tuple(self.ticket.examples) if prose else (),
                          quoted_errors=tuple(self.ticket.quoted_errors) if prose else (),
                          summary=self.ticket.summary if self.run.is_ticket else None,
                          after_tune=self.ticket.after_tune if self.run.is_ticket else None,
                          went_on=tuple(self.ticket.went_on) if self.run.is_ticket else (),
                          torch_warning=self.torch_warning,
                          reported=tuple(self.ticket.reports()) if prose else (),
                          driver=_clue_fact(self.clues.first("driver")), cuda=_clue_fact(self.clues.first("cuda")),
                          warned=self._warned(),
                          settings=tuple(f for f in map(_clue_fact, self.clues.all("setting")) if f is not None),
                          literals=self.literals.literals(self.clues) + self.findings.literals(
                              quiet_log=run_end is None and not self.facts.autotuner_lines))

    def _torch_capability(self, lineno: int, text: str) -> None:
        """PyTorch's UserWarning that this GPU is outside the capabilities its build supports ("Found GPU0 NVIDIA
        GB10 which is of cuda capability 12.1. / Minimum and Maximum cuda capability supported by this version of
        PyTorch is / (8.0) - (12.0)"): a warning the run goes on after, said as one."""
        g = _TORCH_GPU.search(text)
        if g:
            self._torch_gpu = (lineno, g.group("gpu"), g.group("cc"), g.group(0))
        if "supported by this version of PyTorch" in text:
            self._torch_pending = lineno
        if self._torch_pending and lineno - self._torch_pending <= 1:
            r = _TORCH_RANGE.search(text)
            if r and self._torch_gpu is not None and self.torch_warning is None:
                line, gpu, cc, words = self._torch_gpu
                self.torch_warning = Fact(
                    f"PyTorch warned that GPU{gpu} (cuda capability {cc}) is outside the range its build supports, "
                    f"({r.group(1)}) - ({r.group(2)}): a warning, not a failure", self.run.how(),
                    f"PyTorch's UserWarning (lines {line}-{lineno})", line=line, words=words)
                self._torch_pending = 0
        elif self._torch_pending:
            self._torch_pending = 0

    def _warned(self) -> Tuple[Fact, ...]:
        """Tracebacks a handler logged as a WARNING (the run went on): the warning line just before each."""
        from tiletune.readers.logs.run_end import warned_tracebacks

        out = []
        for line, words in warned_tracebacks(self.run)[:4]:
            before = self._warn_lines.get(line - 1)
            said = before if before is not None else words
            out.append(Fact(said, self.run.how(), f"a traceback logged at WARNING level (line {line}); the run went on",
                            line=line - 1 if before is not None else line, words=said))
        return tuple(out)

    def _out_note(self, message: str) -> None:
        self._late_notes.append(message)

    def _summary_events(self, aggs: List["_Agg"]) -> None:
        """tactic_failed / tactic_profiled per (op, runner), from the aggregated records."""
        per: Dict[Tuple[str, str, str], List[int]] = {}
        for a in aggs:
            r = a.record
            st = r["status"]
            if st is Status.PROFILED or (st is Status.FAILED and r.get("tactic") is not None):
                k = ("tactic_profiled" if st is Status.PROFILED else "tactic_failed", r["op"], r["runner"])
                v = per.setdefault(k, [0, 0, a.lines[0] if a.lines else 0])
                v[0] += a.count
                v[1] += 1
        for (kind, op, runner), (count, distinct, first) in per.items():
            what = "failed" if kind == "tactic_failed" else "profiled"
            self.events.add(kind, first, "", f"{op or 'op not named'} {runner or 'runner not named'}: "
                            f"{distinct} distinct tactic/bucket fact(s) {what}, {count} line(s)",
                            {"op": Fact(op or None, "decoded", "autotuner lines"),
                             "runner": Fact(runner or None, "decoded", "runner repr")},
                            key=(op, runner), count=count)

    # ----- line dispatch ----------------------------------------------------------------------
    def _line(self, lineno: int, text: str) -> None:
        m = HEADER.search(text)
        if m:
            level, msg, prefix = m.group("level"), m.group("msg"), text[: m.start()]
            self.clock.stamp(lineno, text, m.group("ts"), m.start(), TAG.match(msg) is not None)
        else:
            t = TAG.search(text)
            self.clock.stamp(lineno, text, None, 0, t is not None)
            if t is None:
                if "Have not found any valid GEMM config" in text:
                    self._no_valid_config(lineno, text)
                self.clues.feed(lineno, text)
                if self._cont is not None and not OTHER_HEADER.match(text[len(self._cont_prefix):] if text.startswith(self._cont_prefix) else text):
                    self._continue(text)  # an autotuner failure's backtrace: that tactic's error, not an event
                else:
                    self._end_continuation()
                    if not self._fragment.feed(lineno, text):
                        self.events.scan_line(lineno, text)
                return
            level, msg, prefix = None, text[t.start():], text[: t.start()]
        self._end_continuation()
        if "different environment (" in text:
            # names two environments: only the running one ("current") is this log's
            self._current_environment_clues(lineno, text)
        elif "avg_time" not in text and "median_time" not in text:  # timing lines repeat the chosen line's repr
            self.clues.feed(lineno, text)
        if msg.startswith("Building JIT module "):
            name = msg[len("Building JIT module "):].split(";", 1)[0].strip()
            self.facts.add_unique(self.facts.modules_built, name)
            self.clock.jit(name)
            return
        t = TAG.match(msg)
        if t is None:
            self.events.scan_line(lineno, msg)  # another flashinfer.jit message: a JIT failure may be fatal
            return
        body = msg[t.end():].strip()
        self.facts.autotuner_lines += 1
        if level:
            self.facts.levels[level] = self.facts.levels.get(level, 0) + 1
        if prefix and "Tuning " in prefix:
            self.events.progress(lineno, prefix)
            self.clock.bars(lineno, prefix)
            m = re.search(r"Tuning ([\w:.]+?):", prefix)
            if m:  # a tqdm bar and a log line on one line: the bar names the op being tuned
                self._prefix_op = m.group(1)
        else:
            self._prefix_op = None
        try:
            self._message(lineno, level, body, prefix)
        except (ValueError, SyntaxError, RecursionError) as e:
            if _ELISION.search(body):
                # the author cut the line ("Skipping tactic ... due to failure"): what is missing was
                # never in the text, so nothing is lost by not reading it
                self._problem(lineno, f"an autotuner line the text elides ('...'), not read as a record: {body[:120]}",
                              loses_data=False)
            else:
                self._problem(lineno, f"could not parse autotuner line ({e}): {body[:120]}")

    def _message(self, lineno: int, level: Optional[str], body: str, prefix: str) -> None:
        m = trtllm_text.RANK_PREFIX.search(prefix)
        self._trt_rank = f"rank{m['rank']}" if m else None
        if body.startswith("profiling chosen runner: "):
            self._chosen(lineno, body[len("profiling chosen runner: "):])
        elif body.startswith("profiling ") or body.startswith("cupti-profiling "):
            self._profiled(lineno, body)
        elif body.startswith("use_cold_l2_cache=") or body.startswith("profile-arena cold-L2 profiling"):
            self._l2_line(lineno, body)
        elif body.startswith("Skipping tactic "):
            self._skipping(lineno, level, body[len("Skipping tactic "):], prefix)
        elif body.startswith(("Profiled runner=", "Failed when profiling runner=", "Exception captured: ")):
            self._trt_candidate_line(lineno, body)
        elif body.startswith("Profiling runner=") and " for cache_key=" in body:
            self._trt_winner(lineno, body)
        elif body.startswith("No valid runner/tactic was found for custom_op="):
            m = trtllm_text.NO_VALID_TACTIC.search(body)
            self._trt_close(m["op"] if m else None, None)
            if m:
                # AutoTunerProfilingCache.fallback_entry: a lookup that misses gets runner 0, tactic -1
                self.events.add("no_valid_tactic", lineno, body,
                                f"TensorRT-LLM's autotuner found no valid (runner, tactic) for {m['op']}: every candidate of "
                                "the profile failed, no entry is saved, and calls there use runner 0's fallback tactic -1",
                                {"op": Fact(m["op"], "decoded", "log line")}, key=(m["op"],))
        elif body.startswith(("Successfully saved cache to ", "Successfully loaded cache from ")):
            self._trt_cache_file(lineno, body)
        elif (m := trtllm_text.LOADED_SECTION.match(body)) is not None:
            # `Loaded N shared cache entries` / `Loaded N rank-specific cache entries for rank R`: the parts of
            # the load that `Successfully loaded cache from` then states whole
            self._trt_loaded_parts.append(f"{m['n']} {m['part']}" + (f" (rank {m['rank']})" if m["rank"] else ""))
        elif body.startswith("New tuning error occurs:"):
            self._trt_failures_counted(lineno, body)
        elif body.startswith("Failed when profiling "):
            self._failed_when(lineno, level, body[len("Failed when profiling "):], prefix)
        elif body.startswith("Skipped ") and "unsupported tactic" in body:
            self._skipped_summary(lineno, body)
        elif body.startswith("Tuning "):
            self.events.progress(lineno, body)
            self.clock.bars(lineno, body)
            m = re.match(r"Tuning (\S+?):(?:\s|$)", body)
            if m and m.group(1) != self._op_hint:
                # a new op's progress bar: the previous op's unnamed failures (v0.6.7 INFO logs) end here
                self._flush_block()
                self._op_hint = m.group(1)
        elif body.startswith("generated profile:"):
            self.clock.op_start()  # an op's profiles are generated before its first timing
        elif body.startswith("Autotuning process starts"):
            self._flush_block()
            self.clock.window_start()
            self.facts.runs += 1
            self.events.add("tuning_progress", lineno, body, "autotuning started", {}, key=("starts",))
        elif body.startswith("Autotuning process ends"):
            self._flush_block()
            self.clock.window_end()
            self.events.add("tuning_progress", lineno, body, "autotuning ended", {}, key=("ends",))
        elif body.startswith("Config cache hit for "):
            self.clock.cache_hit()
            m = re.match(r"Config cache hit for (\S+) \(runner=([^,)]*)(?:, source=([^)]*))?\)", body)
            if m:
                self.events.add("config_cache_hit", lineno, body,
                                f"{m.group(1)}: tuned config found in the cache (runner {m.group(2)}, source {m.group(3) or '?'})",
                                {"op": Fact(m.group(1), "decoded", "log line"), "runner": Fact(m.group(2), "decoded", "log line"),
                                 "cache_source": Fact(m.group(3), "decoded", "log line")}, key=(m.group(1), m.group(2), m.group(3)))
        elif body.startswith("Using fallback tactic for "):
            self._fallback_miss(lineno, body)
        elif body.startswith("Generated key"):
            self._generated_key(body[len("Generated key"):])
        elif body.startswith("No tuned config covers "):
            self._out_of_bucket(lineno, body)
        elif body.startswith("Skipping autotuning for "):
            m = re.match(r"Skipping autotuning for '([^']*)'", body)
            if m:
                self._count(("fallback", m.group(1), "", -1, "skip_ops"), lineno, dict(
                    op=m.group(1), runner="", tactic=-1, status=Status.FALLBACK,
                    detail={"reason": "skip_ops: autotuning disabled for this op; runner 0 with tactic -1",
                            "said": quote_bounded(body, 240)}))
        elif body.startswith("cached tactic ") and "failed revalidation" in body:
            self._revalidation(lineno, body)
        elif body.startswith("Candidate: custom_op="):
            self._trt_candidate(lineno, body)
        elif body.startswith("Not keeping tactic "):
            self._retime_failed(lineno, level, body[len("Not keeping tactic "):], prefix)
        elif body.startswith("the CUDA context is unusable"):
            self._context_lost(lineno, body)
        elif body.startswith("OOM detected"):
            op = self._prefix_op or self._block_op or self._op_hint
            times = repeats(body)  # a paste's "(×64)" or Ray's "[repeated 64x across cluster]": one line, many times
            self.events.add("oom_fallback", lineno, body,
                            f"out of memory while profiling {op or 'an op the log does not name'}: tuning of it stopped, "
                            "runner 0 / tactic -1 used",
                            {"op": Fact(op, "decoded", "tqdm prefix on the same line" if self._prefix_op else "profile block")}
                            if op else {}, key=(op,), count=times)
            if self._prefix_op:
                self._op_hint = self._prefix_op
            self._flush_block(oom_line=lineno, oom_times=times)
        elif body.startswith("Loaded ") and " configs from " in body:
            path = body.split(" configs from ", 1)[1].strip()
            self.facts.add_unique(self.facts.caches_loaded, path)
            n = re.match(r"Loaded (\d+)", body)
            self.events.add("configs_loaded", lineno, body, f"loaded {n.group(1) if n else '?'} configs from {path}",
                            {"configs": Fact(int(n.group(1)) if n else None, "decoded", "log line"),
                             "path": Fact(path, "decoded", "log line")}, key=(path, n.group(1) if n else None))
        elif body.startswith("Saved ") and " configs to " in body:
            path = body.split(" configs to ", 1)[1]
            path = re.sub(r" \(\d+ new, \d+ from previous config\)$", "", path).strip()
            self.facts.add_unique(self.facts.caches_saved, path)
            n = re.match(r"Saved (\d+)", body)
            self.events.add("configs_saved", lineno, body, f"saved {n.group(1) if n else '?'} configs to {path}",
                            {"configs": Fact(int(n.group(1)) if n else None, "decoded", "log line"),
                             "path": Fact(path, "decoded", "log line")}, key=(path, n.group(1) if n else None))
        elif body.startswith("Saved ") and "invalid tactic" in body:  # the blocklist generator wrote a file
            self.facts.add_unique(self.facts.blocklist_notes, body[:300])
        elif body.startswith("Loaded ") and "invalid tactic" in body and " from " in body:
            self.facts.add_unique(self.facts.blocklists_loaded, body.rsplit(" from ", 1)[1].strip())
        elif body.startswith("Tactics blocklist file not found") or (body.startswith("File ") and "different environment" in body):
            self.facts.add_unique(self.facts.blocklist_notes, body[:300])
        elif body.startswith("Filtered ") and "invalid tactic" in body:
            self._filtered(lineno, body)
        elif (body.startswith("Cache file ") or body.startswith("Not saving configs to ")) and "different environment" in body:
            # the cache's _metadata differs from this process: FlashInfer ignores (or will not overwrite) it
            self.facts.add_unique(self.facts.cache_env_mismatches, body[:500])
            cache_messages.cache_ignored(self.events, lineno, body)
        elif cache_messages.managed(self.events, lineno, body):
            pass
        elif body.startswith("Skipped ") and "legacy cuDNN config" in body:
            n = re.match(r"Skipped (\d+)", body)
            self.events.add("cache_miss", lineno, body, f"{n.group(1) if n else 'some'} cached cuDNN entr(ies) with integer "
                            "plan-index tactics (written before FlashInfer 0.6.16) were dropped on load: re-tuned or fallback",
                            {"entries": Fact(int(n.group(1)) if n else None, "decoded", "log line")}, key=("legacy_cudnn",))
        elif body.startswith(_QUIET):
            pass  # known lines that carry no tuning fact (timer choice, generated profiles, legacy .py lookups)
        else:
            words = " ".join(body.split()[:4])[:60]
            if words in self.facts.unread or len(self.facts.unread) < 64:
                self.facts.unread[words] = self.facts.unread.get(words, 0) + 1

    def _current_environment_clues(self, lineno: int, text: str) -> None:
        """A different-environment line's `current=` values are the running process's (its GPU and
        FlashInfer version); its `saved=` values describe another environment and are no clue."""
        from tiletune.readers.logs.clues import Clue

        for k, _saved, current in cache_messages.environment_fields(text):
            if k == "gpu":
                self.clues.feed(lineno, current)
            elif k == "flashinfer_version" and current not in cache_messages.INDETERMINATE:
                self.clues.add(Clue("flashinfer_version", current, "decoded", "log line", lineno,
                                    "the running version FlashInfer compared a cache against (current=)"))

    # ----- TensorRT-LLM (readers/logs/trtllm_text.py) ----------------------------------------------
    def _trt_candidate(self, lineno: int, body: str) -> None:
        """`[Autotuner] Candidate: custom_op=OP, runner=R, tactic=T, shapes=S, time=Xms`: one timing
        (PROFILED, samples aggregated per op, runner, tactic and shapes), a failure (`inf`), or the
        single-candidate shortcut's pair recorded without profiling (`0.000`: CHOSEN, no time). It follows
        that candidate's own `Profiled`/`Failed when profiling` line, whose fact it closes with the op."""
        m = trtllm_text.CANDIDATE.search(body)
        if not m:
            raise ValueError("unexpected '[Autotuner] Candidate:' form")
        op, rrepr = m["op"].strip(), m["runner"].strip()
        runner, tactic = trtllm_text.runner_name(rrepr), parse_tactic(m["tac"])
        shapes = trtllm_text.shapes_of(m["shapes"])
        how, ms = trtllm_text.candidate_time(m["time"])
        held = self._trt.take(rrepr, tactic)
        src = "TensorRT-LLM autotuner Candidate line"
        if how == "measured" and held is not None and held.ms is not None:
            ms, src = held.ms, "TensorRT-LLM autotuner Profiled line (its Candidate line names the op)"
        error = held.error if held is not None else None
        if how == "unreadable":
            raise ValueError(f"time {m['time']!r} is not a number")
        self._trt_outcome(lineno, how, op, runner, tactic, shapes, ms, src, error)

    @property
    def _trt(self) -> trtllm_text.TrtProfileBuffer:
        return self._trt_bufs.setdefault(self._trt_rank, trtllm_text.TrtProfileBuffer())

    def _trt_candidate_line(self, lineno: int, body: str) -> None:
        """TensorRT-LLM's own per-candidate lines (trtllm_text): held until a line names the op."""
        if body.startswith("Exception captured: "):
            self._trt.error(body[len("Exception captured: "):].strip()[:2000])
            return
        m = (trtllm_text.PROFILED if body.startswith("Profiled") else trtllm_text.FAILED).search(body)
        if not m:
            raise ValueError("unexpected TensorRT-LLM autotuner form")
        ms: Optional[float] = None
        if body.startswith("Profiled"):
            how, ms = trtllm_text.candidate_time(m["time"])
            if how == "unreadable":
                raise ValueError(f"time {m['time']!r} is not a number")
        rrepr = m["runner"].strip()
        rest = body[m.end():].strip()  # later releases put the error on the line: "... shapes=[..]. Error: E"
        held = trtllm_text.HeldCandidate(lineno, trtllm_text.runner_name(rrepr), rrepr, parse_tactic(m["tac"]),
                                         trtllm_text.torch_sizes(m["shapes"]), ms,
                                         rest[len("Error: "):][:2000] if rest.startswith("Error: ") else None)
        if not self._trt.add(held):
            self._trt_close(None, None)
            self._trt.add(held)

    def _trt_winner(self, lineno: int, body: str) -> None:
        """`Profiling runner=R, tactic=T for cache_key=(op, Runner, hash, shapes).`: the profile's winner;
        its key names the op of every candidate held for this profile."""
        m = trtllm_text.WINNER.search(body)
        if not m:
            raise ValueError("unexpected 'Profiling runner=.. for cache_key=' form")
        key = self._shapes_or_none(m["key"])
        if not (key and len(key) == 4 and isinstance(key[0], str)):
            raise ValueError("cache_key is not (op, runner, hash, shapes)")
        self._trt_close(key[0], (lineno, trtllm_text.runner_name(m["runner"]), parse_tactic(m["tac"]), key))

    def _trt_close(self, op: Optional[str], winner: Optional[Tuple[int, str, Any, Tuple[Any, ...]]]) -> None:
        """Record the held candidates with their op (None: the log never named it) and the profile's winner."""
        held = self._trt.drain()
        src = "TensorRT-LLM autotuner Profiled line"
        for c in held:
            how = "measured" if c.ms is not None else "failed"
            if how == "failed" and op is not None:
                self._trt_failure_lines[(self._trt_rank, op)] = self._trt_failure_lines.get((self._trt_rank, op), 0) + 1
            self._trt_outcome(c.line, how, op or "", c.runner, c.tactic, c.shapes, c.ms, src, c.error,
                              op_known=op is not None)
        if winner is not None and op is not None:
            lineno, runner, tactic, key = winner
            won = next((c for c in reversed(held) if c.runner == runner and c.tactic == tactic and c.ms is not None), None)
            self._count(("trt-winner", op, runner, _hashable(tactic), _hashable(key[3]), self._trt_rank), lineno, dict(
                op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                shapes=won.shapes if won is not None else (key[3] if isinstance(key[3], tuple) else None),
                time_ms=won.ms if won is not None else None,
                detail={"cache_key": str(key), "time_source": "TensorRT-LLM autotuner: the winner's Profiled line",
                        "chosen_by": "TensorRT-LLM's autotuner (the fastest candidate of the profile)"},
                **self._trt_rank_field()))

    def _trt_outcome(self, lineno: int, how: str, op: str, runner: str, tactic: Any, shapes: Any,
                     ms: Optional[float], src: str, error: Optional[str], op_known: bool = True) -> None:
        detail: Dict[str, Any] = {"time_source": src}
        if not op_known:
            detail["op_unknown"] = "the log ends before the line that names this profile's op"
        if how == "measured":
            ident: tuple = ("trt-candidate", op, runner, _hashable(tactic), _hashable(shapes), self._trt_rank)
            agg = self._aggs.get(ident)
            if agg is None:
                if len(self._aggs) >= MAX_AGGREGATES:
                    self._agg_overflow += 1
                    return
                agg = self._aggs[ident] = _Agg(dict(op=op, runner=runner, tactic=tactic, status=Status.PROFILED,
                                                    shapes=shapes, detail={"timer": "TensorRT-LLM autotuner", **detail},
                                                    **self._trt_rank_field()),
                                               count=0, lines=[], times=TimeSamples())
            agg.count += 1
            if len(agg.lines) < 64:
                agg.lines.append(lineno)
            assert agg.times is not None and ms is not None
            agg.times.add(ms)
        elif how == "failed":
            self._count(("trt-failed", op, runner, _hashable(tactic), _hashable(shapes), error, self._trt_rank), lineno, dict(
                op=op, runner=runner, tactic=tactic, status=Status.FAILED, shapes=shapes,
                error=error or "timed as inf by TensorRT-LLM's autotuner: the tactic failed (its error is logged apart)",
                detail={"phase": "profiling", **detail}, **self._trt_rank_field()))
        elif how == "not_measured":
            self._count(("trt-shortcut", op, runner, _hashable(tactic), _hashable(shapes), self._trt_rank), lineno, dict(
                op=op, runner=runner, tactic=tactic, status=Status.CHOSEN, shapes=shapes,
                detail={"not_measured": "the only candidate: TensorRT-LLM recorded it without profiling (time=0.000ms)",
                        **detail}, **self._trt_rank_field()))

    def _trt_rank_field(self) -> Dict[str, Any]:
        """The record's rank: the `[RANK r]` of TensorRT-LLM's logger prefix (its `set_rank`), when the line has one."""
        return {"rank": self._trt_rank} if self._trt_rank is not None else {}

    def _trt_cache_file(self, lineno: int, body: str) -> None:
        """`[AutoTuner] Successfully saved cache to P using JSON format` (and `loaded ... from`, which later
        writers end `(total N entries)`, after `Loaded N shared / rank-specific cache entries` lines)."""
        saved = body.startswith("Successfully saved")
        path, _, tail = body.split(" to " if saved else " from ", 1)[1].partition(" using JSON format")
        path = path.strip()
        self.facts.add_unique(self.facts.caches_saved if saved else self.facts.caches_loaded, path)
        kind = "configs_saved" if saved else "configs_loaded"
        facts: Dict[str, Fact] = {"path": Fact(path, "decoded", "log line")}
        summary = f"TensorRT-LLM's autotuner {'saved its cache to' if saved else 'loaded its cache from'} {path}"
        total = re.search(r"\(total (\d+) entries\)", tail)
        if not saved and total:
            facts["entries"] = Fact(int(total.group(1)), "decoded", "log line")
            parts = f": {', '.join(self._trt_loaded_parts)}" if self._trt_loaded_parts else ""
            summary += f" ({total.group(1)} entries{parts})"
        if not saved:
            self._trt_loaded_parts = []
        self.events.add(kind, lineno, body, summary, facts, key=(path,))

    def _trt_failures_counted(self, lineno: int, body: str) -> None:
        """`New tuning error occurs:Total failed profiling tactics occurs: N for custom_op=OP. ...`: the count of
        the op's failed (runner, profile) pairs TensorRT-LLM kept. Writers that log a failure once per op
        (`warning_once`, keyed on the op) print fewer failure lines than that: the event says how many were read."""
        m = trtllm_text.FAILURES_COUNTED.search(body)
        if not m:
            return  # the summary's wording changed: the failures themselves are read from their own lines
        op, n = m["op"], int(m["n"])
        seen = self._trt_failure_lines.get((self._trt_rank, op), 0)
        more = (f"; this log has {seen} failure line(s) for it: TensorRT-LLM prints an op's failure once "
                "(warning_once), so the others are counted here only") if seen < n else ""
        on = f" on {self._trt_rank}" if self._trt_rank else ""
        facts = {"op": Fact(op, "decoded", "log line"), "failed": Fact(n, "measured", "log line"),
                 "failure_lines": Fact(seen, "decoded", "this log")}
        if self._trt_rank:
            facts["rank"] = Fact(self._trt_rank, "decoded", "the logger's [RANK r] prefix")
        self.events.add("tuning_failures_counted", lineno, body,
                        f"TensorRT-LLM's autotuner{on} counted {n} failed (runner, profile) pair(s) for {op}{more}",
                        facts, key=(self._trt_rank, op))

    def _no_valid_config(self, lineno: int, text: str) -> None:
        """`Have not found any valid GEMM config for shape (m, n, k)`: no tactic could run that shape
        (TensorRT-LLM's GEMM plugin profiler); a failure per shape and one event per (n, k)."""
        m = trtllm_text.NO_VALID_CONFIG.search(text)
        if not m:
            return
        mm, n, k = int(m["m"]), int(m["n"]), int(m["k"])
        self._count(("trt-no-config", mm, n, k), lineno, dict(
            op="", runner="GemmPluginProfiler", tactic=None, status=Status.FAILED,
            error=f"no valid GEMM config for shape (m={mm}, n={n}, k={k}): every tactic failed or none applies; "
                  "TensorRT-LLM uses its default config or fails at run time",
            detail={"m": mm, "n": n, "k": k, "failure_kind": "no_valid_config",
                    "note": "TensorRT-LLM's GEMM plugin profiler; the line names neither the plugin nor the tactics"}))
        ident = ("no_valid_config", n, k)
        ev = self.events.get(ident)
        ms = sorted(set((ev["facts"]["m"].value if ev else ()) + (mm,)))
        self.events.add("no_valid_config", lineno, text,
                        f"TensorRT-LLM found no valid GEMM config for n={n}, k={k} at m={', '.join(map(str, ms[:12]))}"
                        + (f" and {len(ms) - 12} more" if len(ms) > 12 else "") + ": it uses its default or fails at run time",
                        {"n": Fact(n, "decoded", "log line"), "k": Fact(k, "decoded", "log line"),
                         "m": Fact(tuple(ms), "decoded", "log lines")}, key=(n, k))
        ev = self.events.get(ident)
        if ev is not None:  # the Ms seen so far, and the summary naming them
            ev["facts"]["m"] = Fact(tuple(ms), "decoded", "log lines")
            ev["summary"] = (f"TensorRT-LLM found no valid GEMM config for n={n}, k={k} at m={', '.join(map(str, ms[:12]))}"
                             + (f" and {len(ms) - 12} more" if len(ms) > 12 else "") + ": it uses its default or fails at run time")

    # ----- 0.7.4: tie re-timing, a lost CUDA context -------------------------------------------------
    def _retime_failed(self, lineno: int, level: Optional[str], rest: str, prefix: str) -> None:
        """`Not keeping tactic <repr> T, which failed while being re-timed: <error>` (0.7.4,
        `_retime_candidate`): tie_tolerance re-timed a near-tied tactic and it failed, so it is not kept."""
        runner, rrepr, tail = split_runner(rest)
        tactic_text, sep, err = tail.partition(", which failed while being re-timed: ")
        if not sep:
            raise ValueError("no 'which failed while being re-timed:'")
        tactic = parse_tactic(tactic_text)
        ev = _Event(Status.FAILED, runner, rrepr, tactic, lineno)
        ev.error = ErrorText(err)
        ev.detail.update(phase="re-timing (tie_tolerance)", level=level)
        self._push(ev)
        self._start_continuation(ev, prefix)
        op = self._block_op or self._op_hint
        self.events.add("tie_retime_failed", lineno, rest,
                        f"{runner} tactic {tactic_text.strip()} failed while tie_tolerance re-timed it, so it was not "
                        "kept (it had timed within the tolerance of the fastest)",
                        {"runner": Fact(runner, "decoded", "runner repr"), "tactic": Fact(tactic, "decoded", "log line"),
                         "error": Fact(err.strip()[:300], "decoded", "log line"),
                         **({"op": Fact(op, "inferred", "the profile block's op")} if op else {})},
                        key=(runner, _hashable(tactic), HEX.sub("0x_", err.strip()[:200])))

    def _context_lost(self, lineno: int, body: str) -> None:
        """0.7.4's `_StickyCudaError`: after a failed tactic the CUDA context was unusable, so tuning
        stopped and the exception ended the process; the tactic is the one whose failure revealed it
        (the faulting kernel may have run before it, as FlashInfer's message says)."""
        m = re.match(r"the CUDA context is unusable \((?P<err>.*?)\), detected when (?P<runner>\S+) tactic (?P<tac>.*?) "
                     r"failed while tuning (?P<op>\S+) with input shapes (?P<shapes>.*?); every later CUDA call", body)
        facts: Dict[str, Fact] = {}
        if m:
            facts = {"cuda_error": Fact(m["err"], "decoded", "exception text"),
                     "runner": Fact(m["runner"], "decoded", "exception text"),
                     "tactic": Fact(parse_tactic(m["tac"]), "decoded", "exception text"),
                     "op": Fact(m["op"], "decoded", "exception text"),
                     "input_shapes": Fact(self._shapes_or_none(m["shapes"]), "decoded", "exception text"),
                     "ended_run": Fact(True, "decoded", "FlashInfer raises it: every later CUDA call in the process fails")}
            summary = (f"the CUDA context became unusable ({m['err']}) when {m['runner']} tactic {m['tac']} failed while "
                       f"tuning {m['op']}: FlashInfer stopped tuning and the process ended (every later CUDA call fails)")
        else:
            summary = "the CUDA context became unusable after a failed tactic: FlashInfer stopped tuning and the process ended"
        self.events.add("cuda_error", lineno, body, summary, facts, key=("context_lost", body[:200]))

    # ----- per-tactic lines ---------------------------------------------------------------------
    def _before_event(self) -> None:
        # A new per-tactic line after a block's "Skipped N" summary (with no chosen line) starts a new block.
        if self._block_closing:
            self._flush_block()

    def _profiled(self, lineno: int, body: str) -> None:
        cupti = body.startswith("cupti-")
        runner, rrepr, rest = split_runner(body.split(" ", 1)[1])
        tactic_text, sep, tail = rest.partition(", shapes=")
        if not sep:
            raise ValueError("no shapes=")
        key = ", median_time " if cupti else ", avg_time "
        shapes_text, sep, time_text = tail.rpartition(key)
        if not sep:
            raise ValueError(f"no{key.rstrip()}")
        self._before_event()
        ev = _Event(Status.PROFILED, runner, rrepr, parse_tactic(tactic_text), lineno)
        try:
            ev.time_ms = float(time_text.strip())
        except ValueError:
            ev.detail["time_text"] = time_text.strip()[:60]
        ev.tensor_shapes = self._shapes_or_none(shapes_text)
        ev.detail["timer"] = "cupti median" if cupti else "mean"
        l2 = self._l2_of(shapes_text.strip())
        if l2 is not None:
            ev.detail["l2"], ev.detail["l2_source"] = l2[0], f"log line {l2[1]}"
        self._push(ev)

    def _l2_line(self, lineno: int, body: str) -> None:
        """`use_cold_l2_cache=True, use N different tensors for profiling` (0.6.5 on; printed only
        when the op's config asks for a cold L2: before each tactic's timing up to 0.6.17, once
        before a profile's tactic loop after) or `profile-arena cold-L2 profiling uses ...`."""
        value = body[len("use_cold_l2_cache="):].split(",", 1)[0].strip()
        if body.startswith("profile-arena") or value == "True":
            self._l2_next = ("cold", lineno)
        elif value == "False":
            self._l2_next = ("warm", lineno)

    def _l2_of(self, shapes_text: str) -> Optional[Tuple[str, int]]:
        """The stated L2 state of a timing: the pending line's, or the current profile's (same
        tensor shapes as the timing that took the line); None where no line says."""
        if self._l2_next is not None:
            state, line = self._l2_next
            self._l2_next = None
            self._l2_profile = (state, line, shapes_text)
            return state, line
        cur = self._l2_profile
        if cur is not None and cur[2] == shapes_text:
            return cur[0], cur[1]
        self._l2_profile = None
        return None

    def _skipping(self, lineno: int, level: Optional[str], rest: str, prefix: str) -> None:
        runner, rrepr, tail = split_runner(rest)
        op = None
        if ", due to failure while profiling: " in tail:
            tactic_text, _, err = tail.partition(", due to failure while profiling: ")
            phase = "profiling"
        else:
            m = re.match(r"(?P<tac>.*?) while ranking (?P<op>\S+): (?P<err>.*)$", tail)
            if not m:
                raise ValueError("no failure text")
            tactic_text, op, err, phase = m.group("tac"), m.group("op"), m.group("err"), "ranking"
        self._before_event()
        ev = _Event(Status.FAILED, runner, rrepr, parse_tactic(tactic_text), lineno, op=op)
        ev.error = ErrorText(err)
        ev.detail.update(phase=phase, level=level)
        self._push(ev)
        self._last_fail = ev
        self.events.tactic_cuda_error(lineno, err, op or self._block_op)
        self._start_continuation(ev, prefix)

    def _failed_when(self, lineno: int, level: Optional[str], rest: str, prefix: str) -> None:
        runner, rrepr, tail = split_runner(rest)
        head, sep, err = tail.partition(". Error occurred: ")
        if not sep:
            raise ValueError("no 'Error occurred:'")
        tactic_text, sep, shapes_text = head.partition(", shapes=")
        tactic = parse_tactic(tactic_text)
        shapes = self._shapes_or_none(shapes_text) if sep else None
        last = self._last_fail
        if last is not None and last.runner_repr == rrepr and last.tactic == tactic and last.tensor_shapes is None and last in self._pending:
            # The DEBUG twin of the "Skipping tactic" line just above: same failure, now with shapes.
            last.tensor_shapes = shapes
            self._last_fail = None
            self._start_continuation(None, prefix)  # its copy of the backtrace adds nothing
            return
        self._before_event()
        ev = _Event(Status.FAILED, runner, rrepr, tactic, lineno)
        ev.tensor_shapes = shapes
        ev.error = ErrorText(err)
        ev.detail.update(phase="profiling", level=level)
        self._push(ev)
        self._last_fail = None
        self._start_continuation(ev, prefix)

    def _skipped_summary(self, lineno: int, body: str) -> None:
        m = re.match(r"Skipped (\d+) unsupported tactic\(s\) for (\S+)", body)
        if not m:
            raise ValueError("unexpected 'Skipped N unsupported tactic(s)' form")
        n, op = int(m.group(1)), m.group(2)
        seen = sum(1 for e in self._pending if e.status is Status.FAILED)
        if n > seen:
            # INFO level hides the per-tactic lines: keep the count, say the tactics are unknown.
            key = ("skipped", op)
            agg = self._aggs.get(key)
            if agg is None:
                self._aggs[key] = _Agg(dict(
                    op=op, runner="", tactic=None, status=Status.FAILED, error=UNNAMED_FAILURES,
                    detail={"summary": "Skipped N unsupported tactic(s)", "tactics_known": False,
                            "runner_named": False, "skipped_per_profile": {}, "said": quote_bounded(body, 240)}), count=n - seen, lines=[lineno])
                agg = self._aggs[key]
            else:
                agg.count += n - seen
                if len(agg.lines) < 64:
                    agg.lines.append(lineno)
            per = agg.record["detail"]["skipped_per_profile"]
            if n in per or len(per) < 64:
                per[n] = per.get(n, 0) + 1  # N -> how many profiles skipped exactly N
        self.events.add("tactics_skipped", lineno, body,
                        f"{op}: {n} unsupported tactic(s) skipped per profile (runner not named)",
                        {"op": Fact(op, "decoded", "log line"), "skipped": Fact(n, "decoded", "log line"),
                         "runner": Fact(None, "decoded", "runner not named in the line")}, key=(op, n))
        self._block_op = op
        self._block_closing = True
        self.clock.profile_end("skipped", op)

    def _chosen(self, lineno: int, rest: str) -> None:
        runner, rrepr, tail = split_runner(rest)
        tactic_text, sep, key_text = tail.partition(" for ")
        if not sep:
            raise ValueError("no 'for <key>'")
        key = parse_profiling_key(key_text)
        tactic = parse_tactic(tactic_text)
        self._learn(rrepr, runner, key.op)
        self._flush_block(op=key.op, shapes=key.shapes, extras=key.extras)
        self.clock.profile_end("chosen", key.op, key.shapes)
        ident = ("chosen", key.op, key.runner, _hashable(tactic), key.shapes, _hashable(key.extras))
        self._count(ident, lineno, dict(op=key.op, runner=key.runner, tactic=tactic, status=Status.CHOSEN,
                                        shapes=key.shapes, extras=key.extras, raw_key=key_text.strip()[:4000]))

    # ----- inference-time fallbacks --------------------------------------------------------------
    def _fallback_miss(self, lineno: int, body: str) -> None:
        m = re.match(r"Using fallback tactic for (\S+) with input shapes (.*)$", body)
        if not m:
            raise ValueError("unexpected 'Using fallback tactic' form")
        op = m.group(1)
        # 0.7.4 writes the generated key on the same line ("...; generated key ProfilingCacheKey(...)");
        # earlier releases on the next ("Generated key ..."): either way the shapes end before it
        shapes_text, _, key_text = m.group(2).partition("; generated key ")
        shapes = self._shapes_or_none(shapes_text)
        ident = ("fallback", op, _hashable(shapes))
        self.events.add("fallback_tactic", lineno, body, f"FlashInfer ran its fallback tactic for {op}: no tuned config "
                        "covered the call (a fallback, not a failure)", {"op": Fact(op, "decoded", "log line")}, key=(op,))
        cause = self._revalidation_cause(op)
        self._count(ident, lineno, dict(op=op, runner="", tactic=-1, status=Status.FALLBACK, shapes=shapes,
                                        detail={"reason": "no cache entry for this shape at inference; runner 0 ran tactic -1",
                                                "shapes_are": "runtime input shapes", "said": quote_bounded(body, 240)}))
        if cause is not None:
            self._aggs[ident].record["detail"].update(cause)
        self._last_fallback_key = ident
        if key_text:
            self._generated_key(key_text)

    def _generated_key(self, text: str) -> None:
        agg = self._aggs.get(self._last_fallback_key) if self._last_fallback_key else None
        self._last_fallback_key = None
        if agg is None or agg.record.get("runner"):
            return
        try:
            key = parse_profiling_key(text)
        except (ValueError, SyntaxError):
            return
        agg.record["runner"] = key.runner
        agg.record["detail"]["nearest_profile"] = key.shapes
        agg.record["extras"] = key.extras

    def _out_of_bucket(self, lineno: int, body: str) -> None:
        # the full line names the fallback runner and tactic; a ticket often quotes it shortened
        # ("No tuned config covers bf16_gemm input_shapes=(... [H, vocab] ...)"): the op is still there
        m = re.match(r"No tuned config covers (\S+)(?: input_shapes=([^;]*))?(?:; falling back to runner=(\S+) tactic=(-?\d+))?(?:[\s.;]|$)", body)
        if not m:
            raise ValueError("unexpected 'No tuned config covers' form")
        op, shapes_text, runner = m.group(1), m.group(2), m.group(3) or ""
        tactic = int(m.group(4)) if m.group(4) is not None else -1  # FlashInfer's fallback: runner 0, tactic -1
        shapes = self._shapes_or_none(shapes_text) if shapes_text and "..." not in shapes_text else None
        ident = ("fallback", op, _hashable(shapes))
        self.events.add("fallback_tactic", lineno, body, f"no tuned config covers {op}: FlashInfer ran its fallback "
                        "tactic (a fallback, not a failure)", {"op": Fact(op, "decoded", "log line")}, key=(op,))
        agg = self._aggs.get(ident)
        if agg is None:
            self._count(ident, lineno, dict(op=op, runner=runner, tactic=tactic, status=Status.FALLBACK, shapes=shapes,
                                            detail={"shapes_are": "runtime input shapes", "said": quote_bounded(body, 240)}))
            agg = self._aggs[ident]
        agg.record["runner"] = agg.record.get("runner") or runner
        cause = self._revalidation_cause(op)
        if cause is not None or agg.record["detail"].get("cache_miss"):
            # FlashInfer's warning blames the bucket range; the revalidation line before says otherwise
            if cause is not None:
                agg.record["detail"].update(cause)
            agg.record["detail"]["flashinfer_warning"] = ("'No tuned config covers ... outside the tuning bucket range' "
                                                          "(printed for any miss at inference; here the cause is the revalidation)")
            return
        agg.record["detail"]["out_of_bucket"] = True
        agg.record["detail"]["reason"] = ("shape outside the tuned bucket range: the tuned cache has this op "
                                          "but no bucket covers it, so runner 0 ran tactic -1 (perf cliff)")
        if m.group(4) is None:
            agg.record["detail"]["abbreviated"] = ("the line is shortened: runner, tactic and shapes are not in it "
                                                   "(FlashInfer's fallback is runner 0, tactic -1)")

    def _revalidation(self, lineno: int, body: str) -> None:
        """0.7.x: a cached tactic the runner's `validate_tactic` rejected (`_tactic_still_valid`,
        logged once per op, runner and source): a cache miss of that key. FlashInfer then runs the
        fallback (runner 0, tactic -1), so the next fallback line of the op is this miss; a log without
        one (INFO) still gets the miss as a fallback record of its own (`_pending_revalidations`)."""
        m = re.match(r"cached tactic (?P<tac>.*) for (?P<op>\S+) \(runner=(?P<runner>[^,]+), source=(?P<src>[^)]*)\) failed revalidation", body)
        if not m:
            raise ValueError("unexpected 'cached tactic ... failed revalidation' form")
        tactic = parse_tactic(m["tac"])
        self.events.add("cache_miss", lineno, body,
                        f"{m['op']}: cached tactic {m['tac']} ({m['runner']}, from the {m['src']}) failed the runner's "
                        "revalidation: FlashInfer treated that entry as a cache miss and ran its fallback (runner 0, tactic -1)",
                        {"op": Fact(m["op"], "decoded", "log line"), "runner": Fact(m["runner"], "decoded", "log line"),
                         "cached_tactic": Fact(tactic, "decoded", "log line"), "cache_source": Fact(m["src"], "decoded", "log line")},
                        key=("revalidation", m["op"], m["runner"], _hashable(tactic), m["src"]))
        self._revalidated[m["op"]] = (m["runner"], tactic, m["src"], lineno)

    _REVALIDATION_REASON = ("the cached tactic {tac} ({runner}, from the {src}) failed revalidation (log line {line}): "
                            "FlashInfer treated the entry as a cache miss and ran runner 0 / tactic -1")

    def _revalidation_cause(self, op: str) -> Optional[Dict[str, Any]]:
        """The pending revalidation miss of `op`, as a fallback record's detail (consumed)."""
        hit = self._revalidated.pop(op, None)
        if hit is None:
            return None
        runner, tactic, src, line = hit
        return {"reason": self._REVALIDATION_REASON.format(tac=tactic, runner=runner, src=src, line=line),
                "cached_tactic": tactic, "cache_miss": "revalidation failed"}

    def _pending_revalidations(self) -> Iterator[Item]:
        """Revalidation misses no fallback line followed (an INFO log): one fallback record each."""
        for op, (runner, tactic, src, line) in list(self._revalidated.items()):
            yield self._record(op, runner, -1, Status.FALLBACK, line, detail={
                "reason": self._REVALIDATION_REASON.format(tac=tactic, runner=runner, src=src, line=line),
                "cached_tactic": tactic, "cache_miss": "revalidation failed"})
        self._revalidated.clear()

    def _filtered(self, lineno: int, body: str) -> None:
        m = re.match(r"Filtered (\d+) invalid tactic\(s\) for (\S+) \((\d+) remaining\)", body)
        if not m:
            raise ValueError("unexpected 'Filtered N invalid tactic(s)' form")
        n, key, remaining = int(m.group(1)), m.group(2), int(m.group(3))
        op, _, runner = key.rpartition("::")
        ident = ("filtered", op, runner)
        agg = self._aggs.get(ident)
        if agg is None:
            self._aggs[ident] = _Agg(dict(op=op, runner=runner, tactic=None, status=Status.BLOCKED,
                                          detail={"filtered_per_call": n, "remaining": remaining,
                                                  "note": "tactics removed by the loaded blocklist (the log does not list which)"}),
                                     count=1, lines=[lineno])
        else:
            agg.count += 1

    # ----- blocks, continuation, aggregation -------------------------------------------------------
    def _push(self, ev: _Event) -> None:
        ev.span_s = self.clock.tactic_line(ev.status is Status.FAILED)
        self._pending.append(ev)
        if len(self._pending) >= MAX_PENDING:
            self._flush_block()

    def _learn(self, rrepr: str, runner: str, op: str) -> None:
        self._op_by_repr[rrepr] = op
        prev = self._op_by_class.get(runner, op)
        self._op_by_class[runner] = op if prev == op else None  # MoERunner serves gemm1 and gemm2

    def _op_for(self, ev: _Event, block_op: Optional[str]) -> Tuple[str, Optional[str]]:
        if ev.op:
            return ev.op, None
        if block_op:
            return block_op, None
        if ev.runner_repr in self._op_by_repr:
            return self._op_by_repr[ev.runner_repr], "op inferred from the same runner object's chosen line"
        by_class = self._op_by_class.get(ev.runner)
        if by_class:
            return by_class, "op inferred from the runner class"
        if ev.runner in RUNNER_OP:
            return RUNNER_OP[ev.runner], f"op inferred from the runner class: {ev.runner} serves only {RUNNER_OP[ev.runner]}"
        if self._op_hint:
            return self._op_hint, "op taken from the 'Tuning <op>' progress bar"
        if ev.runner == MOE_RUNNER and "cutlass_fused_moe" in ev.runner_repr:
            return FUSED_MOE_FAMILY, ("op family inferred from the runner's module (get_cutlass_fused_moe_module); "
                                      "gemm1 or gemm2 not named")
        return "", "op unknown: the profile block never named it"

    def _flush_block(self, op: Optional[str] = None, shapes: Any = None, extras: Any = None, oom_line: Optional[int] = None,
                     oom_times: int = 1) -> None:
        self._end_continuation()
        block_op = op or self._block_op
        for ev in self._pending:
            ev_op, note = self._op_for(ev, block_op)
            self.clock.tactic(ev_op, ev.runner, ev.tactic, ev.status is Status.FAILED, ev.span_s, ev.line, ev.tensor_shapes)
            detail = dict(ev.detail)
            if note:
                detail["op_note"] = note
            if ev.tensor_shapes is not None:
                detail["tensor_shapes"] = ev.tensor_shapes
            rec_shapes = shapes
            if rec_shapes is None and ev.tensor_shapes is not None and ev_op:
                # no key line for this block: the profiling line's own tensor shapes are the key's
                # shapes (the autotuner keys a profile by the tensors it times)
                rec_shapes = ev.tensor_shapes
                detail["shapes_from"] = "the profiling line's tensor shapes"
            if ev.status is Status.PROFILED:
                # one aggregate per (op, runner, tactic, bucket): repeated timings add to its samples
                # (a warm and a cold timing of one tactic are two facts, not one sample set)
                ident: tuple = ("profiled", ev_op, ev.runner, _hashable(ev.tactic), _hashable(rec_shapes), _hashable(extras),
                         ev.detail.get("l2"))
                agg = self._aggs.get(ident)
                if agg is None:
                    if len(self._aggs) >= MAX_AGGREGATES:
                        self._agg_overflow += 1
                        continue
                    detail["runner_repr"] = HEX.sub("0x_", ev.runner_repr)
                    agg = self._aggs[ident] = _Agg(dict(op=ev_op, runner=ev.runner, tactic=ev.tactic, status=Status.PROFILED,
                                                        shapes=rec_shapes, extras=extras, detail=detail),
                                                   count=0, lines=[], times=TimeSamples())
                agg.count += 1
                if len(agg.lines) < 64:
                    agg.lines.append(ev.line)
                assert agg.times is not None
                agg.times.add(ev.time_ms)
            else:
                assert ev.error is not None
                err = ev.error.summary()
                detail.update(ev.error.detail())
                # group "the same error" even when it prints a pointer or address that changes per call
                ident = ("failed", ev_op, ev.runner, _hashable(ev.tactic), HEX.sub("0x_", err))
                agg = self._aggs.get(ident)
                if agg is None and len(self._aggs) >= MAX_AGGREGATES:
                    self._agg_overflow += 1
                elif agg is None:
                    detail["buckets"] = [rec_shapes] if rec_shapes is not None else []
                    self._aggs[ident] = _Agg(dict(op=ev_op, runner=ev.runner, tactic=ev.tactic, status=Status.FAILED,
                                                  shapes=rec_shapes, extras=extras, error=err, detail=detail),
                                             count=1, lines=[ev.line])
                else:
                    agg.count += 1
                    if len(agg.lines) < 64:
                        agg.lines.append(ev.line)
                    buckets = agg.record["detail"].setdefault("buckets", [])
                    if rec_shapes is not None and rec_shapes not in buckets and len(buckets) < 64:
                        buckets.append(rec_shapes)
        if oom_line is not None:
            # FlashInfer caught the OOM and used its default tactic: a fallback, not a failed tactic
            oom_op = block_op or self._op_hint or ""
            self._count(("oom", oom_op), oom_line, dict(op=oom_op, runner="", tactic=None, status=Status.FALLBACK,
                                                         detail={"failure_kind": "out_of_memory", "oom": True,
                                                                 "default_tactic": -1,  # (the line does not print it)
                                                                 "said": "OOM detected, falling back to default tactic",
                                                                 "reason": "OOM detected while tuning: FlashInfer stopped "
                                                                           "tuning this op and used its default tactic "
                                                                           "(runner 0, tactic -1)"}), times=oom_times)
        self._pending = []
        self._block_op = None
        self._block_closing = False
        self._last_fail = None

    def _start_continuation(self, ev: Optional[_Event], prefix: str) -> None:
        self._cont = ev if ev is not None else _Event(Status.FAILED, "", "", None, 0, error=ErrorText(""))
        self._cont_prefix = prefix
        self._cont_left = MAX_CONTINUATION

    def _continue(self, text: str) -> None:
        assert self._cont is not None and self._cont.error is not None
        if self._cont_left <= 0:
            return
        self._cont_left -= 1
        if self._cont_prefix and text.startswith(self._cont_prefix):
            text = text[len(self._cont_prefix):]
        self._cont.error.add(text)

    def _end_continuation(self) -> None:
        self._cont = None

    def _count(self, ident: Tuple[Any, ...], lineno: int, fields: Dict[str, Any], times: int = 1) -> None:
        agg = self._aggs.get(ident)
        if agg is None:
            if len(self._aggs) >= MAX_AGGREGATES:
                self._agg_overflow += 1
                return
            fields.setdefault("detail", {})
            self._aggs[ident] = _Agg(fields, count=times, lines=[lineno])
        else:
            agg.count += times
            if len(agg.lines) < 64:
                agg.lines.append(lineno)

    def _agg_record(self, agg: _Agg) -> TuningRecord:
        f = dict(agg.record)
        detail = dict(f.pop("detail", {}) or {})
        # file-level facts the report wants next to the entries: where the winners were saved,
        # which cache the inference-time lookups (and their fallbacks) were loaded from
        if f["status"] is Status.CHOSEN and self.facts.caches_saved:
            detail["log_saved_to"] = list(self.facts.caches_saved)
        if f["status"] is Status.FALLBACK and self.facts.caches_loaded:
            detail["log_loaded_from"] = list(self.facts.caches_loaded)
        if f["status"] is Status.FALLBACK and self.facts.cache_env_mismatches:
            detail["log_cache_ignored"] = list(self.facts.cache_env_mismatches)
        if len(agg.lines) > 1:
            detail["lines"] = agg.lines
        if detail.get("buckets") == []:
            detail.pop("buckets")
        if isinstance(detail.get("skipped_per_profile"), dict):
            detail["skipped_per_profile"] = tuple(sorted(detail["skipped_per_profile"].items()))
        if agg.times is not None:
            detail.update(agg.times.detail("ms"))
            # the record's time: the median of the kept samples (exact up to MAX_SAMPLES timings)
            f["time_ms"] = agg.times.median
        return self._record(f.pop("op"), f.pop("runner"), f.pop("tactic"), f.pop("status"), agg.lines[0],
                            count=agg.count, detail=detail, **f)

    def _record(self, op: str, runner: str, tactic: Tactic, status: Status, line: int, *,
                detail: Optional[Dict[str, Any]] = None, **kw: Any) -> TuningRecord:
        clean = {k: v for k, v in (detail or {}).items() if v is not None}
        rank = kw.pop("rank", None) or self.rank  # a line's own rank (TensorRT-LLM's `[RANK r]`), else the file's
        return TuningRecord(source=self.source, source_kind=KIND, op=op, runner=runner, tactic=tactic,
                            status=status, env=self.env, line=line, detail=frozen_detail(clean), rank=rank, **kw)

    def _shapes_or_none(self, text: str) -> Optional[Tuple[Any, ...]]:
        try:
            v = parse_log_literal(text)
        except (ValueError, SyntaxError, RecursionError):
            return None
        return v if isinstance(v, tuple) else None

    def _problem(self, lineno: int, message: str, loses_data: bool = True) -> None:
        self._problem_count += 1
        if self._problem_count <= MAX_PROBLEMS:
            # an autotuner line that did not parse: that line's record is lost, unless the text
            # itself left out what would have made it one (loses_data=False: a note)
            self._out.append(InputProblem(self.source, f"{self.source}:{lineno}: {message}", fatal=False, loses_data=loses_data))




# An author's elision inside a pasted line: "...", "…", "<...>", "[...]"
_ELISION = re.compile(r"\.\.\.|…")


def unread_messages(messages: Iterable[str]) -> list[str]:
    """The autotuner messages (`[Autotuner]: ...` as FlashInfer logs them) that no rule of this
    parser reads: each is fed as one logger line to a fresh parser (tools/flashinfer_writers'
    release watch derives the messages from a release's source)."""
    out = []
    for msg in messages:
        p = LogParser("<message>", Environment())
        list(p.feed(1, "2026-01-01 00:00:00,000 - DEBUG - autotuner.py:1 - flashinfer.jit: " + msg))
        list(p.finish())
        if p.facts.unread:
            out.append(msg)
    return out
