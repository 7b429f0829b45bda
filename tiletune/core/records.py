"""The immutable records that cross every stage boundary.

readers/ produce `TuningRecord`s (what a file says, nothing more); decode/ turns each into an
`Entry` (the record plus the problem it stands for and the tile its tactic means, or why the tile
cannot be known). Analyses and formatters only read these. Nothing here does I/O.

Conventions:
- shapes and tactics are stored as found, with JSON lists turned into tuples so records hash;
  `to_jsonable()` turns them back into lists for output.
- sizes are in elements, times in seconds unless a field name says otherwise (`time_ms` keeps
  FlashInfer's own unit because that is what its logs print).
- records are `msgspec.Struct(frozen=True, gc=False)`: a 50,000-entry cache builds hundreds of
  thousands of them, and a Struct is built in C (about 3x faster than a slotted frozen dataclass),
  hashable, and typed for mypy. They hold no reference cycles, so the collector need not track them.
"""

from __future__ import annotations

import enum
from typing import Any, Mapping, Optional, Tuple, Union

from msgspec import Struct, field

# A tactic exactly as stored: an int for CUTLASS index tactics, nested tuples for compound ones
# (trtllm-gen `[tile_N, config]`, cuDNN `[engine, [[knob, value], ...]]`, CuTe-DSL tuples).
Tactic = Union[int, str, None, Tuple[Any, ...]]


class Status(str, enum.Enum):
    """What the evidence says about one (op, runner, tactic) for one shape bucket."""

    CHOSEN = "chosen"  # the autotuner stored it as the winner (cache entry, "chosen runner" log line)
    FAILED = "failed"  # a profiling attempt or a retry raised / produced wrong results
    PASSED = "passed"  # a retry ran it successfully
    PROFILED = "profiled"  # a log shows it was timed (avg_time) but not that it won
    BLOCKED = "blocked"  # listed in a tactics blocklist, so the autotuner never tried it
    NOT_TRIED = "not_tried"  # in the catalog for this op/arch/version but no evidence of any attempt
    COMPILED = "compiled"  # JIT workspace: this tile's object file exists (it built)
    NOT_BUILT = "not_built"  # JIT workspace: a module that never finished building
    FALLBACK = "fallback"  # log: at inference no tuned entry covered the shape, so runner 0 ran tactic -1
    NOT_RUN = "not_run"  # a retry engine could not start it (ledger engine_error): no evidence it fails or passes

    def __str__(self) -> str:  # so f-strings print "chosen", not "Status.CHOSEN"
        return self.value


class Environment(Struct, frozen=True, gc=False):
    """Where a record was written. Every field may be unknown (None).

    `arch` is normalised ("sm90", "sm100", "sm103", "sm120", "sm121"); `arch_source` and
    `version_source` say where each came from ("metadata.gpu", "jit-path", "--arch", ...) so the
    user can be told.
    """

    flashinfer_version: Optional[str] = None
    arch: Optional[str] = None
    gpu: Optional[str] = None
    cuda_version: Optional[str] = None
    driver: Optional[str] = None
    arch_source: Optional[str] = None
    version_source: Optional[str] = None
    metadata: Tuple[Tuple[str, str], ...] = ()  # the raw _metadata/metadata pairs, sorted


class TuningRecord(Struct, frozen=True, gc=False):
    """One fact read from one input: an (op, runner, tactic) and what happened to it.

    Readers fill what the source holds and leave the rest None. `shapes` is the key's
    `nearest_profile` (bucketed shapes, -1 for constrained dims, (0,) for non-tensors); `extras`
    is the 4th key element (None for 3-part keys and for sources that have no key).
    """

    source: str  # path of the input file (or directory for directory layouts)
    source_kind: str  # "flashinfer-v1", "flashinfer-v2", "trtllm", "blocklist", "log", "jit-workspace", "ledger", ...
    op: str
    runner: str
    tactic: Tactic
    status: Status
    env: Environment = field(default_factory=Environment)
    shapes: Optional[Tuple[Any, ...]] = None
    extras: Optional[Tuple[Any, ...]] = None
    raw_key: Optional[str] = None
    error: Optional[str] = None  # the error text as the source printed it (failed / blocked)
    time_ms: Optional[float] = None  # measured time from the source (log avg_time, TRT-LLM min_time, ledger)
    count: int = 1  # how many times the source repeated this same fact
    rank: Optional[str] = None  # per-rank layouts: "rank0", "tp0_pp0_dp0", ...
    line: Optional[int] = None  # 1-based line in a log / JSONL source
    detail: Tuple[Tuple[str, Any], ...] = ()  # source-specific extras (policy, module, min_time...), sorted pairs

    def detail_dict(self) -> dict[str, Any]:
        return dict(self.detail)


