"""What `tiletune doctor` found (frozen data only: commands/doctor.py collects it, formats/doctor.py
prints it). Apart from results.py so an inspect, which never builds these, does not create their
classes at start-up."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple


@dataclass(frozen=True)
class Check:
    """One line of the report: `found` False means looked for and absent (`note` says where/why)."""

    item: str
    found: bool
    value: Optional[str] = None
    note: Optional[str] = None


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    driver: Optional[str]
    memory_mib: Optional[int]
    compute_capability: Optional[str]
    arch: Optional[str]  # tiletune's name for it (sm90, sm120 ...), from compute capability or name


@dataclass(frozen=True)
class Workspace:
    """A FlashInfer JIT workspace directory (`<cache>/<version>/<arch>/`), listed without reading files."""

    path: str
    flashinfer_version: Optional[str]
    arch_dir: str
    arch: Optional[str]
    modules_built: Tuple[str, ...]
    modules_not_built: Tuple[str, ...]
    has_log: bool


@dataclass(frozen=True)
class DoctorReport:
    checks: Tuple[Check, ...]
    gpus: Tuple[Gpu, ...] = ()
    workspaces: Tuple[Workspace, ...] = ()
    caches: Tuple[str, ...] = ()
    searched: Tuple[str, ...] = field(default_factory=tuple)


__all__ = ["Check", "DoctorReport", "Gpu", "Workspace"]
