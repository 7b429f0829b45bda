"""Cycles one CTA spends per k-block and per output tile: what makes one tile faster than another.

Owns the tile-aware part of the time model (`perf.estimate` turns it into seconds and adds waves,
DRAM and the fixed latency) and its constants (`TileConstants`, fitted per arch on measured
CUTLASS kernels by `tools.model_fit.tile_fit`). Every effect is a stated mechanism; each fitted
constant is named after the mechanism it prices. Per k-block of BM x BN x BK on one SM:

1. MMA: BM*BN*BK multiply-adds at the SM's dense rate (FLOP/clk/SM = dense peak / (SMs x the
   clock the peak is quoted at)).
2. Shared-memory traffic at 128 B/clk/SM: TMA writes (BM + BN)*BK operand bytes; SM90 wgmma
   reads its A slice (64 rows per instruction) and the whole B tile once per 64-row slice, so a
   128-row tile reads B twice (SM100 tcgen05 reads each operand once, and a 2-SM pair stages half
   of B per CTA; SM120 / SM80 mma.sync warps, assumed 2 x 2 per CTA, read each operand twice).
   `core = max(MMA, SMEM)`. The 128 B/clk figure as the binding limit of the tensor-core operand
   path is an inference that orders the measured H200 tiles, not a documented hardware number.
3. Schedule (SM90): cooperative: two warpgroups issue at once, `core x issue_cooperative`;
   ping-pong (and one-warpgroup kernels): one warpgroup issues at a time, so
   `core x issue_pingpong` plus `inst_cycles` exposed per wgmma instruction it issues
   (a 128-row ping-pong tile issues two m64 instructions per k-step, a 64-row one).
4. fp8 without fast accumulation (SM90): every k-block the partial accumulators are added into
   fp32 ones on the CUDA cores (BM*BN adds at 128/clk/SM) after the wgmma pipeline drains
   (`promote_cycles`); the second accumulator set doubles the registers: when
   2 x (BM_per_warpgroup x BN / 128) + 40 exceeds the 232 registers a math thread gets, the
   accumulators spill to local memory, `x spill_factor`. Confirmed by ptxas on the campaign's
   builds (bench/h200_tile_campaign: 912 B of spill stores at fp8 128x256 and 256x128 plain, 0 at
   128x128 and for every FP8FastAccum build).
5. Clusters: multicast saves L2 reads but adds a cross-CTA barrier per k-block:
   `x (1 + cluster_cost)` for a cluster of 2 or more CTAs.
6. Stages: a CTA keeps (stages - 1) k-blocks in flight; by Little's law a k-block cannot take
   less than `latency_cycles / (stages - 1)` (what makes small-M, few-CTA problems slow).
7. Epilogue per tile: BM*BN output bytes at `epi_bytes_per_clk` plus `epi_cycles`; cooperative
   kernels pay it after every tile, ping-pong hides it behind the other warpgroup's mainloop. The
   no-smem epilogue (FlashInfer's SM90 GEMMs) stores D straight from registers instead of staging it
   in shared memory for asynchronous TMA stores: `x epi_direct_factor`.
8. Stream-K: the k-blocks are spread evenly over the SMs; each SM's share starts and ends inside
   tiles whose partial fp32 accumulators are written to a workspace, waited for and reduced:
   `streamk_fixup_cycles` per SM (perf.py adds it to the stream-K schedule).
9. SM100 tensor memory (TMEM, 128 lanes x 512 columns of 32 bit per SM): the accumulator lives in
   TMEM, not in registers, and a CTA tile of N <= 256 fp32 columns fits twice, so CUTLASS's
   persistent SM100 kernels double-buffer it (AccumulatorPipeline of 2 stages): the epilogue of one
   tile (TMEM -> registers -> global) runs while the MMA warp fills the other buffer with the next
   tile, as the other warpgroup hides it on SM90 ping-pong. No accumulator spills on SM100 either.
10. Shared-memory rate per family (`smem_bytes_per_clk`): the bytes per clock per SM that TMA writes
   and the tensor core's operand reads share. SM90: 128 (the H200 fit's assumption, kept). SM100
   and SM120: fitted on their own public timings (bench/blackwell_public), because the H200 value
   charged a 64x64x128 fp8 B200 tile 256 shared-memory cycles per k-block where the whole k-block
   measures about 187. Block-scaled SM120 kernels also read their scale factors from shared
   memory (twice, like the operands of 2 x 2 mma.sync warps).
Every constant is fitted per arch family on that family's timings (H200 CUTLASS for sm90, public
B200 timings for sm100, public RTX 5090 timings for sm120): `FITTED` says on what, and
bench/blackwell_public/README.md how it was checked on GPUs and sources held out of the fit.
Units: SM clock cycles (seconds only in perf.py, at the sustained clock).
"""

