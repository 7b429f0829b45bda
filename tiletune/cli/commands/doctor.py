"""`tiletune doctor`: what tiletune can see on this machine, each item found or not found.

Owns the environment check: GPUs and driver (nvidia-smi, when on PATH), CUDA (driver's CUDA
version from nvidia-smi, the CUDA runtime torch was built with, nvcc), Python packages
(flashinfer-python, flashinfer-cubin, flashinfer-jit-cache, nvidia-cutlass, nvidia-cutlass-dsl,
torch) read from package metadata, FlashInfer JIT workspaces and the caches `inspect` would read.

It must be fast and work with no GPU: nothing here imports torch or flashinfer (torch's CUDA
version is read from its `torch/version.py` file), subprocesses have a short time limit, and
workspaces are listed, not read. `collect()` returns a frozen `analysis.doctor.DoctorReport`;
`tiletune.formats.doctor` renders it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Tuple

from tiletune.analysis.doctor import Check, DoctorReport, Gpu, Workspace

SUBPROCESS_TIMEOUT_S = 10.0

# Packages whose versions matter to tiletune (distribution names as pip knows them).
PACKAGES = ("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache", "nvidia-cutlass",
            "nvidia-cutlass-dsl", "torch", "apache-tvm-ffi")


Runner = Callable[[Sequence[str]], Optional[str]]


def _run(cmd: Sequence[str]) -> Optional[str]:
    """stdout of `cmd`, or None if it is missing, fails or takes longer than the limit."""
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def _gpus(which: Callable[[str], Optional[str]], run: Runner) -> Tuple[Tuple[Gpu, ...], list[Check]]:
    from tiletune.core.archs import arch_from_gpu_name, normalize_arch

    smi = which("nvidia-smi")
    if smi is None:
        return (), [Check("GPU", False, note="nvidia-smi not on PATH: no NVIDIA GPU or driver visible"),
                    Check("NVIDIA driver", False, note="needs nvidia-smi")]
    out = run([smi, "--query-gpu=index,name,driver_version,memory.total,compute_cap",
               "--format=csv,noheader,nounits"])
    with_cc = out is not None
    if out is None:  # drivers before 510 have no compute_cap field
        out = run([smi, "--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader,nounits"])
    if not out or not out.strip():
        return (), [Check("GPU", False, note="nvidia-smi is present but listed no GPU (or failed)"),
                    Check("NVIDIA driver", False, note="nvidia-smi failed")]
    gpus: list[Gpu] = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        cc = parts[4] if with_cc and len(parts) > 4 and parts[4] not in ("", "[N/A]") else None
        mem = int(parts[3]) if parts[3].isdigit() else None
        arch = (normalize_arch(cc) if cc else None) or arch_from_gpu_name(parts[1])
        gpus.append(Gpu(int(parts[0]) if parts[0].isdigit() else len(gpus), parts[1], parts[2] or None, mem, cc, arch))
    checks = [Check("GPU", bool(gpus), "; ".join(f"{g.index}: {g.name} ({g.memory_mib} MiB, {g.arch or 'arch unknown'})" for g in gpus)
                    if gpus else None, None if gpus else "nvidia-smi output not understood")]
    drivers = sorted({g.driver for g in gpus if g.driver})
    checks.append(Check("NVIDIA driver", bool(drivers), ", ".join(drivers) or None))
    banner = run([smi]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", banner)
    checks.append(Check("CUDA (driver supports up to)", m is not None, m.group(1) if m else None,
                        None if m else "not in nvidia-smi's banner"))
    return tuple(gpus), checks


def _nvcc(which: Callable[[str], Optional[str]], run: Runner) -> Check:
    path = which("nvcc")
    if path is None:
        return Check("nvcc", False, note="not on PATH (needed only for `model --exact` and reproducers)")
    out = run([path, "--version"]) or ""
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return Check("nvcc", True, m.group(2) if m else "version unknown", path)


def _package_version(name: str) -> Optional[str]:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_cuda() -> Optional[str]:
    """The CUDA runtime torch was built for, read from torch/version.py without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        try:
            text = (Path(loc) / "version.py").read_text(errors="replace")
        except OSError:
            continue
        m = re.search(r"^cuda\s*(?::\s*[\w\[\], ]+)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", text, re.M)
        if m:
            return m.group(1) or m.group(2) or None
    return None


def _packages() -> list[Check]:
    checks = []
    for name in PACKAGES:
        v = _package_version(name)
        note = None
        if v is None:
            note = {"flashinfer-python": "not installed: inspect/report still work from files",
                    "torch": "not installed: needed only by `retry`",
                    "nvidia-cutlass": "not installed: reproducers use FlashInfer's bundled CUTLASS when present"}.get(name)
        checks.append(Check(name, v is not None, v, note))
    cu = _torch_cuda()
    if _package_version("torch") is not None:
        checks.append(Check("CUDA runtime (torch build)", cu is not None, cu, None if cu else "CPU-only torch build"))
    return checks


def _workspaces(env: Mapping[str, str], home: Path) -> Tuple[Tuple[Workspace, ...], Check]:
    from tiletune.readers.jit_workspace import find_workspaces, workspace_identity

    base = Path(env["FLASHINFER_WORKSPACE_BASE"]).expanduser() if env.get("FLASHINFER_WORKSPACE_BASE") else home
    cache = base / ".cache" / "flashinfer"
    found = []
    for ws in find_workspaces(cache, max_depth=2) if cache.is_dir() else []:
        ident = workspace_identity(ws)
        built: list[str] = []
        not_built: list[str] = []
        ops = ws / "cached_ops"
        try:
            mods = sorted(p for p in ops.iterdir() if p.is_dir() and p.name != "tmp") if ops.is_dir() else []
        except OSError:
            mods = []
        for m in mods:
            (built if (m / f"{m.name}.so").is_file() else not_built).append(m.name)
        found.append(Workspace(str(ws), ident.version if ident else None, ws.name, ident.arch if ident else None,
                               tuple(built), tuple(not_built), (ws / "flashinfer_jit.log").is_file()))
    label = "FlashInfer JIT workspaces"
    if found:
        return tuple(found), Check(label, True, f"{len(found)} under {cache}")
    return (), Check(label, False, note=f"none under {cache}" + ("" if env.get("FLASHINFER_WORKSPACE_BASE") else
                                                                  " (FLASHINFER_WORKSPACE_BASE not set)"))


def _caches(env: Mapping[str, str], home: Path) -> Tuple[Tuple[str, ...], Tuple[str, ...], Check]:
    from tiletune.readers.discover import discover

    d = discover(env=env, home=home)
    paths = tuple(str(p) for p in d.paths)
    if paths:
        return paths, tuple(d.searched), Check("autotune caches / logs / blocklists", True, f"{len(paths)} place(s)")
    return (), tuple(d.searched), Check("autotune caches / logs / blocklists", False, note=f"none in the {len(d.searched)} default places")


def collect(env: Optional[Mapping[str, str]] = None, home: Optional[Path] = None,
            which: Callable[[str], Optional[str]] = shutil.which, run: Runner = _run) -> DoctorReport:
    """Look at this machine. `env`/`home`/`which`/`run` default to the real ones (tests pass their own)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    gpus, gpu_checks = _gpus(which, run)
    checks = list(gpu_checks)
    checks.append(_nvcc(which, run))
    checks += _packages()
    workspaces, ws_check = _workspaces(env, home)
    checks.append(ws_check)
    caches, searched, cache_check = _caches(env, home)
    checks.append(cache_check)
    return DoctorReport(tuple(checks), gpus, workspaces, caches, searched)
