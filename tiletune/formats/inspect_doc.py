"""The `tiletune.inspect/1` document as types: what `inspect --format json` prints, field by field.

Each output object is a msgspec Struct whose fields are the JSON keys, in the order they are
written; msgspec encodes them (in C) and writes the shipped JSON Schema from them
(tools/schemas.py; tests/formats/test_schemas.py holds the shipped file to the generated one).
Contract fields (DESIGN.md) keep their names and meanings; the rest are extras.

Units are in the key (`_ms`, `_us`, `_bytes`, `_flop_per_byte`, `_tflops`); model values say
`"kind": "model"`; `time_ms` is the source's own measurement. JSON has no NaN or Infinity: a
non-finite number from the inputs is written as null and the document's notes say so (`Strict`).
Building a document computes nothing: it copies facts out of the inspect result.
"""

from __future__ import annotations

import math
from collections import Counter
from math import isfinite
from operator import attrgetter
from typing import Annotated, Any, Literal, Optional, Sequence, Union

from msgspec import Meta, Struct

from tiletune import __version__
from tiletune.analysis.results import (
    AnalyzedEntry,
    BucketLine,
    Failure,
    FailureReason,
    InspectResult,
    NotTried,
    Overview,
    Pick,
    RankDisagreement,
    loses_data,
)
from tiletune.analysis.source_groups import group_names
from tiletune.core.records import Decoded, Problem, Status, TileConfig, Undecoded
from tiletune.formats.strict_json import NOTE as STRICT_NOTE
from tiletune.model.perf import ModelResult

SCHEMA: Literal["tiletune.inspect/1"] = "tiletune.inspect/1"

Json = Any  # a JSON value as the input held it (tactic, shapes, extras, detail values)
Ms = Annotated[Optional[float], Meta(description="milliseconds, measured by the source")]
Us = Annotated[Optional[float], Meta(description="microseconds, modelled")]


# --- shared pieces -------------------------------------------------------------------------------


class CatalogOut(Struct):
    """Which catalog decoded the tactic (release, arch, C++ source) and the index it resolved to."""

    flashinfer_version: str
    arch: str
    source_file: str
    variant: dict[str, Json]
    size: int
    index: int


class _ConfigFields(Struct):
    tile: Annotated[tuple[int, ...], Meta(description="CTA tile (M, N, K of the kernel), in elements")]
    cluster: tuple[int, ...]
    swap_ab: bool
    stream_k: bool
    name: str
    label: str
    mainloop_schedule: Optional[str]
    epilogue_schedule: Optional[str]
    epilogue_fusion: Optional[str]
    stages: Optional[int]
    style: str
    mma_tile: Optional[tuple[int, ...]]


class ConfigOut(_ConfigFields, omit_defaults=True):
    """A CUTLASS kernel configuration; `catalog` only where a catalog decoded it."""

    catalog: Optional[CatalogOut] = None


class RunsOut(_ConfigFields):
    """The config the release's binding runs instead of the one it profiled, and why."""

    index: int
    reason: str


class RunsIfOut(_ConfigFields):
    """The tile the release's dispatch runs instead of the decoded one when a run-time condition no
    cache or log records holds (SM103 fp4_gemm K768 tactics, FlashInfer 0.6.16 on: a 128x128x256
    kernel when the output is not 32-byte aligned). A labelled note: the entry's config is still
    the decode. `when`: the condition in words; `source`: file:line of the guard in the release's
    C++; `note`: the line the human views print."""

    when: str
    source: str
    note: str


class DecodeOut(Struct, omit_defaults=True):
    decoded: bool
    reason: Optional[str]
    not_a_cutlass_tactic: bool
    candidates: list[ConfigOut]
    runs: Optional[RunsOut] = None
    runs_if: Optional[RunsIfOut] = None


class _ProblemFields(Struct):
    """The GEMM a key stands for: `m` is the tuning bucket, sizes in elements."""

    m: int
    n: int
    k: int
    batch: int
    m_range: Optional[tuple[int, ...]]
    experts: Optional[int]
    top_k: Optional[int]
    dtype_a: Optional[str]
    dtype_b: Optional[str]
    dtype_out: Optional[str]


class ProblemOut(_ProblemFields):
    """The GEMM a key stands for: `m` is the tuning bucket, sizes in elements; `note_ids` index
    the document's `problem_notes`."""

    note_ids: list[int]


class ProblemNotesOut(_ProblemFields):
    """A problem with its notes written out (where the document has no note table to point into)."""

    notes: list[str]


class SmemOut(Struct):
    bytes: Annotated[Optional[int], Meta(description="shared storage, bytes (modelled, or exact from a CUTLASS build)")]
    limit: Annotated[Optional[int], Meta(description="per-block shared-memory limit, bytes")]
    stages: Optional[int]
    fits: Optional[bool]
    verdict: Optional[str]


class IntensityOut(Struct):
    problem: Optional[float]
    tile: Optional[float]


class TimesOut(Struct):
    floor: Us
    expected: Us
    low: Us
    high: Us


