"""The result types the commands hand to formatters (frozen data only: no I/O, no model calls).

`InspectResult` (inspect, report) holds the analysed entries, the aggregated failures, the
never-tried catalog tiles, the verdicts and the input problems; `verdicts` builds its `Verdict`s.
Formatters read these and compute nothing. (`tiletune doctor`'s report types are in
analysis/doctor.py: an inspect never builds them, so it does not create their classes.)

The model's answer for an entry or a failure is the model's own `ModelResult` (held, not copied:
it is the one type of a modelled case; units in its docstring). Formatters convert (KiB, us, %)
and label model values as such.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from msgspec import Struct

from tiletune.analysis.warmup_cost import WarmupCost
from tiletune.core.events import Event, Evidence, InputFacts
from tiletune.core.records import CatalogRef, Entry, InputProblem, Problem, Tactic, TileConfig
from tiletune.model.perf import ModelResult

if TYPE_CHECKING:
    from tiletune.analysis.source_groups import SourceGroup


# The at-a-glance view (analysis/overview.py builds it once per result: InspectResult.overview)

class Pick(Struct, frozen=True, gc=False):
    """One tactic in a bucket, with its measured time (ms) when known."""

    tactic: Tactic
    config: Optional[TileConfig]
    time_ms: Optional[float]
    spread: Optional[float] = None  # relative spread of its samples ((max - min) / min), when known
    not_cutlass: bool = False
    candidates: Optional[str] = None  # undecoded: what the candidate tiles share ('128x128x{128|256}')
    runs: Optional[str] = None  # the tile that runs when the binding runs another than it profiled (Decoded.runs)
    # a runner-up known only from FlashInfer's selection record (0.7.4): its time, not its tactic;
    # the number of candidates the autotuner timed, the winner included
    recorded_of: Optional[int] = None
    # 'runs 128x128x256 when the output is not 32-byte aligned' (Decoded.runs_if): a run-time condition
    runs_if: Optional[str] = None

    def label(self) -> str:
        if self.recorded_of is not None:
            return f"FlashInfer record: fastest of {self.recorded_of - 1} other(s)"
        if self.config is not None:
            return (self.config.label() + (f" profiled, runs {self.runs}" if self.runs else "")
                    + (f" ({self.runs_if})" if self.runs_if else ""))
        if self.not_cutlass:
            return f"tactic {self.tactic} (non-CUTLASS)"
        return f"tactic {self.tactic} undecoded" + (f" ({self.candidates}?)" if self.candidates else "")

    def short(self) -> str:
        """For the tile map: the tile, or `tac N` for a tactic with no tile."""
        return self.config.label() if self.config is not None else f"tac {self.tactic}"


class BucketLine(Struct, frozen=True, gc=False):
    """One M bucket of one (arch, op, runner, N, K)."""

    problem: Problem
    chosen: tuple[Pick, ...]  # several when sources (ranks) disagree
    chosen_time_ms: Optional[float]  # the winner's measured time (its own record's, else its profile time here)
    runner_up: Optional[Pick]
    margin: Optional[float]  # (runner-up time - winner time) / winner time, measured
    won_by_noise: Optional[bool]
    noise_basis: Optional[str]  # "samples" | "default 5 %"
    failed: int  # distinct tactics that failed in this bucket
    never_tried: Optional[int]  # catalog tactics with no record in this bucket (None: unknown)
    fallback_only: bool  # no tuned bucket: at run time this M ran the fallback tactic (-1); problem.m is that runtime M
    chosen_spread: Optional[float] = None  # the winner's own sample spread ((max - min) / min), when its samples are known
    # the analysed entry the one winner's Pick was made from (None: several chosen, or a fallback):
    # the table finds its model result through it instead of by value (not part of the line's value)
    winner_entry: Any = None


class Group(Struct, frozen=True, gc=False):
    """One (arch, op, runner, N, K): its buckets in M order and the M ranges no bucket covers."""

    arch: Optional[str]
    op: str
    runner: str
    n: int
    k: int
    flashinfer_version: Optional[str]
    lines: tuple[BucketLine, ...]
    uncovered: tuple[tuple[int, Optional[int]], ...]  # runtime M ranges (lo, hi; hi None = and above)
    source_group: Optional[str] = None  # the source group (one server's inputs) the buckets come from
    label: Optional[str] = None  # that group's short name, set only when the inputs hold several groups
    # True when `overview` built every line from one chosen entry alone in its bucket (`_one_winner_line`):
    # one winner, its own entry, nothing else timed, failed or logged. A fact of how the lines were
    # made, not part of the group's value: the table skips its per-line checks for such a group
    one_winner_lines: bool = False


class RankDisagreement(Struct, frozen=True, gc=False):
    """Ranks of one server (one layout directory) that chose different configs for one bucket."""

    arch: Optional[str]
    op: str
    runner: str
    problem: Problem
    server: str  # the source group (layout directory) the rank files share
    choices: tuple[tuple[str, Pick], ...]  # (rank, its winner)
    beyond_noise: Optional[bool]  # None when the times are unknown
    basis: str


class Overview(Struct, frozen=True, gc=False):
    groups: tuple[Group, ...]
    rank_disagreements: tuple[RankDisagreement, ...]
    # the entries of the buckets that hold several, in input order within each bucket; None when
    # an (arch, op) has several runners. Any other entry is alone in its bucket of one (arch, op,
    # source group): no other shares its problem there (formats.glance.ModelByChoice relies on it)
    crowded: Optional[tuple[Any, ...]] = None


NO_OVERVIEW = Overview((), ())  # a result with no entries (and the default of results built without one)


class AnalyzedEntry(Struct, frozen=True, gc=False):
    """One decoded record plus the model's view of it (or why there is none)."""

    entry: Entry
    analysis: Optional[ModelResult] = None  # the model's answer at the top of the entry's M bucket
    analysis_note: Optional[str] = None  # why `analysis` is None (not decoded, no dtype, model missing, ...)
    # the model calibrated on the inputs' measured times (analysis/calibrated.py), where a fit covers
    # this entry: what the views show unless --uncalibrated; `analysis` stays the table model
    calibrated: Optional[ModelResult] = None

    @property
    def record(self):  # noqa: ANN201 - TuningRecord; short alias used everywhere in formatters
        return self.entry.record

    @property
    def arch(self) -> Optional[str]:
        return self.entry.record.env.arch

    @property
    def config(self) -> Optional[TileConfig]:
        return self.entry.config