from __future__ import annotations

import math
from typing import Dict, NamedTuple, Optional, Tuple

from msgspec import Struct

from tiletune.model.kernel import Kernel

SMEM_BYTES_PER_CLK = 128  # per SM: the SM90 fit's value and the prior elsewhere (research hardware-perf-model.md)
TMEM_COLUMNS = 512  # 32-bit columns of tensor memory per SM (PTX ISA, tcgen05 "Tensor Memory")
FADD_PER_CLK = 128  # fp32 adds per clock per SM (4 sub-partitions x 32 lanes)
SM90_MATH_REGS = 232  # registers per math-warpgroup thread after setmaxnreg (CUTLASS SM90 kernels)
SM90_REG_OVERHEAD = 40  # registers a math thread needs besides accumulators (assumption: addresses, loop state)


class TileConstants(Struct, frozen=True, gc=False):
    """Fitted constants of the tile-aware model (one set per arch family; cycles, fractions).

    `ratio_band` = 5th / 95th percentile of measured / model on the fitting data: the band.
    `clock_hz` is the sustained SM clock the cycles were fitted against (the GPU table's)."""

    name: str
    issue_cooperative: float = 1.30
    issue_pingpong: float = 1.55
    inst_cycles: float = 25.0
    promote_cycles: float = 120.0
    spill_factor: float = 2.2
    cluster_cost: float = 0.03
    latency_cycles: float = 1000.0
    epi_bytes_per_clk: float = 64.0
    epi_cycles: float = 500.0
    epi_direct_factor: float = 2.0
    streamk_fixup_cycles: float = 3000.0
    smem_bytes_per_clk: float = SMEM_BYTES_PER_CLK
    eta_bw: float = 0.8
    t_fixed_s: float = 5e-6
    p: float = 4.0
    ratio_band: Tuple[float, float] = (0.85, 1.15)
    fitted_on: str = ""
    transferred_from: Optional[str] = None  # set when these constants were fitted on another arch
    widen: float = 0.0  # extra relative uncertainty for what is unknown about this arch (see band_for)
    # What the band already holds (transfer.widening does not widen for it again): the dtypes the
    # fit saw (empty: transfer.MEASURED_DTYPES, the H200 fit's), and whether the fit's timings ran at
    # unstated clocks, so that clock spread is inside `ratio_band` (the public Blackwell fits).
    fitted_dtypes: Tuple[str, ...] = ()
    clock_in_band: bool = False

    def band(self, t: float) -> Tuple[float, float]:
        lo, hi = self.ratio_band
        return t * lo / (1.0 + self.widen), t * hi * (1.0 + self.widen)


class TileFacts(NamedTuple):
    """What one (kernel, tile, dtype, arch) implies before any fitted constant is applied (cycles, counts)."""

    mma: float  # MMA cycles per k-block at the dense rate
    smem: float  # shared-memory bytes per k-block (TMA writes + operand reads; cycles = / smem_bytes_per_clk)
    one_issuer: bool  # one warpgroup issues MMAs at a time (ping-pong, single-warpgroup)
    insts: int  # MMA instructions that warpgroup issues per k-block
    promote_adds: float  # fp32 promotion adds per k-block per SM (0: fast accumulation / not SM90 fp8)
    spills: bool
    clustered: bool
    stages: int
    epi_bytes: float  # output bytes per tile
    pingpong: bool
    acc_regs: int
    epi_direct: bool = False  # no-smem epilogue: D stored from registers
    epi_overlap: bool = False  # SM100: the TMEM accumulator is double-buffered, the epilogue overlaps the next tile


class Cycles(NamedTuple):
    """Per-k-block and per-tile cycles, with the parts (for notes and tests)."""

    mma: float
    smem: float
    kblock: float
    epilogue: float  # per tile (ping-pong hides it behind the other warpgroup's mainloop: tile_cycles)
    bottleneck: str
    spills: bool
    acc_regs: int  # fp32 accumulator registers per math thread (SM90)
    pingpong: bool = False
    epi_overlap: bool = False  # the epilogue runs under the next tile's mainloop (SM100 TMEM double buffer)


