"""The CUTLASS toolchain retry and `model --query` build with: where CUTLASS headers are (FlashInfer's bundled copy,
nvidia-cutlass's, or TILETUNE_CUTLASS_DIR), nvcc and its version, and where kernels/ sits."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import List, Optional

from msgspec import Struct

from tiletune.core.errors import TunerError

KERNELS_DIR_ENV = "TILETUNE_KERNELS_DIR"


CUTLASS_DIR_ENV = "TILETUNE_CUTLASS_DIR"


def kernels_dir() -> Path:
    """Where the kernels/ sources are: $TILETUNE_KERNELS_DIR when set; else the checkout's kernels/
    (a source tree or an editable install: developers edit them there, so it comes first); else the
    copy a built wheel carries as tiletune/_kernels (setup.py puts it there)."""
    env = os.environ.get(KERNELS_DIR_ENV)
    package = Path(__file__).resolve().parents[1]
    candidates = [Path(env)] if env else [package.parent / "kernels", package / "_kernels"]
    for d in candidates:
        if (d / "tt_common.hpp").is_file():
            return d
    raise TunerError(
        f"{' or '.join(map(str, candidates))}: kernels/ reproducer sources not found "
        f"(set {KERNELS_DIR_ENV} to the folder holding tt_common.hpp)"
    )


class CutlassHeaders(Struct, frozen=True, gc=False):
    """A CUTLASS include tree and where it came from."""

    include: Path  # holds cutlass/ and cute/
    util_include: Optional[Path]  # tools/util/include (cutlass/util/packed_stride.hpp)
    version: str  # from cutlass/version.h, e.g. "4.5.0"
    origin: str  # "TILETUNE_CUTLASS_DIR", "checkout .cutlass/", "flashinfer <ver>", "nvidia-cutlass"


def _read_version(include: Path) -> Optional[str]:
    try:
        text = (include / "cutlass" / "version.h").read_text(errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define\s+CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return None
    return ".".join(p.group(1) for p in parts if p)


def _headers_at(root: Path, origin: str) -> Optional[CutlassHeaders]:
    """CUTLASS tree rooted at `root` (holding include/ and maybe tools/util/include)."""
    include = root / "include"
    version = _read_version(include)
    if version is None:
        return None
    util = root / "tools" / "util" / "include"
    return CutlassHeaders(include, util if util.is_dir() else None, version, origin)


def _package_dir(name: str) -> Optional[Path]:
    """Folder of an installed package, found without importing it (flashinfer imports torch)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def cutlass_candidates() -> List[CutlassHeaders]:
    """Every CUTLASS tree found, in the order they are preferred."""
    found: List[CutlassHeaders] = []
    env = os.environ.get(CUTLASS_DIR_ENV)
    if env:
        h = _headers_at(Path(env), CUTLASS_DIR_ENV)
        if h is None:
            raise TunerError(f"{env}: ${CUTLASS_DIR_ENV} has no include/cutlass/version.h")
        found.append(h)
    checkout = Path(__file__).resolve().parents[2] / ".cutlass"
    h = _headers_at(checkout, "checkout .cutlass/")
    if h:
        found.append(h)
    fi = _package_dir("flashinfer")
    if fi:
        h = _headers_at(fi / "data" / "cutlass", "flashinfer package (flashinfer/data/cutlass)")
        if h:
            found.append(h)
    cl = _package_dir("cutlass_library")
    if cl:
        h = _headers_at(cl / "source", "nvidia-cutlass wheel (cutlass_library/source)")
        if h:
            found.append(h)
    return found


def find_cutlass() -> CutlassHeaders:
    """The CUTLASS headers to build with; TunerError naming what was looked for if none."""
    found = cutlass_candidates()
    if not found:
        raise TunerError(
            "no CUTLASS headers found: in a tiletune checkout run kernels/get_cutlass.sh (FlashInfer's bundled CUTLASS "
            f"into .cutlass/), or set {CUTLASS_DIR_ENV} to a CUTLASS tree, or install flashinfer-python (its "
            "flashinfer/data/cutlass) or nvidia-cutlass"
        )
    return found[0]


def nvcc_path() -> Optional[str]:
    return shutil.which("nvcc")


def nvcc_version() -> Optional[str]:
    exe = nvcc_path()
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release\s+([\d.]+),\s*V([\d.]+)", out)
    return m.group(2) if m else None
