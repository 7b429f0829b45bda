"""What every reader module provides, and the context they are given.

A reader module (flashinfer_v1.py, logs.py, ...) exposes:

    KIND: str                                     # e.g. "flashinfer-v1"; goes into TuningRecord.source_kind
    def sniff(path: Path, head: bytes) -> bool    # cheap: does this file/dir look like mine? (head = first 4 KiB, b"" for dirs)
    def read(path: Path, ctx: ReadContext) -> Iterator[TuningRecord | InputProblem]

`read` never raises for bad content: a file it cannot use at all yields one
`InputProblem(fatal=True)`; a bad key or line yields `InputProblem(fatal=False)` naming the file
and key/line and reading goes on. Every problem also says, by meaning and not by its wording,
whether it `loses_data` (something in the input was skipped or unusable: exit status 2) or is a
note that loses nothing, such as "version unknown" (`loses_data=False`: exit status stays 0).
It never opens an input for writing. Large inputs are streamed (logs line by line) so memory
stays flat.
"""

from __future__ import annotations

from typing import Optional, Union

from msgspec import Struct

from tiletune.core.archs import arch_from_gpu_name
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import Environment, InputProblem, TuningRecord

# What a reader yields: records, the problems of its input, and (text readers) events and input facts.
ReadItem = Union[TuningRecord, InputProblem, Event, InputFacts]


class ReadContext(Struct, frozen=True, gc=False):
    """User overrides that beat what files say (`--arch`, `--flashinfer-version`, `--gpu`)."""

    arch: Optional[str] = None
    flashinfer_version: Optional[str] = None
    gpu: Optional[str] = None
    moe_dtype: Optional[str] = None  # --dtype: the input dtype of fused-MoE keys that record none (decode narrows with it)

    def environment(
        self,
        *,
        flashinfer_version: Optional[str] = None,
        gpu: Optional[str] = None,
        arch: Optional[str] = None,
        arch_source: Optional[str] = None,
        version_source: Optional[str] = None,
        cuda_version: Optional[str] = None,
        metadata: tuple[tuple[str, str], ...] = (),
    ) -> Environment:
        """Combine what a source says with the overrides; record where each value came from.

        Precedence: override > explicit `arch` from the source (e.g. JIT path) > GPU-name table.
        """
        if self.flashinfer_version:
            flashinfer_version, version_source = self.flashinfer_version, "--flashinfer-version"
        gpu = self.gpu or gpu
        if self.arch:
            arch, arch_source = self.arch, "--arch"
        elif arch is None and gpu:
            arch = arch_from_gpu_name(gpu)
            arch_source = "gpu name" if arch else None
        return Environment(
            flashinfer_version=flashinfer_version,
            arch=arch,
            gpu=gpu,
            cuda_version=cuda_version,
            arch_source=arch_source,
            version_source=version_source if flashinfer_version else None,
            metadata=metadata,
        )
