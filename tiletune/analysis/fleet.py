"""The fleet view: many hosts' caches summarised per (GPU SKU, driver, CUDA, FlashInfer release).

`inspect --fleet` names the hosts: a directory whose sub-directories are one host each, or an index
file listing one host folder per line. Hosts are read one at a time (readers, then decode, then
folded in here and dropped), so memory grows with the number of distinct keys and tiles, not with
the number of hosts or files: per group and key, each chosen tile keeps a count, the first few
units that chose it and the fastest and slowest measured time with their units.

What a group says:
- winners per op and bucket: the tile most units chose, and how many of how many;
- disagreements in tile terms: keys where units chose different tiles, each tile with its units
  (the first few named) and the range of the measured times of those that chose it;
- outliers: a minority tile (chosen by at most `MINORITY` of the units, at least one) and, per tile,
  a unit whose measured time is `SLOW_RATIO` or more times the fastest unit's on the same tile and key;
- failures per op and tactic (logs and ledgers in the host folders), with the units that saw them.

The driver is what a `tiletune doctor -f json` report at the top of the host folder says (any `*.json` whose
schema is tiletune.doctor/...; its first GPU's driver), since FlashInfer's caches do not state it; "not stated"
without one. A unit is one host's file (a rank's file in per-rank layouts): `host/rank` or `host/file`. Winners come from a
host's saved tables (caches, stores); a log's chosen lines count only on a host that has none, since a log
and the cache its run saved hold the same winners. Failures come from every input. Times are
what the caches state (FlashInfer 0.7.x writes `time_ms` per entry): measured by the autotuner, in
microseconds here; a cache that states none leaves the range empty.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from msgspec import Struct

from tiletune.analysis.check import key_of, problem_text, tile_text
from tiletune.core.records import Entry, InputProblem, Status
from tiletune.readers.interface import ReadContext

NAMED = 5  # units named per tile, failure or outlier list; the rest are counted
MINORITY = 0.1  # a tile chosen by at most this share of a key's units (and not the most chosen) is an outlier
OUTLIER_UNITS = 10  # ... in a key that at least this many units hold (below, the disagreement line says it all)
SLOW_RATIO = 1.25  # a unit this many times slower than the fastest on the same tile and key is an outlier
MAX_KEYS = 50_000  # keys kept per fleet; past it, counted (bounded memory whatever the input)
INDEX_LIMIT = 8 << 20  # bytes of an index file
# where a host's winners come from: its saved tables; a log's chosen lines only when the host has none (a log and the
# cache it saved hold the same winners: counting both would count one run twice)
TABLE_KINDS = ("flashinfer-v1", "flashinfer-v2", "vllm", "sglang", "trtllm")


class Host(Struct, frozen=True, gc=False):
    name: str
    path: str


class TileChoice(Struct, frozen=True, gc=False):
    tile: str  # the decoded tile ("128x64x256"), else "tactic N" (non-CUTLASS or undecoded)
    units: int
    named: Tuple[str, ...]  # the first NAMED units that chose it
    fastest_us: Optional[float] = None  # measured (the cache's time), microseconds
    fastest_unit: str = ""
    slowest_us: Optional[float] = None
    slowest_unit: str = ""
    timed: int = 0  # units whose entry states a time


class KeySummary(Struct, frozen=True, gc=False):
    op: str
    runner: str
    problem: str  # "M=8 N=256 K=512", else the key's shapes
    m: int  # for ordering (0 when not known)
    units: int
    choices: Tuple[TileChoice, ...]  # most chosen first

    @property
    def agree(self) -> bool:
        return len(self.choices) == 1


class FailureSummary(Struct, frozen=True, gc=False):
    op: str
    runner: str
    tactic: str  # "tactic 5 = 128x64x256" when decoded
    units: int
    named: Tuple[str, ...]
    reason: str  # the first unit's error text, clipped


class Outlier(Struct, frozen=True, gc=False):
    kind: str  # "minority tile" | "slow"
    op: str
    problem: str
    text: str
    units: Tuple[str, ...] = ()


class FleetGroup(Struct, frozen=True, gc=False):
    gpu: str
    driver: str
    cuda: str
    release: str
    hosts: int
    units: int
    keys: Tuple[KeySummary, ...]
    disagreements: int  # keys whose units chose more than one tile
    failures: Tuple[FailureSummary, ...] = ()
    outliers: Tuple[Outlier, ...] = ()
    outliers_total: int = 0

    @property
    def label(self) -> str:
        return f"{self.gpu} · driver {self.driver} · CUDA {self.cuda} · FlashInfer {self.release}"


class FleetResult(Struct, frozen=True, gc=False):
    hosts: int
    files: int
    groups: Tuple[FleetGroup, ...]
    problems: Tuple[InputProblem, ...] = ()
    keys_left_out: int = 0
    notes: Tuple[str, ...] = ()


# ----- naming the hosts ---------------------------------------------------------------------------------
def hosts_of(paths: Sequence[Union[str, Path]]) -> Tuple[List[Host], List[InputProblem]]:
    """Each PATH: a directory (each sub-directory one host, in name order) or an index file (one host folder
    per line, relative to the file's folder; blank lines and `#` comments skipped)."""
    hosts: List[Host] = []
    problems: List[InputProblem] = []
    for p in map(Path, paths):
        if p.is_dir():
            try:
                subs = sorted(e.name for e in os.scandir(p) if e.is_dir() and not e.name.startswith("."))
            except OSError as e:
                problems.append(InputProblem(str(p), f"{p}: cannot list it ({e.strerror or e})"))
                continue
            if not subs:
                problems.append(InputProblem(str(p), f"{p}: no host folders in it (--fleet reads one sub-directory "
                                                     "per host, or an index file of host folders)"))
            hosts += [Host(name, str(p / name)) for name in subs]
        elif p.is_file():
            hosts += _index(p, problems)
        else:
            problems.append(InputProblem(str(p), f"{p}: no such file or directory"))
    return hosts, problems


def _index(p: Path, problems: List[InputProblem]) -> List[Host]:
    try:
        if p.stat().st_size > INDEX_LIMIT:
            problems.append(InputProblem(str(p), f"{p}: an index file over {INDEX_LIMIT >> 20} MiB; not read"))
            return []
        raw = p.read_bytes()
    except OSError as e:
        problems.append(InputProblem(str(p), f"{p}: cannot read it ({e.strerror or e})"))
        return []
    if b"\0" in raw[:4096]:
        problems.append(InputProblem(str(p), f"{p}: not an index of host folders (binary content)"))
        return []
    out = []
    for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        folder = Path(line) if os.path.isabs(line) else p.parent / line
        if not folder.is_dir():
            problems.append(InputProblem(str(p), f"{p}:{n}: {line}: not a directory; host skipped"))
            continue
        out.append(Host(line, str(folder)))
    if not out:
        problems.append(InputProblem(str(p), f"{p}: no host folder listed (one directory per line)"))
    return out


# ----- folding ---------------------------------------------------------------------------------------------
class _Tile:
    __slots__ = ("units", "named", "fast", "fast_unit", "slow", "slow_unit", "timed")

    def __init__(self) -> None:
        self.units = self.timed = 0
        self.named: List[str] = []
        self.fast: Optional[float] = None
        self.slow: Optional[float] = None
        self.fast_unit = self.slow_unit = ""

    def add(self, unit: str, time_ms: Optional[float]) -> None:
        self.units += 1
        if len(self.named) < NAMED:
            self.named.append(unit)
        if time_ms is not None and time_ms > 0:
            self.timed += 1
            if self.fast is None or time_ms < self.fast:
                self.fast, self.fast_unit = time_ms, unit
            if self.slow is None or time_ms > self.slow:
                self.slow, self.slow_unit = time_ms, unit


class _Key:
    __slots__ = ("op", "runner", "problem", "m", "tiles")

    def __init__(self, e: Entry) -> None:
        self.op, self.runner = e.record.op, e.record.runner
        self.problem = problem_text(e)
        self.m = e.problem.m if e.problem is not None else 0
        self.tiles: Dict[str, _Tile] = {}


class _Fail:
    __slots__ = ("units", "named", "reason")

    def __init__(self, reason: str) -> None:
        self.units = 0
        self.named: List[str] = []
        self.reason = reason


class _Group:
    __slots__ = ("hosts", "last_host", "units", "keys", "fails")

    def __init__(self) -> None:
        self.hosts = self.units = 0
        self.last_host = ""
        self.keys: Dict[Tuple[Any, ...], _Key] = {}
        self.fails: Dict[Tuple[str, str, str], _Fail] = {}


def _env_key(e: Entry, driver: Optional[str] = None) -> Tuple[str, str, str, str]:
    env = e.record.env
    known = lambda v: v if v and v.lower() not in ("unknown", "none", "null") else None  # noqa: E731
    return (known(env.gpu) or "GPU not stated", known(env.driver) or driver or "not stated",
            known(env.cuda_version) or "not stated", known(env.flashinfer_version) or "release not stated")


DOCTOR_LIMIT = 1 << 20  # bytes of a doctor report


def doctor_driver(folder: Path) -> Optional[str]:
    """The driver a `tiletune doctor -f json` report at the top of a host folder names (its first GPU's), else None."""
    import json

    try:
        files = sorted(e.path for e in os.scandir(folder) if e.name.endswith(".json") and e.is_file())
    except OSError:
        return None
    for f in files:
        try:
            if os.path.getsize(f) > DOCTOR_LIMIT:
                continue
            with open(f, "rb") as fh:
                raw = fh.read(DOCTOR_LIMIT)
            if b"tiletune.doctor/" not in raw[:4096]:
                continue
            doc = json.loads(raw)
        except (OSError, ValueError):
            continue
        gpus = doc.get("gpus") if isinstance(doc, dict) else None
        for g in gpus if isinstance(gpus, list) else ():
            if isinstance(g, dict) and isinstance(g.get("driver"), str) and g["driver"]:
                return f"{g['driver']} (doctor report {Path(f).name})"
    return None


def _unit(host: str, root: str, rank: Optional[str], source: str) -> str:
    """`host/rank`, else `host/file` (the file relative to the host folder), else `host` (the folder itself)."""
    if rank:
        return f"{host}/{rank}"
    rel = os.path.relpath(source, root) if source.startswith(root) else source
    return host if rel == "." else f"{host}/{rel}"


def _tactic_text(e: Entry) -> str:
    tile = tile_text(e)
    if tile:
        return tile
    d = e.decode
    return f"tactic {e.record.tactic!r}" + (" (not a CUTLASS tile)" if getattr(d, "not_a_cutlass_tactic", False) else " (undecoded)")


class FleetFolder:
    """Folds one host's entries at a time; `result()` summarises."""

    def __init__(self) -> None:
        self.groups: Dict[Tuple[str, str, str, str], _Group] = {}
        self.hosts = 0
        self.files = 0
        self.keys = 0
        self.keys_left_out = 0
        self.problems: List[InputProblem] = []

    def add_host(self, host: Host, entries: Iterable[Entry], sources: int, problems: Sequence[InputProblem] = (),
                 driver: Optional[str] = None) -> None:
        self.hosts += 1
        self.files += sources
        self.problems += problems
        root = host.path.rstrip("/")
        units_seen: Dict[Tuple[Any, ...], set] = {}
        entries = list(entries)
        has_table = any(e.record.status is Status.CHOSEN and e.record.source_kind in TABLE_KINDS for e in entries)
        for e in entries:
            r = e.record
            if r.status not in (Status.CHOSEN, Status.FAILED):
                continue
            if r.status is Status.CHOSEN and has_table and r.source_kind not in TABLE_KINDS:
                continue  # the host's saved table holds this run's winners
            gk = _env_key(e, driver)
            g = self.groups.get(gk)
            if g is None:
                g = self.groups[gk] = _Group()
            if g.last_host != host.name:
                g.hosts += 1
                g.last_host = host.name
            unit = _unit(host.name, root, r.rank, r.source)
            seen = units_seen.setdefault(gk, set())
            if unit not in seen:
                seen.add(unit)
                g.units += 1
            if r.status is Status.FAILED:
                tile = tile_text(e)
                fk = (r.op, r.runner, f"tactic {r.tactic!r}" + (f" = {tile}" if tile else ""))
                f = g.fails.get(fk)
                if f is None:
                    if len(g.fails) >= MAX_KEYS:
                        continue
                    f = g.fails[fk] = _Fail(" ".join((r.error or "no error text").split())[:160])
                if unit not in f.named:
                    f.units += 1
                    if len(f.named) < NAMED:
                        f.named.append(unit)
                continue
            kk = key_of(r)
            try:
                k = g.keys.get(kk)
            except TypeError:  # unhashable shapes: keyed by their text
                kk = (r.op, r.runner, repr(kk))
                k = g.keys.get(kk)
            if k is None:
                if self.keys >= MAX_KEYS:
                    self.keys_left_out += 1
                    continue
                k = g.keys[kk] = _Key(e)
                self.keys += 1
            tile = _tactic_text(e)
            t = k.tiles.get(tile)
            if t is None:
                t = k.tiles[tile] = _Tile()
            t.add(unit, r.time_ms)

    def result(self) -> FleetResult:
        groups = [self._group(gk, g) for gk, g in self.groups.items()]
        groups.sort(key=lambda g: (-g.hosts, g.gpu, g.release, g.cuda, g.driver))
        notes = []
        if self.keys_left_out:
            notes.append(f"{self.keys_left_out} entries of keys past tiletune's bound ({MAX_KEYS} keys) are in no summary")
        return FleetResult(self.hosts, self.files, tuple(groups), tuple(self.problems), self.keys_left_out, tuple(notes))

    def _group(self, gk: Tuple[str, str, str, str], g: _Group) -> FleetGroup:
        keys = []
        outliers: List[Outlier] = []
        for k in g.keys.values():
            units = sum(t.units for t in k.tiles.values())
            choices = tuple(sorted(
                (TileChoice(tile, t.units, tuple(t.named), _us(t.fast), t.fast_unit, _us(t.slow), t.slow_unit, t.timed)
                 for tile, t in k.tiles.items()), key=lambda c: (-c.units, c.tile)))
            ks = KeySummary(k.op, k.runner, k.problem, k.m, units, choices)
            keys.append(ks)
            outliers += _outliers(ks)
        keys.sort(key=lambda k: (k.op, k.runner, k.m, k.problem))
        fails = tuple(sorted((FailureSummary(op, runner, tac, f.units, tuple(f.named), f.reason)
                              for (op, runner, tac), f in g.fails.items()), key=lambda f: (-f.units, f.op, f.tactic)))
        outliers.sort(key=lambda o: (o.kind != "minority tile", o.op, o.problem))
        return FleetGroup(*gk, hosts=g.hosts, units=g.units, keys=tuple(keys),
                          disagreements=sum(1 for k in keys if not k.agree), failures=fails,
                          outliers=tuple(outliers[:NAMED * 4]), outliers_total=len(outliers))


def _us(ms: Optional[float]) -> Optional[float]:
    return None if ms is None else round(ms * 1000.0, 4)


def _outliers(k: KeySummary) -> List[Outlier]:
    out = []
    top = k.choices[0]
    for c in k.choices[1:] if k.units >= OUTLIER_UNITS else ():
        if c.units <= max(1.0, MINORITY * k.units) and c.units < top.units:
            out.append(Outlier("minority tile", k.op, k.problem,
                               f"{k.op} {k.problem}: {c.units} of {k.units} unit(s) chose {c.tile} where {top.units} chose "
                               f"{top.tile}" + _vs(c, top), c.named))
    for c in k.choices:
        if c.fastest_us and c.slowest_us and c.slowest_us >= SLOW_RATIO * c.fastest_us and c.timed > 1:
            out.append(Outlier("slow", k.op, k.problem,
                               f"{k.op} {k.problem} on {c.tile}: {c.slowest_unit} measured {c.slowest_us:.4g} us, "
                               f"{c.slowest_us / c.fastest_us:.2f}x the fastest unit on the same tile ({c.fastest_unit}, "
                               f"{c.fastest_us:.4g} us; measured, the caches' times)", (c.slowest_unit,)))
    return out


def _vs(c: TileChoice, top: TileChoice) -> str:
    if c.fastest_us is None or top.fastest_us is None:
        return ""
    return (f" (fastest measured: {c.fastest_us:.4g} us on theirs, {top.fastest_us:.4g} us on the majority's; "
            "measured, the caches' times)")


# ----- the whole run ------------------------------------------------------------------------------------------
def fleet(paths: Sequence[Union[str, Path]], ctx: Optional[ReadContext] = None) -> FleetResult:
    """Read every host named by `paths` one at a time and summarise (see the module doc)."""
    from tiletune.decode import decode_all
    from tiletune.readers import read_inputs

    ctx = ctx or ReadContext()
    hosts, problems = hosts_of(paths)
    folder = FleetFolder()
    folder.problems += problems
    for host in hosts:
        outcome = read_inputs([host.path], ctx)
        folder.add_host(host, decode_all(r for r in outcome.records if r.status in (Status.CHOSEN, Status.FAILED)),
                        len(outcome.sources), outcome.problems, doctor_driver(Path(host.path)))
    return folder.result()


__all__ = ["FailureSummary", "FleetFolder", "FleetGroup", "FleetResult", "Host", "KeySummary", "Outlier", "TileChoice",
           "fleet", "hosts_of"]
