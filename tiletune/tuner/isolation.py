"""Running one attempt's child process: fresh process, time limit, whole-group kill, files not pipes.

Why each choice:
- a fresh process per attempt, because a failing kernel can leave a sticky CUDA error (illegal
  address, illegal instruction) that poisons every later launch in the same process;
- its own process group (`start_new_session`), so a timeout kills the child *and* anything it
  started (nvcc, ninja, a JIT build) instead of leaving orphans holding the GPU;
- stdout/stderr go to log files in the attempt's scratch dir, not pipes: a chatty child can fill a
  pipe buffer and block forever while the parent waits on it;
- the result comes back as a JSON file the child writes at the end (or, for binaries that cannot
  write files, the last JSON line on stdout), so garbage printed on the way does not matter.

`run_child` never raises for what the child did: start failures (OSError), timeouts, signals,
missing or torn result files all come back as `ChildResult` data.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Mapping, Optional, Tuple

from tiletune.tuner.engine import ChildResult, ChildSpec

TAIL_CHARS = 4000  # how much of each stream the ledger keeps; full logs stay in the scratch dir
KILL_GRACE_S = 2.0  # after SIGTERM to the group, how long before SIGKILL


def run_child(spec: ChildSpec, *, timeout_s: float, scratch: Path) -> ChildResult:
    """Run `spec` in a new session with a time limit; always return a ChildResult.

    stdout/stderr are written to `scratch/stdout.log` and `scratch/stderr.log`; their tails are
    returned. On timeout the whole process group gets SIGTERM, then SIGKILL after a short grace.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    out_path, err_path = scratch / "stdout.log", scratch / "stderr.log"
    env = dict(os.environ)
    env.update(dict(spec.env))
    env.setdefault("PYTHONUNBUFFERED", "1")  # so a killed child's last words reach the log
    if spec.result_file is not None:
        try:
            spec.result_file.unlink()  # a stale result from an earlier try must not be read as this one's
        except FileNotFoundError:
            pass
    start = time.monotonic()
    with open(out_path, "wb") as out_f, open(err_path, "wb") as err_f:
        try:
            proc = subprocess.Popen(
                list(spec.argv),
                stdin=subprocess.DEVNULL,
                stdout=out_f,
                stderr=err_f,
                cwd=str(spec.cwd) if spec.cwd else None,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            return ChildResult(
                argv=spec.argv,
                exit_code=None,
                signal=None,
                timed_out=False,
                duration_s=time.monotonic() - start,
                stdout_tail="",
                stderr_tail=f"could not start {spec.argv[0]!r}: {e}",
                result=None,
                result_error=f"child did not start: {e}",
            )
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
    duration = time.monotonic() - start
    rc = proc.returncode
    exit_code: Optional[int] = None
    sig: Optional[int] = None
    if rc is not None and rc < 0:
        sig = -rc
    elif rc is not None and not timed_out:
        exit_code = rc
    stdout_tail = _tail(out_path)
    stderr_tail = _tail(err_path)
    result, result_error = _read_result(spec, out_path)
    return ChildResult(
        argv=spec.argv,
        exit_code=exit_code,
        signal=None if timed_out else sig,
        timed_out=timed_out,
        duration_s=duration,
        stdout_tail=stdout_tail,
        stderr_tail=stderr_tail,
        result=result,
        result_error=result_error,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM the child's process group, then SIGKILL what is left; reap the child."""
    for sig, wait_s in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait_s)
            # the leader is gone; still SIGKILL the group so grandchildren do not outlive it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, n: int = TAIL_CHARS) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if size > n:
                f.seek(size - n)
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _read_result(spec: ChildSpec, stdout_path: Path) -> Tuple[Optional[Mapping[str, Any]], Optional[str]]:
    """The child's JSON result, or (None, why not)."""
    if spec.result_file is not None:
        try:
            text = spec.result_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None, "child wrote no result file"
        except OSError as e:
            return None, f"result file unreadable: {e}"
        try:
            value = json.loads(text)
        except ValueError as e:
            return None, f"result file is not valid JSON ({e.msg} at char {e.pos}; {len(text)} bytes)"
        if not isinstance(value, dict):
            return None, f"result file holds a JSON {type(value).__name__}, expected an object"
        return value, None
    # binaries print one JSON line: take the last line that parses as an object
    try:
        lines = stdout_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as e:
        return None, f"stdout unreadable: {e}"
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value, None
    return None, "no JSON result line on stdout"