class Problem(Struct, frozen=True, gc=False):
    """The GEMM a key stands for. `m` is the tuning bucket the key holds, not a runtime M.

    `m_range` is the range of runtime M that maps to this bucket under FlashInfer's default
    bucket mapping; None when unknown (custom tuning_buckets, or an op whose M is not bucketed).
    For MoE ops `m` is the token bucket and the per-expert GEMM sizes are `n`, `k`; `experts`
    and `top_k` are set when the key holds them.
    """

    m: int
    n: int
    k: int
    batch: int = 1
    m_range: Optional[Tuple[int, int]] = None
    experts: Optional[int] = None
    top_k: Optional[int] = None
    dtype_a: Optional[str] = None
    dtype_b: Optional[str] = None
    dtype_out: Optional[str] = None
    notes: Tuple[str, ...] = ()


class TileConfig(Struct, frozen=True, gc=False):
    """One CUTLASS kernel configuration, in elements.

    `tile` is the CTA tile (M, N, K of the kernel as instantiated). With `swap_ab` the kernel
    computes the transposed product, so tile M runs over the problem's N. On SM100 2-SM
    clusters `tile` is the per-CTA tile and the MMA spans the pair (`mma_tile`).
    `name` is the C++ enum name (e.g. "CtaShape128x128x128B", whose trailing number may be bytes).
    """

    tile: Tuple[int, int, int]
    cluster: Tuple[int, int, int] = (1, 1, 1)
    swap_ab: bool = False
    stream_k: bool = False
    name: str = ""
    mainloop_schedule: Optional[str] = None
    epilogue_schedule: Optional[str] = None
    epilogue_fusion: Optional[str] = None
    stages: Optional[int] = None  # explicit stage count; None = StageCountAutoCarveout
    style: str = "tma_ws"  # "tma_ws" (SM90+ warp-specialised) or "sm80" (Ampere-style multistage)
    mma_tile: Optional[Tuple[int, int, int]] = None

    def label(self) -> str:
        """Short human label: 128x128x256, plus cluster and flags when not default."""
        s = "x".join(map(str, self.tile))
        if self.cluster != (1, 1, 1):
            s += " c" + "x".join(map(str, self.cluster))
        if self.swap_ab:
            s += " swapAB"
        if self.stream_k:
            s += " streamK"
        if self.stages is not None:
            s += f" {self.stages}st"
        return s


class CatalogRef(Struct, frozen=True, gc=False):
    """Which catalog decoded a tactic: release, arch, op/runner, and the C++ source it was read from."""

    flashinfer_version: str
    arch: str
    op: str
    runner: str
    source_file: str
    variant: Tuple[Tuple[str, Any], ...] = ()
    size: int = 0  # number of tactics in the list


class Decoded(Struct, frozen=True, gc=False):
    """The tactic means exactly this config (the one the autotuner profiled). `runs` is set when
    the release's binding then runs another config for it (see RunsOther); `runs_if` when its
    dispatch runs another tile under a run-time condition (see RunsIf)."""

    config: TileConfig
    catalog: CatalogRef
    index: int  # index into the catalog after resolving -1
    runs: Optional["RunsOther"] = None
    runs_if: Optional["RunsIf"] = None


class RunsIf(Struct, frozen=True, gc=False):
    """A tile the release's dispatch runs instead of the decoded one when a run-time condition
    holds, which no cache or log records (SM103 FP4 K768 tiles, 0.6.16 on: a 128x128x256 kernel
    when the output is not 32-byte aligned). A labelled note, never the decode itself."""

    config: TileConfig  # the decoded config with the tile that runs instead
    when: str  # the condition, in words ("the output is not 32-byte aligned (...)")
    source: str  # file:line of the guard in the release's C++

    def short(self) -> str:
        """'runs 128x128x256 when the output is not 32-byte aligned' (the condition's first clause)."""
        return f"runs {self.config.label()} when {self.when.split(' (', 1)[0]}"

    def text(self) -> str:
        return f"runs {self.config.label()} instead when {self.when} ({self.source})"


class RunsOther(Struct, frozen=True, gc=False):
    """A stored tactic the release's binding maps to another config than the one profiled
    (fused-MoE GEMM2 ids in FlashInfer 0.6.3 .. 0.6.14): what runs, and why."""

    config: TileConfig
    index: int  # index into the same catalog
    reason: str


