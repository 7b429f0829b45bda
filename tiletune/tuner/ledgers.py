"""Many ledgers read as one: the shards of a `retry --shard` job, reruns, several hosts.

The same attempt may be in two ledgers (a shard's ledger copied twice, a rerun that did not
resume); attempts of one key may differ by environment (GPU, driver, FlashInfer: `env_id`) and by
time. What the exports act on is the last attempt of each key in each environment, last by the
time the attempt started (`started_at`, UTC ISO-8601 as every ledger line has it), so the order in
which ledger files are named does not change the result; identical lines count once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

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


def latest(attempts: Iterable[Mapping[str, Any]]) -> Dict[Tuple[str, str], Mapping[str, Any]]:
    """The last attempt per (key, env_id) of attempts in time order."""
    out: Dict[Tuple[str, str], Mapping[str, Any]] = {}
    for a in attempts:
        out[(str(a["key"]), str(a.get("env_id") or ""))] = a
    return out


__all__ = ["latest", "read_attempts"]
