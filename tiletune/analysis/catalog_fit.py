"""What the shared-memory model says of a catalog's tile on its arch, for `tiletune catalog`.

A catalog lists what a release instantiates; whether a tile can run is another fact. SM120's
MXFP8 tactics 6-9 (256x128x128 and 128x256x128 at StageCount<2>) are in every 0.6.11+ list and
fail at initialize on every SM12x part (111,616 B > 101,376 B): the model computes that from the
tile, its stage count, the dtype and the arch, with no problem size. `model_failure` is the
`catalogs.listing.Judge` the command passes: the verdict when the model says the tile does not
build or overflows, else None (fits, or not modelled). Labelled "(model)" where shown.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tiletune.core.errors import TiletuneError
from tiletune.core.records import TileConfig
from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE


def _dtype(op: str, variant: Mapping[str, Any]) -> Optional[str]:
    """The operand dtype the model judges a list's tiles with; None: not judged. Only the dense
    GEMMs are judged: their stage counts are what FlashInfer's own CUTLASS computes (the model is
    checked against compiled kernel types, DESIGN.md); a fused-MoE grouped kernel's carve-out is
    not, so a catalog view does not call its tiles failures on the model's word."""
    return DENSE_GEMM_OPERAND_DTYPE.get(op)


def model_failure(config: TileConfig, arch: str, op: str, variant: Mapping[str, Any]) -> Optional[str]:
    """Why the model says `config` cannot run on `arch` (does not build, or overflows shared memory
    at initialize), with the bytes; None when it fits or the model cannot say."""
    from tiletune.model.smem import smem_fit

    dtype = _dtype(op, variant)
    if dtype is None:
        return None
    try:
        fit = smem_fit(config, arch, dtype)
    except TiletuneError:
        return None
    need, limit = fit.shared_storage_bytes, fit.limit_bytes
    if fit.verdict == "overflows_at_initialize" and need is not None and limit is not None:
        return f"overflows shared memory at initialize: {need:,} B > {limit:,} B (model)"
    if fit.verdict == "does_not_build":
        return "does not build: fewer than 2 pipeline stages fit (model)"
    return None


__all__ = ["model_failure"]
