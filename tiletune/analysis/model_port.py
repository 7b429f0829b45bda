"""The model adapter: inspect's one door to `tiletune.model`.

`ModelPort` chooses the GPU to model each arch on (--gpu, the GPU the inputs name, else the arch's
default SKU, and says which and why) and asks the model once per distinct case (decode shapes
repeat across thousands of entries); the model's `ModelResult` is what the entry holds.
When the model cannot answer for an entry (no config, no dtype, no GPU for the arch, a dtype the
arch lacks) the entry carries `analysis=None` and a note saying why, never a guessed number.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional, Sequence

from tiletune.analysis.l2_state import L2Fact, L2Reader
from tiletune.analysis.results import AnalyzedEntry, GpuChoice
from tiletune.core.archs import arch_family, arch_from_gpu_name
from tiletune.core.errors import ModelError, TiletuneError
from tiletune.core.records import Decoded, Entry, Problem, TileConfig, Undecoded
from tiletune.model import gpus as gpu_table
from tiletune.model.perf import ModelResult, estimate, estimate_cases, with_l2

# An M bucket's upper end can be open (the last GEMM bucket covers "and above"); past this we
# model the bucket's own M rather than an absurd one.
_MAX_MODELLED_M = 1 << 20


class ModelPort:
    """Chooses the GPU per arch and asks `tiletune.model.analyze`, caching per distinct case.

    Decode shapes repeat across thousands of entries (ranks, sources, buckets), so results are
    memoised per case (problem at the modelled M, config, GPU name, dtype, arch, L2 state; see
    `_memoised`): the model runs once per distinct case. Each entry is modelled in the L2 state
    its input states or implies (tiletune.analysis.l2_state), and its result carries that fact (`l2`).
    """

    def __init__(
        self,
        gpu_override: Optional[str],
        *,
        find: Callable[[str], Any],
        default_for_arch: Callable[[str], Any],
        analyze: Callable[..., ModelResult],
        analyze_cases: Optional[Callable[..., list[ModelResult]]] = None,
    ) -> None:
        self._override = gpu_override
        self._find = find
        self._default = default_for_arch
        self._analyze = analyze
        # many cases of one (config, GPU, dtype, arch) in one call; a one-case `analyze` (a test's
        # stand-in) is called once per case
        self._analyze_cases = analyze_cases or _one_by_one(analyze)
        self._spec_cache: dict[tuple[Optional[str], Optional[str]], tuple[Any, str, Optional[str]]] = {}
        self._l2 = L2Reader()
        # values: cells [result, why none, config] (see _memoised)
        self._result_cache: dict[tuple[Any, ...], list[Any]] = {}
        self._choices: "OrderedDict[tuple[Optional[str], Optional[str]], GpuChoice]" = OrderedDict()
        self._notes: list[str] = []
        self._arch_named: dict[Optional[str], str] = {}  # set by inputs_name()
        if gpu_override is not None:
            find(gpu_override)  # unknown --gpu is a usage error: let ModelError reach the CLI now

    @classmethod
    def default(cls, gpu_override: Optional[str]) -> "ModelPort":
        """The real model. `estimate` is `analyze` without the alternatives, which inspect never shows."""
        return cls(gpu_override, find=gpu_table.find, default_for_arch=gpu_table.default_for_arch, analyze=estimate,
                   analyze_cases=estimate_cases)

    def inputs_name(self, gpus_by_arch: Mapping[Optional[str], str]) -> None:
        """GPUs the inputs name per arch: an entry whose own input names none (a log beside the
        cache of the same run) is modelled on the GPU another input of its arch names."""
        self._arch_named = dict(gpus_by_arch)

    def choices(self) -> tuple[GpuChoice, ...]:
        return tuple(self._choices.values())

    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

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

    def l2_of(self, entry: Entry) -> L2Fact:
        """The L2 state the entry's timing (or pick) was taken with, and why."""
        return self._l2.fact(entry.record)

    def analyze(
        self, problem: Problem, config: TileConfig, arch: Optional[str], named_gpu: Optional[str],
        l2: Optional[L2Fact] = None,
    ) -> tuple[Optional[ModelResult], Optional[str]]:
        """The model's result for this case at the top of the M bucket, or (None, why); `l2`: the
        L2 state to evaluate in (None: unknown)."""
        spec, gpu_name, why = self.gpu_for(arch, named_gpu)
        if spec is None:
            return None, why
        dtype = problem.dtype_a or problem.dtype_b
        if dtype is None:
            return None, "data type unknown for this key: not modelled"
        return self._memoised(problem, config, spec, gpu_name, dtype, arch, l2)

    def _memoised(
        self, problem: Problem, config: TileConfig, spec: Any, gpu_name: str, dtype: str, arch: Optional[str],
        l2: Optional[L2Fact] = None,
    ) -> tuple[Optional[ModelResult], Optional[str]]:
        """`_run` once per distinct case. The key holds the problem's fields the model reads (not
        its notes or bucket range) and the config by identity: equal cases share one result
        without hashing two dataclasses per entry in Python. The memo keeps each config alive, so
        an id is never reused while its entry exists. The L2 fact is in the key (a warm and a cold
        timing of one case are modelled apart) and attached to the one result kept for it."""
        m = _modelled_m(problem)
        key = _case_key(problem, m, config, gpu_name, dtype, arch, l2)
        hit = self._result_cache.get(key)
        if hit is None:
            hit = self._result_cache[key] = list(self._run(problem, m, config, spec, dtype, arch, l2))
        return hit[0], hit[1]

    def analyze_entries(self, entries: Sequence[Entry]) -> tuple[AnalyzedEntry, ...]:
        """`_analyze_entry` for every entry: what `analyze` does, in batches. A first pass finds
        each entry's case in the memo (the GPU per arch and the memo kept in locals: a big cache
        repeats these lookups tens of thousands of times) and groups the cases not
        modelled yet by what they share (config, GPU, dtype, arch); each group is modelled in one
        call (`estimate_cases`: what depends on those alone is worked out once per group, not once
        per case); a last pass builds the entries in order. Entries the fast path does not cover
        (no config, no problem, no dtype, no GPU) take `_analyze_entry`.

        The memo's values are cells (`[result, why, config]`, see `_memoised`): an entry holds its
        case's cell and a batch fills the cells of its cases in place, so the 12-field key is
        hashed twice per new case (look up, store) and once per repeat, not four times."""
        memo = self._result_cache
        l2_fact = self._l2.fact
        gpus: dict[tuple[Optional[str], Optional[str]], tuple[Any, str, Optional[str]]] = {}
        # per entry, in order: its AnalyzedEntry, or its case's memo cell (filled when its batch runs)
        out: list[Any] = []
        append = out.append
        batches: dict[tuple[Any, ...], _Batch] = {}
        for entry in entries:
            d = entry.decode
            problem = entry.problem
            config = d.config if type(d) is Decoded else None
            dtype = None if problem is None else (problem.dtype_a or problem.dtype_b)
            if config is None or dtype is None or problem is None:
                append(_analyze_entry(entry, self))
                continue
            record = entry.record
            env = record.env
            arch = env.arch
            gk = (arch, env.gpu)
            g = gpus.get(gk)
            if g is None:
                g = gpus[gk] = self.gpu_for(arch, env.gpu)
            spec, gpu_name, why = g
            if spec is None:
                append(AnalyzedEntry(entry, None, why))
                continue
            l2 = l2_fact(record)
            m = _modelled_m(problem)
            key = _case_key(problem, m, config, gpu_name, dtype, arch, l2)
            cell = memo.get(key)
            if cell is None:  # a new case: modelled with the others of its batch below
                cell = memo[key] = [None, _NOT_YET, config]
                bk = (id(config), gpu_name, dtype, arch)
                batch = batches.get(bk)
                if batch is None:
                    batch = batches[bk] = _Batch(config, spec, dtype, arch, [], [], [])
                batch.cells.append(cell)
                batch.problems.append(_with_m(problem, m) if m != problem.m else problem)
                batch.l2s.append(l2)
            append(cell)
        for batch in batches.values():
            self._run_batch(batch)
        analyzed = AnalyzedEntry
        return tuple([a if type(a) is AnalyzedEntry else analyzed(entry, a[0], a[1])
                      for entry, a in zip(entries, out)])

    def _run_batch(self, batch: "_Batch") -> None:
        """Model a batch's cases in one call and fill each case's memo cell. A case the model
        refuses (a dtype the arch lacks, a bad size) refuses the whole call: the batch is then
        modelled case by case, so each case gets its own result or reason (`_run`)."""
        config = batch.config
        try:
            # zip, not a list of pairs: it reuses its one tuple as the model unpacks each case
            results = self._analyze_cases(zip(batch.problems, batch.l2s), config, batch.spec, dtype=batch.dtype,
                                          arch=batch.arch)
        except TiletuneError:
            for cell, problem, l2 in zip(batch.cells, batch.problems, batch.l2s):
                cell[:] = self._run(problem, problem.m, config, batch.spec, batch.dtype, batch.arch, l2)
            return
        for cell, res, l2 in zip(batch.cells, results, batch.l2s):
            if l2 is not None and res.l2 is not l2:  # an `analyze` that takes only the state (a test's stand-in)
                res = with_l2(res, l2)
            cell[0] = res
            cell[1] = None

    def _run(
        self, problem: Problem, m: int, config: TileConfig, spec: Any, dtype: str, arch: Optional[str],
        l2: Optional[L2Fact],
    ) -> tuple[Optional[ModelResult], Optional[str], TileConfig]:
        """(result, why none, config): the memo's value (it keeps the config alive, see `_memoised`).
        The result carries the L2 fact: none is kept without it."""
        at_top = _with_m(problem, m) if m != problem.m else problem
        try:
            res = self._analyze(at_top, config, spec, dtype=dtype, arch=arch, l2=l2)
        except TiletuneError as e:  # e.g. a dtype the arch lacks: data, not a crash
            return None, f"model: {e}", config
        if l2 is not None and res.l2 is not l2:  # an `analyze` that takes only the state (a test's stand-in)
            res = with_l2(res, l2)
        return res, None, config


