"""Compare two warm-ups in tile terms: `tiletune diff OLD NEW`.

Each side is an `InspectResult` (one or more caches, logs, ledgers read by the inspect pipeline).
Entries are matched by (arch, op, runner, problem bucket as inspect shows it: M bucket, N, K, batch,
and for MoE experts and top-k). Within a match the winners are compared by *config identity*
(tile, cluster, swap-AB, stream-K, schedules, epilogue, stages): a tactic number means different
tiles in different FlashInfer releases, so tactic numbers are compared only within one release,
and a winner that cannot be decoded on either side of a release change is reported as
undetermined, never as changed or unchanged.

Source groups (one server's inputs each, tiletune.analysis.source_groups) are matched by their place when
both sides hold the same several (OLD/hostA with NEW/hostA); otherwise each side's groups are
compared as one warm-up, and a note says so.

Failures are matched by (arch, op, runner, config identity) across buckets: logs that name a failed
tactic often carry no bucket. A tactic is newly failing when NEW records it failing and OLD does
not; it recovered when OLD records it failing and NEW shows it running (chosen, profiled, passed,
compiled) without failing. Where the other side holds tactics of that op and runner that cannot be
compared with it (a tactic left undecoded because its release is unknown or another one, so its
number may name another tile), neither can be said: the failure is undetermined, and the reason
names the flag that settles it (--old-flashinfer-version / --new-flashinfer-version).

Pure: results in, a frozen `DiffResult` out; nothing here reads files or prints.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from msgspec import Struct, structs

from tiletune.analysis.overview import DEFAULT_NOISE, config_identity
from tiletune.core.records import Problem, Status, Tactic, TileConfig

_RUNS = frozenset({Status.CHOSEN, Status.PROFILED, Status.PASSED, Status.COMPILED})


class Side(Struct, frozen=True, gc=False):
    """What one side says for one matched key: its winner, as far as the inputs say."""

    tactic: Tactic
    config: Optional[TileConfig]
    flashinfer_version: Optional[str]
    time_ms: Optional[float]  # measured, from the input (log, TRT-LLM min_time, ledger); None if unknown
    not_cutlass: bool = False  # a cuBLAS / cuDNN / trtllm-gen tactic: there is no tile to name
    margin: Optional[float] = None  # measured: how much slower the runner-up of its bucket was (relative)
    won_by_noise: Optional[bool] = None  # the margin is within the samples' spread (or 5 % without samples)
    spread: Optional[float] = None  # measured: the winner's own sample spread ((max - min) / min), when known


class Change(Struct, frozen=True, gc=False):
    """One difference between OLD and NEW.

    kind: "winner_changed" | "added" | "removed" | "newly_failing" | "recovered".
    `problem` is None for failure changes matched across buckets (`problems` lists the buckets).
    `time_change` is (new - old) / old of the winners' measured times when both are known;
    `beyond_noise` says whether that exceeds `noise` (None when either time is unknown);
    `noise_basis` says where `noise` came from ("samples" or "default 5 %").
    """

    kind: str
    arch: Optional[str]
    op: str
    runner: str
    problem: Optional[Problem]
    before: Optional[Side]
    after: Optional[Side]
    problems: tuple[Problem, ...] = ()
    time_change: Optional[float] = None
    noise: Optional[float] = None
    beyond_noise: Optional[bool] = None
    noise_basis: Optional[str] = None
    errors: tuple[str, ...] = ()  # failure texts (newly failing: NEW's; recovered: OLD's)
    group: Optional[str] = None  # the source group (label, the same on both sides) when the sides are matched per group


class Undetermined(Struct, frozen=True, gc=False):
    """What cannot be compared: a matched key's winners, or a failure on one side, across releases
    (or a release unknown) with no decoded config on one side. `kind` is "winner" or "failure"
    (then `problem` is None and `problems` lists the buckets it failed in)."""

    arch: Optional[str]
    op: str
    runner: str
    problem: Optional[Problem]
    before: Side
    after: Side
    reason: str
    kind: str = "winner"
    problems: tuple[Problem, ...] = ()


class EnvironmentChange(Struct, frozen=True, gc=False):
    """One environment field that differs (values as the inputs state them, sorted). When one side
    states nothing (`one_sided`), it is not known to differ: `settled_by` names the flag that states
    it, where one exists."""

    field: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def one_sided(self) -> bool:
        return not self.before or not self.after

    @property
    def settled_by(self) -> Optional[str]:
        if not self.one_sided:
            return None
        side = "old" if not self.before else "new"
        return {"flashinfer_version": f"--{side}-flashinfer-version", "arch": "--arch"}.get(self.field)


class DiffResult(Struct, frozen=True, gc=False):
    """Everything `diff` found. Formatters read this and compute nothing."""

    changes: tuple[Change, ...]
    undetermined: tuple[Undetermined, ...]
    environment: tuple[EnvironmentChange, ...]
    unchanged: int  # matched keys whose winner is the same config (or tactic, within one release)
    old_sources: tuple[str, ...]
    new_sources: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def differs(self) -> bool:
        """True when an entry differs (environment differences alone do not count)."""
        return bool(self.changes)


# --- identity ----------------------------------------------------------------------------------


def _ident(config: Optional[TileConfig], tactic: Tactic, version: Optional[str]) -> tuple[Any, ...]:
    if config is not None:
        return ("config", config_identity(config))
    return ("tactic", version, tactic)


def problem_key(p: Optional[Problem]) -> Optional[tuple[Any, ...]]:
    """The bucket as inspect shows it (M bucket, N, K, batch, experts, top-k)."""
    if p is None:
        return None
    return (p.m, p.n, p.k, p.batch, p.experts, p.top_k)


# --- collection per side -----------------------------------------------------------------------


@dataclass
class _Winners:
    problem: Optional[Problem]
    sides: dict[tuple[Any, ...], Side]  # ident -> winner (several only when ranks disagree)



def _group_labels(result: Any) -> dict[str, str]:
    """input -> its source group's label (the group's place relative to what the side's groups share)."""
    return {s: g.label for g in getattr(result, "source_groups", ()) for s in g.sources}