class FailureReason(Struct, frozen=True, gc=False):
    """Why a tactic failed, as far as the evidence and the model can tell.

    kind: "smem" (shared memory need over the limit), "not_instantiated" (no kernel for this
    tile: catalog known failure, dispatcher error, JIT module not built), "runtime" (an error
    the shared-memory model does not explain), "unknown" (no error text, no model).
    basis: where the reason comes from: "error text", "model", "catalog", "jit workspace".
    model_disagrees: the evidence says failed while the model says the tile fits; the evidence
    wins and the summary says the cause is not explained by shared memory.
    """

    kind: str
    summary: str
    basis: str
    need_bytes: Optional[int] = None
    limit_bytes: Optional[int] = None
    model_disagrees: bool = False


class Failure(Struct, frozen=True, gc=False):
    """Every failed attempt of one (arch, version, op, runner, tactic) and diagnosis class, across all inputs."""

    op: str
    runner: str
    tactic: Tactic
    arch: Optional[str]
    flashinfer_version: Optional[str]
    config: Optional[TileConfig]
    decode_note: Optional[str]  # why config is None
    count: int  # sum of the records' counts: how many times it failed across the inputs
    errors: tuple[tuple[str, int], ...]  # (error text, count), most frequent first
    sources: tuple[str, ...]
    reason: FailureReason
    analysis: Optional[ModelResult] = None
    passed_later: bool = False  # a retry ledger shows it passing
    not_cutlass: bool = False  # a cuBLAS / cuDNN / trtllm-gen tactic: there is no tile to name
    problems: tuple[Problem, ...] = ()  # the shape buckets it failed for (distinct)
    group: Optional[str] = None  # the source group (one server's inputs: tiletune.analysis.source_groups) it comes from
    # the kind of failure (analysis.failures.diagnosis_class: error text's class, else the source's diagnosis);
    # one tactic's failures of different kinds are different Failures
    diagnosis: Optional[str] = None
    # whose autotuner timed them: "TensorRT-LLM" when every one comes from TensorRT-LLM's own torch
    # autotuner (its cache or its log lines), whose runners `tiletune retry` does not run; None otherwise
    autotuner: Optional[str] = None

    @property
    def error(self) -> str:
        """The most frequent error text ('' when the source gave none)."""
        return self.errors[0][0] if self.errors else ""


class NotTried(Struct, frozen=True, gc=False):
    """Catalog tiles with no record of any attempt in the inputs, for one catalog list."""

    arch: str
    flashinfer_version: str
    op: str
    runner: str
    catalog: CatalogRef
    tactics: tuple[tuple[int, TileConfig], ...]  # (tactic index as the autotuner numbers it, config)
    tried: int  # how many of the list's tactics have some record
    evidence: str  # "winners only" (only caches read) or "profiling log" (a log lists attempts)
    group: Optional[str] = None  # the source group (one server's inputs) whose records left these untried


