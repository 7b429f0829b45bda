"""Reader for tiletune's own retry ledger (JSONL, schema tiletune.ledger/1; see tiletune/core/ledger_format.py).

Every distinct attempt becomes one record (identical repeats add to its count and bounded time
samples, `tiletune.core.timings`: the ledger is streamed, never held): Status.PASSED (with the measured time in `time_ms`),
Status.FAILED (with the diagnosis message as `error`), or Status.NOT_RUN for an `engine_error`
attempt (the engine could not even start the tactic: the GPU cannot run that runner, a package
or an option was missing), whose `error` says why; a tactic that never ran is not a failed one.
So retries flow back into inspect and report. The key's shapes and raw key string are carried when the attempt came from a cache
entry, so the record decodes like that entry; the attempt's problem, diagnosis, env id and
measurements ride in `detail`. A torn or foreign line is a non-fatal InputProblem naming the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Union

from msgspec import structs

from tiletune.core.archs import arch_from_gpu_name
from tiletune.core.errors import TunerError
from tiletune.core.ledger_format import SCHEMA, Diagnosis, iter_lines
from tiletune.core.records import InputProblem, Status, TuningRecord, freeze
from tiletune.core.timings import TimeSamples
from tiletune.readers.interface import ReadContext

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


MAX_PROBLEMS = 20  # unusable-line notes per ledger; then one summary note
MAX_LINES_KEPT = 64
MAX_CUT_KEYS = 1000  # cut records told apart by key; past this, cut lines are unusable lines like any other
# Fields that differ between repeats of the same attempt: they go to the aggregate's samples or
# its first occurrence, not into the identity of the attempt.
_VARYING = ("started_at", "time_s", "tflops", "rel_error", "message")


def _attempt_key(a: dict, status: Status) -> tuple:
    return (str(a["op"]), str(a.get("runner") or ""), freeze(a.get("tactic")), status, freeze(a.get("shapes")),
            freeze(a.get("extras")), a.get("raw_key"), a.get("diagnosis"), a.get("env_id"), freeze(a.get("problem")),
            a.get("engine"), a.get("dtype"), freeze(a.get("config")), freeze(a.get("env")), a.get("arch"),
            a.get("flashinfer_version"))


def read(path: Path, ctx: ReadContext) -> Iterator[Union[TuningRecord, InputProblem]]:
    """Stream the ledger; identical attempts (same op, runner, tactic, outcome, problem, environment)
    become ONE record with a count and bounded time samples (tiletune.core.timings), so a 1 GB ledger
    costs memory per distinct attempt, not per line. Unusable lines are problems (first 20 named)."""
    aggs: dict = {}
    usable = bad = 0
    # Records cut while written (a crash), by the attempt key they name: a resumed retry redoes such an
    # attempt, so one whose key a later whole line holds lost nothing (a note); the others lost it.
    cut: dict[str, list] = {}
    try:
        for ln in iter_lines(path):
            if ln.data is None:
                if ln.cut_key is not None and len(cut) < MAX_CUT_KEYS:
                    cut.setdefault(ln.cut_key, [ln.problem, False])[1] = False
                    continue
                bad += 1
                if bad <= MAX_PROBLEMS:
                    yield InputProblem(source=str(path), message=ln.problem or f"{path}:{ln.line}: unusable line", fatal=False,
                                       loses_data=True)  # the line is skipped
                continue
            usable += 1
            a = ln.data
            if cut and a["key"] in cut:
                cut[a["key"]][1] = True  # redone after the cut
            status = _status(a)
            try:
                key = _attempt_key(a, status)
                hash(key)
            except TypeError:
                key = ("line", ln.line)
            agg = aggs.get(key)
            if agg is None:
                agg = aggs[key] = [a, ln.line, TimeSamples(), []]
            time_s = a.get("time_s")
            agg[2].add(time_s * 1e3 if isinstance(time_s, (int, float)) and not isinstance(time_s, bool) else None)
            if len(agg[3]) < MAX_LINES_KEPT:
                agg[3].append(ln.line)
    except TunerError as e:
        yield InputProblem(source=str(path), message=str(e), fatal=True, loses_data=True)
        return
    for message, redone in cut.values():
        if redone:
            yield InputProblem(source=str(path), message=f"{message} (the attempt it began is on a later line: nothing lost)",
                               fatal=False, loses_data=False)
        else:
            bad += 1
            if bad <= MAX_PROBLEMS:
                yield InputProblem(source=str(path), message=message, fatal=False, loses_data=True)
    if bad > MAX_PROBLEMS:
        yield InputProblem(source=str(path), message=f"{path}: {bad - MAX_PROBLEMS} more unusable lines skipped "
                                                     f"(first {MAX_PROBLEMS} named)", fatal=False, loses_data=True)
    for a, first_line, times, lines in aggs.values():
        yield _record(path, ctx, a, first_line, times, lines)
    if usable == 0 and bad:
        yield InputProblem(source=str(path), message=f"{path}: no usable {SCHEMA} line", fatal=True, loses_data=True)


def _record(path: Path, ctx: ReadContext, a: dict, first_line: int, times: TimeSamples, lines: list) -> TuningRecord:
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
        environment = structs.replace(environment, driver=str(env["driver"]))
    passed = bool(a.get("passed"))
    detail = {
        "diagnosis": a.get("diagnosis"),
        "engine": a.get("engine"),
        "dtype": a.get("dtype"),
        "key": a.get("key"),
        "env_id": a.get("env_id"),
        "env": env,
        "problem": a.get("problem"),
        "config": a.get("config"),
        "started_at": a.get("started_at"),  # of the first occurrence
        "tflops": a.get("tflops"),
        "rel_error": a.get("rel_error"),
        "error_bound": a.get("error_bound"),
        "smem_bytes": a.get("smem_bytes"),
        "smem_limit": a.get("smem_limit"),
    }
    if times.count > 1:
        detail.update(times.detail("ms"))
        detail["lines"] = tuple(lines)
    time_ms = times.median if times.count > 1 else (times.samples[0] if times.samples else None)
    return TuningRecord(
        source=str(path),
        source_kind=KIND,
        op=str(a["op"]),
        runner=str(a.get("runner") or ""),
        tactic=freeze(a.get("tactic")),
        status=_status(a),
        env=environment,
        shapes=freeze(a["shapes"]) if a.get("shapes") is not None else None,
        extras=freeze(a["extras"]) if a.get("extras") is not None else None,
        raw_key=a.get("raw_key"),
        error=None if passed else f"{a.get('diagnosis')}: {a.get('message')}",
        time_ms=time_ms,
        count=times.count,
        line=first_line,
        detail=tuple(sorted((k, freeze(v)) for k, v in detail.items() if v is not None)),
    )
