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

from tiletune.analysis.doctor import Check, DoctorReport, FlashInferMetadata, Gpu, Workspace

SUBPROCESS_TIMEOUT_S = 10.0
# importing torch and flashinfer in the child that asks FlashInfer for its metadata takes seconds
METADATA_TIMEOUT_S = 120.0

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


_METADATA_MARK = "TILETUNE_FLASHINFER_METADATA="
# Run in a child (doctor itself never imports torch or flashinfer): the installed release's own
# `_collect_metadata()`, the values its load_configs compares a cache's `_metadata` with.
_METADATA_CHILD = (
    "import json\n"
    "try:\n"
    "    from flashinfer.autotuner.autotuner import _collect_metadata\n"
    "except ImportError:\n"
    "    from flashinfer.autotuner import _collect_metadata\n"
    "import flashinfer\n"
    "print(" + repr(_METADATA_MARK) + " + json.dumps({'release': getattr(flashinfer, '__version__', None),"
    " 'metadata': _collect_metadata()}))\n"
)


def _run_python(cmd: Sequence[str]) -> Optional[str]:
    """stdout of a Python child with the longer limit importing torch needs; None on failure."""
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=METADATA_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def _first_gpu_name(gpus: Sequence[Gpu], env: Mapping[str, str]) -> Optional[str]:
    """The GPU torch.cuda.current_device() names in a fresh process: the first visible one."""
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        first = visible.split(",")[0].strip()
        if not first.isdigit():  # a UUID or MIG name: which GPU it is, nvidia-smi's index cannot say
            return None
        gpus = [g for g in gpus if g.index == int(first)]
    return gpus[0].name if gpus else None


def flashinfer_metadata(gpus: Sequence[Gpu], env: Mapping[str, str], run_python: Runner,
                        python: Optional[str] = None) -> Optional[FlashInferMetadata]:
    """What FlashInfer would write into (and compare with) a cache's `_metadata` here. `python`: the
    interpreter of the environment that runs FlashInfer (a server's venv), default this one."""
    import json
    import sys

    release = _package_version("flashinfer-python") if python is None else "(asked)"
    if release is not None:
        out = run_python([python or sys.executable, "-c", _METADATA_CHILD]) or ""
        line = next((x for x in out.splitlines() if x.startswith(_METADATA_MARK)), None)
        if line is not None:
            try:
                got = json.loads(line[len(_METADATA_MARK):])
                meta = {str(k): (None if v is None else str(v)) for k, v in dict(got["metadata"]).items()}
            except (ValueError, KeyError, TypeError):
                meta = None
            if meta is not None:
                rel = got.get("release") or (None if python else release)
                where = f" run by {python}" if python else " on this host"
                said = tuple((k, f"FlashInfer {rel}'s own _collect_metadata(){where}") for k in meta)
                return FlashInferMetadata(rel, tuple(meta.items()), said, "flashinfer")
        note = ("FlashInfer's _collect_metadata() could not be run" + (f" by {python}" if python else " here")
                + " (import failed or timed out)")
        if python:
            release = None
    else:
        note = "flashinfer-python is not installed here"
    # Inferred without FlashInfer: the same sources its _collect_metadata reads, where a package says them.
    values: dict = {}
    basis: dict = {}
    if release:
        values["flashinfer_version"], basis["flashinfer_version"] = release, "package metadata of flashinfer-python"
    if _package_version("torch") is not None:
        cu = _torch_cuda()
        values["cuda_version"] = cu or "unknown"  # FlashInfer records "unknown" for a CPU-only torch
        basis["cuda_version"] = "torch/version.py (torch.version.cuda" + ("" if cu else ": None, recorded as 'unknown'") + ")"
    cublas = sorted((d for d in _distributions() if d.startswith("nvidia-cublas")), reverse=True)
    if cublas:
        v = _package_version(cublas[0]) or ""
        values["cublas_version"] = ".".join(v.split(".")[:3])
        basis["cublas_version"] = (f"package {cublas[0]} (FlashInfer reads the loaded libcublas first: "
                                   "a library on LD_LIBRARY_PATH may say otherwise)")
    frontend = _package_version("nvidia-cudnn-frontend")
    values["cudnn_frontend_version"] = frontend or "unknown"
    basis["cudnn_frontend_version"] = ("package nvidia-cudnn-frontend" if frontend
                                       else "nvidia-cudnn-frontend not installed: FlashInfer records 'unknown'")
    gpu = _first_gpu_name(gpus, env)
    if gpu:
        values["gpu"], basis["gpu"] = gpu, "nvidia-smi's name of the first visible GPU (torch.cuda.get_device_name)"
    return FlashInferMetadata(release, tuple(values.items()), tuple(basis.items()), "inferred",
                              note + ": values inferred from package metadata and nvidia-smi; "
                              "cudnn_version and cutlass_dsl_version need FlashInfer itself")


