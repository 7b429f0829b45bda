"""What a retry ledger turns into for FlashInfer: a tactics blocklist and a cache with tactics pinned.

Both are NEW files written atomically; a server's cache is only ever read.

Blocklist (FlashInfer's `FLASHINFER_TACTICS_BLOCKLIST` format, flashinfer/tactics_blocklist.py):
    {"_metadata": {<FlashInfer's _collect_metadata() fields>, "generated_at", "generator_version"},
     "invalid_tactics": {"<custom_op>::<RunnerClass>": [tactic, ...]}}
A blocklist applies to a tactic at every shape, so a tactic is listed only when its latest
attempt failed at every problem it was attempted at; tactics that fail at some shapes and pass
at others are left out and reported. ENGINE_ERROR attempts (tiletune could not run the tactic)
are not evidence against it. FlashInfer ignores the whole file unless every `_metadata` field
equals its own or is "*": fields the child read from FlashInfer itself are written as read,
the others as "*".

Pinned cache: a copy of a FlashInfer JSON cache where each entry whose key was retried gets the
fastest tactic that passed at that key's problem (same op, runner, batch/M/N/K); the runner
name and any third value element (profiling policy) are kept. `_generation` is recomputed the
way FlashInfer computes it when the source had one.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from tiletune import __version__
from tiletune.core.errors import TunerError
from tiletune.core.fileio import write_atomic

# (op, runner or None, (batch, m, n, k)): one retried problem, as decoded from a cache key
ProblemIdent = Tuple[str, Optional[str], Tuple[int, int, int, int]]

METADATA_FIELDS = (
    "flashinfer_version",
    "cuda_version",
    "cublas_version",
    "cudnn_version",
    "cudnn_frontend_version",
    "cutlass_dsl_version",
    "gpu",
)
NOT_EVIDENCE = {"engine_error"}


def _latest(attempts: Iterable[Mapping[str, Any]]) -> Dict[Any, Mapping[str, Any]]:
    """Latest attempt per key and environment (attempts in time order: tuner/ledgers.read_attempts)."""
    from tiletune.tuner.ledgers import latest

    return latest(attempts)


def _tactic_id(t: Any) -> str:
    return json.dumps(t, separators=(",", ":"))


def still_failing(attempts: Iterable[Mapping[str, Any]]) -> Tuple[Dict[str, List[Any]], Dict[str, List[Any]]]:
    """({"op::Runner": [tactics failing at every problem tried]}, {"op::Runner": [tactics that fail only somewhere]})."""
    outcome: Dict[Tuple[str, str], Dict[str, set]] = defaultdict(lambda: {"fail": set(), "pass": set()})
    tactic_values: Dict[str, Any] = {}
    for a in _latest(attempts).values():
        if a.get("diagnosis") in NOT_EVIDENCE:
            continue
        op_runner = f"{a['op']}::{a.get('runner')}"
        tid = _tactic_id(a.get("tactic"))
        tactic_values[tid] = a.get("tactic")
        outcome[(op_runner, tid)]["pass" if a.get("passed") else "fail"].add(a["key"])
    block: Dict[str, List[Any]] = defaultdict(list)
    mixed: Dict[str, List[Any]] = defaultdict(list)
    for (op_runner, tid), o in sorted(outcome.items()):
        if o["fail"] and not o["pass"]:
            block[op_runner].append(tactic_values[tid])
        elif o["fail"]:
            mixed[op_runner].append(tactic_values[tid])
    return ({k: sorted(v, key=_order) for k, v in block.items()},
            {k: sorted(v, key=_order) for k, v in mixed.items()})


def _order(t: Any) -> tuple:
    """Integers numerically, then anything else by its JSON text."""
    return (0, t, "") if isinstance(t, int) else (1, 0, _tactic_id(t))


def blocklist_metadata(attempts: Iterable[Mapping[str, Any]]) -> Dict[str, str]:
    """FlashInfer's own metadata as the child read it (latest attempt that has it), '*' where unknown."""
    meta: Dict[str, str] = {f: "*" for f in METADATA_FIELDS}
    for a in attempts:
        env = a.get("env") or {}
        fm = env.get("flashinfer_metadata")
        if isinstance(fm, dict):
            meta = {f: str(fm.get(f, "*")) for f in set(METADATA_FIELDS) | set(fm)}
        else:
            if env.get("flashinfer"):
                meta["flashinfer_version"] = str(env["flashinfer"])
            if env.get("gpu"):
                meta["gpu"] = str(env["gpu"])
            if env.get("cuda_runtime"):
                meta["cuda_version"] = str(env["cuda_runtime"])
    return meta


