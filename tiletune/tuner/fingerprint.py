"""The environment fingerprint recorded with every attempt, and the id resume compares.

Collected in the parent without importing torch (CPU-only installs have none, and importing it
costs seconds): GPU name, compute capability, clocks and driver from `nvidia-smi`; nvcc from
`nvcc --version`; torch / flashinfer / CUTLASS versions from installed package metadata; the
CUDA runtime from torch's local version tag (`2.11.0+cu130` -> 13.0). Clocks (max and current SM
clock, MHz) and the enforced power limit (W) are recorded because a GEMM's time depends on them:
a power-capped GPU runs dense GEMMs far below its max clock (the H200 at 700 W: 1365-1500 MHz
against 1980 MHz max, bench/h200_clocks). The child adds what only
a CUDA context can say (SM count, torch.version.cuda) to its own result, and the engine merges
it into the attempt.

`env_id` hashes the fields that change what a kernel does (GPU, compute capability, driver,
CUDA, nvcc, library versions; not clocks), so a rerun resumes in the same environment and
`--changed-env` finds failures recorded under a different one.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from importlib import metadata
from typing import Any, Dict, Mapping, Optional

# Fields that identify an environment for resume / --changed-env (clocks and SM count are
# recorded but do not make a different environment).
IDENTITY_FIELDS = (
    "gpu",
    "compute_capability",
    "driver",
    "cuda_runtime",
    "nvcc",
    "torch",
    "flashinfer",
    "cutlass",
)

_PACKAGES = {
    "torch": ("torch",),
    "flashinfer": ("flashinfer-python", "flashinfer"),
    "cutlass": ("nvidia-cutlass", "nvidia-cutlass-dsl"),
    "tvm_ffi": ("apache-tvm-ffi",),
}


def collect(*, gpu_index: int = 0) -> Dict[str, Any]:
    """Fingerprint of this machine for GPU `gpu_index`; unknown values are None."""
    fp: Dict[str, Any] = {k: None for k in IDENTITY_FIELDS}
    fp.update(_nvidia_smi(gpu_index))
    fp["nvcc"] = _nvcc_version()
    for name, dists in _PACKAGES.items():
        fp[name] = _package_version(dists)
    torch_version, torch_cuda = _torch_version_file()
    if torch_version:  # torch/version.py has the local tag (+cu130) the dist metadata may lack
        fp["torch"] = torch_version
    fp["cuda_runtime"] = torch_cuda or _cuda_from_torch_version(fp.get("torch"))
    return fp


def _torch_version_file() -> tuple:
    """(__version__, cuda) read from torch/version.py as text: no `import torch` in the parent."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None, None
    if spec is None or not spec.submodule_search_locations:
        return None, None
    for loc in spec.submodule_search_locations:
        try:
            text = open(f"{loc}/version.py", encoding="utf-8").read()
        except OSError:
            continue
        v = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        c = re.search(r"^cuda\s*(?::\s*[^=]+)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        return (v.group(1) if v else None), (c.group(1) if c else None)
    return None, None


def same_value(a: Any, b: Any) -> bool:
    """Equal, or the same version apart from a local tag ('2.11.0' vs '2.11.0+cu130')."""
    sa, sb = str(a), str(b)
    return sa == sb or sa.split("+")[0] == sb.split("+")[0]


def env_id(fp: Mapping[str, Any]) -> str:
    """Short stable hash of the identity fields of a fingerprint."""
    ident = {k: fp.get(k) for k in IDENTITY_FIELDS}
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> Dict[str, tuple]:
    """Identity fields known in both fingerprints that differ: {field: (old, new)}."""
    out = {}
    for k in IDENTITY_FIELDS:
        a, b = old.get(k), new.get(k)
        if a is not None and b is not None and not same_value(a, b):
            out[k] = (a, b)
    return out


def _nvidia_smi(index: int) -> Dict[str, Any]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    base = "name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,memory.total"
    parts = _smi_query(exe, base + ",power.limit", index) or _smi_query(exe, base, index)  # old smi: no power.limit
    if parts is None or len(parts) < 7:
        return {}
    return {
        "gpu": parts[0],
        "compute_capability": parts[1],
        "driver": parts[2],
        "clock_max_sm_mhz": _int(parts[3]),
        "clock_max_mem_mhz": _int(parts[4]),
        "clock_sm_mhz": _int(parts[5]),
        "memory_total_mib": _int(parts[6]),
        "power_limit_w": _float(parts[7]) if len(parts) > 7 else None,
    }


def _smi_query(exe: str, fields: str, index: int) -> Optional[list]:
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={fields}", "--format=csv,noheader,nounits", f"--id={index}"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return [p.strip() for p in out.stdout.strip().splitlines()[0].split(",")]


def gpu_count() -> int:
    """How many GPUs nvidia-smi lists (0 when there is no nvidia-smi or it fails)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return 0
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def _nvcc_version() -> Optional[str]:
    exe = shutil.which("nvcc")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release [\d.]+, V([\d.]+)", out.stdout)
    return m.group(1) if m else None


def _package_version(dists: tuple) -> Optional[str]:
    for d in dists:
        try:
            return metadata.version(d)
        except metadata.PackageNotFoundError:
            continue
    return None


def _cuda_from_torch_version(v: Optional[str]) -> Optional[str]:
    """'2.11.0+cu130' -> '13.0'; '2.4.0+cu121' -> '12.1'; CPU builds and unknown -> None."""
    if not v:
        return None
    m = re.search(r"\+cu(\d+)(\d)$", v)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _float(s: str) -> Optional[float]:
    try:
        return float(s)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def _int(s: str) -> Optional[int]:
    try:
        return int(float(s))
    except ValueError:
        return None