def _winners(result: Any, with_rank: bool, by_group: bool = False) -> dict[tuple[Any, ...], _Winners]:
    out: dict[tuple[Any, ...], _Winners] = {}
    labels = _group_labels(result) if by_group else {}
    for ae in result.entries:
        rec = ae.entry.record
        if rec.status is not Status.CHOSEN:
            continue
        p = ae.entry.problem
        key = (rec.env.arch, rec.op, rec.runner, problem_key(p) if p is not None else ("raw", rec.shapes),
               rec.rank if with_rank else None, labels.get(rec.source))
        w = out.get(key)
        if w is None:
            w = out[key] = _Winners(p, {})
        ident = _ident(ae.entry.config, rec.tactic, rec.env.flashinfer_version)
        prev = w.sides.get(ident)
        t = float(rec.time_ms) if rec.time_ms is not None else None
        if prev is None or (t is not None and (prev.time_ms is None or t < prev.time_ms)):
            w.sides[ident] = Side(rec.tactic, ae.entry.config, rec.env.flashinfer_version, t, _not_cutlass(ae))
    return out


def _profiled_times(result: Any) -> dict[tuple[Any, ...], float]:
    """Fastest measured time per (source, arch, op, runner, bucket, tactic) from profiled records."""
    best: dict[tuple[Any, ...], float] = {}
    for ae in result.entries:
        rec = ae.entry.record
        if rec.time_ms is None or rec.status not in _RUNS:
            continue
        k = (rec.env.arch, rec.op, rec.runner, problem_key(ae.entry.problem), repr(rec.tactic))
        t = float(rec.time_ms)
        if k not in best or t < best[k]:
            best[k] = t
    return best


@dataclass
class _FailureSide:
    failed: dict[tuple[Any, ...], tuple[Side, list[Problem], list[str]]]
    ran: set[tuple[Any, ...]]
    # (arch, op, runner, group) -> one side per identity of every tactic recorded (failed or run)
    recorded: dict[tuple[Any, ...], dict[tuple[Any, ...], Side]]


