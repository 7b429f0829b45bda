"""The inspect pipeline: inputs -> records -> entries -> analyses -> failures, not-tried tiles, verdicts.

`inspect(paths, ctx, gpu=...)` is what `tiletune inspect` and `tiletune report` run:

    discover (no paths) -> readers.read_inputs -> decode.decode per record
        -> model analysis per decoded entry (at the TOP of its M bucket, cached per case)
        -> failures aggregated per (arch, version, op, runner, tactic) -> reasons -> verdicts

The result is one frozen `InspectResult` that formatters turn into text without computing
anything. Nothing here prints or writes files. The performance model is optional: when
`tiletune.model` is missing or cannot answer for an entry, the entry carries `analysis=None`
and a note saying why, never a guessed number.

Units in `Analysis`: bytes, seconds, FLOP per byte, FLOP/s, bytes/s, fractions (0..1).
Formatters convert (KiB, us, %) and label model values as such.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence

from tiletune.archs import arch_family, arch_from_gpu_name
from tiletune.errors import TiletuneError
from tiletune.readers.interface import ReadContext
from tiletune.records import (
    CatalogRef,
    Decoded,
    Entry,
    InputProblem,
    Problem,
    Status,
    Tactic,
    TileConfig,
    Undecoded,
    quick_init,
)

# An M bucket's upper end can be open (the last GEMM bucket covers "and above"); past this we
# model the bucket's own M rather than an absurd one.
_MAX_MODELLED_M = 1 << 20


class Analysis(NamedTuple):
    """What the performance model says for one (problem at the top of its M bucket, tile, GPU).

    Every number is a model estimate (never a measurement); None where the model could not say.
    `smem_verdict` is "fits" | "does_not_build" | "overflows_at_initialize" | None.
    A NamedTuple rather than a frozen dataclass: inspect builds one per distinct modelled case
    (tens of thousands for a big cache), and a tuple is built in one C call instead of a slot
    store per field.
    """

    gpu: str
    dtype: str
    m_evaluated: int
    smem_bytes: Optional[int] = None
    smem_limit: Optional[int] = None
    smem_stages: Optional[int] = None
    smem_verdict: Optional[str] = None
    intensity_problem: Optional[float] = None  # FLOP/B, whole problem, minimum DRAM bytes
    intensity_tile: Optional[float] = None  # FLOP/B, one CTA tile per K step
    bound: Optional[str] = None  # "memory" | "compute"
    time_floor_s: Optional[float] = None
    time_expected_s: Optional[float] = None
    time_low_s: Optional[float] = None
    time_high_s: Optional[float] = None
    eff_compute: Optional[float] = None  # expected FLOP/s over the DENSE peak
    eff_roofline: Optional[float] = None  # roofline floor time over expected time
    flops: Optional[float] = None
    peak_dense_flops: Optional[float] = None  # FLOP/s
    peak_sparse_flops: Optional[float] = None  # FLOP/s; the vendor's 2:4 figure, shown as an aside only
    bandwidth: Optional[float] = None  # bytes/s
    ctas: Optional[int] = None
    sms: Optional[int] = None
    notes: tuple[str, ...] = ()

    @property
    def fits(self) -> Optional[bool]:
        """True/False when the model gave a verdict, None when it could not."""
        if self.smem_verdict is None:
            return None
        return self.smem_verdict == "fits"


@quick_init  # built once per entry / modelled case
@dataclass(frozen=True, slots=True)
class AnalyzedEntry:
    """One decoded record plus the model's view of it (or why there is none)."""

    entry: Entry
    analysis: Optional[Analysis] = None
    analysis_note: Optional[str] = None  # why `analysis` is None (not decoded, no dtype, model missing, ...)

    @property
    def record(self):  # noqa: ANN201 - TuningRecord; short alias used everywhere in formatters
        return self.entry.record

    @property
    def arch(self) -> Optional[str]:
        return self.entry.record.env.arch

    @property
    def config(self) -> Optional[TileConfig]:
        return self.entry.config


