"""inspect's and report's entry filters (--op, --only-arch, --rank, --status), checked against
what the inputs hold.

A filter value is resolved against the decoded entries before anything is kept:

- `--op` names an op exactly, or by a prefix that only one op of the inputs starts with
  (`--op fp4` -> fp4_gemm); a prefix that several ops start with names them in the error;
- `--only-arch` is normalised (sm_120a, 12.0, sm120 -> sm120);
- `--rank` names a rank as inspect prints it (tp0_pp0_dp0, rank3) or as its file names it
  (rank_tp0_pp0_dp0);
- `--status` is one of the record statuses.

A value that names nothing the inputs hold is a usage error (one line listing what they do hold,
exit status 2): it is almost always a typo, and a silent empty answer reads as "nothing failed".
Values that each exist but together keep nothing (`--op fp4_gemm --status failed` where no fp4
tactic failed) are an answer, not an error: `narrow` returns a verdict saying the filters matched
nothing and what the inputs hold. Pure: entries in, entries out.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional, Sequence

from msgspec import Struct

from tiletune.core.errors import UsageError
from tiletune.core.records import Entry, Status


class EntryFilter(Struct, frozen=True, gc=False):
    """The filter values as given on the command line (None or empty: no filter of that kind)."""

    ops: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    ranks: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()

    @classmethod
    def of(cls, ops: Optional[Iterable[str]] = None, archs: Optional[Iterable[str]] = None,
           ranks: Optional[Iterable[str]] = None, statuses: Optional[Iterable[str]] = None) -> Optional["EntryFilter"]:
        """A filter, its arch and status values checked (bad ones: UsageError); None when no value is given."""
        from tiletune.core.archs import normalize_arch

        f = cls(tuple(ops or ()), tuple(archs or ()), tuple(ranks or ()), tuple(statuses or ()))
        if not (f.ops or f.archs or f.ranks or f.statuses):
            return None
        for a in f.archs:
            if normalize_arch(a) is None:
                raise UsageError(f"--only-arch {a!r} is not an architecture (sm90, sm100, sm120, ...)")
        known = {s.value for s in Status}
        for s in f.statuses:
            if s not in known:
                raise UsageError(f"--status {s!r} is not a status; use one of {', '.join(sorted(known))}")
        return f

    def flags(self) -> str:
        """The filter as the command line gave it (for messages)."""
        parts = [f"--op {v}" for v in self.ops] + [f"--only-arch {v}" for v in self.archs]
        parts += [f"--rank {v}" for v in self.ranks] + [f"--status {v}" for v in self.statuses]
        return " ".join(parts)

    def narrow(self, entries: Sequence[Entry]) -> tuple[list[Entry], Optional[str]]:
        """The entries the filter keeps, and a sentence when it keeps none (else None).

        Raises UsageError when a value names nothing in `entries` (see the module docstring)."""
        from tiletune.core.archs import normalize_arch

        ops = Counter(e.record.op for e in entries)
        archs = Counter(e.record.env.arch for e in entries)
        ranks = Counter(e.record.rank for e in entries if e.record.rank)
        statuses = Counter(e.record.status.value for e in entries)
        want_ops = {_resolve_op(v, ops) for v in self.ops}
        want_archs = set()
        for a in self.archs:
            norm = normalize_arch(a)
            if norm not in archs:
                raise UsageError(f"--only-arch {a} matches nothing in these inputs; archs here: {_listing(archs)}")
            want_archs.add(norm)
        want_ranks = {_resolve_rank(v, ranks) for v in self.ranks}
        want_status = set(self.statuses)
        kept = [e for e in entries
                if (not want_ops or e.record.op in want_ops)
                and (not want_archs or e.record.env.arch in want_archs)
                and (not want_ranks or e.record.rank in want_ranks)
                and (not want_status or e.record.status.value in want_status)]
        if kept or not entries:
            return kept, None
        here = [f"ops {_listing(ops)}", f"statuses {_listing(statuses)}"]
        if len(archs) > 1 or self.archs:
            here.insert(1, f"archs {_listing(archs)}")
        if ranks:
            here.append(f"ranks {_listing(ranks)}")
        return kept, (f"the filters ({self.flags()}) matched none of the {len(entries):,} entries read, so nothing "
                      f"below is about them; these inputs hold: {'; '.join(here)}")


def _listing(counts: Counter) -> str:
    """'fp4_gemm (76), mxfp8_gemm (13)': what exists, most entries first."""
    shown = sorted(((str(k) if k is not None else "unknown"), n) for k, n in counts.items())
    shown.sort(key=lambda kn: -kn[1])
    text = ", ".join(f"{k} ({n:,})" for k, n in shown[:12])
    return text + (f" and {len(shown) - 12} more" if len(shown) > 12 else "") if shown else "none"


def _resolve_op(value: str, ops: Counter) -> str:
    if value in ops:
        return value
    starts = sorted(o for o in ops if o.startswith(value))
    if len(starts) == 1:
        return starts[0]
    if starts:
        raise UsageError(f"--op {value} is the start of several ops in these inputs: {', '.join(starts)}; name one")
    raise UsageError(f"--op {value} matches no op in these inputs; ops here: {_listing(ops)}")


def _resolve_rank(value: str, ranks: Counter) -> str:
    for candidate in (value, value.removeprefix("rank_"), value.removeprefix("rank")):
        if candidate in ranks:
            return candidate
    if not ranks:
        raise UsageError(f"--rank {value} matches nothing: these inputs name no ranks (a per-rank layout's files do)")
    raise UsageError(f"--rank {value} matches no rank in these inputs; ranks here: {_listing(ranks)}")


__all__ = ["EntryFilter"]
