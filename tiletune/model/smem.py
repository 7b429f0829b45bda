"""Shared-memory fit of one CUTLASS tile: bytes per stage, stage count, kernel storage, verdict.

Owns the stage arithmetic of CUTLASS's collective builders, re-stated (not copied) from
`sm100_compute_stage_count_or_override_blockscaled` (SM100/SM120 block-scaled) and
`compute_stage_count_or_override` (SM90 GMMA), with the constants below. Covered:
- SM120/SM121 nvfp4, mxfp4, mxfp8 block-scaled, dense and grouped (ptr-array / MoE), BF16 output;
- SM100/SM103 nvfp4, mxfp4, mxfp8 block-scaled and fp8/bf16 dense, 1-SM and 2-SM (CTA pair) MMA;
- SM90 fp8/bf16 dense, cooperative and ping-pong.
Anything else returns verdict None plus a note (never a guess).

Verdicts: "fits"; "does_not_build" (the builder computes < 2 stages, or a fixed count leaves no
room for any stage: CUTLASS's static assertion); "overflows_at_initialize" (the type builds but
the kernel's SharedStorage exceeds the opt-in limit: cudaFuncSetAttribute fails inside
`GemmUniversalAdapter::initialize()`, "Error Internal"). Stage policies: "auto"
(StageCountAutoCarveout<sizeof(epilogue SharedStorage)>, what most FlashInfer runners use) or a
fixed StageCount<N> ("fixed:N"; FlashInfer's SM120 MXFP8 runner and its SM120 FP4 runner before
PR #3026 used StageCount<2>).

Units: bytes. Which CUTLASS each number assumes is in `SmemFit.cutlass_version`; `error_bytes`
says how far off the kernel total may be (0 where it was checked against compiled CUTLASS).
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Tuple

from msgspec import Struct

from tiletune.core.archs import normalize_arch
from tiletune.core.errors import ModelError
from tiletune.core.records import TileConfig
from tiletune.core.vocabulary import BITS, SCALE_VECTOR

SM120_LIMIT = 101_376  # cutlass::arch::sm120_smem_capacity_bytes (99 KiB)
SM90_LIMIT = 232_448  # sm90/sm100 opt-in limit (227 KiB)

# Scale-factor vector length (elements of K per scale byte) and smem bits per element.
SF_VEC = SCALE_VECTOR
SMEM_BITS = BITS
BLOCK_SCALED = frozenset(SF_VEC)

# --- SM120 constants (CUTLASS 4.5 as bundled by FlashInfer 0.7.2.post1; same values in 4.7) ---
# Mainloop pipeline barrier block, rounded to 128 B per stage by the builder.
SM120_PIPE_PER_STAGE = 128
# ReducedSmemCapacityBytes: the limit minus the CLC scheduler pipeline (3 stages) and 3 CLC
# responses (48 + 48 B); grouped kernels instead reserve a PipelineAsync<8> (128), two TMA
# descriptors (256) and a tensormap-ready pipeline (48): 101,376 - 432 = 100,944.
SM120_REDUCED = {False: SM120_LIMIT - 96, True: SM120_LIMIT - 432}
# sizeof(CollectiveEpilogue::SharedStorage) for BF16 D, EpilogueTileAuto: 9,216 B with C = void
# (compiled and printed: 8,704 tensor + pipeline, aligned); C = bf16 adds a 4,096 B C buffer.
SM120_EPI = {False: 9_216, True: 13_312}
# Kernel SharedStorage = stages x (A+B+SFA+SFB) + this: the mainloop barrier block (1 KiB, aligned)
# + the epilogue storage (+ 1 KiB tensormaps/pipelines for grouped kernels). Checked for 2..7 stages.
SM120_KERNEL_EXTRA = {(False, False): 10_240, (True, False): 11_264, (False, True): 14_336, (True, True): 15_360}

# --- SM100 constants (fitted to CUTLASS 4.7 builders compiled by the research note, 2.3) -------
# The exact KernelSmemCarveout (accumulator pipeline, CLC, TMEM bookkeeping) was not derived; the
# [C] stage counts bound ReducedCapacity to [223,744, 233,856); 1 KiB is taken.
SM100_REDUCED = SM90_LIMIT - 1_024
SM100_EPI = {128: 17_408, 256: 67_584}  # epilogue carveout, BF16 out, C = void, by MMA tile N (block-scaled)
# MMA N the table lacks: the carveout of the next larger N in it, an upper bound (the epilogue tile
# and its stages do not grow as N shrinks), so the stage count is a lower bound (an inference).
SM100_EPI_BOUND = ((128, 17_408), (256, 67_584))
# SM103 "ultra" NVFP4/MXFP4 kernels (tile K = 768, the builder's static assertion): A/B are staged
# in 128-byte K slices (256 fp4 elements), with separate scale-factor buffers holding a quarter
# (nvfp4, 16-vector) or half (mxfp4) of the tile's K each; every buffer has a 16 B pipeline block.
SM103_ULTRA_K = 768
SM103_SLICE_BYTES = 128
SM103_PIPE = 16
SM100_DENSE_EPI = 17_408  # fp8/bf16 dense kernels: the N=256 carveout above does not reproduce their 4 stages

# --- SM90 (sm90_gmma_builder): stage = round_up(A+B,128) + 16 B PipelineTmaAsync barriers -------
SM90_PIPE_PER_STAGE = 16


class SmemFit(Struct, frozen=True, gc=False):
    """Result of `smem_fit`. `verdict` None means "not modelled" (see notes). Bytes throughout."""

    arch: str
    dtype: str
    tile: Tuple[int, int, int]
    grouped: bool
    stage_policy: str  # "auto" | "fixed:N"
    stage_bytes: Optional[int]  # per stage, incl. the per-stage pipeline barriers the builder counts
    stages: Optional[int]
    shared_storage_bytes: Optional[int]  # the kernel's SharedStorageSize (what initialize() asks for)
    limit_bytes: Optional[int]
    verdict: Optional[str]  # "fits" | "does_not_build" | "overflows_at_initialize" | None
    epilogue_carveout_bytes: Optional[int] = None
    stage_budget_bytes: Optional[int] = None  # capacity left for stages after scheduler and epilogue
    error_bytes: Optional[int] = None  # +/- on shared_storage_bytes; None = unknown
    stage_k: Optional[int] = None  # K elements one pipeline stage holds, where less than the tile's K
    cutlass_version: str = ""
    kind: str = "model"
    notes: Tuple[str, ...] = ()

    @property
    def fits(self) -> Optional[bool]:
        return None if self.verdict is None else self.verdict == "fits"

    @property
    def margin_bytes(self) -> Optional[int]:
        if self.shared_storage_bytes is None or self.limit_bytes is None:
            return None
        return self.limit_bytes - self.shared_storage_bytes


def parse_stage_policy(policy: Optional[str], config: TileConfig) -> Optional[int]:
    """None/"auto"/"StageCountAutoCarveout" -> None (auto); "fixed:2"/"StageCount<2>"/"2" -> 2."""
    if config.stages is not None and policy in (None, "auto"):
        return int(config.stages)
    if policy is None:
        return None
    p = policy.strip().lower().replace(" ", "")
    if p in ("auto", "stagecountautocarveout", "autocarveout"):
        return None
    for prefix in ("fixed:", "stagecount<", "stages:", ""):
        if p.startswith(prefix):
            num = p[len(prefix):].rstrip(">")
            if num.isdigit() and int(num) > 0:
                return int(num)
    raise ModelError(f"stage policy {policy!r}: use 'auto' (StageCountAutoCarveout) or 'fixed:N' (StageCount<N>)")


def _verdict(stages: int, kernel: int, limit: int) -> str:
    if stages < 1 or (stages < 2):
        return "does_not_build"
    return "fits" if kernel <= limit else "overflows_at_initialize"


def smem_fit(config: TileConfig, arch: str, dtype: str, *, grouped: bool = False,
             stage_policy: Optional[str] = None, with_c: bool = False, two_sm: Optional[bool] = None) -> SmemFit:
    """Model the shared memory of `config` on `arch` for `dtype` (see the module docstring).

    `with_c`: the epilogue also loads a C operand (bf16); FlashInfer's GEMMs use C = void.
    `two_sm`: the kernel runs SM100's 2-SM (CTA-pair) MMA (the time model's resolved schedule);
    then a CTA tile of M <= 128 is one CTA's half of the pair's MMA and stages half of B, as a
    `mma_tile` twice its M would say. None: only `mma_tile` / a 256-row tile say so.
    Raises ModelError for impossible tiles (non-positive sizes, clusters SM120 cannot run,
    K not a multiple of the scale-factor atom) and dtypes the arch lacks.
    """
    try:
        return _smem_fit_cached(config, arch, dtype, grouped, stage_policy, with_c, two_sm)
    except TypeError:  # an unhashable config (e.g. a list tile): compute it without the memo
        return _smem_fit(config, arch, dtype, grouped, stage_policy, with_c, two_sm)


def _smem_fit(config: TileConfig, arch: str, dtype: str, grouped: bool, stage_policy: Optional[str],
              with_c: bool, two_sm: Optional[bool] = None) -> SmemFit:
    a = normalize_arch(arch) or arch
    bm, bn, bk = (int(v) for v in config.tile)
    if min(bm, bn, bk) <= 0:
        raise ModelError(f"tile {bm}x{bn}x{bk}: every dimension must be > 0")
    fixed = parse_stage_policy(stage_policy, config)
    policy = "auto" if fixed is None else f"fixed:{fixed}"
    base: dict[str, Any] = dict(arch=a, dtype=dtype, tile=(bm, bn, bk), grouped=grouped, stage_policy=policy)
    if a in ("sm120", "sm121"):
        return _sm120(config, dtype, grouped, fixed, with_c, base)
    if a == "sm103" and bk == SM103_ULTRA_K and dtype in ("nvfp4", "mxfp4"):
        return _sm103_ultra(config, dtype, grouped, fixed, base, two_sm)
    if a in ("sm100", "sm103"):
        return _sm100(config, dtype, grouped, fixed, base, two_sm)
    if a == "sm90":
        return _sm90(config, dtype, grouped, fixed, with_c, base)
    return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=None, verdict=None,
                   notes=(f"shared memory is not modelled for {a} (SM80-style multistage kernels)",))


# Memoised: the fit depends on the tile alone, not the problem, and a big cache models tens of
# thousands of problems with a few dozen tiles. SmemFit is frozen, so sharing it is safe.
_smem_fit_cached = functools.lru_cache(maxsize=4096)(_smem_fit)


# Public SM12x failure reports for the same (dtype, tile M x N, grouped, fixed stages): shown beside the model.
_PUBLIC_NOTES = {
    ("mxfp8", (256, 128), False, 2): "public report: flashinfer PR #3568 / #4013 report 111,616 B for this StageCount<2> "
                                     "tactic on SM12x (all four such tactics fail)",
    ("mxfp8", (128, 256), False, 2): "public report: flashinfer PR #3568 / #4013 report 111,616 B for this StageCount<2> "
                                     "tactic on SM12x (all four such tactics fail)",
    ("nvfp4", (128, 256), True, None): "public report: cutlass #3144 saw TRT-LLM's MoE CtaShape128x256x64B need 102,400 B "
                                       "on GB10; its fused MoE epilogue is larger than the BF16 epilogue modelled here",
}


def _check_block_scaled(dtype: str, arch: str, bk: int) -> None:
    atom = SF_VEC[dtype] * 4  # the 128x4 swizzled SF atom spans 4 scale bytes along K
    if bk % atom:
        raise ModelError(f"tile K {bk} is not a multiple of {atom} (the {dtype} scale-factor atom on {arch}); "
                         f"e.g. K=64 MXFP8 does not compile")


def _sf_bytes(rows: int, bk: int, dtype: str) -> int:
    return max(rows, 128) * bk // SF_VEC[dtype]  # SF tiles are allocated for at least 128 rows


def _sm120(config: TileConfig, dtype: str, grouped: bool, fixed: Optional[int], with_c: bool, base: dict) -> SmemFit:
    bm, bn, bk = base["tile"]
    if dtype not in BLOCK_SCALED:
        return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=SM120_LIMIT,
                       verdict=None, notes=(f"{dtype} on SM120 is not modelled: only the block-scaled nvfp4/mxfp4/mxfp8 "
                                            "builders are (bf16 runs SM80-style kernels there)",))
    if tuple(config.cluster) != (1, 1, 1):
        raise ModelError(f"cluster {'x'.join(map(str, config.cluster))}: SM120 runs only 1x1x1 clusters (no multicast)")
    _check_block_scaled(dtype, base["arch"], bk)
    bits = SMEM_BITS[dtype]
    data = bm * bk * bits // 8 + bn * bk * bits // 8 + _sf_bytes(bm, bk, dtype) + _sf_bytes(bn, bk, dtype)
    stage = data + SM120_PIPE_PER_STAGE
    epi = SM120_EPI[with_c]
    budget = SM120_REDUCED[grouped] - epi
    stages = fixed if fixed is not None else budget // stage
    kernel = stages * data + SM120_KERNEL_EXTRA[(grouped, with_c)]
    notes = ["BF16 output, C = " + ("bf16" if with_c else "void") + "; larger epilogues (fused MoE finalize, "
             "FP4 output with SF generation) need more and are not modelled (+4..17 KB seen publicly)"]
    if fixed is None and stages < 2:
        notes.append(f"StageCountAutoCarveout leaves {stages} stage(s) of {stage:,} B in {budget:,} B: the builder's "
                     "static assertion ('Stages set to value 2 or more') stops the build")
    if fixed is not None and kernel > SM120_LIMIT:
        notes.append(f"StageCount<{fixed}> is not checked at compile time on SM120 (SM90 kernel shell): the kernel "
                     f"builds and asks for {kernel:,} B > {SM120_LIMIT:,} B at initialize()")
    verdict = _verdict(stages, kernel, SM120_LIMIT)
    seen = _PUBLIC_NOTES.get((dtype, (bm, bn), grouped, fixed))
    if seen:
        notes.append(seen)
    if verdict == "does_not_build":
        kernel_out: Optional[int] = None
    else:
        kernel_out = kernel
    return SmemFit(**base, stage_bytes=stage, stages=stages, shared_storage_bytes=kernel_out, limit_bytes=SM120_LIMIT,
                   verdict=verdict, epilogue_carveout_bytes=epi, stage_budget_bytes=budget,
                   error_bytes=0 if not with_c or grouped else 1024,
                   cutlass_version="CUTLASS 4.5 (FlashInfer 0.7.2.post1 bundled; checked by compiling); same numbers as CUTLASS 4.7",
                   notes=tuple(notes))


def _sm100_mma(config: TileConfig, bm: int, bn: int, two_sm_kernel: Optional[bool] = None) -> Tuple[bool, int, int, int]:
    """(2-SM MMA?, CTA rows, MMA N, B rows each SM stages) of an SM100-family tile. 2-SM
    (cta_group::2) MMA: `tile` is per CTA and `mma_tile` spans the pair; a 256-row tile can only be
    a pair's MMA tile (1-SM UMMA has M <= 128); each SM of the pair stages half of B (the pair's
    MMA reads B from both CTAs' shared memory: PTX ISA tcgen05.mma .cta_group::2). A kernel known
    to run the 2-SM MMA (`two_sm_kernel`, e.g. cuBLAS's `..._2x1_2cta` names or a stated 2SM
    schedule) with a CTA tile of M <= 128 is the same case without `mma_tile`: before issue 26 such
    tiles were charged the whole B per CTA and kernels that ran in public were declared too big."""
    if config.mma_tile is not None and config.mma_tile[0] == 2 * bm:
        two_sm, cta_m, mma_n = True, bm, int(config.mma_tile[1])
    elif bm == 256:
        two_sm, cta_m, mma_n = True, 128, bn
    elif two_sm_kernel and bm <= 128:
        two_sm, cta_m, mma_n = True, bm, bn
    else:
        two_sm, cta_m, mma_n = False, bm, bn
    return two_sm, cta_m, mma_n, (mma_n // 2 if two_sm else mma_n)


def _sm100(config: TileConfig, dtype: str, grouped: bool, fixed: Optional[int], base: dict,
           two_sm_kernel: Optional[bool] = None) -> SmemFit:
    bm, bn, bk = base["tile"]
    if dtype not in BLOCK_SCALED and dtype not in ("fp8", "bf16", "fp16"):
        return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=SM90_LIMIT,
                       verdict=None, notes=(f"{dtype} on SM100 is not modelled",))
    two_sm, cta_m, mma_n, b_rows = _sm100_mma(config, bm, bn, two_sm_kernel)
    bits = SMEM_BITS[dtype]
    data = cta_m * bk * bits // 8 + b_rows * bk * bits // 8
    notes = []
    if dtype in BLOCK_SCALED:
        _check_block_scaled(dtype, base["arch"], bk)
        data += _sf_bytes(cta_m, bk, dtype) + _sf_bytes(mma_n, bk, dtype)
        epi = SM100_EPI.get(mma_n)
        if epi is None:
            bound = next(((n, e) for n, e in SM100_EPI_BOUND if mma_n <= n), None)
            if bound is not None:
                epi = bound[1]
                notes.append(f"epilogue carveout for MMA N={mma_n} not tabulated: the N<={bound[0]} figure ({epi:,} B) "
                             "is used as an upper bound, so the stage count is a lower bound (inferred)")
    else:
        epi = SM100_DENSE_EPI if mma_n <= 256 else None
    if epi is None:
        return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=SM90_LIMIT,
                       verdict=None, notes=(f"SM100 epilogue carveout for MMA N={mma_n} is not known to the model",))
    stage = data + 128
    budget = SM100_REDUCED - epi
    stages = fixed if fixed is not None else budget // stage
    kernel = stages * data + epi
    if fixed is not None and kernel > SM90_LIMIT and stages * data <= SM100_REDUCED:
        # A stated stage count that leaves no room for a staged (smem) epilogue: the kernel can only
        # exist with a direct-store epilogue (CUTLASS's NoSmem epilogues, hand-written tcgen05 kernels
        # such as learn-cuda's matmul_v4-v7, 7 stages of 32 KiB), so none is charged (inferred).
        notes.append(f"StageCount<{fixed}> x {data:,} B leaves no room for the {epi:,} B staged epilogue: a direct-store "
                     "(no-smem) epilogue is inferred, as a kernel with this stage count can only have that one")
        epi = 0
        kernel = stages * data
    if grouped:
        notes.append("grouped SM100 kernels reserve tensormaps too (a few hundred bytes more): not modelled")
    notes.append(("2-SM MMA (CTA pair): each SM stages half of B; " if two_sm else "1-SM MMA; ")
                 + "BF16 output, C = void; epilogue carveout taken from CUTLASS 4.7 builders (research note 2.3)")
    return SmemFit(**base, stage_bytes=stage, stages=stages,
                   shared_storage_bytes=kernel if stages >= 2 else None, limit_bytes=SM90_LIMIT,
                   verdict=_verdict(stages, kernel, SM90_LIMIT), epilogue_carveout_bytes=epi, stage_budget_bytes=budget,
                   error_bytes=0 if dtype in BLOCK_SCALED and not grouped else 2048,
                   cutlass_version="CUTLASS 4.7 (research note [C]); NVFP4 128x128x256 1-SM and 2-SM also match compiled CUTLASS 4.5",
                   notes=tuple(notes))


def _sm103_ultra(config: TileConfig, dtype: str, grouped: bool, fixed: Optional[int], base: dict,
                 two_sm_kernel: Optional[bool] = None) -> SmemFit:
    """SM103 block-scaled fp4 with K = 768 (`sm103_compute_stage_count_or_override_blockscaled`, re-stated)."""
    bm, bn, bk = base["tile"]
    _check_block_scaled(dtype, base["arch"], bk)
    two_sm, cta_m, mma_n, b_rows = _sm100_mma(config, bm, bn, two_sm_kernel)
    slice_k = SM103_SLICE_BYTES * 8 // SMEM_BITS[dtype]  # 256 fp4 elements of K per A/B buffer
    sf_buffers = 4 if SF_VEC[dtype] == 16 else 2
    sf = (cta_m + (256 if mma_n == 192 else mma_n)) * (bk // sf_buffers) // SF_VEC[dtype]
    ab = (cta_m + b_rows) * SM103_SLICE_BYTES
    stage = ab + 2 * SM103_PIPE + sf
    epi = next((e for n, e in SM100_EPI_BOUND if mma_n <= n), None)
    if epi is None:
        return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=SM90_LIMIT,
                       verdict=None, notes=(f"SM103 epilogue carveout for MMA N={mma_n} is not known to the model",))
    budget = SM100_REDUCED - epi
    stages = fixed if fixed is not None else budget // stage
    sf_stages = stages + (budget - stages * stage) // (SM103_PIPE + sf)
    kernel = stages * (ab + SM103_PIPE) + sf_stages * (sf + SM103_PIPE) + epi
    notes = [f"SM103 K=768 kernel: A/B staged in {slice_k}-element K slices ({ab:,} B), {stages} of them in flight; "
             f"{sf_stages} scale-factor buffers of {sf:,} B; " + ("2-SM MMA (CTA pair); " if two_sm else "1-SM MMA; ")
             + "epilogue carveout: the SM100 BF16 figure for this N (an upper bound where N is not tabulated)"]
    if grouped:
        notes.append("grouped SM103 kernels reserve tensormaps too (a few hundred bytes more): not modelled")
    return SmemFit(**base, stage_bytes=stage, stages=stages,
                   shared_storage_bytes=kernel if stages >= 2 else None, limit_bytes=SM90_LIMIT,
                   verdict=_verdict(stages, kernel, SM90_LIMIT), epilogue_carveout_bytes=epi, stage_budget_bytes=budget,
                   error_bytes=2048, stage_k=slice_k,
                   cutlass_version="CUTLASS 4.5 sm103 block-scaled builder stage rule (re-stated, not compiled here)",
                   notes=tuple(notes))


def _sm90(config: TileConfig, dtype: str, grouped: bool, fixed: Optional[int], with_c: bool, base: dict) -> SmemFit:
    bm, bn, bk = base["tile"]
    if dtype in BLOCK_SCALED or dtype in ("nvfp4", "mxfp4", "int4"):
        raise ModelError(f"dtype {dtype!r} has no SM90 tensor-core GEMM (Hopper has no block-scaled or FP4 MMA)")
    if dtype not in ("fp8", "bf16", "fp16"):
        return SmemFit(**base, stage_bytes=None, stages=None, shared_storage_bytes=None, limit_bytes=SM90_LIMIT,
                       verdict=None, notes=(f"{dtype} on SM90 is not modelled",))
    if bm % 8 or bn % 8:
        raise ModelError(f"tile {bm}x{bn}: SM90 GMMA tiles need M and N multiples of 8")
    bits = SMEM_BITS[dtype]
    ab = bm * bk * bits // 8 + bn * bk * bits // 8
    stage = -(-ab // 128) * 128 + SM90_PIPE_PER_STAGE
    # Epilogue: cooperative (tile M >= 128) uses a 128x32 epilogue tile, ping-pong 64x32; 2 D stages
    # (+2 C stages when C is loaded), bf16; round to 128 B plus a small pipeline block.
    epi_m = 128 if bm >= 128 else 64
    epi = epi_m * 32 * 2 * 2 * (2 if with_c else 1) + 128
    capacity = (SM90_LIMIT // 128) * 128
    budget = capacity - epi
    stages = fixed if fixed is not None else budget // stage
    kernel = stages * stage + epi
    notes = ["cooperative schedule" if bm >= 128 else "ping-pong schedule",
             "epilogue storage estimated (BF16 D, 2 stages): the stage counts match CUTLASS 4.7 [C]; the kernel total may be off by about 1 KiB"]
    if grouped:
        notes.append("grouped SM90 kernels keep tensormaps in smem too (not modelled)")
    return SmemFit(**base, stage_bytes=stage, stages=stages, shared_storage_bytes=kernel if stages >= 2 else None,
                   limit_bytes=SM90_LIMIT, verdict=_verdict(stages, kernel, SM90_LIMIT), epilogue_carveout_bytes=epi,
                   stage_budget_bytes=budget, error_bytes=1024,
                   cutlass_version="CUTLASS 4.7 sm90_gmma_builder stage rule (research note [C])", notes=tuple(notes))


class PublicReport(Struct, frozen=True, gc=False):
    """A public shared-memory failure report set against what this model computes for it."""

    report: str
    claim: str
    model: SmemFit
    reproduced: bool
    explanation: str


def public_reports() -> Tuple[PublicReport, ...]:
    """The SM12x failure reports the research notes cite, each re-computed by this model (no hard-coded answers)."""
    out = []
    for tile in ((256, 128, 128), (128, 256, 128)):
        f = smem_fit(TileConfig(tile=tile), "sm121", "mxfp8", stage_policy="fixed:2")
        assert f.stage_bytes is not None  # SM12x block-scaled: always modelled
        out.append(PublicReport(
            "flashinfer PR #3568 / #4013 (SM12x MXFP8 " + "x".join(map(str, tile[:2])) + ")",
            "the StageCount<2> tactic asks for 111,616 B and fails on every SM12x part",
            f, f.shared_storage_bytes == 111_616 and f.verdict == "overflows_at_initialize",
            f"2 stages x {f.stage_bytes - SM120_PIPE_PER_STAGE:,} B (A+B+SF) = the whole 101,376 B budget, plus the "
            f"{SM120_KERNEL_EXTRA[(False, False)]:,} B barrier block and BF16 epilogue = {f.shared_storage_bytes:,} B: "
            "reproduced exactly. Under StageCountAutoCarveout the same tile would get 1 stage and not build."))
    g = smem_fit(TileConfig(tile=(128, 256, 128)), "sm121", "nvfp4", grouped=True, with_c=True)
    out.append(PublicReport(
        "cutlass #3144 (TRT-LLM MoE grouped NVFP4 CtaShape128x256x64B on GB10)",
        "needs 102,400 B against 101,376 B",
        g, False,
        f"the model gives {g.stages} stages and {g.shared_storage_bytes:,} B with a plain BF16 C/D epilogue, "
        f"{102_400 - (g.shared_storage_bytes or 0):,} B short of the report: TRT-LLM's MoE epilogue (fused finalize / "
        "scatter, SF output) stores more than a BF16 C/D tile, and the model does not know its size. Note 102,400 B is "
        "also exactly the SM12x per-SM capacity, and the issue's '228 KiB on SM120' is wrong: treat it as a report."))
    h = smem_fit(TileConfig(tile=(256, 128, 128)), "sm120", "nvfp4", grouped=True)
    out.append(PublicReport(
        "cutlass #3096 (SM120 NVFP4 grouped GEMM: 3 stages chosen where 2 fit)",
        "StageCountAutoCarveout ignored the alignas(1024) padding of smem_A/smem_B (CUTLASS before 4.2.2)",
        h, False,
        f"with CUTLASS 4.5 rules the grouped 256x128x128 tile gets {h.stages} stages and {h.shared_storage_bytes:,} B "
        f"({h.margin_bytes:,} B under the limit). The pre-4.2.2 layout (1 KiB alignment padding per aligned array, "
        "unrounded pipeline barriers, the epilogue of that build) is not modelled, so the overflow is not reproduced; "
        "the --exact query against the 4.2 headers of the nvidia-cutlass wheel is the way to check it."))
    return tuple(out)