@dataclass(frozen=True, slots=True)
class FailureReason:
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


@dataclass(frozen=True, slots=True)
class Failure:
    """Every failed attempt of one (arch, version, op, runner, tactic), across all inputs."""

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
    analysis: Optional[Analysis] = None
    passed_later: bool = False  # a retry ledger shows it passing
    not_cutlass: bool = False  # a cuBLAS / cuDNN / trtllm-gen tactic: there is no tile to name
    problems: tuple[Problem, ...] = ()  # the shape buckets it failed for (distinct)

    @property
    def error(self) -> str:
        """The most frequent error text ('' when the source gave none)."""
        return self.errors[0][0] if self.errors else ""


@dataclass(frozen=True, slots=True)
class NotTried:
    """Catalog tiles with no record of any attempt in the inputs, for one catalog list."""

    arch: str
    flashinfer_version: str
    op: str
    runner: str
    catalog: CatalogRef
    tactics: tuple[tuple[int, TileConfig], ...]  # (tactic index as the autotuner numbers it, config)
    tried: int  # how many of the list's tactics have some record
    evidence: str  # "winners only" (only caches read) or "profiling log" (a log lists attempts)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The one-line answer for one arch and op."""

    arch: Optional[str]
    op: str
    text: str
    winners: tuple[tuple[str, int], ...] = ()  # (tile label, buckets won)
    failed: int = 0  # failures summed over counts
    not_tried: int = 0
    undecoded: int = 0
    disagreements: int = 0  # failures where the evidence and the shared-memory model disagree


@dataclass(frozen=True, slots=True)
class GpuChoice:
    """Which GPU an arch's entries were modelled on, and why."""

    arch: Optional[str]
    gpu: Optional[str]
    how: str  # "--gpu", "named in the inputs", "default for sm120 (no GPU named in the inputs)", ...


@dataclass(frozen=True, slots=True)
class InspectResult:
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


# --- entry point -------------------------------------------------------------------------------


def inspect(
    paths: Sequence[Path],
    ctx: ReadContext,
    *,
    gpu: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    home: Optional[Path] = None,
) -> InspectResult:
    """Read `paths` (or discover inputs when empty), decode, analyse, aggregate, judge.

    `gpu` names the GPU to model on (the spec table's name); without it each entry is modelled
    on the GPU its input names, else on the arch's default SKU (and the result says so).
    `env` / `home` are where discovery looks (default: this process's environment and home).
    """
    searched: tuple[str, ...] = ()
    discovered = False
    if not paths:
        import os

        from tiletune.readers.discover import discover

        found = discover(os.environ if env is None else env, Path.home() if home is None else home)
        paths, searched, discovered = list(found.paths), tuple(found.searched), True
        if not paths:
            return InspectResult((), (), (), (), (), (), searched=searched, discovered=True)
    from tiletune.decode import decode
    from tiletune.readers import read_inputs

    outcome = read_inputs(list(paths), ctx)
    entries = [decode(r) for r in outcome.records]
    return build(
        entries,
        problems=outcome.problems,
        sources=outcome.sources,
        searched=searched,
        discovered=discovered,
        gpu=gpu,
    )


def build(
    entries: Sequence[Entry],
    *,
    problems: Sequence[InputProblem] = (),
    sources: Sequence[tuple[str, str]] = (),
    searched: Sequence[str] = (),
    discovered: bool = False,
    gpu: Optional[str] = None,
    model: Optional["ModelPort"] = None,
) -> InspectResult:
    """Analyse decoded entries and derive failures, not-tried lists and verdicts.

    Split from `inspect` so tests and other commands can start from entries they already have.
    `model` defaults to the real `tiletune.model` (or none when it is not installed).
    """
    from tiletune import verdicts as verdicts_mod

    port = model if model is not None else ModelPort.default(gpu)
    port.inputs_name(_gpu_named_per_arch(entries))
    analyzed = port.analyze_entries(entries)
    jit_not_built = _not_built_ops(entries)
    failures = tuple(_aggregate_failures(analyzed, port, jit_not_built))
    not_tried = tuple(_not_tried(analyzed))
    verdicts = tuple(verdicts_mod.verdicts(analyzed, failures, not_tried))
    return InspectResult(
        entries=analyzed,
        failures=failures,
        not_tried=not_tried,
        verdicts=verdicts,
        problems=tuple(problems),
        sources=tuple(sources),
        searched=tuple(searched),
        discovered=discovered,
        gpus=port.choices(),
        notes=port.notes(),
    )