def write_blocklist(attempts: Iterable[Mapping[str, Any]], path: Path, *, metadata: Optional[Mapping[str, str]] = None
                    ) -> Tuple[Dict[str, List[Any]], Dict[str, List[Any]]]:
    """Write the blocklist of still-failing tactics to `path` (new file, atomic). Returns (blocked, mixed).
    `metadata`: the blocklist metadata already worked out (ledgers.digest), else made from `attempts`
    (then every attempt in time order)."""
    attempts = list(attempts) if metadata is None else attempts
    block, mixed = still_failing(attempts)
    meta = dict(metadata) if metadata is not None else blocklist_metadata(attempts)
    meta["generated_at"] = datetime.now(timezone.utc).isoformat()
    meta["generator_version"] = "1.0"
    meta["generator"] = f"tiletune {__version__}"
    write_atomic(path, json.dumps({"_metadata": meta, "invalid_tactics": block}, indent=2) + "\n")
    return block, mixed


def _generation(data: Mapping[str, Any]) -> str:
    """FlashInfer's cache `_generation`: sha256 of {_metadata, _records?, sorted entries} as compact sorted JSON."""
    ordered: Dict[str, Any] = {"_metadata": data.get("_metadata", {})}
    if data.get("_records"):
        ordered["_records"] = data["_records"]
    for k in sorted(k for k in data if not k.startswith("_")):
        ordered[k] = data[k]
    return hashlib.sha256(json.dumps(ordered, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class PinnedCache:
    """What `write_pinned_cache` wrote: the entries it changed, the selection records it dropped
    with them, the `_metadata` it stamped, and whether FlashInfer will load the file (`verdict`)."""

    changed: List[Tuple[str, Any, Any]]  # (key, old tactic, new tactic)
    dropped_selections: int = 0
    metadata_from_env: List[str] = field(default_factory=list)  # the _metadata keys taken from --env
    verdict: List[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.changed)

    def __iter__(self) -> Iterator[Tuple[str, Any, Any]]:
        return iter(self.changed)


def write_pinned_cache(
    source_cache: Path,
    attempts: Sequence[Mapping[str, Any]],
    out_path: Path,
    *,
    key_problems: Mapping[str, ProblemIdent],
    env: Optional[Mapping[str, str]] = None,
) -> PinnedCache:
    """Copy `source_cache` to `out_path` with retried keys pinned to their fastest passing tactic.

    `key_problems` maps each cache key string to (op, runner, (batch, m, n, k)) as decoded. A
    changed entry keeps its runner and profiling policy but not what followed it: FlashInfer
    0.7.4's selection record (winner time, runner-up, margin, candidates) describes the race the
    old tactic won, not the pinned one, and is dropped (as is anything after it). `env` (the
    loading environment's `_collect_metadata()`, see tuner/pin_metadata.py) replaces the
    `_metadata` fields it names. Refuses to overwrite the source.
    """
    if out_path.resolve() == source_cache.resolve():
        raise TunerError(f"{out_path}: refusing to overwrite the source cache; give a new path")
    from tiletune.core import bounded_input
    from tiletune.core.errors import ReaderError
    from tiletune.readers.json_common import max_json_bytes

    try:
        data = bounded_input.load_file(source_cache, limit=max_json_bytes(), what="JSON cache", override="TILETUNE_MAX_JSON_MB")
    except ReaderError as e:
        raise TunerError(f"{e} (the cache to pin)") from None
    if not isinstance(data, dict):
        raise TunerError(f"{source_cache}: not a FlashInfer JSON cache (top level is not an object)")
    best: Dict[ProblemIdent, Tuple[float, Any]] = {}
    for a in _latest(attempts).values():
        p = a.get("problem") or {}
        if not a.get("passed") or a.get("time_s") is None or not p:
            continue
        ident: ProblemIdent = (a["op"], a.get("runner"), (p.get("batch", 1), p["m"], p["n"], p["k"]))
        if ident not in best or a["time_s"] < best[ident][0]:
            best[ident] = (a["time_s"], a.get("tactic"))
    changed = []
    dropped = 0
    for key, value in list(data.items()):
        if key.startswith("_") or not isinstance(value, list) or len(value) < 2:
            continue
        known = key_problems.get(key)
        if known is None or known not in best:
            continue
        new_tactic = best[known][1]
        if value[1] != new_tactic:
            changed.append((key, value[1], new_tactic))
            dropped += len(value) > 3  # the selection record (and after it): it measured another tactic
            data[key] = [value[0], new_tactic, *value[2:3]]
    from_env: List[str] = []
    old_meta = data.get("_metadata")
    meta: Dict[str, Any] = old_meta if isinstance(old_meta, dict) else {}
    if env is not None:
        from_env = sorted(k for k in env if meta.get(k) != env[k])
        meta = {**meta, **env}
        # FlashInfer writes _metadata first
        data = {"_metadata": meta, **{k: v for k, v in data.items() if k != "_metadata"}}
    from tiletune.tuner.pin_metadata import verdict

    if "_generation" in data:
        data.pop("_generation")
        data["_generation"] = _generation(data)
    write_atomic(out_path, json.dumps(data, indent=2) + "\n")
    return PinnedCache(changed, dropped, from_env, verdict(meta, env))
