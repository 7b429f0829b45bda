"""What `tiletune doctor` found (frozen data only: commands/doctor.py collects it, formats/doctor.py
prints it). Apart from results.py so an inspect, which never builds these, does not create their
classes at start-up."""

from __future__ import annotations

from typing import Optional, Tuple

from msgspec import Struct, field


class Check(Struct, frozen=True, gc=False):
    """One line of the report: `found` False means looked for and absent (`note` says where/why)."""

    item: str
    found: bool
    value: Optional[str] = None
    note: Optional[str] = None


class Gpu(Struct, frozen=True, gc=False):
    index: int
    name: str
    driver: Optional[str]
    memory_mib: Optional[int]
    compute_capability: Optional[str]
    arch: Optional[str]  # tiletune's name for it (sm90, sm120 ...), from compute capability or name


class Workspace(Struct, frozen=True, gc=False):
    """A FlashInfer JIT workspace directory (`<cache>/<version>/<arch>/`), listed without reading files."""

    path: str
    flashinfer_version: Optional[str]
    arch_dir: str
    arch: Optional[str]
    modules_built: Tuple[str, ...]
    modules_not_built: Tuple[str, ...]
    has_log: bool


class DoctorReport(Struct, frozen=True, gc=False):
    checks: Tuple[Check, ...]
    gpus: Tuple[Gpu, ...] = ()
    workspaces: Tuple[Workspace, ...] = ()
    caches: Tuple[str, ...] = ()
    searched: Tuple[str, ...] = field(default_factory=tuple)


__all__ = ["Check", "DoctorReport", "Gpu", "Workspace"]