# --- the model seam ----------------------------------------------------------------------------


class ModelPort:
    """Chooses the GPU per arch and asks `tiletune.model.analyze`, caching per distinct case.

    Decode shapes repeat across thousands of entries (ranks, sources, buckets), so results are
    memoised per case (problem at the modelled M, config, GPU name, dtype, arch; see `_memoised`):
    the model runs once per distinct case.
    """

    def __init__(
        self,
        gpu_override: Optional[str],
        *,
        find: Optional[Callable[[str], Any]] = None,
        default_for_arch: Optional[Callable[[str], Any]] = None,
        analyze: Optional[Callable[..., Any]] = None,
        unavailable: Optional[str] = None,
    ) -> None:
        self._override = gpu_override
        self._find = find
        self._default = default_for_arch
        self._analyze = analyze
        self._unavailable = unavailable
        self._spec_cache: dict[tuple[Optional[str], Optional[str]], tuple[Any, str, Optional[str]]] = {}
        self._result_cache: dict[tuple[Any, ...], tuple[Optional[Analysis], Optional[str], TileConfig]] = {}
        self._choices: "OrderedDict[tuple[Optional[str], Optional[str]], GpuChoice]" = OrderedDict()
        self._notes: list[str] = []
        self._arch_named: dict[Optional[str], str] = {}  # set by inputs_name()
        if gpu_override is not None and find is not None:
            find(gpu_override)  # unknown --gpu is a usage error: let ModelError reach the CLI now

    @classmethod
    def default(cls, gpu_override: Optional[str]) -> "ModelPort":
        """The real model, or a port that answers 'model not available' when it cannot be imported."""
        try:
            from tiletune import model
            from tiletune.model import gpus
        except ImportError as e:  # the model package is optional for inspect
            return cls(gpu_override, unavailable=f"performance model not available ({e})")
        # `estimate` is analyze's numeric core: the same numbers without building the full
        # ModelResult (or its alternatives), which inspect never shows
        analyze = getattr(getattr(model, "perf", None), "estimate", None) or getattr(model, "analyze", None)
        find = getattr(gpus, "find", None)
        default = getattr(gpus, "default_for_arch", None)
        if analyze is None or find is None or default is None:
            return cls(gpu_override, unavailable="performance model not available (tiletune.model incomplete)")
        return cls(gpu_override, find=find, default_for_arch=default, analyze=analyze)

    def inputs_name(self, gpus_by_arch: Mapping[Optional[str], str]) -> None:
        """GPUs the inputs name per arch: an entry whose own input names none (a log beside the
        cache of the same run) is modelled on the GPU another input of its arch names."""
        self._arch_named = dict(gpus_by_arch)

    def choices(self) -> tuple[GpuChoice, ...]:
        return tuple(self._choices.values())

    def notes(self) -> tuple[str, ...]:
        out = list(self._notes)
        if self._unavailable:
            out.insert(0, self._unavailable)
        return tuple(out)

    def gpu_for(self, arch: Optional[str], named: Optional[str]) -> tuple[Any, str, Optional[str]]:
        """(spec or None, display name, why-none) for entries of `arch` whose input names GPU `named`."""
        if named is None:
            named = self._arch_named.get(arch)
        key = (arch, named)
        hit = self._spec_cache.get(key)
        if hit is not None:
            return hit
        hit = self._choose(arch, named)
        self._spec_cache[key] = hit
        spec, name, why = hit
        if spec is not None:
            how = self._how(arch, named, name)
            self._choices.setdefault(key, GpuChoice(arch=arch, gpu=name, how=how))
        return hit

    def _how(self, arch: Optional[str], named: Optional[str], name: str) -> str:
        if self._override:
            return "--gpu"
        if named and _same_gpu(named, name):
            return "named in the inputs"
        if named:
            return f"default for {arch}: GPU {named!r} from the inputs is not in the spec table"
        return f"default for {arch}: no GPU named in the inputs; choose one with --gpu"

    def _choose(self, arch: Optional[str], named: Optional[str]) -> tuple[Any, str, Optional[str]]:
        from tiletune.errors import ModelError

        if self._unavailable:
            return None, "", self._unavailable
        assert self._find is not None and self._default is not None
        if self._override:
            spec = self._find(self._override)
            name = _spec_name(spec, self._override)
            garch = arch_from_gpu_name(name)
            if arch and garch and arch_family(garch) != arch_family(arch):
                note = f"--gpu {name} is {garch}, but some entries are {arch}: their numbers model a different arch"
                if note not in self._notes:
                    self._notes.append(note)
            return spec, name, None
        if named:
            try:
                spec = self._find(named)
                return spec, _spec_name(spec, named), None
            except ModelError:
                pass
        if arch is None:
            return None, "", "arch unknown: pass --arch (or --gpu) to model this entry"
        try:
            spec = self._default(arch)
        except ModelError as e:
            return None, "", f"no GPU to model {arch} on ({e}); pass --gpu"
        return spec, _spec_name(spec, arch), None

    def analyze(
        self, problem: Problem, config: TileConfig, arch: Optional[str], named_gpu: Optional[str]
    ) -> tuple[Optional[Analysis], Optional[str]]:
        """The model's Analysis for this case at the top of the M bucket, or (None, why)."""
        spec, gpu_name, why = self.gpu_for(arch, named_gpu)
        if spec is None:
            return None, why
        dtype = problem.dtype_a or problem.dtype_b
        if dtype is None:
            return None, "data type unknown for this key: not modelled"
        return self._memoised(problem, config, spec, gpu_name, dtype, arch)

    def _memoised(
        self, problem: Problem, config: TileConfig, spec: Any, gpu_name: str, dtype: str, arch: Optional[str]
    ) -> tuple[Optional[Analysis], Optional[str]]:
        """`_run` once per distinct case. The key holds the problem's fields the model reads (not
        its notes or bucket range) and the config by identity: equal cases share one result
        without hashing two dataclasses per entry in Python. The memo keeps each config alive, so
        an id is never reused while its entry exists."""
        m = _modelled_m(problem)
        key = (m, problem.n, problem.k, problem.batch, problem.experts, problem.top_k, problem.dtype_out,
               id(config), gpu_name, dtype, arch)
        hit = self._result_cache.get(key)
        if hit is None:
            analysis, why = self._run(problem, m, config, spec, gpu_name, dtype, arch)
            hit = self._result_cache[key] = (analysis, why, config)
        return hit[0], hit[1]

    def analyze_entries(self, entries: Sequence[Entry]) -> tuple[AnalyzedEntry, ...]:
        """`_analyze_entry` for every entry, in one loop: what `analyze` does, with the lookups
        a big cache repeats tens of thousands of times (GPU per arch, the result memo) kept in
        locals. Entries the fast path does not cover (no config, no problem, no dtype, no GPU)
        take `_analyze_entry`."""
        memoised = self._memoised
        gpus: dict[tuple[Optional[str], Optional[str]], tuple[Any, str, Optional[str]]] = {}
        out = []
        append = out.append
        for entry in entries:
            d = entry.decode
            problem = entry.problem
            config = d.config if type(d) is Decoded else None
            dtype = None if problem is None else (problem.dtype_a or problem.dtype_b)
            if config is None or dtype is None:
                append(_analyze_entry(entry, self))
                continue
            env = entry.record.env
            arch = env.arch
            gk = (arch, env.gpu)
            g = gpus.get(gk)
            if g is None:
                g = gpus[gk] = self.gpu_for(arch, env.gpu)
            spec, gpu_name, why = g
            if spec is None:
                append(AnalyzedEntry(entry, None, why))
                continue
            analysis, why = memoised(problem, config, spec, gpu_name, dtype, arch)
            append(AnalyzedEntry(entry, analysis, why))
        return tuple(out)

    def _run(
        self, problem: Problem, m: int, config: TileConfig, spec: Any, gpu_name: str, dtype: str, arch: Optional[str]
    ) -> tuple[Optional[Analysis], Optional[str]]:
        assert self._analyze is not None
        at_top = _with_m(problem, m) if m != problem.m else problem
        try:
            res = self._analyze(at_top, config, spec, dtype=dtype, arch=arch)
        except TiletuneError as e:  # e.g. a dtype the arch lacks: data, not a crash
            return None, f"model: {e}"
        return project(res, gpu=gpu_name, dtype=dtype, m=m), None