def _failure_side(result: Any, by_group: bool = False) -> _FailureSide:
    failed: dict[tuple[Any, ...], tuple[Side, list[Problem], list[str]]] = {}
    ran: set[tuple[Any, ...]] = set()
    recorded: dict[tuple[Any, ...], dict[tuple[Any, ...], Side]] = {}
    labels = _group_labels(result) if by_group else {}
    for ae in result.entries:
        rec = ae.entry.record
        ident = _ident(ae.entry.config, rec.tactic, rec.env.flashinfer_version)
        key = (rec.env.arch, rec.op, rec.runner, ident, labels.get(rec.source))
        if rec.status is Status.FAILED or rec.status in _RUNS:
            seen = recorded.setdefault((key[0], key[1], key[2], key[4]), {})
            if ident not in seen:
                seen[ident] = Side(rec.tactic, ae.entry.config, rec.env.flashinfer_version, None, _not_cutlass(ae))
        if rec.status is Status.FAILED:
            slot = failed.get(key)
            if slot is None:
                slot = failed[key] = (Side(rec.tactic, ae.entry.config, rec.env.flashinfer_version, None,
                                           _not_cutlass(ae)), [], [])
            p = ae.entry.problem
            if p is not None and p not in slot[1]:
                slot[1].append(p)
            if rec.error and rec.error not in slot[2]:
                slot[2].append(rec.error)
        elif rec.status in _RUNS:
            ran.add(key)
    return _FailureSide(failed, ran, recorded)


def _not_cutlass(ae: Any) -> bool:
    return bool(getattr(ae.entry.decode, "not_a_cutlass_tactic", False))


def _ranks(result: Any) -> frozenset[Optional[str]]:
    return frozenset(ae.entry.record.rank for ae in result.entries if ae.entry.record.status is Status.CHOSEN)


# --- the comparison ----------------------------------------------------------------------------


@dataclass
class DiffSide:
    """What `diff` needs of one side, taken from its InspectResult so that the result itself can go
    before the other side is read (two results held at once cost twice the memory of one: 539 MB for a
    30 MB cache against itself). The winners and failures are kept for each way the other side may ask
    for them: per rank or not (only when this side holds ranks), per source group or not (only when it
    holds several)."""

    ranks: frozenset[Optional[str]]
    groups: list[str]  # the source groups' labels, sorted
    winners: dict[tuple[bool, bool], dict[tuple[Any, ...], _Winners]]  # (with_rank, by_group) -> winners
    failures: dict[bool, _FailureSide]  # by_group -> failures
    times: dict[tuple[Any, ...], float]
    lines: dict[tuple[Any, ...], tuple[float, Optional[bool], Optional[float]]]  # margin, won by noise, spread
    environment: dict[str, tuple[str, ...]]
    sources: tuple[str, ...]


def side_of(result: Any) -> DiffSide:
    """One side of a diff, from its inspect result (see DiffSide)."""
    ranks = _ranks(result)
    groups = sorted({g.label for g in getattr(result, "source_groups", ())})
    per_rank = (False,) if ranks == frozenset({None}) else (True, False)
    per_group = (True, False) if len(groups) > 1 else (False,)
    return DiffSide(
        ranks, groups,
        {(r, g): _winners(result, r, g) for r in per_rank for g in per_group},
        {g: _failure_side(result, g) for g in per_group},
        _profiled_times(result), _bucket_lines(result), environment_values(result),
        tuple(p for p, _ in result.sources))


