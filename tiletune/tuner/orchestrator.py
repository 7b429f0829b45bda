"""Targets -> attempts -> ledger: the retry loop.

For each target not already finished in this environment with the same options (resume:
resume.py says what counts as the same attempt), the engine describes a child
process, `isolation.run_child` runs it in a fresh process group with the time limit, the engine
interprets what came back, and the attempt is appended to the ledger before the next one starts.
With several GPUs visible, one worker thread per GPU pulls targets from a shared queue and pins
its children to its GPU with CUDA_VISIBLE_DEVICES. Progress (done/total, ETA) goes to stderr.

An engine that raises for one target (a bug or a TiletuneError) costs that target an
ENGINE_ERROR attempt, not the run.

Killing the parent kills its children and removes the scratch directory: SIGINT and SIGTERM
(turned into SystemExit here) unwind through `run_child`, which kills the running group, and the
`finally` below; after a SIGKILL, isolation's parent-death signal and Watchdog do it.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO

from msgspec import structs

from tiletune.tuner import fingerprint
from tiletune.tuner import resume as resume_ids
from tiletune.tuner.engine import Attempt, Diagnosis, Engine, RetryTarget
from tiletune.tuner.isolation import Watchdog, run_child
from tiletune.tuner.ledger import Ledger


@dataclass
class RetryRun:
    """What one `retry` did: attempts made now, targets skipped as already finished, the env id."""

    attempts: List[Attempt] = field(default_factory=list)
    skipped: List[RetryTarget] = field(default_factory=list)
    env_id: str = ""
    env: Dict[str, Any] = field(default_factory=dict)
    ledger: Optional[Path] = None


def now_iso() -> str:
    """UTC ISO-8601 with seconds, as the ledger stores it."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def visible_gpus(env: Optional[Mapping[str, str]] = None) -> List[str]:
    """GPU ids children may be pinned to: CUDA_VISIBLE_DEVICES when set, else nvidia-smi's count."""
    env = os.environ if env is None else env
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        return [d.strip() for d in cvd.split(",") if d.strip() and d.strip() != "-1"]
    return [str(i) for i in range(fingerprint.gpu_count())]


class Progress:
    """'[3/10] key: diagnosis message (ETA 0:42)' lines on a stream (stderr)."""

    def __init__(self, total: int, stream: Optional[TextIO]):
        self.total = total
        self.done = 0
        self.stream = stream
        self.start = time.monotonic()
        self.lock = threading.Lock()

    def report(self, attempt: Attempt) -> None:
        with self.lock:
            self.done += 1
            if self.stream is None:
                return
            elapsed = time.monotonic() - self.start
            left = self.total - self.done
            eta = elapsed / self.done * left if self.done else 0.0
            what = attempt.message
            if attempt.passed and attempt.time_s is not None:
                what = f"{attempt.time_s * 1e6:.1f} us" + (f", {attempt.tflops:.1f} TFLOP/s" if attempt.tflops else "")
            self.stream.write(
                f"[{self.done}/{self.total}] {attempt.target.key}: {attempt.diagnosis.value}: {what}"
                f" (ETA {_clock(eta)})\n"
            )
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _safe_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key)[:120]