# Problem's fields after `m`, read in one C call: `_with_m` is dataclasses.replace(problem, m=m)
# without replace's per-call field introspection (it runs once per modelled case).
_PROBLEM_REST = operator.attrgetter(*[f.name for f in dataclasses.fields(Problem)][1:])
assert dataclasses.fields(Problem)[0].name == "m"


def _with_m(problem: Problem, m: int) -> Problem:
    return Problem(m, *_PROBLEM_REST(problem))


def _modelled_m(problem: Problem) -> int:
    """The top of the entry's M bucket (runtime M that maps to it), else the bucket's own M."""
    if problem.m_range is not None:
        top = problem.m_range[1]
        if isinstance(top, int) and 0 < top <= _MAX_MODELLED_M:
            return top
    return problem.m


def _spec_name(spec: Any, fallback: str) -> str:
    return str(getattr(spec, "name", None) or fallback)


def _same_gpu(a: str, b: str) -> bool:
    norm = lambda s: " ".join(s.lower().replace("nvidia", "").split())  # noqa: E731
    return norm(a) == norm(b) or norm(a) in norm(b) or norm(b) in norm(a)


_RESULT_FIELDS = (
    "intensity_problem", "intensity_tile", "bound", "time_floor_s", "time_expected_s", "time_low_s", "time_high_s",
    "efficiency_compute", "efficiency_roofline", "flops", "peak_dense", "peak_sparse", "bandwidth", "ctas", "sms",
)


