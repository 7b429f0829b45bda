"""The retry ledger: one JSON line per finished attempt, appended the moment it ends.

Format (`schema: "tiletune.ledger/1"`, one object per line, never rewritten):
    key, engine, op, runner, tactic, arch, flashinfer_version, dtype, source, previous_error,
    raw_key, shapes, problem {m, n, k, batch, dtype_*}, config {tile, cluster, ...} | null,
    run_options {dtype, top_k: the fused-MoE options given; absent in lines written before them},
    diagnosis, passed, message, started_at, duration_s,
    time_s, times_s [...], tflops, rel_error, error_bound, smem_bytes, smem_limit,
    stderr_tail, env {fingerprint: GPU, driver, versions, clock_max_sm_mhz / clock_sm_mhz (MHz) and
    power_limit_w (W) at the start of the run}, env_id

Each line is written with one O_APPEND write + fsync (tiletune.core.fileio.append_line_durable), so
a killed run loses at most the attempt in flight. Reading tolerates a torn last line (a crash
mid-write, a power loss): it is reported, not fatal. Resume skips targets already finished in
the same environment (`env_id`) with the same key, engine and options (tiletune.tuner.resume
lists every field that counts), whatever the outcome: a failure is a finished attempt too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from tiletune.core.fileio import append_line_durable
from tiletune.core.ledger_format import SCHEMA, LedgerLine, iter_lines  # noqa: F401 - SCHEMA re-exported
from tiletune.core.records import Problem, TileConfig, to_jsonable
from tiletune.tuner.engine import Attempt, RetryTarget


def target_to_json(t: RetryTarget, *, engine: str) -> Dict[str, Any]:
    """The fields of a ledger line that say what was attempted (resume compares these)."""
    return {
        "schema": SCHEMA,
        "key": t.key,
        "engine": engine,
        "op": t.op,
        "runner": t.runner,
        "tactic": to_jsonable(t.tactic),
        "arch": t.arch,
        "flashinfer_version": t.flashinfer_version,
        "dtype": t.dtype,
        "source": t.source,
        "previous_error": t.previous_error,
        "raw_key": t.raw_key,
        "shapes": to_jsonable(t.shapes),
        "problem": _problem_json(t.problem),
        "config": _config_json(t.config),
        "run_options": {k: to_jsonable(v) for k, v in t.options},
    }


def attempt_to_json(attempt: Attempt, *, env_id: str) -> Dict[str, Any]:
    """The explicit JSON form of one attempt (built by hand so internal renames cannot change it)."""
    return {
        **target_to_json(attempt.target, engine=attempt.engine),
        "diagnosis": attempt.diagnosis.value,
        "passed": attempt.passed,
        "message": attempt.message,
        "started_at": attempt.started_at,
        "duration_s": round(attempt.duration_s, 4),
        "time_s": _finite(attempt.time_s),
        "times_s": [_finite(v) for v in attempt.times_s],
        "tflops": _finite(attempt.tflops),
        "rel_error": _finite(attempt.rel_error),
        "error_bound": _finite(attempt.error_bound),
        "smem_bytes": attempt.smem_bytes,
        "smem_limit": attempt.smem_limit,
        "stderr_tail": attempt.stderr_tail,
        "env": {k: to_jsonable(v) for k, v in attempt.env},
        "env_id": env_id,
    }


def _finite(v: Optional[float]) -> Optional[float]:
    """JSON has no NaN/Inf: store them as null (the message says what happened)."""
    if v is None or not math.isfinite(v):
        return None
    return float(v)


def _problem_json(p: Optional[Problem]) -> Optional[Dict[str, Any]]:
    if p is None:
        return None
    return {
        "m": p.m,
        "n": p.n,
        "k": p.k,
        "batch": p.batch,
        "dtype_a": p.dtype_a,
        "dtype_b": p.dtype_b,
        "dtype_out": p.dtype_out,
    }


def _config_json(c: Optional[TileConfig]) -> Optional[Dict[str, Any]]:
    if c is None:
        return None
    return {
        "tile": list(c.tile),
        "cluster": list(c.cluster),
        "swap_ab": c.swap_ab,
        "stream_k": c.stream_k,
        "name": c.name,
        "stages": c.stages,
        "mainloop_schedule": c.mainloop_schedule,
        "epilogue_schedule": c.epilogue_schedule,
    }


@dataclass
class LedgerContents:
    """Everything a ledger holds: the usable lines and the unusable ones, with line numbers."""

    path: Path
    lines: List[LedgerLine] = field(default_factory=list)

    @property
    def attempts(self) -> List[Dict[str, Any]]:
        return [ln.data for ln in self.lines if ln.data is not None]

    @property
    def problems(self) -> List[str]:
        return [ln.problem for ln in self.lines if ln.problem is not None]


class Ledger:
    """An append-only JSONL ledger at `path` (created on first append)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def iter_attempts(self) -> Iterator[Dict[str, Any]]:
        """The usable attempts, streamed (a ledger of any size costs one line of memory here); an
        absent file is an empty ledger. What resume and --blocklist / --pin-cache read: `load` holds
        every line, for a ledger small enough to look at whole."""
        if not self.path.exists():
            return
        for ln in iter_lines(self.path):
            if ln.data is not None:
                yield ln.data

    def load(self) -> LedgerContents:
        """All lines so far; an absent file is an empty ledger."""
        contents = LedgerContents(self.path)
        if not self.path.exists():
            return contents
        contents.lines.extend(iter_lines(self.path))
        return contents

    def append(self, attempt: Attempt, *, env_id: str) -> Dict[str, Any]:
        """Write one attempt durably; returns the JSON object written."""
        obj = attempt_to_json(attempt, env_id=env_id)
        append_line_durable(self.path, json.dumps(obj, separators=(",", ":"), allow_nan=False, default=str))
        return obj
