"""The CLI's file handling, run as real processes: problems reach stderr, tiletune (not the argument
parser) checks named inputs, no output overwrites an input, write errors are one line.

Permission cases run in a child whose capabilities to bypass file permissions are dropped
(PR_CAPBSET_DROP), so a chmod 000 file is unreadable there even when the tests run as root; as an
ordinary user the drop fails harmlessly and the permissions apply anyway.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"
SM120 = SAMPLES / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"
LEDGER = SAMPLES / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _without_permission_bypass() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails (EPERM) unless root: then nothing to drop


def tiletune(*args, cwd: Path, stdout=subprocess.PIPE, unprivileged: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLASHINFER_", "VLLM_", "SGLANG_", "TLLM_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(cwd), COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "tiletune", *map(str, args)], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                          preexec_fn=_without_permission_bypass if unprivileged else None)


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tiletune: ") and "Traceback" not in stderr, stderr
    return lines[0]


def test_problems_reach_stderr_when_stdout_goes_to_a_file(tmp_path):
    """`inspect missing.json > out.txt` showed nothing on the terminal at 3d96422 (table mode)."""
    with open(tmp_path / "out.txt", "w") as out:
        r = tiletune("inspect", "missing.json", cwd=tmp_path, stdout=out)
    assert r.returncode == 2
    assert "tiletune: missing.json: no such file or directory" in r.stderr
    assert "missing.json: no such file or directory" in (tmp_path / "out.txt").read_text()  # and still in the table


def test_an_unreadable_named_input_is_one_line_and_the_others_are_inspected(tmp_path):
    """typer's readable-Path check refused the whole command (usage box, nothing inspected)."""
    shutil.copy(SM120, tmp_path / "ok.json")
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    r = tiletune("inspect", "locked.json", "ok.json", cwd=tmp_path, unprivileged=True)
    assert r.returncode == 2
    assert _one_line(r.stderr) == "tiletune: locked.json: cannot read it (permission denied)"
    assert "== sm120 fp4_gemm - CutlassFp4GemmRunner, N " in r.stdout  # ok.json was inspected


def _inputs(tmp_path: Path) -> None:
    shutil.copy(SM120, tmp_path / "c.json")
    shutil.copy(LEDGER, tmp_path / "l.jsonl")
    (tmp_path / "b.json").write_text('{"_metadata": {}, "invalid_tactics": {"fp8_gemm::CublasFp8GemmRunner": [99]}}\n')
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "c.json", tmp_path / "sub" / "link.json")
    os.link(tmp_path / "l.jsonl", tmp_path / "hard.jsonl")


@pytest.mark.parametrize("args", [
    ["inspect", "c.json", "-o", "c.json"],
    ["inspect", "c.json", "-o", "./sub/../c.json"],  # another spelling of the same path
    ["inspect", "c.json", "-o", "sub/link.json"],  # a symlink to the input
    ["inspect", "sub", "-o", "c.json"],  # read through the symlink in a directory input
    ["inspect", "c.json", "--format", "json", "-o", "c.json"],
    ["report", "l.jsonl", "-o", "l.jsonl"],
    ["report", "l.jsonl", "-o", "hard.jsonl"],  # a hard link to the input
    ["retry", "b.json", "--no-run", "--blocklist", "b.json"],
    ["retry", "l.jsonl", "--ledger", "l.jsonl", "--no-run", "--blocklist", "hard.jsonl"],
    ["retry", "c.json", "--no-run", "--ledger", "l.jsonl", "--blocklist", "l.jsonl"],  # the ledger is read too
    ["retry", "c.json", "--no-run", "--ledger", "x.jsonl", "-o", "c.json"],
    ["diff", "c.json", "l.jsonl", "-o", "l.jsonl"],
    ["gpus", "--gpu-file", "c.json", "-o", "c.json"],
])
def test_no_output_overwrites_an_input(tmp_path, args):
    _inputs(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    r = tiletune(*args, cwd=tmp_path)
    assert r.returncode == 2
    line = _one_line(r.stderr)
    assert "is an input" in line and "never overwritten" in line
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_the_ledger_may_be_both_input_and_ledger(tmp_path):
    _inputs(tmp_path)
    r = tiletune("retry", "l.jsonl", "--ledger", "l.jsonl", "--no-run", "--blocklist", "new.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "new.json").exists() and (tmp_path / "l.jsonl").read_bytes() == LEDGER.read_bytes()


def test_a_full_disk_is_one_line_exit_2(tmp_path):
    shutil.copy(SM120, tmp_path / "c.json")
    # through a symlink: code that replaces its output (3d96422 did, as root) swaps the link, not the device
    os.symlink("/dev/full", tmp_path / "full")
    r = tiletune("inspect", "c.json", "-o", "full", cwd=tmp_path)
    assert r.returncode == 2 and _one_line(r.stderr) == "tiletune: full: cannot write it (No space left on device)"
    assert (tmp_path / "full").is_symlink() and (tmp_path / "full").is_char_device()  # written in place
    with open("/dev/full", "w") as full:
        r = tiletune("inspect", "c.json", cwd=tmp_path, stdout=full)
    assert r.returncode == 2 and _one_line(r.stderr) == "tiletune: stdout: cannot write it (No space left on device)"


def test_a_read_only_directory_is_one_line_exit_2(tmp_path):
    shutil.copy(SM120, tmp_path / "c.json")
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    try:
        r = tiletune("inspect", "c.json", "-o", "ro/out.txt", cwd=tmp_path, unprivileged=True)
        assert r.returncode == 2
        assert _one_line(r.stderr) == "tiletune: ro/out.txt: cannot write it (Permission denied)"
        r = tiletune("retry", "--ledger", str(LEDGER), "--no-run", "--blocklist", "ro/b.json", cwd=tmp_path, unprivileged=True)
        assert r.returncode == 2 and "tiletune: ro/b.json: cannot write it (Permission denied)" in r.stderr
        assert "Traceback" not in r.stderr
    finally:
        (tmp_path / "ro").chmod(0o755)
    assert list((tmp_path / "ro").iterdir()) == []