_new_tuple = tuple.__new__


def project(res: Any, *, gpu: str, dtype: str, m: int) -> Analysis:
    """Map a `tiletune.model.ModelResult` onto the fields inspect shows, in base units.

    Plain attribute access (this runs once per distinct case, tens of thousands of times for a
    big cache); a field the model does not have reads as None.
    """
    if type(res).__name__ == "Estimate":  # model.perf.Estimate (the default port): its fields are known
        smem = res.smem
        return _new_tuple(Analysis, (  # every field, in order: one C call instead of NamedTuple's Python __new__
            gpu, dtype, m, smem.shared_storage_bytes, smem.limit_bytes, smem.stages, smem.verdict,
            res.intensity_problem, res.intensity_tile, res.bound, res.time_floor_s, res.time_expected_s,
            res.time_low_s, res.time_high_s, res.efficiency_compute, res.efficiency_roofline, res.flops,
            res.peak_dense, res.peak_sparse, res.bandwidth, res.ctas, res.sms, smem.notes + res.notes,
        ))
    smem = getattr(res, "smem", None)
    verdict = getattr(smem, "verdict", None)
    notes = tuple(getattr(smem, "notes", ()) or ()) + tuple(getattr(res, "notes", ()) or ())
    g = getattr(res, "__dict__", None) or {n: getattr(res, n, None) for n in _RESULT_FIELDS}
    return Analysis(
        gpu=gpu,
        dtype=dtype,
        m_evaluated=m,
        smem_bytes=getattr(smem, "shared_storage_bytes", None),
        smem_limit=getattr(smem, "limit_bytes", None),
        smem_stages=getattr(smem, "stages", None),
        smem_verdict=str(verdict) if verdict is not None else None,
        intensity_problem=g.get("intensity_problem"),
        intensity_tile=g.get("intensity_tile"),
        bound=g.get("bound"),
        time_floor_s=g.get("time_floor_s"),
        time_expected_s=g.get("time_expected_s"),
        time_low_s=g.get("time_low_s"),
        time_high_s=g.get("time_high_s"),
        eff_compute=g.get("efficiency_compute"),
        eff_roofline=g.get("efficiency_roofline"),
        flops=g.get("flops"),
        peak_dense_flops=g.get("peak_dense"),
        peak_sparse_flops=g.get("peak_sparse"),
        bandwidth=g.get("bandwidth"),
        ctas=g.get("ctas"),
        sms=g.get("sms"),
        notes=notes,
    )