def _family(arch: str) -> str:
    if arch in ("sm100", "sm103", "sm110"):
        return "sm100"
    if arch in ("sm120", "sm121"):
        return "sm120"
    return arch


def tile_facts(kernel: Kernel, tile: Tuple[int, int, int], bits: int, arch: str, flop_per_clk: float,
               stages: Optional[int], sf_vec: Optional[int] = None, out_bits: int = 16) -> TileFacts:
    """The constant-free part of the k-block model (module docstring, 1-7)."""
    bm, bn, bk = tile
    fam = _family(arch)
    e = bits / 8.0
    mma = bm * bn * bk * 2.0 / flop_per_clk
    sched = kernel.schedule
    if sched == "2sm":
        bn = max(8, bn // 2)  # 2-SM MMA: the CTA pair shares B, each CTA stages and reads half of it
    writes = (bm + bn) * bk * e
    sf = (max(bm, 128) + max(bn, 128)) * bk / sf_vec if sf_vec else 0.0
    writes += sf
    if fam == "sm90" and sched != "sm80":
        reads = bm * bk * e + math.ceil(bm / 64) * bn * bk * e
    elif fam == "sm100" and sched != "sm80":
        reads = (bm + bn) * bk * e  # tcgen05 reads each operand once (scale factors go to TMEM by tcgen05.cp)
    else:
        reads = 2.0 * ((bm + bn) * bk * e + sf)  # 2 x 2 mma.sync warps: operands and scale factors read twice
    smem = writes + reads
    one_issuer = sched in ("pingpong", "single-warpgroup", "warpspecialized") and fam == "sm90"
    k_step = max(1, 256 // bits)  # wgmma K per instruction: 32 bytes of K
    insts = math.ceil(bm / 64) * math.ceil(bn / 256) * max(1, bk // k_step) if one_issuer else 0
    bm_wg = bm // 2 if sched == "cooperative" and fam == "sm90" else bm
    acc_regs = bm_wg * bn // 128 if fam == "sm90" else 0
    promote = fam == "sm90" and kernel.fast_accum is False
    live = (2 if promote else 1) * acc_regs + SM90_REG_OVERHEAD
    spills = fam == "sm90" and live > SM90_MATH_REGS
    st = stages if stages and stages > 1 else 2
    overlap = fam == "sm100" and sched != "sm80" and 2 * tile[1] <= TMEM_COLUMNS  # mechanism 9
    return TileFacts(mma, smem, one_issuer, insts, bm * bn if promote else 0.0, spills,
                     kernel.cluster[0] * kernel.cluster[1] > 1, st, tile[0] * tile[1] * out_bits / 8.0,
                     sched == "pingpong", acc_regs, kernel.epilogue.replace("_", "").replace("-", "") == "nosmem",
                     overlap)


def cycles(f: TileFacts, tc: TileConstants) -> Cycles:
    """Apply the fitted constants to the facts: cycles per k-block and the epilogue per tile."""
    smem = f.smem / tc.smem_bytes_per_clk
    core = f.mma if f.mma >= smem else smem
    if f.one_issuer:
        kb = core * tc.issue_pingpong + tc.inst_cycles * f.insts
    else:
        kb = core * tc.issue_cooperative
    if f.promote_adds:
        kb += tc.promote_cycles + f.promote_adds / FADD_PER_CLK
    if f.spills:
        kb *= tc.spill_factor
    if f.clustered:
        kb *= 1.0 + tc.cluster_cost
    bottleneck = "MMA issue" if f.mma >= smem else "shared-memory bandwidth"
    if f.spills:
        bottleneck = "accumulator registers spill"
    lat = tc.latency_cycles / (f.stages - 1)
    if lat > kb:
        kb, bottleneck = lat, f"memory latency ({f.stages} stages in flight)"
    epi = f.epi_bytes / tc.epi_bytes_per_clk + tc.epi_cycles
    if f.epi_direct:
        epi *= tc.epi_direct_factor
    return Cycles(f.mma, smem, kb, epi, bottleneck, f.spills, f.acc_regs, f.pingpong, f.epi_overlap)


def kblock_cycles(kernel: Kernel, tile: Tuple[int, int, int], bits: int, arch: str, flop_per_clk: float,
                  stages: Optional[int], tc: TileConstants, sf_vec: Optional[int] = None,
                  out_bits: int = 16) -> Cycles:
    """Cycles per k-block and the epilogue cycles per tile (module docstring, 1-7)."""
    return cycles(tile_facts(kernel, tile, bits, arch, flop_per_clk, stages, sf_vec, out_bits), tc)


def tile_cycles(kblocks: int, c: Cycles) -> float:
    """Cycles one SM spends on one output tile: mainloop plus the epilogue the schedule exposes."""
    main = kblocks * c.kblock
    if c.pingpong or c.epi_overlap:
        return main + max(0.0, c.epilogue - main)  # the other warpgroup's (SM100: the next tile's) mainloop hides it
    return main + c.epilogue


# Fitted on measured CUTLASS SM90 kernels on the H200 by `python3 -m tools.model_fit.tile_fit`
# (bench/model_validation/ holds the command, the data it read and the held-out table).
# Band: the 5th / 95th percentile of measured / model on the fitting data; validate.py shows how
# often it holds on held-out tiles and (N, K) families (85-88 %).
FITTED: Dict[str, TileConstants] = {
    "sm90": TileConstants(
        "h200-cutlass-2026-12-01", issue_cooperative=1.30, issue_pingpong=1.55, inst_cycles=27.68,
        promote_cycles=114.0, spill_factor=2.2, cluster_cost=0.0314, latency_cycles=1000.0, epi_bytes_per_clk=63.84,
        epi_cycles=525.0, epi_direct_factor=2.1, streamk_fixup_cycles=3150.0, eta_bw=0.608, t_fixed_s=4.96e-6, p=4.41,
        ratio_band=(0.903, 1.376),
        fitted_on="1,934 CUTLASS SM90 measurements on the H200: bench/cutlass_sm90_grid/results/run2/raw.jsonl and "
                  "bench/h200_tile_campaign/results/run1 + run2 (warm and cold L2)"),
    # Fitted on public timings by `python3 bench/blackwell_public/validate.py` (tools/model_fit/blackwell_fit.py):
    # the SM90 values are the prior each constant is pulled towards, so what the public data cannot see
    # (latency_cycles here) keeps the H200's value. eta_bw is not fitted: it is the copy efficiency measured
    # on the fitting GPU (gn-kernels README memcpy: B200 5,982 of 7,700 GB/s; RTX 5090 1,509 of 1,792).
    # ratio_band: 5th / 95th percentile of measured / model over leave-one-source-out predictions.
    # Checked on GPUs no constant saw (RTX PRO 6000 Max-Q, GB10, B300) and on held-out sources:
    # bench/blackwell_public/RESULTS.md.
    "sm100": TileConstants(
        "public-b200-2026-12 (issue 26)", issue_cooperative=1.4333, cluster_cost=0.0313, latency_cycles=1000.0,
        epi_bytes_per_clk=56.31, epi_cycles=578.8, streamk_fixup_cycles=2930.0, smem_bytes_per_clk=186.0,
        eta_bw=0.777, t_fixed_s=4.96e-6, p=2.57, ratio_band=(0.586, 1.399),
        fitted_on="362 public B200 timings (XLA's sm_100 perf table, tmoreau89/triton B200 RESULTS.md, gau-nernst "
                  "learn-cuda 02e), bench/blackwell_public",
        fitted_dtypes=("bf16", "fp16", "fp8", "mxfp4", "mxfp8", "nvfp4"), clock_in_band=True),
    # sm120: the RTX 5090 timings ran at a stated 400 W limit; the fit runs them at the clock that limit
    # implies (bench/blackwell_public/sources, column sm_clock_mhz), so these constants are the full-clock chip's.
    "sm120": TileConstants(
        "public-rtx5090-2026-12 (issue 26)", issue_cooperative=1.2285, cluster_cost=0.0314, latency_cycles=1000.0,
        epi_bytes_per_clk=62.50, epi_cycles=520.9, streamk_fixup_cycles=3142.0, smem_bytes_per_clk=128.0,
        eta_bw=0.842, t_fixed_s=5.208e-6, p=4.19, ratio_band=(0.855, 1.487),
        fitted_on="67 public RTX 5090 timings (gau-nernst learn-cuda 02c and 08, gn-kernels README), "
                  "bench/blackwell_public",
        fitted_dtypes=("bf16", "fp8", "int8", "mxfp8", "nvfp4"), clock_in_band=True),
}


def constants_for(arch: str) -> TileConstants:
    """Fitted constants for `arch`'s family, else the SM90 fit transferred with a widened band (band_for)."""
    from tiletune.model.transfer import transferred

    fam = _family(arch)
    hit = FITTED.get(fam)
    if hit is not None:
        return hit
    return transferred(FITTED.get("sm90") or TileConstants("uncalibrated tile defaults"), fam)
