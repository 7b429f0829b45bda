"""What a FlashInfer JIT workspace path says: `.../flashinfer/<version>/<arch>/` -> version, arch.

Its own module because two readers need it: the workspace reader (jit_workspace.py) and the log
reader (logs.py, for `<ws>/flashinfer_jit.log`); the workspace reader also reads that log, so
the path rule cannot live in either without an import cycle.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Tuple

from msgspec import Struct

from tiletune.core.archs import normalize_arch

_VERSION_DIR = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[.+\-]?[A-Za-z0-9.+\-]*)?")
_ARCH_DIR = re.compile(r"\d{2,3}[a-z]?(?:_\d{2,3}[a-z]?)*")


class WorkspaceIdentity(Struct, frozen=True, gc=False):
    """What a workspace path says: FlashInfer version, the normalised arch (None if several)."""

    version: str
    arch_dir: str
    archs: Tuple[str, ...]

    @property
    def arch(self) -> Optional[str]:
        return self.archs[0] if len(self.archs) == 1 else None


def workspace_identity(ws: Path) -> Optional[WorkspaceIdentity]:
    """`.../<version>/<arch>` -> identity, or None when the path does not have that shape."""
    arch_dir, version = ws.name, ws.parent.name
    if not _ARCH_DIR.fullmatch(arch_dir) or not _VERSION_DIR.fullmatch(version):
        return None
    archs = tuple(a for a in (normalize_arch(p) for p in arch_dir.split("_")) if a)
    return WorkspaceIdentity(version=version, arch_dir=arch_dir, archs=archs)


_SLOT = re.compile(r"rank-(\d+)")


def slot_rank(path: Path) -> Optional[str]:
    """The rank of a per-rank FlashInfer workspace slot (`.../flashinfer/rank-<r>/...`, TensorRT-LLM's
    TRTLLM_CACHE_DIR layout): "rank<r>", or None when the path is not inside one."""
    for p in path.parents:
        m = _SLOT.fullmatch(p.name)
        if m and p.parent.name == "flashinfer":
            return f"rank{m.group(1)}"
    return None