# --- per-entry analysis ------------------------------------------------------------------------


def _gpu_named_per_arch(entries: Sequence[Entry]) -> dict[Optional[str], str]:
    """arch -> the one GPU name the inputs give for it (archs whose inputs name several are left out)."""
    named: dict[Optional[str], set[str]] = {}
    for e in entries:
        env = e.record.env
        if env.gpu:
            named.setdefault(env.arch, set()).add(env.gpu)
    return {arch: next(iter(gpus)) for arch, gpus in named.items() if len(gpus) == 1}


def _analyze_entry(entry: Entry, port: ModelPort) -> AnalyzedEntry:
    config = entry.config
    if config is None:
        d = entry.decode
        note = d.reason if isinstance(d, Undecoded) else "not decoded"
        return AnalyzedEntry(entry=entry, analysis=None, analysis_note=note)
    if entry.problem is None:
        return AnalyzedEntry(entry=entry, analysis=None, analysis_note=entry.problem_note or "problem unknown")
    env = entry.record.env
    analysis, why = port.analyze(entry.problem, config, env.arch, env.gpu)
    return AnalyzedEntry(entry=entry, analysis=analysis, analysis_note=why)


# --- failures ----------------------------------------------------------------------------------

_FailKey = tuple  # (arch, version, op, runner, tactic)


def _not_built_ops(entries: Iterable[Entry]) -> dict[tuple[Optional[str], str], str]:
    """(arch, op) -> module name for JIT modules that never finished building."""
    out: dict[tuple[Optional[str], str], str] = {}
    for e in entries:
        r = e.record
        if r.status is Status.NOT_BUILT:
            module = r.detail_dict().get("module") or Path(r.source).name
            out.setdefault((r.env.arch, r.op), str(module))
    return out


def _aggregate_failures(
    analyzed: Sequence[AnalyzedEntry], port: ModelPort, jit_not_built: Mapping[tuple[Optional[str], str], str]
) -> Iterable[Failure]:
    from tiletune.verdicts import explain_failure

    groups: "OrderedDict[_FailKey, list[AnalyzedEntry]]" = OrderedDict()
    passed: set[_FailKey] = set()
    for a in analyzed:
        r = a.entry.record  # (not the `record` property: this loop runs once per entry)
        status = r.status
        if status is Status.FAILED or status is Status.PASSED:
            key = (r.env.arch, r.env.flashinfer_version, r.op, r.runner, r.tactic)
            if status is Status.FAILED:
                groups.setdefault(key, []).append(a)
            else:
                passed.add(key)
    for key, items in groups.items():
        arch, version, op, runner, tactic = key
        errors: Counter[str] = Counter()
        sources: list[str] = []
        problems: list[Problem] = []
        count = 0
        for a in items:
            r = a.record
            count += r.count
            errors[(r.error or "").strip()] += r.count
            if r.source not in sources:
                sources.append(r.source)
            if a.entry.problem is not None and a.entry.problem not in problems:
                problems.append(a.entry.problem)
        first = items[0]
        config = first.config
        analysis = next((a.analysis for a in items if a.analysis is not None), None)
        if analysis is None and config is not None and problems:
            analysis, _ = port.analyze(problems[0], config, arch, first.record.env.gpu)
        decode_note = None
        known = None
        if isinstance(first.entry.decode, Undecoded):
            decode_note = first.entry.decode.reason
        elif isinstance(first.entry.decode, Decoded):
            known = _known_failure(first.entry.decode)
        ordered = tuple(sorted(((t, n) for t, n in errors.items() if t), key=lambda x: (-x[1], x[0])))
        reason = explain_failure(
            errors=[t for t, _ in ordered],
            analysis=analysis,
            known_failure=known,
            jit_not_built=_module_for(jit_not_built, arch, op),
            detail=first.record.detail_dict(),
        )
        yield Failure(
            op=op,
            runner=runner,
            tactic=tactic,
            arch=arch,
            flashinfer_version=version,
            config=config,
            decode_note=decode_note,
            count=count,
            errors=ordered,
            sources=tuple(sources),
            reason=reason,
            analysis=analysis,
            passed_later=key in passed,
            problems=tuple(problems),
            not_cutlass=isinstance(first.entry.decode, Undecoded) and first.entry.decode.not_a_cutlass_tactic,
        )


