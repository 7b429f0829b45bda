"""Reader for tiletune's own retry ledger (JSONL, schema tiletune.ledger/1; see tiletune/ledger_format.py).

Every attempt becomes one record: Status.PASSED (with the measured time in `time_ms`),
Status.FAILED (with the diagnosis message as `error`), or Status.NOT_RUN for an `engine_error`
attempt (the engine could not even start the tactic: the GPU cannot run that runner, a package
or an option was missing), whose `error` says why; a tactic that never ran is not a failed one.
So retries flow back into inspect and report. The key's shapes and raw key string are carried when the attempt came from a cache
entry, so the record decodes like that entry; the attempt's problem, diagnosis, env id and
measurements ride in `detail`. A torn or foreign line is a non-fatal InputProblem naming the line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterator, Union

from tiletune.archs import arch_from_gpu_name
from tiletune.errors import TunerError
from tiletune.ledger_format import SCHEMA, Diagnosis, iter_lines
from tiletune.readers.interface import ReadContext
from tiletune.records import InputProblem, Status, TuningRecord, freeze

KIND = "ledger"


def sniff(path: Path, head: bytes) -> bool:
    """A ledger's first line is a JSON object with our schema tag."""
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return False
    return SCHEMA.encode() in first


def _status(attempt: dict) -> Status:
    """passed -> PASSED; engine_error (tiletune could not start the tactic) -> NOT_RUN; else FAILED."""
    if attempt.get("passed"):
        return Status.PASSED
    if attempt.get("diagnosis") == Diagnosis.ENGINE_ERROR.value:
        return Status.NOT_RUN
    return Status.FAILED


def read(path: Path, ctx: ReadContext) -> Iterator[Union[TuningRecord, InputProblem]]:
    """Yield one TuningRecord per usable ledger line and an InputProblem per unusable one."""
    try:
        lines = list(iter_lines(path))
    except TunerError as e:
        yield InputProblem(source=str(path), message=str(e), fatal=True, loses_data=True)
        return
    usable = 0
    for ln in lines:
        if ln.data is None:
            yield InputProblem(source=str(path), message=ln.problem or f"{path}:{ln.line}: unusable line", fatal=False,
                               loses_data=True)  # the line is skipped
            continue
        usable += 1
        a = ln.data
        env = a.get("env") or {}
        gpu = env.get("gpu")
        arch = a.get("arch") or (arch_from_gpu_name(gpu) if gpu else None)
        environment = ctx.environment(
            flashinfer_version=env.get("flashinfer") or a.get("flashinfer_version"),
            gpu=gpu,
            arch=arch,
            arch_source="ledger" if arch else None,
            version_source="ledger" if (env.get("flashinfer") or a.get("flashinfer_version")) else None,
            cuda_version=env.get("cuda_runtime"),
        )
        if env.get("driver"):
            environment = replace(environment, driver=str(env["driver"]))
        passed = bool(a.get("passed"))
        status = _status(a)
        time_s = a.get("time_s")
        detail = {
            "diagnosis": a.get("diagnosis"),
            "engine": a.get("engine"),
            "dtype": a.get("dtype"),
            "key": a.get("key"),
            "env_id": a.get("env_id"),
            "env": env,
            "problem": a.get("problem"),
            "config": a.get("config"),
            "started_at": a.get("started_at"),
            "tflops": a.get("tflops"),
            "rel_error": a.get("rel_error"),
            "error_bound": a.get("error_bound"),
            "smem_bytes": a.get("smem_bytes"),
            "smem_limit": a.get("smem_limit"),
        }
        yield TuningRecord(
            source=str(path),
            source_kind=KIND,
            op=str(a["op"]),
            runner=str(a.get("runner") or ""),
            tactic=freeze(a.get("tactic")),
            status=status,
            env=environment,
            shapes=freeze(a["shapes"]) if a.get("shapes") is not None else None,
            extras=freeze(a["extras"]) if a.get("extras") is not None else None,
            raw_key=a.get("raw_key"),
            error=None if passed else f"{a.get('diagnosis')}: {a.get('message')}",
            time_ms=time_s * 1e3 if isinstance(time_s, (int, float)) else None,
            line=ln.line,
            detail=tuple(sorted((k, freeze(v)) for k, v in detail.items() if v is not None)),
        )
    if usable == 0 and lines:
        yield InputProblem(source=str(path), message=f"{path}: no usable {SCHEMA} line", fatal=True, loses_data=True)