class CandidateRuns(Struct, frozen=True, gc=False):
    """One candidate variant of an ambiguous decode whose binding runs another config than the one
    it profiled (fused-MoE GEMM2 in FlashInfer 0.6.3 .. 0.6.14; see RunsOther)."""

    variant: str  # 'bf16 x bf16' (with ', finalize=True' where it matters)
    profiled: TileConfig
    runs: RunsOther


class Undecoded(Struct, frozen=True, gc=False):
    """The tactic cannot be pinned to one config. `reason` says why; `candidates` lists what it could
    be; `runs`, the candidate variants whose binding would run another config than it profiled."""

    reason: str
    candidates: Tuple[TileConfig, ...] = ()
    not_a_cutlass_tactic: bool = False  # cuBLAS/cuDNN/trtllm-gen tactics: nothing to decode, not an error
    runs: Tuple[CandidateRuns, ...] = ()

    def candidates_label(self) -> Optional[str]:
        """What the candidates agree on, the rest as alternatives: '128x128x{128|256} swapAB'.

        None when there are no candidates. Not a decode: it only summarises `candidates`.
        """
        if not self.candidates:
            return None
        dims = []
        for i in range(3):
            vals = sorted({c.tile[i] for c in self.candidates})
            dims.append(str(vals[0]) if len(vals) == 1 else "{" + "|".join(map(str, vals)) + "}")
        out = "x".join(dims)
        for flag, word in (("swap_ab", "swapAB"), ("stream_k", "streamK")):
            flags = {getattr(c, flag) for c in self.candidates}
            if flags == {True}:
                out += f" {word}"
            elif len(flags) > 1:
                out += f" {word}?"
        return out


Decode = Union[Decoded, Undecoded]


class Entry(Struct, frozen=True, gc=False):
    """A record after decoding: what problem its key stands for and what its tactic means."""

    record: TuningRecord
    problem: Optional[Problem]
    decode: Decode
    problem_note: Optional[str] = None  # why `problem` is None (unknown op, unparsable shapes)

    @property
    def config(self) -> Optional[TileConfig]:
        return self.decode.config if isinstance(self.decode, Decoded) else None


class InputProblem(Struct, frozen=True, gc=False):
    """An input that could not be used (whole or in part). Data, not an exception, so the rest goes on."""

    source: str
    message: str  # one line, starting with the file (and key) it is about
    fatal: bool = True  # True: nothing could be read from it; False: the rest of it was read
    # True: something in the input (a key, a line, an entry file, a whole file) was skipped or could
    # not be used: exit status 2. False: a note that loses nothing (e.g. "version unknown"). The
    # reader that builds the problem decides; the default counts an unknown problem as a loss.
    loses_data: bool = True


def to_jsonable(value: Any) -> Any:
    """Tuples -> lists, enums -> values, mappings -> dicts with str keys, recursively: the form a
    tactic or shape had in its JSON. Exact type checks first: this runs for every shape of every
    entry, and isinstance checks against typing.Mapping cost seconds on a 50,000-entry cache."""
    t = type(value)
    if t is tuple or t is list:
        return [v if type(v) in _JSON_SCALARS else to_jsonable(v) for v in value]
    if t in _JSON_SCALARS:
        return value
    if t is dict:
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


_JSON_SCALARS = frozenset((int, float, str, bool, type(None)))


def element_types(value: Any) -> Any:
    """The type of `value`, or of each element of a tuple: what a by-value memo key must add, since
    1, 1.0 and True are equal and hash alike but a key's extras or tactic mean different things
    with each (`functools.lru_cache(typed=True)` tells top-level arguments apart, not elements)."""
    if type(value) is not tuple:
        return type(value)
    hit = _TYPES_OF.get(id(value))  # readers share one extras tuple per distinct text: by identity first
    if hit is not None and hit[0] is value:
        return hit[1]
    if len(_TYPES_OF) >= 4096:
        _TYPES_OF.clear()
    types = _TYPES_OF[id(value)] = (value, tuple(map(type, value)))  # (holds the tuple: its id stays its own)
    return types[1]


_TYPES_OF: dict[int, tuple[tuple, tuple]] = {}


def freeze(value: Any) -> Any:
    """Lists -> tuples, dicts -> sorted pair tuples, recursively, so parsed JSON can sit in a frozen record."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:  # most leaves: skip the Mapping ABC check below
        return value
    if isinstance(value, list) or isinstance(value, tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    return value

