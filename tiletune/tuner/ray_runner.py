"""`retry --ray ADDRESS`: the attempts spread over a Ray cluster (optional: `pip install 'tiletune[ray]'`).

Imported only when --ray is given; nothing else in tiletune imports ray. On the cluster:
- every CUTLASS kernel the targets need is built once, as a CPU task (`num_cpus=1`, no GPU); when
  some nodes declare the custom resource `tiletune_build` (e.g. `ray start ... --resources
  '{"tiletune_build": 8}'`), builds go only to those nodes, so GPU nodes are not busy compiling;
  the binary comes back through Ray's object store, so nodes need no shared filesystem;
- every target is one task with `num_gpus=1` (Ray pins CUDA_VISIBLE_DEVICES for it): the same
  isolated child process, time limit and diagnosis as a local retry (orchestrator.attempt_one),
  on the GPU Ray gave the task;
- each finished attempt is appended to the LOCAL ledger as it arrives (ray.wait), so an
  interrupted run keeps what finished and a rerun resumes from it.
Resume compares the ledger with the environment of the GPU workers, read once by a small
`num_gpus=1` probe task: the cluster's GPU workers are taken to be one environment (every attempt
still records the fingerprint of the worker that ran it).
Workers run the same tiletune (and, for the FlashInfer engine, torch and flashinfer; for the
CUTLASS engine, nvcc and CUTLASS headers on the build nodes) as the driver.
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from msgspec import structs

from tiletune.core.errors import TunerError
from tiletune.tuner import fingerprint
from tiletune.tuner import resume as resume_ids
from tiletune.tuner.engine import Attempt, RetryTarget
from tiletune.tuner.ledger import Ledger
from tiletune.tuner.orchestrator import Progress, RetryRun

BUILD_RESOURCE = "tiletune_build"


def _ray():
    try:
        import ray  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise TunerError("--ray needs Ray: pip install 'tiletune[ray]'") from None
    return ray


def _make_engine(name: str, options: Mapping[str, Any]):
    if name == "cutlass":
        from tiletune.tuner.cutlass_engine import CutlassEngine

        return CutlassEngine(moe_top_k=options.get("moe_top_k"))
    if name == "flashinfer":
        from tiletune.tuner.flashinfer_engine import FlashInferEngine

        return FlashInferEngine(progress=None, **options)
    raise TunerError(f"--ray: engine {name!r} cannot run on a cluster")


# --- what runs on the workers (plain functions: ray.remote wraps them in run_retry_ray) ------------

def build_on_worker(kb: Any) -> Dict[str, Any]:
    """One CUTLASS build on a CPU worker; the binary's bytes travel back (no shared filesystem needed)."""
    from tiletune.tuner.cutlass_build import build

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tiletune-ray-build-") as tmp:
        res = build(kb, cache=Path(tmp))
        blob = res.binary.read_bytes() if res.binary is not None else None
    return {"binary": blob, "error": res.error, "log": res.log[-4000:], "cutlass_version": res.cutlass_version,
            "cutlass_origin": res.cutlass_origin, "command": res.command, "seconds": time.monotonic() - t0,
            "node": _node(), "pid": os.getpid(), "label": kb.label()}


