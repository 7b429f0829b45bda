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
11. SM100 tcgen05 data path (round two of issue 26; SemiAnalysis microbench-blackwell
   `umma_throughput/tput_results_max.csv`, B200, cycles per `tcgen05.mma` with both operands in shared
   memory): (a) a 64-row `cta_group::1` MMA keeps the tensor core as long as a 128-row one (BF16 and
   E4M3 alike: 4,026-4,078 FLOP/clk at M = 64 against 8,114-8,161 at M = 128), so a 64-row 1-SM tile
   is priced at the 128-row MMA time; a 2-SM pair with 64 rows per CTA runs at the full rate
   (16,199 FLOP/clk per pair at N = 256). (b) The tensor core reads its shared-memory operands at
   `SMEM_READ_BYTES_PER_CLK` = 128 B/clk/SM (126-127 B/clk measured wherever N < 128 leaves the MMA
   waiting: 128 x 64 x 16 bf16 takes 48.6 cycles for 6,144 B), a bound of its own next to the fitted
   rate that TMA writes and operand reads share (mechanism 10).
12. Blockwise-scaled FP8 (`Kernel.blockwise`: per-128-K fp32 scales of A rows and B blocks applied in
   software, as in DeepSeek-style 1x128 / 128x128 quantisation): after every 128 K of MMAs the partial
   accumulators are multiplied by the two scales and added into the fp32 accumulators, BM*BN FMAs at
   `FADD_PER_CLK`. Where the accumulators are registers (SM90 wgmma, SM120 / SM80 mma.sync) the math
   warps do it between k-blocks, after the MMA pipeline drains (`promote_cycles`, the H200-measured
   drain of mechanism 4, transferred: no blockwise SM120 timing outside issue 26's own set was found to
   fit it). On SM100 the accumulator is in TMEM and CUTLASS's blockwise kernels promote from the other
   TMEM buffer in separate warps while the MMA warp runs: the cost overlaps, `max(k-block, promotion)`.
   The MMA itself is plain fp8 with fp32 accumulation: the GPU table's `fp8` peak, not `mxfp8`'s.
13. Occupancy of non-warp-specialised (sm80-style multistage `mma.sync`) kernels on SM100 / SM120: such a
   kernel has no producer warp and no persistent schedule; `ctas_per_sm` CTAs share an SM (shared
   memory: stages x (BM + BN) x BK bytes + 1 KB reserved per CTA against the SM's capacity; registers:
   CUTLASS's SM80 warp layouts, 8 warps for 256 x 128 / 128 x 256 and 4 otherwise
   (cutlass_library generator.py, GenerateSM80_TensorOp_16816), accumulators plus 64 fragment / address
   registers per thread against 64 K; at most 48 warps). Each CTA waits at every k-block
   (cp.async.wait_group + __syncthreads, then its first ldmatrix before its first MMA): `sync_cycles`
   in which its warps issue no MMA. The other CTAs on the SM fill that bubble with their own MMAs, so per
   k-block a CTA takes `c x core + max(0, sync - (c - 1) x core)` cycles of wall time with c CTAs
   resident, and c x SMs CTAs run at once (perf.py's slots). With one CTA of 4 warps per SM (cuBLAS's
   `cutlass_80` 128x64x64 on an RTX PRO 6000) the bubble is fully exposed.
