"""retry's children die with the parent, and its scratch directory goes: a real parent process runs
`run_retry` with a child that hangs (and has started a grandchild of its own), and is really killed
with SIGINT, SIGTERM or SIGKILL. At 3d96422 the child and grandchild kept running (their own
session, nobody left to kill them) and the scratch directory stayed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WAIT_S = 120  # a bound on polling for events, never a speed requirement


def _gone(pid: int) -> bool:
    """Dead: no such process, or a zombie waiting for a reaper (it runs nothing any more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _poll(what, until) -> None:
    deadline = time.monotonic() + WAIT_S
    while not until():
        if time.monotonic() > deadline:
            pytest.fail(what)
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the parent-death signal are Linux")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["SIGINT", "SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("workers", [1, 2])
def test_killing_the_parent_kills_the_hung_child_and_its_group_and_removes_scratch(tmp_path, sig, workers):
    tmp = tmp_path / "tmp"  # the parent's TMPDIR: its scratch directory is made here
    tmp.mkdir()
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        from tuner_fakes import FAKE_ENV, FakeEngine, make_target
        from tiletune.tuner.orchestrator import run_retry
        targets = [make_target("hang_grandchild", m=i + 1) for i in range({workers})]
        run_retry(targets, FakeEngine(), Path({str(tmp_path / "ledger.jsonl")!r}), timeout_s=600, progress=None,
                  env=dict(FAKE_ENV), workers={workers}, gpus=[])
    """)
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
    parent = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        _poll("the children never started", lambda: len(list(tmp.rglob("result.json.grandchild"))) == workers)
        pids = [int(p) for f in tmp.rglob("result.json.grandchild") for p in f.read_text().split()]
        assert len(pids) == 2 * workers and not any(_gone(p) for p in pids)
        parent.send_signal(sig)
        parent.wait(timeout=WAIT_S)
    finally:
        if parent.poll() is None:
            parent.kill()
    for pid in pids:
        _poll(f"process {pid} outlived its retry parent (killed by {sig.name})", lambda pid=pid: _gone(pid))
    _poll(f"scratch left behind: {list(tmp.iterdir())}", lambda: not any(tmp.iterdir()))
