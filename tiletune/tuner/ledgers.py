"""Many ledgers read as one: the shards of a `retry --shard` job, reruns, several hosts.

The same attempt may be in two ledgers (a shard's ledger copied twice, a rerun that did not
resume); attempts of one key may differ by environment (GPU, driver, FlashInfer: `env_id`) and by
time. What the exports act on is the last attempt of each key in each environment, last by the
time the attempt started (`started_at`, UTC ISO-8601 as every ledger line has it), so the order in
which ledger files are named does not change the result; identical lines count once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from tiletune.core.fileio import same_file
from tiletune.tuner.ledger import Ledger


def read_attempts(paths: Sequence[Path]) -> Tuple[List[Dict[str, Any]], List[Path]]:
    """(every distinct attempt of every ledger, in start-time order; the ledgers read). A file named
    twice (or through two paths) is read once; a line repeated within or across files counts once."""
    read: List[Path] = []
    seen: set = set()
    out: List[Tuple[str, int, Dict[str, Any]]] = []
    for path in paths:
        if any(same_file(path, r) for r in read):
            continue
        read.append(path)
        for a in Ledger(path).load().attempts:
            ident = json.dumps(a, sort_keys=True, default=str)
            if ident in seen:
                continue
            seen.add(ident)
            out.append((str(a.get("started_at") or ""), len(out), a))
    out.sort(key=lambda x: (x[0], x[1]))
    return [a for _, _, a in out], read


@dataclass
class LedgerDigest:
    """What the exports need of many ledgers, made in one streamed pass (memory per distinct key and
    environment, never per line: `read_attempts` holds every distinct attempt, 4.7 GB for a 1 GB
    ledger before this): the last attempt per (key, env_id) by start time, and the blocklist metadata
    `exports.blocklist_metadata` gives for all the attempts in start-time order."""

    latest: Dict[Tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    metadata: Dict[str, str] = field(default_factory=dict)
    lines: int = 0  # attempts read (a line repeated counts each time)
    read: List[Path] = field(default_factory=list)


# the environment fields an attempt without FlashInfer's own metadata sets, and the metadata key each fills
_ENV_FIELDS = (("flashinfer", "flashinfer_version"), ("gpu", "gpu"), ("cuda_runtime", "cuda_version"))


class _Last:
    """The last attempt by start time among those offered, as a stable sort of the distinct attempts
    orders them: a later start wins, an equal start goes to the later first occurrence, and a line
    that repeats an attempt already offered at that start time changes nothing (it counts once).
    Only the attempts tied at the latest start time are kept to tell repeats."""

    __slots__ = ("when", "value", "tied")

    def __init__(self) -> None:
        self.when: Optional[Tuple[str, int]] = None  # (started_at, line of the attempt's first occurrence)
        self.value: Any = None
        self.tied: List[Mapping[str, Any]] = []

    def offer(self, started: str, line: int, attempt: Mapping[str, Any], value: Any) -> None:
        if self.when is None or started > self.when[0]:
            self.when, self.value, self.tied = (started, line), value, [attempt]
        elif started == self.when[0] and not any(a == attempt for a in self.tied):
            self.when, self.value = (started, line), value
            self.tied.append(attempt)


def digest(paths: Sequence[Path], metadata_fields: Sequence[str] = ()) -> LedgerDigest:
    """`read_attempts` + `latest` + `exports.blocklist_metadata`, streamed: each ledger is read line by
    line and only the latest attempts are kept (see `_Last` for the order).

    The metadata: the fold over the time-ordered attempts resets to FlashInfer's own metadata at each
    attempt that carries it, and then takes each environment field from the attempts after it; so it
    is that metadata (the last by time) with each field overridden by the last attempt after it that
    sets the field. `metadata_fields`: the fields every blocklist names (exports.METADATA_FIELDS; passed
    in, as exports reads this module)."""
    d = LedgerDigest()
    latest_of: Dict[Tuple[str, str], _Last] = {}
    own = _Last()  # the last attempt carrying FlashInfer's own metadata
    fields: Dict[str, _Last] = {name: _Last() for _src, name in _ENV_FIELDS}
    for path in paths:
        if any(same_file(path, r) for r in d.read):
            continue
        d.read.append(path)
        for a in Ledger(path).iter_attempts():
            d.lines += 1
            started = str(a.get("started_at") or "")
            k = (str(a["key"]), str(a.get("env_id") or ""))
            last = latest_of.get(k)
            if last is None:
                last = latest_of[k] = _Last()
            last.offer(started, d.lines, a, a)
            env = a.get("env") or {}
            fm = env.get("flashinfer_metadata")
            if isinstance(fm, dict):
                own.offer(started, d.lines, a, fm)
                continue
            for src, name in _ENV_FIELDS:
                if env.get(src):
                    fields[name].offer(started, d.lines, a, str(env[src]))
    d.latest = {k: last.value for k, last in latest_of.items()}
    meta: Dict[str, str] = {f: "*" for f in metadata_fields}
    if own.when is not None:
        meta = {f: str(own.value.get(f, "*")) for f in set(metadata_fields) | set(own.value)}
    for name, last in fields.items():
        if last.when is not None and (own.when is None or last.when > own.when):
            meta[name] = last.value
    d.metadata = meta
    return d


def latest(attempts: Iterable[Mapping[str, Any]]) -> Dict[Tuple[str, str], Mapping[str, Any]]:
    """The last attempt per (key, env_id) of attempts in time order."""
    out: Dict[Tuple[str, str], Mapping[str, Any]] = {}
    for a in attempts:
        out[(str(a["key"]), str(a.get("env_id") or ""))] = a
    return out


__all__ = ["LedgerDigest", "digest", "latest", "read_attempts"]