def _module_for(not_built: Mapping[tuple[Optional[str], str], str], arch: Optional[str], op: str) -> Optional[str]:
    """The unbuilt JIT module serving `op` on `arch`; a module's op may be the family
    ("trtllm::fused_moe") of the tuned op ("trtllm::fused_moe::gemm1")."""
    hit = not_built.get((arch, op))
    if hit is not None:
        return hit
    for (a, o), module in not_built.items():
        if a == arch and op.startswith(o + "::"):
            return module
    return None


def _known_failure(decoded: Decoded) -> Optional[str]:
    try:
        from tiletune import catalogs

        return catalogs.known_failure(decoded)
    except Exception:  # noqa: BLE001 - a catalog hiccup must not hide the failure itself
        return None


# --- never tried -------------------------------------------------------------------------------


def _not_tried(analyzed: Sequence[AnalyzedEntry]) -> Iterable[NotTried]:
    """Per catalog list touched by the inputs: the tactics no record mentions."""
    from tiletune import catalogs

    decodes: dict[int, Decoded] = {}  # by identity, in order of first use: decode shares one object per answer
    logged: set[tuple[Optional[str], str]] = set()  # (arch, op) with per-tactic log evidence
    for a in analyzed:
        r = a.entry.record
        if r.status is Status.PROFILED or (r.status is Status.FAILED and r.source_kind == "log"):
            logged.add((r.env.arch, r.op))
        d = a.entry.decode
        if isinstance(d, Decoded) and r.status is not Status.NOT_RUN:  # never run: not tried either
            decodes[id(d)] = d
    tried: "OrderedDict[CatalogRef, set[int]]" = OrderedDict()
    for d in decodes.values():
        tried.setdefault(d.catalog, set()).add(d.index)
    for ref, indices in tried.items():
        cats = [c for c in catalogs.lookup(ref.flashinfer_version, ref.arch, ref.op, ref.runner, dict(ref.variant)) if c.ref == ref]
        if not cats:
            continue
        cat = cats[0]
        missing = tuple(
            (i + cat.index_offset, cfg) for i, cfg in enumerate(cat.configs) if i not in indices
        )
        if not missing:
            continue
        # catalog refs carry the family arch (sm120 for sm121); records keep the device arch
        yield NotTried(
            arch=ref.arch,
            flashinfer_version=ref.flashinfer_version,
            op=ref.op,
            runner=ref.runner,
            catalog=ref,
            tactics=missing,
            tried=len(cat.configs) - len(missing),
            evidence="profiling log"
            if any(op == ref.op and a is not None and arch_family(a) == arch_family(ref.arch) for a, op in logged)
            else "winners only",
        )


__all__ = [
    "Analysis",
    "AnalyzedEntry",
    "Failure",
    "FailureReason",
    "GpuChoice",
    "InspectResult",
    "ModelPort",
    "NotTried",
    "Verdict",
    "build",
    "inspect",
    "loses_data",
    "project",
]