class EfficiencyOut(Struct):
    compute: Annotated[Optional[float], Meta(description="against the DENSE peak, a fraction")]
    roofline: Optional[float]


class L2Out(Struct):
    """The L2 state the modelled times assume, and how that is known."""

    state: Optional[Literal["warm", "cold"]]
    how: Literal["decoded", "inferred", "given", "unknown"]
    basis: str


class PeakOut(Struct):
    dense: Annotated[Optional[float], Meta(description="TFLOP/s, dense (what efficiency is against)")]
    sparse: Annotated[Optional[float], Meta(description="TFLOP/s, the vendor's 2:4-sparse figure: an aside")]


class ModelOut(Struct, omit_defaults=True):
    """The model's numbers for one case (every one modelled, never measured); `notes` on failures only."""

    kind: Literal["model"]
    gpu: str
    dtype: str
    m_evaluated: int
    smem: SmemOut
    intensity_flop_per_byte: IntensityOut
    bound: str
    time_us: TimesOut
    efficiency: EfficiencyOut
    l2: L2Out
    peak_tflops: PeakOut
    ctas: int
    sms: int
    notes: Optional[list[str]] = None


# --- entries, failures, never-tried tiles ---------------------------------------------------------


class EntryOut(Struct):
    """One record after decoding, with the model's view of it."""

    source: str
    source_kind: str
    arch: Optional[str]
    arch_source: Optional[str]
    flashinfer_version: Optional[str]
    version_source: Optional[str]
    gpu: Optional[str]
    op: str
    runner: str
    status: Status
    tactic: Json
    problem: Optional[ProblemOut]
    config: Optional[ConfigOut]
    decode: DecodeOut
    model: Optional[ModelOut]
    rank: Optional[str]
    line: Optional[int]
    problem_note: Optional[str]
    count: int
    error: Optional[str]
    time_ms: Ms
    shapes: Annotated[Json, Meta(description="the key's raw shapes, only where no problem was recovered from them")]
    extras: Json
    detail: dict[str, Json]
    model_note: Optional[str]


class ReasonOut(Struct):
    kind: str
    summary: str
    basis: str
    need_bytes: Optional[int]
    limit_bytes: Optional[int]
    model_disagrees: bool


class ErrorCount(Struct):
    text: str
    count: int


class FailureOut(Struct):
    """Every failed attempt of one (arch, version, op, runner, tactic, diagnosis), across the inputs."""

    source: str
    sources: list[str]
    op: str
    runner: str
    tactic: Json
    arch: Optional[str]
    flashinfer_version: Optional[str]
    config: Optional[ConfigOut]
    decode_note: Optional[str]
    error: str
    errors: list[ErrorCount]
    count: int
    reason: ReasonOut
    passed_later: bool
    problems: list[ProblemOut]
    model: Optional[ModelOut]
    group: Optional[str]
    diagnosis: Optional[str]
    autotuner: Optional[str] = None  # "TensorRT-LLM": timed by TensorRT-LLM's own autotuner, which `tiletune retry` does not run


class TacticConfig(Struct):
    tactic: int
    config: Optional[ConfigOut]


class NotTriedOut(Struct):
    """Catalog tactics no input mentions, per catalog list an input touched."""

    arch: Optional[str]
    flashinfer_version: Optional[str]
    op: str
    runner: str
    variant: dict[str, Json]
    status: Literal["not_tried"]
    evidence: str
    tried: int
    tactics: list[TacticConfig]
    group: Optional[str]


# --- the overview ---------------------------------------------------------------------------------


class PickOut(Struct, omit_defaults=True):
    """One tactic of a bucket; `recorded_by` / `candidates_timed` when its time comes from FlashInfer's
    selection record (its time, not its tactic)."""

    tactic: Json
    tile: Optional[str]
    label: str
    time_ms: Ms
    spread: Annotated[Optional[float], Meta(description="(max - min) / min of its timed samples, measured")]
    recorded_by: Optional[str] = None
    candidates_timed: Optional[int] = None


class BucketLineOut(Struct):
    problem: Optional[ProblemOut]
    chosen: list[PickOut]
    chosen_time_ms: Ms
    chosen_spread: Optional[float]
    runner_up: Optional[PickOut]
    margin: Annotated[Optional[float], Meta(description="(runner-up time - winner time) / winner time, measured; a fraction")]
    won_by_noise: Optional[bool]
    noise_basis: Optional[str]
    failed: int
    never_tried: Optional[int]
    fallback_only: bool


class GroupOut(Struct):
    arch: Optional[str]
    op: str
    runner: str
    n: int
    k: int
    flashinfer_version: Optional[str]
    source_group: Optional[str]
    label: Optional[str]
    buckets: int
    uncovered_m: Annotated[list[tuple[int, Optional[int]]],
                           Meta(description="runtime M ranges [lo, hi] (hi null: and above) that map to no bucket the inputs hold")]
    lines: list[BucketLineOut]