def diff(old: Any, new: Any) -> DiffResult:
    """Compare two inspect results, or their `DiffSide`s (OLD, NEW); see the module docstring for the
    matching rules."""
    before_side = old if isinstance(old, DiffSide) else side_of(old)
    after_side = new if isinstance(new, DiffSide) else side_of(new)
    notes: list[str] = []
    old_ranks, new_ranks = before_side.ranks, after_side.ranks
    with_rank = old_ranks == new_ranks and old_ranks != frozenset({None})
    if not with_rank and (old_ranks - {None} or new_ranks - {None}):
        notes.append("the two sides hold different ranks, so winners are compared per bucket across ranks "
                     f"(OLD ranks: {_names(old_ranks)}; NEW ranks: {_names(new_ranks)})")
    # source groups (servers): matched by their place when both sides hold the same set of several
    # (old/hostA vs new/hostA); else every group of a side is one warm-up, and the note says so
    old_groups, new_groups = before_side.groups, after_side.groups
    by_group = len(old_groups) > 1 and old_groups == new_groups
    if not by_group and (len(old_groups) > 1 or len(new_groups) > 1):
        notes.append(f"OLD holds {len(old_groups)} source group(s) ({', '.join(old_groups) or 'none'}) and NEW "
                     f"{len(new_groups)} ({', '.join(new_groups) or 'none'}), not the same places: each side's groups are "
                     "compared as one warm-up (give one server per side, or the same folders under OLD and NEW, to compare "
                     "server by server)")
    ow, nw = before_side.winners[(with_rank, by_group)], after_side.winners[(with_rank, by_group)]
    old_times, new_times = before_side.times, after_side.times
    old_lines, new_lines = before_side.lines, after_side.lines
    changes: list[Change] = []
    undetermined: list[Undetermined] = []
    unchanged = 0
    for key in sorted(set(ow) | set(nw), key=_sort_key):
        arch, op, runner = key[0], key[1], key[2]
        a, b = ow.get(key), nw.get(key)
        group = key[5]
        if a is None and b is not None:
            for side in b.sides.values():
                changes.append(Change("added", arch, op, runner, b.problem, None, side, group=group))
            continue
        if b is None and a is not None:
            for side in a.sides.values():
                changes.append(Change("removed", arch, op, runner, a.problem, side, None, group=group))
            continue
        assert a is not None and b is not None
        if set(a.sides) == set(b.sides):
            unchanged += 1
            continue
        # the winners that differ (a side holds several when its sources disagree)
        gone = {i: v for i, v in a.sides.items() if i not in b.sides} or a.sides
        came = {i: v for i, v in b.sides.items() if i not in a.sides} or b.sides
        before, after = _pick(gone), _pick(came)
        before = _with_time(before, old_times, key, a.problem)
        after = _with_time(after, new_times, key, b.problem)
        if _incomparable(before, after):
            undetermined.append(Undetermined(
                arch, op, runner, b.problem or a.problem, before, after,
                f"tactic {before.tactic!r} of {_release(before)} and tactic {after.tactic!r} of {_release(after)} "
                f"cannot be compared: a tactic number can name a different kernel in each release; {_settle(before, after)}"))
            continue
        before = _with_quality(before, old_lines.get(_bucket_of(key, a.problem)))
        after = _with_quality(after, new_lines.get(_bucket_of(key, b.problem)))
        change, noise, basis = _time_change(before, after)
        changes.append(Change("winner_changed", arch, op, runner, b.problem or a.problem, before, after,
                              time_change=change, noise=noise, noise_basis=basis,
                              beyond_noise=None if change is None or noise is None else abs(change) > noise, group=group))
    failure_changes, failures_undetermined = _failure_changes(before_side.failures[by_group], after_side.failures[by_group])
    changes.extend(failure_changes)
    undetermined.extend(failures_undetermined)
    return DiffResult(
        changes=tuple(changes),
        undetermined=tuple(undetermined),
        environment=tuple(_environment_changes(before_side.environment, after_side.environment)),
        unchanged=unchanged,
        old_sources=before_side.sources,
        new_sources=after_side.sources,
        notes=tuple(notes),
    )


def _release(side: Side) -> str:
    return f"FlashInfer {side.flashinfer_version}" if side.flashinfer_version else "an unknown FlashInfer release"


def _settle(before: Side, after: Side) -> str:
    """What would make two incomparable sides comparable: the flag naming the unknown release, or
    why no flag can (two known releases, a tactic no catalog of one of them decodes)."""
    old_v, new_v = before.flashinfer_version, after.flashinfer_version
    if old_v is None and new_v is None:
        return ("neither side states its FlashInfer release: --old-flashinfer-version and "
                "--new-flashinfer-version settle it")
    if old_v is None:
        return f"OLD states no FlashInfer release: --old-flashinfer-version settles it (NEW is {new_v})"
    if new_v is None:
        return f"NEW states no FlashInfer release: --new-flashinfer-version settles it (OLD is {old_v})"
    return (f"no catalog decoded both ({old_v} and {new_v} are known releases, so no flag settles it; "
            "`tiletune catalog --flashinfer-version V` lists what each release's tactics are)")