def _distributions() -> list[str]:
    names = []
    for d in importlib.metadata.distributions():
        name = (d.metadata["Name"] or "").lower().replace("_", "-")
        if name:
            names.append(name)
    return names


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


# environment variables worth a ticket: what steers FlashInfer's autotuner, JIT and logs, and the servers
VARIABLE_PREFIXES = ("FLASHINFER_", "TLLM_", "VLLM_", "SGLANG_", "TILETUNE_")
VARIABLE_NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST")
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.I)


def variables(env: Mapping[str, str]) -> Tuple[Tuple[str, str], ...]:
    """(name, value) of the variables a ticket needs, sorted; values of secret-looking names hidden."""
    out = []
    for name in sorted(env):
        if name.startswith(VARIABLE_PREFIXES) or name in VARIABLE_NAMES:
            value = env[name]
            out.append((name, "(set; value hidden: the name says it is a secret)" if _SECRET.search(name) else value))
    return tuple(out)


def _versions() -> list[Check]:
    import platform

    from tiletune import __version__

    return [Check("tiletune", True, __version__), Check("Python", True, platform.python_version()),
            Check("OS", True, platform.platform())]


def _cutlass() -> Tuple[Tuple[str, ...], Check]:
    """Where CUTLASS headers are (reproducers and `model --exact` build with the first)."""
    from tiletune.tuner.cutlass_toolchain import CUTLASS_DIR_ENV, cutlass_candidates

    found = tuple(f"CUTLASS {h.version} at {h.include} ({h.origin})" for h in cutlass_candidates())
    if found:
        return found, Check("CUTLASS headers", True, found[0] + (f"; {len(found) - 1} more" if len(found) > 1 else ""))
    return (), Check("CUTLASS headers", False, note=f"none: kernels/get_cutlass.sh in a checkout, or set {CUTLASS_DIR_ENV} "
                                                    "(needed only for reproducers and `model --exact`)")


def collect(env: Optional[Mapping[str, str]] = None, home: Optional[Path] = None,
            which: Callable[[str], Optional[str]] = shutil.which, run: Runner = _run,
            run_python: Runner = _run_python, python: Optional[str] = None) -> DoctorReport:
    """Look at this machine. `env`/`home`/`which`/`run`/`run_python` default to the real ones (tests pass their own)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    gpus, gpu_checks = _gpus(which, run)
    checks = [*_versions(), *gpu_checks]
    checks.append(_nvcc(which, run))
    cutlass, cutlass_check = _cutlass()
    checks.append(cutlass_check)
    checks += _packages()
    workspaces, ws_check = _workspaces(env, home)
    checks.append(ws_check)
    caches, searched, cache_check = _caches(env, home)
    checks.append(cache_check)
    import socket

    return DoctorReport(tuple(checks), gpus, workspaces, caches, searched, flashinfer_metadata(gpus, env, run_python, python),
                        socket.gethostname() or None, variables(env), cutlass)