class RankChoice(Struct):
    rank: str
    tactic: Json
    config: Optional[ConfigOut]
    time_us: Annotated[Optional[float], Meta(description="microseconds, measured")]


class RankDisagreementOut(Struct):
    """One bucket whose ranks (files of one server's layout directory) kept different winners."""

    problem: Optional[ProblemNotesOut]
    runner: str
    server: str
    choices: list[RankChoice]
    beyond_noise: Optional[bool]
    basis: str


class OverviewOut(Struct):
    """The at-a-glance facts the table shows (analysis/overview.py): per (arch, op, runner, N, K,
    source group) the bucket count, the runtime M ranges no bucket covers and the bucket lines that
    say more than their entries (runner-up, margin, won by noise, failed / never-tried counts,
    fallbacks); rank disagreements."""

    groups: list[GroupOut]
    rank_disagreements: list[RankDisagreementOut]


# --- the document ---------------------------------------------------------------------------------


class WinnerOut(Struct):
    tile: str
    buckets: int


class EvidenceOut(Struct, omit_defaults=True):
    """The words a verdict rests on: which input, which line, what it says, how it is known (and why,
    for an inference)."""

    source: str
    line: Optional[int]
    words: str
    how: Literal["decoded", "stated", "inferred", "measured", "modelled"]
    basis: Optional[str] = None


class VerdictOut(Struct):
    arch: Optional[str]
    op: str
    text: str
    winners: list[WinnerOut]
    failed: int
    not_tried: int
    undecoded: int
    disagreements: int
    fatal: bool
    source: Optional[str]
    group: Optional[str]
    rank_disagreements: list[RankDisagreementOut]
    evidence: Annotated[list[EvidenceOut], Meta(description="the lines that hold what the text says, first the one it rests on")]


class ProblemReport(Struct):
    source: str
    message: str
    fatal: bool
    loses_data: bool


class SourceOut(Struct):
    path: str
    kind: str


class SourceGroupOut(Struct):
    name: str
    label: Optional[str]
    sources: list[str]
    basis: str


class GpuOut(Struct):
    arch: Optional[str]
    gpu: Optional[str]
    how: str


class CalibratedChoice(Struct):
    """A chosen entry a fit covers, with the calibrated model (what the table's "t us cal*" shows)."""

    source: str
    m: Optional[int]
    n: Optional[int]
    k: Optional[int]
    tactic: Json
    tile: Optional[str]
    time_us: Us
    time_low_us: Us
    time_high_us: Us
    efficiency_compute: Annotated[Optional[float], Meta(description="against the DENSE peak, a fraction")]
    basis: str


class CalibrationOut(Struct):
    """One fit of the model on an input's measured times (analysis/calibrated.py)."""

    arch: Optional[str]
    gpu: Optional[str]
    dtype: Optional[str]
    op: str
    flashinfer_version: Optional[str]
    group: Optional[str]
    samples: int
    calibrated: bool
    summary: str
    compute_scale: Optional[float]
    eta_bw: Optional[float]
    fixed_us: Us
    heldout_median: Optional[float]
    heldout_max: Optional[float]
    uncalibrated_median: Optional[float]
    chosen: list[CalibratedChoice]


class ChosenAtM(Struct):
    tactic: Json
    config: Optional[ConfigOut]
    label: str


class RuntimeMOut(Struct):
    """--m: per (arch, op, runner, N, K) group and runtime M, the bucket FlashInfer's mapping sends it
    to and what runs there (the table's "At runtime M" lines as data)."""

    m: int
    bucket: int
    arch: Optional[str]
    op: str
    runner: str
    n: int
    k: int
    flashinfer_version: Optional[str]
    group: Optional[str]
    runs: str
    chosen: list[ChosenAtM]
    measured_time_us: Annotated[Optional[float], Meta(description="microseconds, measured")]


EstS = Annotated[Optional[float], Meta(description="seconds, estimated from the log's timestamps (wall time between "
                                                   "printed lines, never a kernel's measured time); null: not in them")]


class WarmupOpOut(Struct):
    op: str
    time_s: EstS  # the sum of its profiles' spans
    profiles: int
    timing_lines: int
    failure_lines: int
    tqdm_elapsed_s: EstS  # tqdm's elapsed over its finished passes (1 s steps)
    tqdm_passes: int


class WarmupProfileOut(Struct):
    op: str
    bucket: str
    time_s: EstS
    start_line: int
    end_line: int


class WarmupJitOut(Struct):
    module: str
    time_s: EstS
    line: int
    next_line: Optional[int]


class WarmupQuietOut(Struct):
    """A silence inside tuning; `time_s` null and `after_line` null: nothing followed in the text."""

    time_s: EstS
    before_line: int
    before_words: str
    after_line: Optional[int]
    after_words: str
    stall: bool
    text: str


class WarmupStopOut(Struct):
    op: Optional[str]
    profiles_done: int
    tactics_timed: int
    tactics_failed: int
    last_tactic: Json
    last_line: int
    last_words: str
    window_line: int
    in_window_s: EstS
    text: str