def _names(ranks: frozenset[Optional[str]]) -> str:
    named = sorted(r for r in ranks if r is not None)
    return ", ".join(named) if named else "none named"


def _sort_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """arch, op, runner, then the bucket by (N, K, M) numerically; anything else by its text."""
    arch, op, runner, rest = key[0] or "", key[1], key[2], key[3:]
    pk = rest[0] if rest else None
    if isinstance(pk, tuple) and len(pk) >= 3 and all(isinstance(v, int) for v in pk[:3]):
        return (arch, op, runner, 0, pk[1], pk[2], pk[0], repr(rest))
    return (arch, op, runner, 1, 0, 0, 0, repr(rest))


def _pick(sides: Mapping[tuple[Any, ...], Side]) -> Side:
    """One representative winner (ranks that disagree are the inspect verdicts' business)."""
    return sorted(sides.values(), key=lambda s: (s.time_ms is None, s.time_ms or 0.0, repr(s.tactic)))[0]


def _with_time(side: Side, times: Mapping[tuple[Any, ...], float], key: tuple[Any, ...], p: Optional[Problem]) -> Side:
    if side.time_ms is not None:
        return side
    t = times.get((key[0], key[1], key[2], problem_key(p), repr(side.tactic)))
    return side if t is None else structs.replace(side, time_ms=t)


def _bucket_lines(result: Any) -> dict[tuple[Any, ...], tuple[float, Optional[bool], Optional[float]]]:
    """(arch, op, runner, problem key) -> the margin, won-by-noise and spread of the overview's line
    for that bucket, where it has a margin (a line without one adds nothing to a side)."""
    out: dict[tuple[Any, ...], tuple[float, Optional[bool], Optional[float]]] = {}
    for g in result.overview.groups:
        for line in g.lines:
            key = (g.arch, g.op, g.runner, problem_key(line.problem))
            if line.margin is None:
                out.pop(key, None)  # (the last line of a bucket decides, as it did when whole lines were kept)
            else:
                out[key] = (line.margin, line.won_by_noise, line.chosen_spread)
    return out


def _bucket_of(key: tuple[Any, ...], p: Optional[Problem]) -> tuple[Any, ...]:
    return (key[0], key[1], key[2], problem_key(p))


def _with_quality(side: Side, line: Optional[tuple[float, Optional[bool], Optional[float]]]) -> Side:
    if line is None:
        return side
    margin, won_by_noise, spread = line
    return structs.replace(side, margin=margin, won_by_noise=won_by_noise, spread=spread)


def _incomparable(before: Side, after: Side) -> bool:
    if before.config is not None and after.config is not None:
        return False
    return before.flashinfer_version != after.flashinfer_version or before.flashinfer_version is None


def _time_change(before: Side, after: Side) -> tuple[Optional[float], Optional[float], Optional[str]]:
    """(relative change, noise threshold, its basis). Across two runs the noise is at least
    DEFAULT_NOISE: a sample spread is measured within one run (one boot, one clock state) and
    understates what moves between runs, so samples can only widen the threshold, never narrow it
    (inspect's won-by-noise compares two tactics of one run, where the spread alone is right)."""
    if before.time_ms is None or after.time_ms is None or before.time_ms <= 0:
        return None, None, None
    change = (after.time_ms - before.time_ms) / before.time_ms
    spreads = [s for s in (before.spread, after.spread) if s is not None]
    if spreads and max(spreads) > DEFAULT_NOISE:
        return change, max(spreads), "samples"
    return change, DEFAULT_NOISE, "default 5 %"


