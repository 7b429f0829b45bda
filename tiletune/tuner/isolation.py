"""Running one attempt's child process: fresh process, time limit, whole-group kill, files not pipes.

Why each choice:
- a fresh process per attempt, because a failing kernel can leave a sticky CUDA error (illegal
  address, illegal instruction) that poisons every later launch in the same process;
- its own process group (`start_new_session`), so a timeout kills the child *and* anything it
  started (nvcc, ninja, a JIT build) instead of leaving orphans holding the GPU;
- stdout/stderr go to log files in the attempt's scratch dir, not pipes: a chatty child can fill a
  pipe buffer and block forever while the parent waits on it;
- the result comes back as a JSON file the child writes at the end (or, for binaries that cannot
  write files, the last JSON line on stdout), so garbage printed on the way does not matter;
- children die with the parent however it ends: SIGINT/SIGTERM unwind through `run_child`, which
  kills the group it started; the child gets SIGKILL from the kernel when the parent dies
  (PR_SET_PDEATHSIG, Linux); and a `Watchdog` process, which learns of the parent's death when
  the pipe only the parent writes to reaches EOF, kills every group still registered and removes
  the scratch directories, the one cleanup a SIGKILLed parent cannot do itself.

`run_child` never raises for what the child did: start failures (OSError), timeouts, signals,
missing or torn result files all come back as `ChildResult` data.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, Mapping, Optional, Tuple, Union

from tiletune.tuner.engine import ChildResult, ChildSpec

TAIL_CHARS = 4000  # how much of each stream the ledger keeps; full logs stay in the scratch dir
KILL_GRACE_S = 2.0  # after SIGTERM to the group, how long before SIGKILL


def run_child(spec: ChildSpec, *, timeout_s: float, scratch: Path, watchdog: Optional["Watchdog"] = None) -> ChildResult:
    """Run `spec` in a new session with a time limit; always return a ChildResult.

    stdout/stderr are written to `scratch/stdout.log` and `scratch/stderr.log`; their tails are
    returned. On timeout the whole process group gets SIGTERM, then SIGKILL after a short grace;
    so it does when this wait is interrupted (KeyboardInterrupt, SystemExit), before re-raising.
    `watchdog`: told about the group while it runs (see Watchdog).
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
                preexec_fn=_die_with(os.getpid()),
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
        if watchdog is not None:
            watchdog.guard_group(proc.pid)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
        except BaseException:  # interrupted (SIGINT, SIGTERM made SystemExit): the group goes with us
            _kill_group(proc)
            raise
        finally:
            if watchdog is not None:
                watchdog.release_group(proc.pid)
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


_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None


def _die_with(parent_pid: int):  # -> the preexec_fn
    """In the child, before exec: SIGKILL me when the parent dies (survives exec); if the parent
    is already gone (it died between fork and here), exit at once. Resolved before fork, so the
    forked child calls only prctl and getppid."""
    if _prctl is None:
        return None

    def preexec() -> None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


# The watchdog: a small process in its own session reading commands from a pipe that only the
# parent holds open. "+g PGID" / "-g PGID": a process group to kill if the parent dies, or not any
# more; "+d PATH" / "-d PATH": likewise a directory to remove; "exit": the parent is done, leave
# without touching anything. EOF without "exit" means the parent died: SIGTERM the groups, SIGKILL
# what is left after a short grace, remove the directories.
_WATCHDOG = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups, dirs = set(), set()
for line in sys.stdin:
    cmd, _, arg = line.removesuffix(chr(10)).partition(" ")
    if cmd == "exit":
        sys.exit(0)
    target = groups if cmd[1:] == "g" else dirs
    value = int(arg) if cmd[1:] == "g" else arg
    (target.add if cmd[0] == "+" else target.discard)(value)
for sig, grace in ((signal.SIGTERM, %(grace)r), (signal.SIGKILL, 0)) if groups else ():
    for g in groups:
        try:
            os.killpg(g, sig)
        except OSError:
            pass
    time.sleep(grace)
for d in dirs:
    shutil.rmtree(d, ignore_errors=True)
"""


class Watchdog:
    """Kills registered process groups and removes registered directories if this process dies
    without saying goodbye (SIGKILL included). Use as a context manager; the exit says goodbye."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Optional[subprocess.Popen] = None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG % {"grace": KILL_GRACE_S}], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, text=True,
            )
        except OSError:  # no watchdog: the parent-death signal and the parent's own cleanup remain
            self._proc = None

    def _send(self, line: str) -> None:
        if self._proc is None or self._proc.stdin is None:
            return
        with self._lock:
            try:
                self._proc.stdin.write(line + "\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):  # the watchdog died: nothing to tell
                pass

    def guard_group(self, pgid: int) -> None:
        self._send(f"+g {pgid}")

    def release_group(self, pgid: int) -> None:
        self._send(f"-g {pgid}")

    def guard_dir(self, path: Union[str, Path]) -> None:
        self._send(f"+d {path}")

    def release_dir(self, path: Union[str, Path]) -> None:
        self._send(f"-d {path}")

    def close(self, *, kill_registered: bool = False) -> None:
        """Goodbye: the watchdog leaves without killing or removing anything; with
        `kill_registered` it first does what it would do had this process died, and is waited for."""
        if self._proc is None:
            return
        if not kill_registered:
            self._send("exit")
        stdin: Optional[IO[str]] = self._proc.stdin
        try:
            if stdin is not None:
                stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=KILL_GRACE_S + 10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._proc = None

    def __enter__(self) -> "Watchdog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        except json.JSONDecodeError as e:  # a ValueError with the position
            return None, f"result file is not valid JSON ({e.msg} at char {e.pos}; {len(text)} bytes)"
        except ValueError as e:  # e.g. a digit string over the int limit
            return None, f"result file is not valid JSON ({e}; {len(text)} bytes)"
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