class WarmupSavingOut(Struct):
    time_s: EstS
    basis: str
    share: Annotated[Optional[float], Meta(description="fraction of `share_of`")]
    share_of: str
    items: list[str]


class WarmupOut(Struct):
    """Where one log's tuning time went (analysis/warmup_cost.py): every figure estimated from its timestamps."""

    source: str
    source_group: Optional[str]
    how: Literal["estimated"]
    label: str
    stamps: str
    headline: str
    tuning_s: EstS
    tuning_basis: Optional[str]
    windows: int
    open_window: bool
    ops: list[WarmupOpOut]
    profile_basis: str
    slowest_profiles: list[WarmupProfileOut]
    jit_builds: list[WarmupJitOut]
    longest_silence: Optional[WarmupQuietOut]
    stall: Optional[WarmupQuietOut]
    stopped: Optional[WarmupStopOut]
    blocklist_saving: Optional[WarmupSavingOut]
    warm_cache_saving: Optional[WarmupSavingOut]
    cache_hits: int
    notes: list[str]


class InspectDoc(Struct, omit_defaults=True):
    """What `tiletune inspect --format json` prints: one object (`at_runtime_m` only with --m)."""

    schema: Literal["tiletune.inspect/1"]
    tiletune_version: str
    entries: list[EntryOut]
    failures: list[FailureOut]
    not_tried: list[NotTriedOut]
    verdicts: list[VerdictOut]
    events: Annotated[list[dict[str, Json]], Meta(description="non-entry facts of logs and pasted text (tiletune.core.events)")]
    inputs: list[dict[str, Json]]
    fatal: bool
    problems: list[ProblemReport]
    sources: list[SourceOut]
    source_groups: list[SourceGroupOut]
    overview: OverviewOut
    searched: list[str]
    discovered: bool
    gpus: list[GpuOut]
    calibrations: list[CalibrationOut]
    warmup: Annotated[list[WarmupOut], Meta(description="per log with stamped tuning lines: where its tuning time went")]
    notes: list[str]
    exit_status: int
    problem_notes: list[str]
    at_runtime_m: Optional[list[RuntimeMOut]] = None


# --- building -------------------------------------------------------------------------------------