class _Batch(NamedTuple):
    """Cases of one (config, GPU, dtype, arch) waiting to be modelled, with their memo keys."""

    config: TileConfig
    spec: Any
    dtype: str
    arch: Optional[str]
    cells: list[list[Any]]  # each case's memo cell, filled by _run_batch
    problems: list[Problem]  # at the modelled M
    l2s: list[Optional[L2Fact]]


# a memo cell's reason while its case waits in a batch (`_run_batch` fills the cell)
_NOT_YET = "not modelled yet"


def _one_by_one(analyze: Callable[..., ModelResult]) -> Callable[..., list[ModelResult]]:
    """`analyze_cases` from a one-case `analyze`."""
    def analyze_cases(cases: Iterable[tuple[Problem, Optional[L2Fact]]], config: TileConfig, spec: Any,
                      **kw: Any) -> list[ModelResult]:
        return [analyze(problem, config, spec, l2=l2, **kw) for problem, l2 in cases]
    return analyze_cases


# Problem's fields after `m`, read in one C call: `_with_m` is structs.replace(problem, m=m)
# without replace's per-call field introspection (it runs once per modelled case).
_PROBLEM_REST = operator.attrgetter(*Problem.__struct_fields__[1:])
assert Problem.__struct_fields__[0] == "m"


def _with_m(problem: Problem, m: int) -> Problem:
    return Problem(m, *_PROBLEM_REST(problem))


def _case_key(problem: Problem, m: int, config: TileConfig, gpu_name: str, dtype: str, arch: Optional[str],
              l2: Optional[L2Fact]) -> tuple[Any, ...]:
    """The result memo's key of one case (see `ModelPort._memoised`)."""
    return (m, problem.n, problem.k, problem.batch, problem.experts, problem.top_k, problem.dtype_out,
            id(config), gpu_name, dtype, arch, l2)


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


def _analyze_entry(entry: Entry, port: ModelPort) -> AnalyzedEntry:
    config = entry.config
    if config is None:
        d = entry.decode
        note = d.reason if isinstance(d, Undecoded) else "not decoded"
        return AnalyzedEntry(entry=entry, analysis=None, analysis_note=note)
    if entry.problem is None:
        return AnalyzedEntry(entry=entry, analysis=None, analysis_note=entry.problem_note or "problem unknown")
    env = entry.record.env
    analysis, why = port.analyze(entry.problem, config, env.arch, env.gpu, port.l2_of(entry))
    return AnalyzedEntry(entry=entry, analysis=analysis, analysis_note=why)



__all__ = ["ModelPort"]
