"""`tiletune doctor` on this machine (no GPU here), on a prepared home with a JIT workspace, and with a
stand-in nvidia-smi script for the GPU path."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from tiletune.cli.commands import doctor
from tiletune.formats.doctor import render_text

ROOT = Path(__file__).resolve().parents[1]


def by_item(report):
    return {c.item: c for c in report.checks}


def test_this_machine(tmp_path):
    r = doctor.collect(env={}, home=tmp_path)
    c = by_item(r)
    if shutil.which("nvidia-smi") is None:
        assert not c["GPU"].found and "no NVIDIA GPU" in c["GPU"].note and r.gpus == ()
    else:  # pragma: no cover - GPU machines
        assert c["GPU"].found and r.gpus
    nvcc = shutil.which("nvcc")
    assert c["nvcc"].found is (nvcc is not None)
    if nvcc:
        assert c["nvcc"].value[:2].isdigit() and c["nvcc"].note == nvcc
    for pkg in doctor.PACKAGES:
        assert pkg in c  # each package is reported, found or not
    assert not c["FlashInfer JIT workspaces"].found and str(tmp_path) in c["FlashInfer JIT workspaces"].note
    assert [c.item for c in r.checks[:3]] == ["tiletune", "Python", "OS"]  # versions first (issue 25 item 14)
    lines = render_text(r).splitlines()
    for check, line in zip(r.checks, lines):  # one line per check, saying found / not found
        m = re.match(rf"{re.escape(check.item)}\s+(found|not found)(\s|$)", line)
        assert m and (m.group(1) == "found") is check.found
    if shutil.which("nvidia-smi") is None:
        assert lines[3].split()[:3] == ["GPU", "not", "found"]  # (after tiletune, Python, OS)
    assert any(line.startswith("  searched: ") for line in lines)  # nothing found: says where it looked


def test_workspaces_and_caches_under_a_home(tmp_path, sample):
    ws = tmp_path / ".cache" / "flashinfer" / "0.6.14" / "120f"
    shutil.copytree(sample("jit/flashinfer/0.6.14/120f"), ws)
    r = doctor.collect(env={}, home=tmp_path)
    (w,) = r.workspaces
    assert (w.flashinfer_version, w.arch, w.arch_dir, w.has_log) == ("0.6.14", "sm120", "120f", True)
    assert w.modules_built == ("fp4_gemm_cutlass_sm120",) and w.modules_not_built == ("fused_moe_120",)
    assert by_item(r)["FlashInfer JIT workspaces"].found
    assert str(ws) in r.caches  # discovery lists the workspace as a place inspect reads
    text = render_text(r)
    assert "FlashInfer 0.6.14, arch sm120, 1 module(s) built, 1 not built (fused_moe_120)" in text


def test_flashinfer_workspace_base_is_honoured(tmp_path, sample):
    base = tmp_path / "elsewhere"
    shutil.copytree(sample("jit/flashinfer/0.6.14/120f"), base / ".cache" / "flashinfer" / "0.6.14" / "120f")
    r = doctor.collect(env={"FLASHINFER_WORKSPACE_BASE": str(base)}, home=tmp_path)
    assert [w.flashinfer_version for w in r.workspaces] == ["0.6.14"]


def test_gpu_path_with_a_standin_nvidia_smi(tmp_path):
    """A shell script answering like nvidia-smi does on an H200 box (query CSV, then the banner)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        '  --query-gpu=*) echo "0, NVIDIA H200, 580.82.07, 143771, 9.0"; echo "1, NVIDIA H200, 580.82.07, 143771, 9.0";;\n'
        '  *) echo "| NVIDIA-SMI 580.82.07    Driver Version: 580.82.07    CUDA Version: 13.0 |";;\n'
        "esac\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    r = doctor.collect(env={}, home=tmp_path, which=lambda n: shutil.which(n, path=str(bin_dir)))
    assert [(g.index, g.name, g.arch, g.memory_mib, g.compute_capability) for g in r.gpus] == [
        (0, "NVIDIA H200", "sm90", 143771, "9.0"), (1, "NVIDIA H200", "sm90", 143771, "9.0")]
    c = by_item(r)
    assert c["NVIDIA driver"].value == "580.82.07" and c["CUDA (driver supports up to)"].value == "13.0"


def test_cli_json_parses(tmp_path):
    # the timeout only stops a hang (each probe has its own limit); it is not a speed requirement
    p = subprocess.run([sys.executable, "-m", "tiletune", "doctor", "--format", "json"], capture_output=True, text=True,
                       env=dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(ROOT)), timeout=600)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["schema"] == "tiletune.doctor/1" and {c["item"] for c in data["checks"]} >= {"GPU", "nvcc", "flashinfer-python"}
    assert "torch" not in p.stderr
