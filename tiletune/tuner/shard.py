"""`retry --shard I/N`: a deterministic share of the targets for one of N nodes, and its own ledger.

Every shard reads the same inputs and computes the same split, so N processes on N nodes (a Slurm
array, a Kubernetes Indexed Job, Ray tasks) attempt every target exactly once between them without
talking to each other. The split:
- with the CUTLASS engine, targets are grouped by what one build serves (op, runner, tactic, arch,
  decoded tile): it compiles one kernel per group, so a group never spans two shards and no kernel
  is compiled twice across the job. With FlashInfer's engine every target is its own group: its JIT
  module is built once per node whatever that node's share, so keeping one tactic's shapes together
  saves no build and only loses the spread (on the H200, bench/h200_074: 8 targets of one tactic at
  8 shapes went 8 and 0 to two shards when they were grouped);
- groups are ordered by their identity (sorted text, never input order or hash seeds) and each goes
  to the shard with the fewest targets so far (ties: the lowest index): shard sizes differ by at most
  the largest group.
Each shard appends to its own ledger (`--ledger` with "{shard}" in it, default
`tiletune-ledger.shard-I-of-N.jsonl`), so no two processes write one file on a shared filesystem;
every command that reads ledgers reads them all (files or a directory) and `--blocklist` / `--pin-cache`
take the last attempt per key and environment across them (tuner/ledgers.py).

`--shard auto` reads the index from the scheduler's environment:
- Slurm job arrays: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_STEP (index =
  (ID - MIN) / STEP) and SLURM_ARRAY_TASK_COUNT;
- Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX; Kubernetes does not put the Job's `completions`
  into the pod's environment, so the recipe sets TILETUNE_SHARD_COUNT to it;
- TILETUNE_SHARD=I/N, which anything else sets (the Ray recipe sets it in each task's runtime_env:
  Ray gives a task no index of its own).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from msgspec import Struct

from tiletune.core.errors import UsageError
from tiletune.tuner.engine import RetryTarget

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
DEFAULT_LEDGER_PATTERN = "tiletune-ledger.shard-{shard}.jsonl"


class Shard(Struct, frozen=True):
    index: int  # 0-based
    count: int
    source: str  # where the index came from: "--shard", "SLURM_ARRAY_TASK_ID", ...

    @property
    def label(self) -> str:
        """'3-of-8', as ledger names carry it (0-based index, padded so names sort)."""
        width = len(str(self.count - 1))
        return f"{self.index:0{width}d}-of-{self.count}"


def parse_shard(text: str, env: Optional[Mapping[str, str]] = None) -> Shard:
    """'I/N' (0 <= I < N) or 'auto' (the scheduler's environment, see the module docstring)."""
    env = os.environ if env is None else env
    if text.strip().lower() != "auto":
        m = _SPEC.match(text)
        if m is None:
            raise UsageError(f"--shard {text!r}: expected I/N (0 <= I < N, e.g. 3/8) or auto")
        return _checked(int(m.group(1)), int(m.group(2)), "--shard")
    if env.get("SLURM_ARRAY_TASK_ID") is not None:
        return _slurm(env)
    if env.get("JOB_COMPLETION_INDEX") is not None:
        count = env.get("TILETUNE_SHARD_COUNT")
        if not (count or "").isdigit():
            raise UsageError("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but TILETUNE_SHARD_COUNT "
                             "is not: set it to the Job's completions (Kubernetes does not pass that to the pod)")
        return _checked(_int(env, "JOB_COMPLETION_INDEX"), int(str(count)), "JOB_COMPLETION_INDEX")
    if env.get("TILETUNE_SHARD"):
        m = _SPEC.match(env["TILETUNE_SHARD"])
        if m is None:
            raise UsageError(f"--shard auto: TILETUNE_SHARD={env['TILETUNE_SHARD']!r}: expected I/N")
        return _checked(int(m.group(1)), int(m.group(2)), "TILETUNE_SHARD")
    raise UsageError("--shard auto: no shard index in the environment (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX with "
                     "TILETUNE_SHARD_COUNT, or TILETUNE_SHARD=I/N); give --shard I/N")


def _int(env: Mapping[str, str], name: str) -> int:
    v = env.get(name, "")
    if not v.strip().isdigit():
        raise UsageError(f"--shard auto: {name}={v!r} is not a number")
    return int(v)


def _slurm(env: Mapping[str, str]) -> Shard:
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    first = _int(env, "SLURM_ARRAY_TASK_MIN") if env.get("SLURM_ARRAY_TASK_MIN") else 0
    step = _int(env, "SLURM_ARRAY_TASK_STEP") if env.get("SLURM_ARRAY_TASK_STEP") else 1
    if not env.get("SLURM_ARRAY_TASK_COUNT"):
        raise UsageError("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")
    count = _int(env, "SLURM_ARRAY_TASK_COUNT")
    if step < 1 or (task - first) % step:
        raise UsageError(f"--shard auto: SLURM_ARRAY_TASK_ID={task} is not MIN={first} plus a multiple of STEP={step}"
                         " (an array given as a list, e.g. --array=1,5,9, cannot be numbered: use --shard I/N)")
    return _checked((task - first) // step, count, "SLURM_ARRAY_TASK_ID")


def _checked(index: int, count: int, source: str) -> Shard:
    if count < 1 or not 0 <= index < count:
        raise UsageError(f"shard {index}/{count} (from {source}): the index must be 0..{max(count - 1, 0)}")
    return Shard(index, count, source)


def _group_of(t: RetryTarget, engine: str) -> str:
    """What one CUTLASS build serves (never split across shards); one target for any other engine."""
    if engine != "cutlass":
        return json.dumps(["target", t.key], default=str)
    config = None if t.config is None else repr(t.config)
    return json.dumps([t.op, t.runner, repr(t.tactic), t.arch, config, t.dtype], default=str)


def split(targets: Sequence[RetryTarget], count: int, engine: str = "cutlass") -> List[List[RetryTarget]]:
    """Every shard's targets (in input order within a shard); the same on every node."""
    groups: Dict[str, List[Tuple[int, RetryTarget]]] = {}
    for i, t in enumerate(targets):
        groups.setdefault(_group_of(t, engine), []).append((i, t))
    sizes = [0] * count
    members: List[List[Tuple[int, RetryTarget]]] = [[] for _ in range(count)]
    for name in sorted(groups):
        shard = min(range(count), key=lambda s: (sizes[s], s))
        members[shard] += groups[name]
        sizes[shard] += len(groups[name])
    return [[t for _, t in sorted(m, key=lambda x: x[0])] for m in members]


def select(targets: Sequence[RetryTarget], shard: Shard, engine: str = "cutlass") -> List[RetryTarget]:
    return split(targets, shard.count, engine)[shard.index]


def ledger_for(ledger: Path, shard: Shard, default: Path) -> Path:
    """This shard's ledger: "{shard}" in --ledger replaced by '3-of-8'; the default ledger gets the label."""
    text = str(ledger)
    if "{shard}" in text:
        return Path(text.replace("{shard}", shard.label))
    if ledger == default:
        return ledger.with_name(DEFAULT_LEDGER_PATTERN.replace("{shard}", shard.label))
    raise UsageError(f"--shard with --ledger {ledger}: every shard needs its own ledger; put {{shard}} in the name "
                     "(e.g. --ledger ledgers/retry-{shard}.jsonl)")


__all__ = ["Shard", "ledger_for", "parse_shard", "select", "split"]