def run_retry(
    targets: Sequence[RetryTarget],
    engine: Engine,
    ledger_path: Path,
    *,
    timeout_s: float = 120.0,
    jobs: int = 1,
    resume: bool = True,
    workers: Optional[int] = None,
    gpus: Optional[Sequence[str]] = None,
    progress: Optional[TextIO] = sys.stderr,
    env: Optional[Dict[str, Any]] = None,
    scratch_root: Optional[Path] = None,
    keep_scratch: bool = False,
) -> RetryRun:
    """Attempt every target not already finished in this environment; append each to the ledger.

    `gpus`: ids to pin children to (default: the visible GPUs); one worker per GPU unless
    `workers` says otherwise (CPU-only engines and tests set it). `env`: the fingerprint (collected
    when None).
    """
    suffix = engine.key_suffix() if hasattr(engine, "key_suffix") else ""
    if suffix:  # attempts under non-default conditions are different attempts
        targets = [structs.replace(t, key=t.key + suffix) for t in targets]
    env = dict(env) if env is not None else fingerprint.collect()
    eid = fingerprint.env_id(env)
    ledger = Ledger(ledger_path)
    run = RetryRun(env_id=eid, env=env, ledger=ledger.path)
    finished = resume_ids.finished(ledger.iter_attempts(), eid) if resume else set()
    todo: List[RetryTarget] = []
    seen = set()
    for t in targets:
        ident = resume_ids.target_identity(t, engine.name)
        if ident in finished:
            run.skipped.append(t)
        elif ident not in seen:
            seen.add(ident)
            todo.append(t)
    if progress is not None and run.skipped:
        progress.write(f"tiletune retry: {len(run.skipped)} target(s) already finished in this environment with the same "
                       f"options ({ledger.path}); skipped\n")
    if not todo:
        return run
    engine.prepare(todo, jobs=jobs)

    gpu_ids = list(gpus) if gpus is not None else visible_gpus()
    n_workers = workers if workers is not None else max(1, len(gpu_ids))
    n_workers = max(1, min(n_workers, len(todo)))
    own_scratch = scratch_root is None
    watchdog = Watchdog()
    root = Path(tempfile.mkdtemp(prefix="tiletune-retry-")) if scratch_root is None else Path(scratch_root)
    root.mkdir(parents=True, exist_ok=True)
    if own_scratch and not keep_scratch:
        watchdog.guard_dir(root)
    bar = Progress(len(todo), progress)
    work: "queue.Queue[tuple[int, RetryTarget]]" = queue.Queue()
    for i, t in enumerate(todo):
        work.put((i, t))
    results: Dict[int, Attempt] = {}
    lock = threading.Lock()

    def worker(slot: int) -> None:
        gpu = gpu_ids[slot % len(gpu_ids)] if gpu_ids else None
        while True:
            try:
                i, target = work.get_nowait()
            except queue.Empty:
                return
            attempt = _attempt_one(engine, target, root / f"{i:05d}-{_safe_name(target.key)}", timeout_s, gpu, watchdog)
            attempt = structs.replace(attempt, env=_merge_env(env, attempt.env, gpu))
            with lock:
                ledger.append(attempt, env_id=eid)
                results[i] = attempt
            bar.report(attempt)

    restore_sigterm = _sigterm_unwinds()
    finished_normally = False
    try:
        if n_workers == 1:
            worker(0)
        else:
            threads = [threading.Thread(target=worker, args=(s,), daemon=True) for s in range(n_workers)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        finished_normally = True
    finally:
        if own_scratch and not keep_scratch:
            shutil.rmtree(root, ignore_errors=True)
        # interrupted: other workers' children may still run; the watchdog kills what is registered
        watchdog.close(kill_registered=not finished_normally)
        restore_sigterm()
    run.attempts = [results[i] for i in sorted(results)]
    return run


def _sigterm_unwinds():  # -> a function restoring the previous handler
    """While the run lasts, SIGTERM raises SystemExit(143) so the `finally` blocks clean up (the
    default action would end the process on the spot). Only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, unwind)
    return lambda: signal.signal(signal.SIGTERM, previous)


def attempt_one(engine: Engine, target: RetryTarget, scratch: Path, timeout_s: float, gpu: Optional[str]) -> Attempt:
    """One attempt in an isolated child, as the retry loop makes it (the Ray runner's tasks call this)."""
    watchdog = Watchdog()
    try:
        return _attempt_one(engine, target, scratch, timeout_s, gpu, watchdog)
    finally:
        watchdog.close(kill_registered=True)


def _attempt_one(engine: Engine, target: RetryTarget, scratch: Path, timeout_s: float, gpu: Optional[str],
                 watchdog: Optional[Watchdog] = None) -> Attempt:
    started = now_iso()
    t0 = time.monotonic()
    try:
        spec = engine.child_spec(target, scratch)
        if gpu is not None:
            spec = structs.replace(spec, env=tuple(spec.env) + (("CUDA_VISIBLE_DEVICES", gpu),))
        child = run_child(spec, timeout_s=timeout_s, scratch=scratch, watchdog=watchdog)
        attempt = engine.interpret(target, child)
    except Exception as e:  # one bad target must not end the run; the ledger says what happened
        return Attempt(
            target=target,
            engine=getattr(engine, "name", "?"),
            diagnosis=Diagnosis.ENGINE_ERROR,
            message=f"engine failed before/after the child: {type(e).__name__}: {e}",
            started_at=started,
            duration_s=time.monotonic() - t0,
        )
    if attempt.diagnosis is Diagnosis.TIMEOUT and child.timed_out:
        # engines do not know the limit; the message should say which one was hit
        attempt = structs.replace(attempt, message=f"killed after the {timeout_s:g} s time limit (hang or too slow)")
    return structs.replace(attempt, started_at=attempt.started_at or started)


def _merge_env(parent: Mapping[str, Any], child: Sequence[tuple], gpu: Optional[str]) -> tuple:
    merged: Dict[str, Any] = dict(parent)
    merged.update(dict(child))  # what the child saw inside its CUDA context wins
    if gpu is not None:
        merged["cuda_visible_devices"] = gpu
    return tuple(sorted(merged.items()))