def attempt_on_worker(target: RetryTarget, engine_name: str, options: Mapping[str, Any], built: Optional[Dict[str, Any]],
                      timeout_s: float) -> Tuple[Attempt, Dict[str, Any]]:
    """One attempt on the GPU Ray gave this task: (attempt with the worker's environment, the worker's fingerprint)."""
    from tiletune.tuner.cutlass_build import BuildResult
    from tiletune.tuner.orchestrator import attempt_one

    engine = _make_engine(engine_name, options)
    env = fingerprint.collect()
    with tempfile.TemporaryDirectory(prefix="tiletune-ray-attempt-") as tmp:
        scratch = Path(tmp) / "attempt"
        if built is not None:
            binary = None
            if built["binary"] is not None:
                binary = Path(tmp) / "run"
                binary.write_bytes(built["binary"])
                binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
            engine._builds[target.key] = BuildResult(build=engine.build_for(target), command=tuple(built["command"]),
                                                     binary=binary, cached=False, seconds=built["seconds"],
                                                     cutlass_version=built["cutlass_version"],
                                                     cutlass_origin=built["cutlass_origin"], error=built["error"],
                                                     log=built["log"])
        attempt = attempt_one(engine, target, scratch, timeout_s, None)
    worker = {**env, "ray_node_id": _node(), "host": socket.gethostname(), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    if built is not None:
        worker["build_node"] = built["node"]
        worker["build_seconds"] = round(float(built["seconds"]), 1)
    merged = dict(worker)
    merged.update(dict(attempt.env))
    return structs.replace(attempt, env=tuple(sorted(merged.items()))), env


def _node() -> str:
    """This Ray node's id (hostnames repeat when several nodes share a machine)."""
    ray = _ray()

    return str(ray.get_runtime_context().get_node_id())


def probe_on_worker() -> Dict[str, Any]:
    return fingerprint.collect()


# --- the driver ---------------------------------------------------------------------------------

def run_retry_ray(targets: Sequence[RetryTarget], engine_name: str, ledger_path: Path, *, address: str,
                  options: Mapping[str, Any], timeout_s: float = 120.0, resume: bool = True,
                  progress: Optional[TextIO] = None, gpus_per_attempt: float = 1.0) -> RetryRun:
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    build_res = {BUILD_RESOURCE: 0.001} if ray.cluster_resources().get(BUILD_RESOURCE) else {}
    build_task = ray.remote(num_cpus=1, num_gpus=0, resources=build_res or None)(build_on_worker)
    attempt_task = ray.remote(num_cpus=1, num_gpus=gpus_per_attempt, max_retries=0)(attempt_on_worker)
    probe_task = ray.remote(num_cpus=0, num_gpus=gpus_per_attempt)(probe_on_worker)

    env = ray.get(probe_task.remote())
    eid = fingerprint.env_id(env)
    ledger = Ledger(ledger_path)
    run = RetryRun(env_id=eid, env=dict(env), ledger=ledger.path)
    finished = resume_ids.finished(ledger.iter_attempts(), eid) if resume else set()
    todo: List[RetryTarget] = []
    seen = set()
    for t in targets:
        ident = resume_ids.target_identity(t, engine_name)
        if ident in finished:
            run.skipped.append(t)
        elif ident not in seen:
            seen.add(ident)
            todo.append(t)
    if progress is not None:
        progress.write(f"tiletune retry --ray {address}: {len(todo)} target(s) to attempt, {len(run.skipped)} already in "
                       f"{ledger.path}; builds as CPU tasks{' on ' + BUILD_RESOURCE + ' nodes' if build_res else ''}, "
                       f"attempts with num_gpus={gpus_per_attempt:g}\n")
    builds: Dict[str, Any] = {}  # kernel label -> ObjectRef of its build
    pending: Dict[Any, RetryTarget] = {}
    local = _make_engine(engine_name, options) if engine_name == "cutlass" else None
    for t in todo:
        built_ref = None
        if local is not None:
            try:
                kb = local.build_for(t)
            except TunerError:
                kb = None  # the attempt reports why (no decoded tile, arch unknown)
            if kb is not None:
                label = kb.label()
                if label not in builds:
                    builds[label] = build_task.remote(kb)
                built_ref = builds[label]
        pending[attempt_task.remote(t, engine_name, dict(options), built_ref, timeout_s)] = t
    bar = Progress(len(pending), progress)
    results: List[Attempt] = []
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        target = pending.pop(ref)
        try:
            attempt, _worker_env = ray.get(ref)
        except Exception as e:  # the task itself failed (worker lost, deserialization): an engine error
            from tiletune.core.ledger_format import Diagnosis
            from tiletune.tuner.orchestrator import now_iso

            attempt = Attempt(target=target, engine=engine_name, diagnosis=Diagnosis.ENGINE_ERROR,
                              message=f"Ray task failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                              started_at=now_iso(), duration_s=0.0)
            _worker_env = None
        ledger.append(attempt, env_id=fingerprint.env_id(_worker_env) if _worker_env else eid)
        results.append(attempt)
        bar.report(attempt)
    run.attempts = results
    return run


__all__ = ["BUILD_RESOURCE", "attempt_on_worker", "build_on_worker", "run_retry_ray"]