class Strict:
    """Non-finite numbers written as null, counted: the document's notes then say so.

    Free-form values (tactic, shapes, extras, detail) become JSON values here (tuples as lists,
    enums as values, keys as strings); each distinct object once per document (the readers share
    one per distinct text, and the result holds them, so an id stays its own while this runs)."""

    def __init__(self) -> None:
        self.replaced = 0
        self._seen: dict[int, Any] = {}

    def num(self, x: Any) -> Any:
        if type(x) is float and not math.isfinite(x):
            self.replaced += 1
            return None
        return x

    def value(self, v: Any) -> Any:
        t = type(v)
        if t is int or t is str or v is None or t is bool:
            return v
        hit = self._seen.get(id(v))
        if hit is None:
            hit = self._seen[id(v)] = (v, self._walk(v))
        return hit[1]

    def _walk(self, v: Any) -> Any:
        t = type(v)
        if t is float:
            return self.num(v)
        if t is int or t is str or t is bool or v is None:
            return v
        if isinstance(v, (tuple, list)):
            return [self._walk(x) for x in v]
        if isinstance(v, dict):
            return {str(k): self._walk(x) for k, x in v.items()}
        value = getattr(v, "value", v)  # an enum
        return value if value is not v else repr(v)

    def pairs(self, pairs: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
        if not pairs:
            return _NO_PAIRS
        hit = self._seen.get(id(pairs))
        if hit is None:
            hit = self._seen[id(pairs)] = (pairs, {k: self._walk(v) for k, v in pairs})
        return hit[1]


_NO_PAIRS: dict[str, Any] = {}  # (shared by every empty detail: encoded, never changed)


class NoteTable:
    """Problem notes repeat across thousands of entries: each text is listed once in
    `problem_notes`, and problems point to it by index (`note_ids`)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}
        self._memo: dict[tuple[str, ...], list[int]] = {}

    def ids(self, notes: tuple[str, ...]) -> list[int]:
        hit = self._memo.get(notes)
        if hit is None:
            hit = []
            for t in notes:
                i = self._index.get(t)
                if i is None:
                    i = self._index[t] = len(self.texts)
                    self.texts.append(t)
                hit.append(i)
            self._memo[notes] = hit
        return hit


def _us(s: Optional[float]) -> Optional[float]:
    return None if s is None else round(s * 1e6, 3)


def _r(x: Optional[float], nd: int = 4) -> Optional[float]:
    return None if x is None else round(float(x), nd)


def _config_fields(c: TileConfig) -> dict[str, Any]:
    return dict(tile=c.tile, cluster=c.cluster, swap_ab=c.swap_ab, stream_k=c.stream_k, name=c.name, label=c.label(),
                mainloop_schedule=c.mainloop_schedule, epilogue_schedule=c.epilogue_schedule,
                epilogue_fusion=c.epilogue_fusion, stages=c.stages, style=c.style, mma_tile=c.mma_tile)


def config_out(c: Optional[TileConfig], decode: Any = None, strict: Optional[Strict] = None) -> Optional[ConfigOut]:
    if c is None:
        return None
    catalog = None
    if isinstance(decode, Decoded):
        ref = decode.catalog
        s = strict or Strict()
        catalog = CatalogOut(ref.flashinfer_version, ref.arch, ref.source_file, s.pairs(ref.variant), ref.size,
                             decode.index)
    return ConfigOut(**_config_fields(c), catalog=catalog)


def decode_out(decode: Any) -> DecodeOut:
    if isinstance(decode, Decoded):
        runs = None
        if decode.runs is not None:  # the binding runs another config than the one profiled
            runs = RunsOut(**_config_fields(decode.runs.config), index=decode.runs.index, reason=decode.runs.reason)
        runs_if = None
        if decode.runs_if is not None:  # the dispatch runs another tile when a run-time condition holds
            runs_if = RunsIfOut(**_config_fields(decode.runs_if.config), when=decode.runs_if.when,
                                source=decode.runs_if.source, note=decode.runs_if.text())
        return DecodeOut(True, None, False, [], runs, runs_if)
    assert isinstance(decode, Undecoded)
    return DecodeOut(False, decode.reason, decode.not_a_cutlass_tactic,
                     [ConfigOut(**_config_fields(c)) for c in decode.candidates])


def problem_out(p: Optional[Problem], notes: NoteTable, strict: Strict) -> Optional[ProblemOut]:
    if p is None:
        return None
    num = strict.num
    return ProblemOut(num(p.m), num(p.n), num(p.k), num(p.batch), strict.value(p.m_range), num(p.experts),
                      num(p.top_k), p.dtype_a, p.dtype_b, p.dtype_out, notes.ids(p.notes))


def problem_notes_out(p: Optional[Problem], strict: Optional[Strict] = None) -> Optional[ProblemNotesOut]:
    if p is None:
        return None
    s = strict or Strict()
    return ProblemNotesOut(s.num(p.m), s.num(p.n), s.num(p.k), s.num(p.batch), s.value(p.m_range), s.num(p.experts),
                           s.num(p.top_k), p.dtype_a, p.dtype_b, p.dtype_out, list(p.notes))


def model_out(a: Optional[ModelResult], strict: Strict, *, notes: bool = False) -> Optional[ModelOut]:
    """The model's numbers for one case. Entries leave the notes out (they repeat per case and would
    double a big cache's output); failures keep them."""
    if a is None:
        return None
    num = strict.num
    fit = a.smem
    l2 = a.l2
    l2_out = (L2Out(None, "unknown", "no L2 state given: modelled cold, band down to the warm time") if l2 is None
              else L2Out(l2.state, l2.how, l2.basis))  # type: ignore[arg-type]
    return ModelOut(
        "model", a.gpu_name, a.dtype, a.m_evaluated,
        SmemOut(fit.shared_storage_bytes, fit.limit_bytes, fit.stages, fit.fits, fit.verdict),
        IntensityOut(num(_r(a.intensity_problem, 3)), num(_r(a.intensity_tile, 3))),
        a.bound,
        TimesOut(num(_us(a.time_floor_s)), num(_us(a.time_expected_s)), num(_us(a.time_low_s)), num(_us(a.time_high_s))),
        EfficiencyOut(num(_r(a.efficiency_compute)), num(_r(a.efficiency_roofline))),
        l2_out,
        PeakOut(None if a.peak_dense is None else num(round(a.peak_dense / 1e12, 2)),
                None if a.peak_sparse is None else num(round(a.peak_sparse / 1e12, 2))),
        num(a.ctas), num(a.sms),
        list(a.all_notes) if notes else None,
    )


_ANALYSIS = attrgetter("analysis")


class EntryWriter:
    """Entries as EntryOut, with what entries share made once per document: a decode's config and
    decode objects, a fit's SmemOut, an L2 fact and peaks' outputs, a bucket's M range and note ids,
    a case's model numbers. Keyed by the identity of the result's objects (the readers, decode and
    the model share one per distinct value; the result keeps them alive while this runs, so an id
    stays its own). Ints, the usual case, pass without a call; anything else goes through `Strict`.
    A case's model numbers are kept for reuse only where `entries` (those this writer will write)
    hold its result more than once: a cache of distinct keys has one result per entry, and keeping
    50,000 outputs until the document ends raised the peak memory by about 25 MB for nothing."""

    def __init__(self, notes: NoteTable, strict: Strict, entries: Sequence[AnalyzedEntry] = ()) -> None:
        self.notes = notes
        self.strict = strict
        self._decodes: dict[int, tuple[Optional[ConfigOut], DecodeOut]] = {}
        self._models: dict[int, Optional[ModelOut]] = {}
        uses = Counter(map(id, map(_ANALYSIS, entries)))
        self._shared = {k for k, n in uses.items() if n > 1}
        self._smem: dict[int, SmemOut] = {}
        self._tails: dict[tuple[Any, ...], tuple[L2Out, PeakOut]] = {}
        self._buckets: dict[tuple[int, int], tuple[Any, list[int]]] = {}
        self._held: list[Any] = []  # what the id keys above stand for, kept alive

    def __call__(self, ae: AnalyzedEntry) -> EntryOut:
        e = ae.entry
        r = e.record
        env = r.env
        strict = self.strict
        d = e.decode
        pieces = self._decodes.get(id(d))
        if pieces is None:
            pieces = self._decodes[id(d)] = (config_out(e.config, d, strict), decode_out(d))
        a = ae.analysis
        if a is None:
            model = None
        else:
            model = self._models.get(id(a))
            if model is None:
                model = self.model(a)
                if id(a) in self._shared:
                    self._models[id(a)] = model
        p = e.problem
        t = r.tactic
        x = r.extras
        return EntryOut(
            r.source, r.source_kind, env.arch, env.arch_source, env.flashinfer_version, env.version_source, env.gpu,
            r.op, r.runner, r.status, t if type(t) is int else strict.value(t),
            None if p is None else self.problem(p), pieces[0], pieces[1], model,
            r.rank, r.line, e.problem_note, r.count if type(r.count) is int else strict.num(r.count), r.error,
            None if r.time_ms is None else strict.num(r.time_ms),
            # the raw key shapes only where no problem was recovered from them (unknown ops): they
            # are most of the output's size otherwise, and `problem` says the same
            strict.value(r.shapes) if p is None else None,
            None if x is None else strict.value(x), strict.pairs(r.detail), ae.analysis_note,
        )

    def problem(self, p: Problem) -> ProblemOut:
        key = (id(p.m_range), id(p.notes))
        hit = self._buckets.get(key)
        if hit is None:  # (the tuples are kept with their outputs: their ids stay their own)
            hit = self._buckets[key] = (self.strict.value(p.m_range), self.notes.ids(p.notes))
            self._held.append((p.m_range, p.notes))
        m, n, k, batch = p.m, p.n, p.k, p.batch
        if not (type(m) is int and type(n) is int and type(k) is int and type(batch) is int):
            num = self.strict.num
            m, n, k, batch = num(m), num(n), num(k), num(batch)
        experts, top_k = p.experts, p.top_k
        if experts is not None and type(experts) is not int or top_k is not None and type(top_k) is not int:
            experts, top_k = self.strict.num(experts), self.strict.num(top_k)
        return ProblemOut(m, n, k, batch, hit[0], experts, top_k, p.dtype_a, p.dtype_b, p.dtype_out, hit[1])

    def model(self, a: ModelResult) -> ModelOut:
        """`model_out(a, strict)`, with the parts a tile plan or a GPU shares made once."""
        fit = a.smem
        smem = self._smem.get(id(fit))
        if smem is None:
            smem = self._smem[id(fit)] = SmemOut(fit.shared_storage_bytes, fit.limit_bytes, fit.stages, fit.fits, fit.verdict)
            self._held.append(fit)
        tk = (id(a.l2), id(a.peak))  # (a Peak per GPU and dtype, an L2 fact per state: shared objects)
        tail = self._tails.get(tk)
        if tail is None:
            whole = model_out(a, self.strict)
            assert whole is not None
            tail = self._tails[tk] = (whole.l2, whole.peak_tflops)
            self._held.append((a.l2, a.peak))
        tf, te, tl, th = a.time_floor_s, a.time_expected_s, a.time_low_s, a.time_high_s
        ip, it, ec, er = a.intensity_problem, a.intensity_tile, a.efficiency_compute, a.efficiency_roofline
        try:  # the usual case: every number finite, checked with one sum
            usual = isfinite(tf + te + tl + th + ip + ec + er + (0.0 if it is None else it))
        except TypeError:  # a None or odd number: the general path
            usual = False
        if not usual:
            general = model_out(a, self.strict)
            assert general is not None
            return general
        return ModelOut(
            "model", a.gpu_name, a.dtype, a.m_evaluated, smem,
            IntensityOut(round(ip, 3), None if it is None else round(it, 3)), a.bound,
            TimesOut(round(tf * 1e6, 3), round(te * 1e6, 3), round(tl * 1e6, 3), round(th * 1e6, 3)),
            EfficiencyOut(round(ec, 4), round(er, 4)), tail[0], tail[1], a.ctas, a.sms)


def failure_out(f: Failure, notes: NoteTable, strict: Strict) -> FailureOut:
    r: FailureReason = f.reason
    return FailureOut(
        f.sources[0] if f.sources else "", list(f.sources), f.op, f.runner, strict.value(f.tactic), f.arch,
        f.flashinfer_version, config_out(f.config), f.decode_note, f.error,
        [ErrorCount(t, n) for t, n in f.errors], f.count,
        ReasonOut(r.kind, r.summary, r.basis, r.need_bytes, r.limit_bytes, r.model_disagrees),
        f.passed_later, [po for po in (problem_out(p, notes, strict) for p in f.problems) if po is not None],
        model_out(f.analysis, strict, notes=True), f.group, f.diagnosis, f.autotuner,
    )


def not_tried_out(nt: NotTried, strict: Strict) -> NotTriedOut:
    return NotTriedOut(nt.arch, nt.flashinfer_version, nt.op, nt.runner, strict.pairs(nt.catalog.variant), "not_tried",
                       nt.evidence, nt.tried, [TacticConfig(i, config_out(c)) for i, c in nt.tactics], nt.group)


def pick_out(p: Pick, strict: Strict) -> PickOut:
    recorded = p.recorded_of is not None  # FlashInfer's selection record: its time, not its tactic
    return PickOut(strict.value(p.tactic), p.config.label() if p.config is not None else None, p.label(),
                   strict.num(p.time_ms), strict.num(p.spread),
                   "FlashInfer's autotuner (selection record)" if recorded else None,
                   p.recorded_of if recorded else None)


def _says_more(line: BucketLine) -> bool:
    """A bucket line holds something its entries alone do not: a runner-up, a margin, a noise
    verdict, failed or never-tried counts, a fallback, or several winners. (A cache's plain bucket,
    one untimed winner, says nothing more: leaving it out keeps a 50,000-entry output its size.)"""
    return (line.runner_up is not None or line.margin is not None or line.won_by_noise is not None or bool(line.failed)
            or line.never_tried is not None or line.fallback_only or len(line.chosen) > 1 or line.chosen_time_ms is not None)


def bucket_line_out(line: BucketLine, notes: NoteTable, strict: Strict) -> BucketLineOut:
    num = strict.num
    return BucketLineOut(
        problem_out(line.problem, notes, strict), [pick_out(p, strict) for p in line.chosen], num(line.chosen_time_ms),
        num(line.chosen_spread), pick_out(line.runner_up, strict) if line.runner_up is not None else None,
        num(line.margin), line.won_by_noise, line.noise_basis, line.failed, line.never_tried, line.fallback_only)


def rank_disagreement_out(d: RankDisagreement, strict: Optional[Strict] = None) -> RankDisagreementOut:
    s = strict or Strict()
    return RankDisagreementOut(
        problem_notes_out(d.problem, s), d.runner, d.server,
        [RankChoice(rank, s.value(p.tactic), config_out(p.config), None if p.time_ms is None else s.num(p.time_ms * 1000.0))
         for rank, p in d.choices],
        d.beyond_noise, d.basis)


def overview_out(ov: Overview, notes: NoteTable, strict: Strict) -> OverviewOut:
    return OverviewOut(
        [GroupOut(g.arch, g.op, g.runner, g.n, g.k, g.flashinfer_version, g.source_group, g.label, len(g.lines),
                  list(g.uncovered), [bucket_line_out(line, notes, strict) for line in g.lines if _says_more(line)])
         for g in ov.groups],
        [rank_disagreement_out(d, strict) for d in ov.rank_disagreements])


def verdict_out(v: Any, strict: Strict) -> VerdictOut:
    return VerdictOut(v.arch, v.op, v.text, [WinnerOut(t, n) for t, n in v.winners], v.failed, v.not_tried,
                      v.undecoded, v.disagreements, v.fatal, v.source, v.group,
                      [rank_disagreement_out(d, strict) for d in v.rank_disagreements],
                      [EvidenceOut(e.source, e.line, e.words, e.how, e.basis or None)
                       for e in v.evidence])


def calibration_out(fit: Any, result: InspectResult, strict: Strict) -> CalibrationOut:
    """One fit and the calibrated model of the chosen entries it covers."""
    cal = fit.calibration
    chosen = []
    if cal is not None:
        group_of = group_names(result.source_groups)
        num = strict.num
        for ae in result.entries:
            c = ae.calibrated
            r = ae.entry.record
            if c is None or r.status is not Status.CHOSEN or r.op != fit.op or group_of.get(r.source) != fit.group:
                continue
            if r.env.flashinfer_version != fit.flashinfer_version or r.env.arch != fit.arch or c.gpu_name != fit.gpu:
                continue
            p = ae.entry.problem
            chosen.append(CalibratedChoice(
                r.source, p.m if p else None, p.n if p else None, p.k if p else None, strict.value(r.tactic),
                ae.config.label() if ae.config else None, num(c.time_expected_s * 1e6), num(c.time_low_s * 1e6),
                num(c.time_high_s * 1e6), num(c.efficiency_compute), "modelled, calibrated on this input"))
    return CalibrationOut(
        fit.arch, fit.gpu, fit.dtype, fit.op, fit.flashinfer_version, fit.group, len(fit.timed), cal is not None,
        cal.summary("this input") if cal is not None else "too few measured times (or not modelled) to fit",
        cal.compute_scale if cal is not None else None, cal.eta_bw if cal is not None else None,
        cal.fixed_s * 1e6 if cal is not None else None, cal.heldout_median if cal is not None else None,
        cal.heldout_max if cal is not None else None, cal.uncalibrated_median if cal is not None else None, chosen)


def _quiet_out(q: Any, strict: Strict) -> Optional[WarmupQuietOut]:
    if q is None:
        return None
    return WarmupQuietOut(strict.num(q.seconds), q.before_line, q.before_words, q.after_line, q.after_words, q.stall, q.text)


def _saving_out(s: Any, strict: Strict) -> Optional[WarmupSavingOut]:
    if s is None:
        return None
    return WarmupSavingOut(strict.num(s.seconds), s.basis, strict.num(s.share), s.share_of, list(s.items))


def warmup_out(w: Any, strict: Strict) -> WarmupOut:
    """One `analysis.warmup_cost.WarmupCost`, copied out."""
    st = w.stopped
    return WarmupOut(
        w.source, w.group, "estimated", w.label, w.clock, w.headline,
        strict.num(w.tuning.seconds) if w.tuning is not None else None, w.tuning.basis if w.tuning is not None else None,
        w.windows, w.open_window,
        [WarmupOpOut(o.op, strict.num(o.seconds), o.profiles, o.timed, o.failed, strict.num(o.bar_seconds), o.bar_passes)
         for o in w.ops],
        w.profile_basis,
        [WarmupProfileOut(p.op, p.bucket, strict.num(p.seconds), p.start_line, p.end_line) for p in w.slowest],
        [WarmupJitOut(j.module, strict.num(j.seconds), j.line, j.next_line) for j in w.jit],
        _quiet_out(w.longest_silence, strict), _quiet_out(w.stall, strict),
        WarmupStopOut(st.op, st.profiles_done, st.timed, st.failed, strict.value(st.last_tactic), st.last_line,
                      st.last_words, st.window_line, strict.num(st.seconds_in_window), st.text) if st is not None else None,
        _saving_out(w.blocklist, strict), _saving_out(w.warm_cache, strict), w.cache_hits, list(w.notes))


def runtime_m_out(result: InspectResult, ms: Sequence[int], strict: Strict) -> list[RuntimeMOut]:
    from tiletune.analysis.overview import at_runtime_m

    out = []
    for g in result.overview.groups:
        for m in ms:
            bucket, line = at_runtime_m(g, m)
            fallback = line is None or line.fallback_only
            chosen = [] if fallback or line is None else [
                ChosenAtM(strict.value(p.tactic), config_out(p.config), p.label()) for p in line.chosen]
            t = None if fallback or line is None else line.chosen_time_ms
            out.append(RuntimeMOut(m, bucket, g.arch, g.op, g.runner, g.n, g.k, g.flashinfer_version, g.source_group,
                                   "fallback tactic -1 (no tuned bucket)" if fallback else "chosen", chosen,
                                   None if t is None else strict.num(t * 1000.0)))
    return out


def inspect_doc(result: InspectResult, *, entries: Union[bool, list[EntryOut]] = True,
                notes: Optional[NoteTable] = None, strict: Optional[Strict] = None,
                runtime_m: Sequence[int] = ()) -> InspectDoc:
    """The whole document. `entries`: True to build them here, False for none (the streaming writer
    writes them first, with the same `notes` and `strict`), or the list already built."""
    notes = notes if notes is not None else NoteTable()
    strict = strict if strict is not None else Strict()
    if entries is True:
        write = EntryWriter(notes, strict, result.entries)
        entry_list = [write(ae) for ae in result.entries]
    else:
        entry_list = entries or []
    doc = InspectDoc(
        SCHEMA, __version__, entry_list,
        [failure_out(f, notes, strict) for f in result.failures],
        [not_tried_out(nt, strict) for nt in result.not_tried],
        [verdict_out(v, strict) for v in result.verdicts],
        [strict.value(e.to_jsonable()) for e in result.events],
        [strict.value(i.to_jsonable()) for i in result.inputs],
        result.run_ended,
        [ProblemReport(p.source, p.message, p.fatal, loses_data(p)) for p in result.problems],
        [SourceOut(p, k) for p, k in result.sources],
        [SourceGroupOut(g.name, g.label, list(g.sources), g.basis) for g in result.source_groups],
        overview_out(result.overview, notes, strict),
        list(result.searched), result.discovered,
        [GpuOut(g.arch, g.gpu, g.how) for g in result.gpus],
        [calibration_out(f, result, strict) for f in result.calibrations],
        [warmup_out(w, strict) for w in result.warmup],
        [], result.exit_code, notes.texts,
        runtime_m_out(result, runtime_m, strict) if runtime_m else None,
    )
    # (the notes last: whatever above wrote a non-finite number as null is counted by now)
    doc.notes.extend([*result.notes, *([STRICT_NOTE] if strict.replaced else [])])
    return doc


__all__ = ["SCHEMA", "EntryWriter", "InspectDoc", "NoteTable", "Strict", "config_out", "decode_out", "inspect_doc",
           "model_out", "problem_notes_out", "problem_out", "rank_disagreement_out"]