def _failure_changes(old: _FailureSide, new: _FailureSide) -> tuple[list[Change], list[Undetermined]]:
    out: list[Change] = []
    unknown: list[Undetermined] = []
    told: set[tuple[Any, ...]] = set()  # (op's key, OLD tactic, NEW tactic) already said undetermined
    for key in sorted(set(new.failed) - set(old.failed), key=_sort_key):
        side, problems, errors = new.failed[key]
        other = _incomparable_with(side, old.recorded.get((key[0], key[1], key[2], key[4]), {}), old_side=True)
        if other is not None:
            told.add((key[:3], key[4], repr(other.tactic), repr(side.tactic)))
            unknown.append(_failure_undetermined(key, other, side, problems, "NEW"))
            continue
        out.append(Change("newly_failing", key[0], key[1], key[2], None, None, side,
                          problems=tuple(problems), errors=tuple(errors), group=key[4]))
    for key in sorted(set(old.failed) - set(new.failed), key=_sort_key):
        side, problems, errors = old.failed[key]
        other = _incomparable_with(side, new.recorded.get((key[0], key[1], key[2], key[4]), {}), old_side=False)
        if other is not None:
            if (key[:3], key[4], repr(side.tactic), repr(other.tactic)) not in told:  # (one line per pair)
                unknown.append(_failure_undetermined(key, side, other, problems, "OLD"))
            continue
        if key not in new.ran:
            continue  # NEW says nothing about it: no evidence it recovered
        out.append(Change("recovered", key[0], key[1], key[2], None, side, side,
                          problems=tuple(problems), errors=tuple(errors), group=key[4]))
    return out, unknown


def _incomparable_with(side: Side, others: Mapping[tuple[Any, ...], Side], *, old_side: bool) -> Optional[Side]:
    """A tactic the other side recorded for the same op and runner that cannot be compared with
    `side` (the one with `side`'s tactic number first): then whether `side` is new there is unknown."""
    found = [o for o in others.values() if (_incomparable(o, side) if old_side else _incomparable(side, o))]
    if not found:
        return None
    same = [o for o in found if repr(o.tactic) == repr(side.tactic)]
    return (same or found)[0]


def _failure_undetermined(key: tuple[Any, ...], before: Side, after: Side, problems: Sequence[Problem],
                          failing: str) -> Undetermined:
    other = "OLD" if failing == "NEW" else "NEW"
    return Undetermined(
        key[0], key[1], key[2], None, before, after,
        f"{failing} records tactic {(after if failing == 'NEW' else before).tactic!r} of "
        f"{_release(after if failing == 'NEW' else before)} failing; {other}'s tactics of this runner "
        f"({_release(before if failing == 'NEW' else after)}) cannot be matched with it, so whether it "
        f"{'failed there too' if failing == 'NEW' else 'still fails'} is unknown; {_settle(before, after)}",
        kind="failure", problems=tuple(problems))


# --- environment -------------------------------------------------------------------------------

# Environment fields compared, and the metadata keys (FlashInfer's `_metadata`, ledger env) that
# carry library versions.
_ENV_FIELDS = ("flashinfer_version", "arch", "gpu", "cuda_version", "driver")
_METADATA_FIELDS = ("cublas_version", "cudnn_version", "torch_version", "cutlass_version")


def environment_values(result: Any) -> dict[str, tuple[str, ...]]:
    """Distinct values per environment field over a side's records (as the inputs state them)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for ae in result.entries:
        env = ae.entry.record.env
        for f in _ENV_FIELDS:
            v = getattr(env, f)
            if v is not None:
                seen[f].add(str(v))
        for k, v in env.metadata:
            lk = k.lower()
            for f in _METADATA_FIELDS:
                if lk == f or lk.endswith("." + f) or lk == f.replace("_version", ""):
                    seen[f].add(str(v))
    return {f: tuple(sorted(v)) for f, v in seen.items()}


def environment_changes(old: Any, new: Any) -> Iterable[EnvironmentChange]:
    return _environment_changes(environment_values(old), environment_values(new))


def _environment_changes(a: Mapping[str, tuple[str, ...]], b: Mapping[str, tuple[str, ...]]) -> Iterable[EnvironmentChange]:
    for f in (*_ENV_FIELDS, *_METADATA_FIELDS):
        if a.get(f, ()) != b.get(f, ()):
            yield EnvironmentChange(f, a.get(f, ()), b.get(f, ()))


def summary_counts(result: DiffResult) -> Sequence[tuple[str, int]]:
    """(kind, count) for each change kind present, in the contract's order."""
    order = ("winner_changed", "added", "removed", "newly_failing", "recovered")
    counts = {k: 0 for k in order}
    for c in result.changes:
        counts[c.kind] += 1
    return [(k, n) for k, n in counts.items() if n]