14. The clock a fit saw (round three of issue 26): the SM100 fit's B200 timings ran at clocks nobody logged,
   held down by the board's power limit under sustained tensor load, and `issue_cooperative` is fitted
   against the GPU table's clock, so it folds in the ratio of that sustained clock to the table clock.
   When the caller states the clock the kernel ran at (`--sm-clock`, a logged clock), that ratio must not be
   charged again: the issue factor is then `issue_cooperative x sustained_clock_fraction` (never below 1, the
   tensor core's own rate). `sustained_clock_fraction` is fitted on the public SM100 timings whose source
   logged the SM clock under load (cutex-b300, bench/blackwell_public); 1.0 where the fit's own timings
   had stated clocks (SM90 at the table clock, SM120 at stated clocks or power limits).
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
# SM100 tcgen05 operand reads from shared memory, B/clk/SM: SemiAnalysis microbench-blackwell umma_throughput (B200)
SMEM_READ_BYTES_PER_CLK = 128.0
PROMOTE_K = 128  # K elements per software scale block of blockwise-scaled FP8 (1x128 / 128x128 scales)
REGS_PER_SM = 65536  # 32-bit registers per SM (SM80 through SM120, CUDA guide: compute capabilities)
MAX_WARPS_PER_SM = 48  # SM120 (1,536 threads per SM); SM100 allows 64, the kernels here never reach 48
SM80_REG_OVERHEAD = 64  # registers besides accumulators in an sm80 mainloop: A/B fragments, addresses (assumption)


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
    # mechanism 13: cycles per k-block an sm80-style CTA issues no MMA (barrier + first fragment load). The
    # prior (100: a __syncthreads after the last warp arrives, ~30, plus an ldmatrix and an mma.sync latency,
    # ~30 each) is an estimate; the SM120 fit sets it. SM90 has no term (its H200 data are TMA kernels).
    sync_cycles: float = 100.0
    # mechanism 14: sustained clock / table clock folded into issue_cooperative (1.0: the fit's clocks were known)
    sustained_clock_fraction: float = 1.0

    def issue(self, clock_given: bool) -> float:
        """The cooperative issue factor at the table clock, or per clock where the caller states it (mechanism 14)."""
        if clock_given and self.sustained_clock_fraction < 1.0:
            return max(1.0, self.issue_cooperative * self.sustained_clock_fraction)
        return self.issue_cooperative

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
    reads: float = 0.0  # SM100: operand bytes tcgen05 reads from shared memory per k-block (mechanism 11)
    promote_scale: float = 1.0  # promotions per k-block (mechanism 12: BK / 128 for blockwise scaling)
    promote_overlap: bool = False  # SM100 blockwise: promotion runs beside the MMA (mechanism 12)
    ctas_per_sm: int = 1  # mechanism 13 (sm80-style kernels on SM100 / SM120)
    sm80_sync: bool = False  # mechanism 13 applies


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
    ctas_per_sm: int = 1  # CTAs that fit on one SM (mechanism 13); kblock is the wall time with one resident
    core_kb: float = 0.0  # mechanism 13: one CTA's k-block before its barrier bubble (0: not an sm80-style kernel)
    sync: float = 0.0  # mechanism 13: the barrier bubble per k-block
    lat: float = 0.0  # the Little's-law floor of a k-block (mechanism 6)


def _family(arch: str) -> str:
    if arch in ("sm100", "sm103", "sm110"):
        return "sm100"
    if arch in ("sm120", "sm121"):
        return "sm120"
    return arch


def sm80_warps(bm: int, bn: int) -> int:
    """Warps per CTA of CUTLASS's SM80 tensor-op tiles (generator.py GenerateSM80_TensorOp_16816: 4 x 2 / 2 x 4
    warps for 256 x 128 and 128 x 256, 2 x 2 or 4 x 1 below)."""
    return 8 if bm * bn >= 256 * 128 else 4


def sm80_ctas_per_sm(tile: Tuple[int, int, int], bits: int, stages: int, smem_per_sm: Optional[int]) -> int:
    """CTAs of an sm80-style multistage kernel resident on one SM (mechanism 13): shared memory, registers, warps."""
    bm, bn, bk = tile
    if not smem_per_sm:
        return 1
    smem = stages * (bm + bn) * bk * bits / 8.0 + 1024  # mainloop stages (the epilogue reuses them) + 1 KB reserved
    warps = sm80_warps(bm, bn)
    regs = min(255, bm * bn // (warps * 32) + SM80_REG_OVERHEAD)
    by_smem = int(smem_per_sm // smem)
    by_regs = REGS_PER_SM // (regs * 32 * warps)
    return max(1, min(by_smem, by_regs, MAX_WARPS_PER_SM // warps))


def tile_facts(kernel: Kernel, tile: Tuple[int, int, int], bits: int, arch: str, flop_per_clk: float,
               stages: Optional[int], sf_vec: Optional[int] = None, out_bits: int = 16,
               smem_per_sm: Optional[int] = None) -> TileFacts:
    """The constant-free part of the k-block model (module docstring, 1-13)."""
    bm, bn, bk = tile
    fam = _family(arch)
    e = bits / 8.0
    sched = kernel.schedule
    mma_rows = 128 if fam == "sm100" and sched == "1sm" and bm < 128 else bm  # mechanism 11(a)
    mma = mma_rows * bn * bk * 2.0 / flop_per_clk
    if sched == "2sm":
        bn = max(8, bn // 2)  # 2-SM MMA: the CTA pair shares B, each CTA stages and reads half of it
    writes = (bm + bn) * bk * e
    sf = (max(bm, 128) + max(bn, 128)) * bk / sf_vec if sf_vec else 0.0
    writes += sf
    tc_reads = 0.0
    if fam == "sm90" and sched != "sm80":
        reads = bm * bk * e + math.ceil(bm / 64) * bn * bk * e
    elif fam == "sm100" and sched != "sm80":
        reads = (bm + bn) * bk * e  # tcgen05 reads each operand once (scale factors go to TMEM by tcgen05.cp)
        tc_reads = reads
    else:
        reads = 2.0 * ((bm + bn) * bk * e + sf)  # 2 x 2 mma.sync warps: operands and scale factors read twice
    smem = writes + reads
    one_issuer = sched in ("pingpong", "single-warpgroup", "warpspecialized") and fam == "sm90"
    k_step = max(1, 256 // bits)  # wgmma K per instruction: 32 bytes of K
    insts = math.ceil(bm / 64) * math.ceil(bn / 256) * max(1, bk // k_step) if one_issuer else 0
    bm_wg = bm // 2 if sched == "cooperative" and fam == "sm90" else bm
    acc_regs = bm_wg * bn // 128 if fam == "sm90" else 0
    promote = (fam == "sm90" and kernel.fast_accum is False) or kernel.blockwise
    live = (2 if promote and fam == "sm90" else 1) * acc_regs + SM90_REG_OVERHEAD
    spills = fam == "sm90" and live > SM90_MATH_REGS
    st = stages if stages and stages > 1 else 2
    overlap = fam == "sm100" and sched != "sm80" and 2 * tile[1] <= TMEM_COLUMNS  # mechanism 9
    sm80 = sched == "sm80" and fam in ("sm100", "sm120")
    ctas = sm80_ctas_per_sm(tile, bits, st, smem_per_sm) if sm80 else 1
    return TileFacts(mma, smem, one_issuer, insts, bm * bn if promote else 0.0, spills,
                     kernel.cluster[0] * kernel.cluster[1] > 1, st, tile[0] * tile[1] * out_bits / 8.0,
                     sched == "pingpong", acc_regs, kernel.epilogue.replace("_", "").replace("-", "") == "nosmem",
                     overlap, reads=tc_reads,
                     promote_scale=tile[2] / PROMOTE_K if kernel.blockwise else 1.0,
                     promote_overlap=kernel.blockwise and fam == "sm100" and sched != "sm80",
                     ctas_per_sm=ctas, sm80_sync=sm80)


def cycles(f: TileFacts, tc: TileConstants, clock_given: bool = False) -> Cycles:
    """Apply the fitted constants to the facts: cycles per k-block and the epilogue per tile (`clock_given`:
    the caller stated the SM clock, mechanism 14)."""
    smem = f.smem / tc.smem_bytes_per_clk
    if f.reads and f.reads / SMEM_READ_BYTES_PER_CLK > smem:
        smem = f.reads / SMEM_READ_BYTES_PER_CLK  # mechanism 11(b): the tcgen05 operand-read port
    core = f.mma if f.mma >= smem else smem
    if f.one_issuer:
        kb = core * tc.issue_pingpong + tc.inst_cycles * f.insts
    else:
        kb = core * tc.issue(clock_given)
    promo = 0.0
    if f.promote_adds:
        promo = (tc.promote_cycles + f.promote_adds / FADD_PER_CLK) * f.promote_scale
        if not f.promote_overlap:
            kb += promo
    if f.spills:
        kb *= tc.spill_factor
    if f.clustered:
        kb *= 1.0 + tc.cluster_cost
    bottleneck = "MMA issue" if f.mma >= smem else "shared-memory bandwidth"
    if f.spills:
        bottleneck = "accumulator registers spill"
    if f.promote_overlap and promo > kb:
        kb, bottleneck = promo, "blockwise scale promotion"
    core_kb = sync = 0.0
    if f.sm80_sync:  # mechanism 13, one CTA resident: its barrier bubble is exposed (at_occupancy: more CTAs)
        core_kb, sync = kb, tc.sync_cycles
        kb += sync
    lat = tc.latency_cycles / (f.stages - 1)
    if lat > kb:
        kb, bottleneck = lat, f"memory latency ({f.stages} stages in flight)"
    epi = f.epi_bytes / tc.epi_bytes_per_clk + tc.epi_cycles
    if f.epi_direct:
        epi *= tc.epi_direct_factor
    return Cycles(f.mma, smem, kb, epi, bottleneck, f.spills, f.acc_regs, f.pingpong, f.epi_overlap, f.ctas_per_sm,
                  core_kb, sync, lat)


def at_occupancy(c: Cycles, resident: int) -> Cycles:
    """`c` with `resident` CTAs of an sm80-style kernel interleaved on each SM (mechanism 13): each CTA's k-block
    takes resident x core wall time, and the others' MMAs cover up to (resident - 1) x core of its barrier bubble."""
    if resident <= 1 or not c.core_kb:
        return c
    kb = resident * c.core_kb + max(0.0, c.sync - (resident - 1) * c.core_kb)
    return c._replace(kblock=kb if kb > c.lat else c.lat)


def kblock_cycles(kernel: Kernel, tile: Tuple[int, int, int], bits: int, arch: str, flop_per_clk: float,
                  stages: Optional[int], tc: TileConstants, sf_vec: Optional[int] = None,
                  out_bits: int = 16, smem_per_sm: Optional[int] = None, clock_given: bool = False) -> Cycles:
    """Cycles per k-block and the epilogue cycles per tile (module docstring, 1-14)."""
    return cycles(tile_facts(kernel, tile, bits, arch, flop_per_clk, stages, sf_vec, out_bits, smem_per_sm), tc,
                  clock_given)


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
    # Fitted on public timings by `python3 bench/blackwell_public/validate.py` (the fit: tools/model_fit/
    # blackwell_refit.py; tests/model/test_blackwell_refit.py fails when these differ from what it gives):
    # the SM90 values are the prior each constant is pulled towards, so what the public data cannot see
    # (latency_cycles here) keeps the H200's value. eta_bw is not fitted: it is the copy efficiency measured
    # on the fitting GPU (gn-kernels README memcpy: B200 5,982 of 7,700 GB/s; RTX 5090 1,509 of 1,792).
    # ratio_band: 5th / 95th percentile of measured / model over leave-one-source-out predictions and (round four)
    # the held-out timings of rounds one to three, no longer blind (GB300's aside: held out whole in round four),
    # each source weighted equally; where a source states no kernel, only the fastest kernel it measured on a
    # problem counts (the model prices the fastest catalog kernel: blackwell_fit.fastest_measured; validate.py).
    # Checked on GPUs no constant saw (RTX PRO 6000 Max-Q, GB10, B300) and on held-out sources:
    # bench/blackwell_public/RESULTS.md.
    "sm100": TileConstants(
        "public-b200-2026-12 (issue 26)", issue_cooperative=1.4333, cluster_cost=0.03074, latency_cycles=1000.0,
        epi_bytes_per_clk=60.65, epi_cycles=525.0, streamk_fixup_cycles=2828.0, smem_bytes_per_clk=186.0,
        eta_bw=0.777, t_fixed_s=5.21e-6, p=3.50, ratio_band=(0.745, 2.039), sustained_clock_fraction=0.695,
        fitted_on="362 public B200 timings (XLA's sm_100 perf table, tmoreau89/triton B200 RESULTS.md, gau-nernst "
                  "learn-cuda 02e), bench/blackwell_public; sustained_clock_fraction (mechanism 14): cutex-b300's 11 "
                  "B300 timings with a logged SM clock; band (round five): 5th / 95th percentile of measured / model "
                  "over the fit's leave-one-source-out predictions and the held-out SM100 timings of rounds one to "
                  "four (GB300 included), each priced with its source's timer (timers.py), the fastest measured "
                  "kernel per problem where none is stated, sources weighted equally; refitted after round six "
                  "(small-N tiles in the catalog, the SM100 L2 read rate)",
        fitted_dtypes=("bf16", "fp16", "fp8", "mxfp4", "mxfp8", "nvfp4"), clock_in_band=True),
    # sm120: the RTX 5090 timings ran at a stated 400 W limit (learn-cuda, gn-kernels: the fit runs them at the
    # clock that limit implies, bench/blackwell_public/sources, column sm_clock_mhz) or at a stated 2,975 MHz
    # (aidxhxr/5090-blackwell-kernels), so these constants are the full-clock chip's. Round two (issue 26) added
    # mechanism 13 (sm80-style occupancy, `sync_cycles`) and aidxhxr's timings; with them the shared-memory rate
    # falls to 45 B/clk for TMA / cp.async writes plus two mma.sync operand reads, a third of the 128 B/clk LSU
    # port: a byte-proportional limit that full-rate types (fp8, fp4) reach and half-rate BF16 does not, whose
    # cause (L2 delivery, ldmatrix conflicts) these timings cannot name (bench/blackwell_public/README.md).
    "sm120": TileConstants(
        "public-rtx5090-2026-12r2 (issue 26)", issue_cooperative=1.05, cluster_cost=0.0314, latency_cycles=1000.0,
        epi_bytes_per_clk=56.17, epi_cycles=539.7, streamk_fixup_cycles=3150.0, smem_bytes_per_clk=44.80,
        eta_bw=0.842, t_fixed_s=5.19e-6, p=4.59, ratio_band=(0.683, 1.751), sync_cycles=110.1,
        fitted_on="90 public RTX 5090 timings (gau-nernst learn-cuda 02c and 08, gn-kernels README, "
                  "aidxhxr/5090-blackwell-kernels hgemm), bench/blackwell_public; band (round five): 5th / 95th "
                  "percentile of measured / model over the fit's leave-one-source-out predictions and the held-out "
                  "SM120 timings of rounds one and two, each priced with its source's timer (timers.py), the fastest "
                  "measured kernel per problem where none is stated, sources weighted equally",
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
