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


class FlashInferMetadata(Struct, frozen=True, gc=False):
    """The `_metadata` FlashInfer writes into (and compares with) a cache on this machine.

    `source` "flashinfer": the installed release's own `_collect_metadata()`, run in a child
    process; "inferred": read from package metadata and nvidia-smi without FlashInfer (each
    field's `basis` says how; None where it cannot be inferred). `tiletune check --env` reads it.
    """

    release: Optional[str]
    values: Tuple[Tuple[str, Optional[str]], ...]
    basis: Tuple[Tuple[str, str], ...]
    source: str  # "flashinfer" or "inferred"
    note: Optional[str] = None


class DoctorReport(Struct, frozen=True, gc=False):
    checks: Tuple[Check, ...]
    gpus: Tuple[Gpu, ...] = ()
    workspaces: Tuple[Workspace, ...] = ()
    caches: Tuple[str, ...] = ()
    searched: Tuple[str, ...] = field(default_factory=tuple)
    flashinfer_metadata: Optional[FlashInferMetadata] = None
    host: Optional[str] = None
    # the environment variables that steer FlashInfer and the servers (FLASHINFER_*, TLLM_*, VLLM_*,
    # SGLANG_*, TILETUNE_*, CUDA_VISIBLE_DEVICES), sorted; a value whose name says secret is hidden
    variables: Tuple[Tuple[str, str], ...] = ()
    cutlass: Tuple[str, ...] = ()  # every CUTLASS header tree found, in the order the engine takes them


__all__ = ["Check", "DoctorReport", "FlashInferMetadata", "Gpu", "Workspace"]