class Verdict(Struct, frozen=True, gc=False):
    """The one-line answer for one arch and op."""

    arch: Optional[str]
    op: str
    text: str
    winners: tuple[tuple[str, int], ...] = ()  # (tile label, buckets won)
    failed: int = 0  # failures summed over counts
    not_tried: int = 0
    undecoded: int = 0
    disagreements: int = 0  # failures where the evidence and the shared-memory model disagree
    fatal: bool = False  # a verdict about a fatal event (what ended a run); these come first
    source: Optional[str] = None  # the input a run verdict (about events) is about
    group: Optional[str] = None  # the source group (one server's inputs: tiletune.analysis.source_groups) it is about
    # ranks of one server (one layout directory) that kept different winners for one bucket
    rank_disagreements: tuple["RankDisagreement", ...] = ()
    evidence: tuple[Evidence, ...] = ()  # the lines that hold what the text says, first the one it rests on


class GpuChoice(Struct, frozen=True, gc=False):
    """Which GPU an arch's entries were modelled on, and why."""

    arch: Optional[str]
    gpu: Optional[str]
    how: str  # "--gpu", "named in the inputs", "default for sm120 (no GPU named in the inputs)", ...


class InspectResult(Struct, frozen=True, gc=False):
    """Everything `inspect` found. Formatters read this and compute nothing."""

    entries: tuple[AnalyzedEntry, ...]
    failures: tuple[Failure, ...]
    not_tried: tuple[NotTried, ...]
    verdicts: tuple[Verdict, ...]
    problems: tuple[InputProblem, ...]
    sources: tuple[tuple[str, str], ...]  # (path, kind) of each input used
    searched: tuple[str, ...] = ()  # what discovery looked at (no paths given)
    discovered: bool = False  # True when the inputs came from discovery
    gpus: tuple[GpuChoice, ...] = ()
    notes: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()  # non-entry facts of logs and pasted text (tiletune.core.events)
    inputs: tuple[InputFacts, ...] = ()  # what each text input says about its run (arch, versions)
    source_groups: tuple["SourceGroup", ...] = ()  # which inputs are one server's run (tiletune.analysis.source_groups)
    # the flags that set what the inputs did not say (--arch sm120, --flashinfer-version 0.6.17): a
    # suggested command over the same inputs repeats them, or it would read them differently
    read_flags: tuple[str, ...] = ()
    calibrations: tuple[Any, ...] = ()  # analysis.calibrated.Fit per measured (arch, GPU, dtype, op, release, group)
    overview: Overview = NO_OVERVIEW  # per-bucket winners, margins, won by noise, uncovered M (analysis/overview.py)
    warmup: tuple[WarmupCost, ...] = ()  # per log: where its tuning time went, from its timestamps (analysis/warmup_cost.py)

    def group_labels(self) -> dict[str, str]:
        """Source group name -> short name, when the inputs form several groups (else empty)."""
        return {g.name: g.label for g in self.source_groups} if len(self.source_groups) > 1 else {}

    def group_label(self, name: Optional[str]) -> Optional[str]:
        """A source group's short name for text; None when the inputs form one group (nothing to tell apart)."""
        if name is None or len(self.source_groups) < 2:
            return None
        return next((g.label for g in self.source_groups if g.name == name), name)

    @property
    def run_ended(self) -> bool:
        """A fatal event, or an input whose text shows a process ending even where it does not say why."""
        return bool(self.fatal_events) or any((i.ended is not None and i.ended.value) or i.run_end is not None
                                              for i in self.inputs)

    @property
    def fatal_events(self) -> tuple[Event, ...]:
        """Events that ended (or would end) a run: findings, not input errors (exit status stays 0)."""
        return tuple(e for e in self.events if e.is_fatal)

    def fails_on(self, what: str) -> bool:
        """`--fail-on fatal|failed`: True when such findings exist (the CLI then exits 1); 'failed'
        covers failed tactics and fatal events."""
        if what == "fatal":
            return self.run_ended
        if what == "failed":
            return bool(self.failures) or self.run_ended
        raise ValueError(f"--fail-on {what!r}: expected fatal or failed")

    @property
    def exit_code(self) -> int:
        """0 when every input was read; 2 when any input, or any part of one (a key, a line, an
        entry file), was unusable. Notes that lose nothing (e.g. "no _metadata: version unknown")
        are printed but keep 0: findings are not errors."""
        return 2 if any(loses_data(p) for p in self.problems) else 0


def loses_data(problem: InputProblem) -> bool:
    """True when the problem means something in the input could not be used (exit status 2). The
    reader that built the problem decides (`InputProblem.loses_data`); a fatal problem always does."""
    return problem.fatal or problem.loses_data


__all__ = ["AnalyzedEntry", "Failure", "FailureReason", "GpuChoice", "InspectResult", "NotTried",
           "Verdict", "loses_data"]
