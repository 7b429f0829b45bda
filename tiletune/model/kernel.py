"""A kernel's identity as the time model needs it: schedule, cluster, stage policy, fp8 accumulation.

Owns turning what a caller or a catalog records (`TileConfig.mainloop_schedule` such as
"COOPERATIVE", "PINGPONG", "AUTO", "KernelTmaWarpSpecialized2SmSm100", `style`, `cluster`,
`stages`) plus the `--schedule` / `--fast-accum` options into one `Kernel`, and saying for each
part whether it was given or inferred (with the basis). Nothing here is measured or modelled.

Inferences, each labelled in `Kernel.basis`:
- "AUTO" / KernelScheduleAuto on SM90: CUTLASS's collective builder picks ping-pong for a 64-row
  tile and cooperative otherwise (sm90_gmma_builder.inl, CUDA >= 12.1, TMA-compatible operands).
- SM100 "AUTO": a 2-SM (CTA-pair) MMA when the cluster's M is even, else 1-SM.
- fp8 on SM90 with accumulation unstated: fast accumulation, the variant FlashInfer 0.7.2's SM90
  TMA warp-specialised FP8 kernels instantiate (`...CooperativeFP8FastAccum` in its MoE launcher).
- Blockwise-scaled FP8 (per-128-K fp32 scales applied in software, DeepSeek-style 1x128 / 128x128): decoded
  from the schedule name (CUTLASS `...Blockwise...`, `...GroupwiseScaling...`, SM90 `...FP8BlockScaledAccum`)
  or passed as `blockwise=True`. A bare `KernelScheduleSm120Blockwise` resolves to cooperative: CUTLASS's
  SM120 blockwise builder selects the cooperative kernel for it (sglang PR #20887 describes the same).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

from tiletune.core.errors import ModelError
from tiletune.core.records import TileConfig

# Canonical schedules. "cooperative": two consumer warpgroups split the tile's M and work on the
# same tile; "pingpong": two consumer warpgroups each own a whole tile and take turns in the MMA
# loop, one's epilogue overlapping the other's mainloop; "warpspecialized": CUTLASS's basic
# (non-persistent) TMA warp-specialised kernel; "single-warpgroup": one consumer warpgroup;
# "1sm" / "2sm": SM100 tcgen05 MMA on one SM or a CTA pair; "sm80": Ampere-style multistage
# mma.sync kernels (also what SM120 runs).
SCHEDULES = ("cooperative", "pingpong", "warpspecialized", "single-warpgroup", "1sm", "2sm", "sm80")
FP8_LIKE = frozenset({"fp8", "int8"})


class Kernel(NamedTuple):
    """The kernel the model times. `basis` says, per inferred part, why (empty: everything given)."""

    schedule: str
    cluster: Tuple[int, int, int]
    stages: Optional[int]  # explicit StageCount<N>; None = the builder's auto carveout
    fast_accum: Optional[bool]  # fp8 on SM90 only; None where it does not apply
    epilogue: str
    basis: Tuple[str, ...] = ()
    blockwise: bool = False  # fp8 with per-128-K fp32 scales promoted in software (mainloop.py mechanism 12)

    def label(self) -> str:
        s = self.schedule
        if self.cluster[:2] != (1, 1):
            s += f" cluster {self.cluster[0]}x{self.cluster[1]}"
        if self.stages is not None:
            s += f" {self.stages} stages"
        if self.fast_accum is not None:
            s += " fast-accum" if self.fast_accum else " fp32-promoted accum"
        if self.blockwise:
            s += " blockwise-scaled"
        return s


def normalize_schedule(text: Optional[str]) -> Optional[str]:
    """'COOPERATIVE' / 'KernelTmaWarpSpecializedCooperativeFP8FastAccum' / 'ping-pong' -> canonical;
    None for "AUTO", empty or unknown-but-automatic text (the caller infers)."""
    if not text:
        return None
    t = text.strip().lower().replace("-", "").replace("_", "")
    if t in ("auto", "kernelscheduleauto"):
        return None
    if t in ("kernelschedulesm120blockwise", "blockwise"):
        return "cooperative"  # CUTLASS's SM120 blockwise builder picks the cooperative kernel for it
    if "pingpong" in t:
        return "pingpong"
    if "cooperative" in t:
        return "cooperative"
    if "2sm" in t:
        return "2sm"
    if "1sm" in t:
        return "1sm"
    if "singlewarpgroup" in t:
        return "single-warpgroup"
    if t in ("sm80", "multistage", "cpasync"):
        return "sm80"
    if t in ("warpspecialized", "ws", "kerneltmawarpspecialized", "tmawarpspecialized"):
        return "warpspecialized"
    raise ModelError(f"schedule {text!r}: choose one of {', '.join(SCHEDULES)} (or auto)")


def blockwise_from_text(text: Optional[str]) -> bool:
    """True when a CUTLASS schedule name says the FP8 scales are applied per K block in software."""
    t = (text or "").lower().replace("_", "")
    return "blockwise" in t or "groupwise" in t or "blockscaledaccum" in t


def fast_accum_from_text(text: Optional[str]) -> Optional[bool]:
    """True when a CUTLASS schedule name says FP8FastAccum, else None (not stated)."""
    if text and "fastaccum" in text.lower().replace("_", ""):
        return True
    return None


def resolve(config: TileConfig, arch: str, dtype: str, *, schedule: Optional[str] = None,
            fast_accum: Optional[bool] = None, blockwise: Optional[bool] = None) -> Kernel:
    """The kernel `config` stands for on `arch` in `dtype`; `schedule` / `fast_accum` override the config.

    Raises ModelError for a schedule the tile cannot have (cooperative needs tile M >= 128)."""
    basis = []
    bm = config.tile[0]
    family = "sm100" if arch in ("sm100", "sm103", "sm110") else ("sm120" if arch in ("sm120", "sm121") else arch)
    given = normalize_schedule(schedule) if schedule else None
    if given is None and config.style == "sm80":
        given = "sm80"
    if given is None:
        given = normalize_schedule(config.mainloop_schedule)
    if given is None:
        if family == "sm90":
            given = "pingpong" if bm == 64 else "cooperative"
            basis.append(f"schedule {given}: inferred (CUTLASS's SM90 builder picks ping-pong for a 64-row tile, "
                         f"cooperative otherwise; the schedule was not stated)")
        elif family == "sm100":
            given = "2sm" if config.cluster[0] % 2 == 0 else "1sm"
            basis.append(f"schedule {given}: inferred from cluster M {config.cluster[0]} (not stated)")
        elif family == "sm120":
            given = "cooperative"
            basis.append("schedule cooperative: inferred (SM120 TMA kernels; not stated)")
        else:
            given = "sm80"
    if given == "cooperative" and family == "sm90" and bm < 128:
        raise ModelError(f"cooperative schedule needs tile M >= 128 on SM90 (tile M is {bm}); use pingpong")
    bw = blockwise if blockwise is not None else (blockwise_from_text(config.mainloop_schedule)
                                                  or blockwise_from_text(schedule))
    if bw and dtype not in FP8_LIKE:
        bw = False
        basis.append(f"blockwise scaling applies to fp8 only: ignored for {dtype}")
    fa: Optional[bool] = None
    if bw:
        pass  # the blockwise mainloop promotes every 128 K itself (mainloop.py mechanism 12)
    elif dtype in FP8_LIKE and family == "sm90" and given != "sm80":
        fa = fast_accum if fast_accum is not None else fast_accum_from_text(config.mainloop_schedule)
        if fa is None:
            fa = True
            basis.append("fp8 fast accumulation: assumed (FlashInfer 0.7.2's SM90 FP8 TMA kernels use the "
                         "FP8FastAccum schedules); pass --no-fast-accum for the fp32-promoted mainloop")
    elif fast_accum is not None and dtype in FP8_LIKE:
        basis.append("fast accumulation only changes SM90 fp8 kernels: ignored here")
    epilogue = (config.epilogue_schedule or "auto").lower()
    cl = tuple(config.cluster)  # a list when the config came from JSON
    return Kernel(given, (cl[0], cl[1], cl[2]), config.stages, fa, epilogue, tuple(basis), bw)
