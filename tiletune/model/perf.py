"""Performance model of one GEMM (dense or grouped/MoE) run with one tile on one GPU.

Owns: FLOPs; bytes of A, B, scale factors and D; whole-problem and per-tile arithmetic
intensity; ridge point and roofline; CTAs against SMs (waves, last-wave use); tile and K
quantisation; what swap-AB, split-K and stream-K change; the fixed launch/prologue latency; the
expected time with an uncertainty band; efficiency against the DENSE compute peak and against
the roofline. Formulas: ../shared/research/hardware-perf-model.md 2.1-2.5. Constants (eta_mma,
eta_bw, T_fixed, the band) come from `calibration.py`.

Time model:
    T_comp = waves * per-CTA MMA time   (issued work incl. padding; stream-K: total work / slots)
    T_mem  = (bytes_min + split-K/stream-K partials) / (BW * eta_bw)
    T      = T_fixed + (T_comp^p + T_mem^p)^(1/p)          (p-norm: a soft max of the two)
Everything is pure arithmetic (no I/O, no numpy) so inspect can call it for thousands of entries.
Units: FLOP, bytes, seconds, FLOP/s. Every number is a model ("kind": "model").
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

from msgspec import Struct, structs

from tiletune.core.archs import normalize_arch
from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.core.vocabulary import BITS, INPUT_DTYPES
from tiletune.model import l2 as l2_term
from tiletune.model import mainloop, timers
from tiletune.model.calibration import Constants, combine, constants_for
from tiletune.model.gpus import DTYPE_PEAK, GpuSpec, Peak, capped_clock_hz
from tiletune.model.kernel import Kernel, resolve
from tiletune.model.mainloop import Cycles, TileConstants
from tiletune.model.smem import SF_VEC, SmemFit, smem_fit
from tiletune.model.timers import fixed_term
from tiletune.model.transfer import L2_REASON, W_L2, widening

DTYPE_BITS = {d: BITS[d] for d in INPUT_DTYPES}  # the input types the model takes, bits per element
OUT_BITS = BITS


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class Bytes(Struct, frozen=True, gc=False):
    """Fewest DRAM bytes: each operand read once, D written once (no C). Scale factors padded as stored.
    (One or two are built per modelled case, tens of thousands in a big inspect.)"""

    a: int
    b: int
    sfa: int
    sfb: int
    d: int
    partials: int = 0  # split-K / stream-K fp32 partials written and read back (not part of the minimum)

    @property
    def minimum(self) -> int:
        return self.a + self.b + self.sfa + self.sfb + self.d


class Alternative(Struct, frozen=True, gc=False):
    """What one lever would change for this problem (same GPU, same dtype)."""

    option: str
    ctas: int
    wave_efficiency: float
    tile_efficiency: float
    k_iters_per_cta: int
    time_expected_s: float
    note: str = ""


def _expected_distinct(experts: int, draws: int) -> float:
    """Expected distinct experts hit by `draws` uniform routings (the MoE model's routing assumption)."""
    if draws <= 0:
        return 0.0
    return experts * (1.0 - (1.0 - 1.0 / experts) ** draws)


class NoteFacts(Struct, frozen=True, gc=False):
    """What a ModelResult's notes say that its other fields do not: inspect models tens of
    thousands of cases and prints none of their notes, so `estimate` keeps these facts and
    `ModelResult.notes` formats the text when asked (`_notes`, the one formatter;
    tests/model/test_perf.py pins it to the notes `estimate` formatted eagerly before)."""

    lead: Tuple[str, ...]  # notes a caller puts first (`tiletune model`: the SKU it assumed)
    l2_widened: bool  # the band was widened for an estimated L2 rate
    plan: Tuple[str, ...]  # the kernel's notes (_Plan.notes)
    # the GPU's L2 and the timing's L2 state (tile-aware model only): with the result's bytes they
    # give the case's L2 term (`l2_term.term_at`), worked out when the notes are (a term per case
    # would be kept for 50,000 cases whose notes inspect never prints)
    l2_site: Optional[l2_term.L2Site]
    l2_state: Optional[str]
    stated: Optional[Tuple[str, ...]] = None  # set (stated_notes): the notes are these texts, nothing derived


def stated_notes(texts: Tuple[str, ...]) -> NoteFacts:
    """Facts whose notes are exactly `texts` (a result with recorded numbers: test goldens)."""
    return NoteFacts((), False, (), None, None, tuple(texts))


class ModelResult(Struct, frozen=True, gc=False):
    """The model's answer for one (problem, tile, GPU, dtype): the one result type of the model,
    built by `estimate` (the one implementation of the formulas), shown by `tiletune model`, held
    by every inspect entry and failure (results.AnalyzedEntry.analysis), read by the formatters.
    All values are modelled, never measured. Units: bytes, seconds, FLOP, FLOP/s, bytes/s,
    fractions (0..1); formatters convert. What it was asked about (problem, config, GPU) is held,
    not copied: the properties below read it.
    A msgspec Struct built positionally (`estimate` runs once per distinct case, tens of thousands
    of times for a big cache)."""

    arch: str
    dtype: str
    dtype_out: str
    tile: Tuple[int, int, int]
    # the GEMM as the kernel sees it (swap-AB exchanges M and N); grouped: rows per active expert
    kernel_m: int
    kernel_n: int
    k: int
    groups: int  # batch, or active experts for grouped/MoE
    flops: float
    bytes: Bytes
    intensity_problem: float  # FLOP/B over bytes_min
    intensity_tile: Optional[float]  # FLOP per byte staged L2 -> SMEM per k-step
    ridge: float  # FLOP/B where the dense peak meets DRAM bandwidth
    bound: str  # "memory" | "compute"
    peak: Peak
    peak_dense: float  # FLOP/s
    peak_sparse: Optional[float]  # FLOP/s; the vendor's 2:4 figure, an aside only
    bandwidth: float  # bytes/s
    sms: int
    ctas: int
    slots: int
    waves: int
    wave_efficiency: float
    tile_efficiency: float
    k_efficiency: float
    k_iters: int  # per output tile
    time_floor_s: float  # roofline: max(FLOPs/peak, bytes_min/BW)
    time_compute_s: float
    time_memory_s: float
    time_fixed_s: float
    time_expected_s: float
    time_low_s: float
    time_high_s: float
    efficiency_compute: float  # FLOPs / (dense peak * expected time)
    efficiency_roofline: float  # floor / expected time
    efficiency_compute_ceiling: float  # best possible vs dense peak: min(1, AI * BW / peak)
    smem: SmemFit
    constants: Constants
    # what the model's notes say, unformatted (`notes` formats them; the shared-memory fit's own
    # are in smem.notes; all_notes: both)
    note_facts: NoteFacts
    problem: Problem  # as modelled (inspect: at the top of the entry's M bucket)
    config: TileConfig
    gpu_spec: GpuSpec
    split_k: int
    # the tile-aware model (None on the generic path: a caller passed cuBLAS-style `Constants`)
    kernel: Optional[Kernel] = None
    cycles: Optional[Cycles] = None
    clock_hz: Optional[float] = None  # SM clock the seconds are at
    clock_basis: str = ""
    time_sustained_s: Optional[float] = None  # at the measured sustained clock under the power limit, if known
    band_widening: float = 0.0
    calibration_name: str = ""
    alternatives: Tuple[Alternative, ...] = ()  # `analyze(..., alternatives=True)` only
    # the L2 state the times assume and why (l2.L2Fact), set by the caller that knows it
    # (inspect: tiletune/analysis/l2_state.py); None: not stated (estimate's `l2` argument still applies)
    l2: Optional[l2_term.L2Fact] = None
    # a board power cap the caller stated (`power_limit_w=`), below the SKU's rated power: the clock above is the
    # one it sustains under that cap (gpus.capped_clock_hz); None: the SKU's own limit
    power_cap_w: Optional[float] = None
    # how the timing this result is compared with was taken (timers.TIMERS), as the caller stated it; None: not
    # stated, and the fixed term is the fit's own (its sources timed with events)
    timer: Optional[str] = None

    @property
    def kind(self) -> str:
        """"model": every number here is a model estimate (the same for every result, not a field)."""
        return "model"

    @property
    def gpu_key(self) -> str:
        return self.gpu_spec.key

    @property
    def gpu_name(self) -> str:
        return self.gpu_spec.name

    @property
    def power_limit_w(self) -> Optional[float]:
        """The board power limit the times assume: a stated cap, else the SKU's rated limit (None: unknown)."""
        return self.power_cap_w or self.gpu_spec.power_limit_w

    @property
    def cluster(self) -> Tuple[int, int, int]:
        return tuple(self.config.cluster)  # type: ignore[return-value]

    @property
    def swap_ab(self) -> bool:
        return self.config.swap_ab

    @property
    def stream_k(self) -> bool:
        return self.config.stream_k

    @property
    def m_evaluated(self) -> int:
        """The M the model ran at (inspect: the top of the entry's M bucket)."""
        return self.problem.m

    @property
    def peak_kind(self) -> str:
        return self.peak.kind

    @property
    def peak_quoted(self) -> str:
        return self.peak.quoted

    @property
    def calibration(self) -> str:
        return self.calibration_name or self.constants.name

    @property
    def notes(self) -> Tuple[str, ...]:
        """The model's notes, formatted now (see NoteFacts)."""
        return _notes(self)

    @property
    def all_notes(self) -> Tuple[str, ...]:
        """The shared-memory fit's notes, then the model's."""
        return self.smem.notes + self.notes


def with_l2(res: ModelResult, fact: l2_term.L2Fact) -> ModelResult:
    """The result with the L2 state its times assume (inspect attaches it once per distinct case)."""
    return structs.replace(res, l2=fact)


class _Context(NamedTuple):
    """What every case on one (GPU, dtype, arch) shares, worked out once."""

    gpu: GpuSpec
    arch: str
    peak: Peak
    constants: Constants
    per_sm: float  # dense FLOP/s per SM
    ridge: float  # FLOP/B where the dense peak meets DRAM bandwidth


def _context(gpu: GpuSpec, dtype: str, arch: Optional[str]) -> _Context:
    if dtype not in DTYPE_BITS:
        raise ModelError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BITS)}")
    a = normalize_arch(arch) if arch else gpu.arch
    if a is None:
        raise ModelError(f"arch {arch!r} is not a known arch")
    if _FAMILY.get(a, a) != _FAMILY.get(gpu.arch, gpu.arch):
        raise ModelError(f"arch {a} does not match {gpu.name} ({gpu.arch}); pick a GPU of that arch with --gpu")
    peak = gpu.peak_for_dtype(dtype)
    return _Context(gpu, a, peak, constants_for(a, dtype), peak.dense / gpu.sms,
                    peak.dense / gpu.mem_bw_bytes_per_s)


class _Plan(NamedTuple):
    """Everything `estimate` works out before it looks at the problem's sizes: what one (tile
    config, GPU, dtype, output dtype, arch, grouping, stage policy, kernel options, constants)
    implies: the shared-memory fit, the kernel, cycles per k-block, the clock, the band and their
    notes. `_planned` keeps one per such case; `_plan` is the plain computation."""

    config: TileConfig  # the key's objects, held so their ids stay theirs while the memo holds them
    gpu: GpuSpec
    constants_given: Optional[Union[Constants, TileConstants]]
    ctx: _Context
    fit: SmemFit
    intensity_tile: float
    kernel: Optional[Kernel]
    slots: int
    constants: Constants  # the generic model's constants (given ones on the generic path)
    tile_constants: Optional[TileConstants]  # the tile-aware model's (None on the generic path)
    calibration_name: str
    cycles: Optional[Cycles]
    clock_hz: Optional[float]
    clock_basis: str
    sustained_hz: Optional[float]  # a measured sustained clock below `clock_hz`, when no clock was given
    widen: float
    l2_site: Optional[l2_term.L2Site]  # the GPU's L2 at `clock_hz` (None on the generic path)
    notes: Tuple[str, ...]  # the kernel's notes (estimate adds the problem's around them)
    tile: Tuple[int, int, int]  # (bm, bn, bk) as ints: the one tuple every result of this plan holds
    bits: int  # input element bits (DTYPE_BITS)
    sf_vec: Optional[int]  # elements of K per scale factor (None: no block scaling)
    out_bits: int  # D's element bits
    # SM100-family clusters launch whole: a 2-SM pair (and a cluster of pairs) covers cluster-M CTA
    # rows even where the problem ends inside it, so the output tiles along M round up to it (1: no rounding)
    m_round: int = 1
    power_cap_w: Optional[float] = None  # the stated board power cap the clock is under (None: none stated)


def _plan(config: TileConfig, gpu: GpuSpec, dtype: str, dtype_out: str, arch: Optional[str], grouped: bool,
          stage_policy: Optional[str], constants: Optional[Union[Constants, TileConstants]], schedule: Optional[str],
          fast_accum: Optional[bool], sm_clock_hz: Optional[float], power_limit_w: Optional[float] = None) -> _Plan:
    ctx = _context(gpu, dtype, arch)
    a = ctx.arch
    bm, bn, bk = config.tile
    if not (type(bm) is int and type(bn) is int and type(bk) is int):
        bm, bn, bk = (int(v) for v in config.tile)
    if min(bm, bn, bk) <= 0:
        raise ModelError(f"tile {bm}x{bn}x{bk}: every dimension must be > 0")
    kernel = None if isinstance(constants, Constants) else resolve(config, a, dtype, schedule=schedule,
                                                                    fast_accum=fast_accum)
    two_sm = kernel is not None and kernel.schedule == "2sm"
    fit, intensity_tile = _tile_facts(config, a, dtype, grouped, stage_policy, bm, bn, bk, two_sm)
    if two_sm and bm == 256 and config.mma_tile is None:
        bm = 128  # a 256-row 2-SM tile is the pair's MMA tile (smem._sm100_mma): each CTA owns 128 rows
    widths = ((bm, bn, bk), DTYPE_BITS[dtype], SF_VEC.get(dtype), OUT_BITS.get(dtype_out, 16))
    slots = gpu.sms  # 1 CTA per SM: TMA warp-specialised GEMMs fill shared memory (research 2.4)
    if kernel is None:
        c = constants if isinstance(constants, Constants) else ctx.constants
        return _Plan(config, gpu, constants, ctx, fit, intensity_tile, None, slots, c, None, c.name,
                     None, None, "", None, 0.0, None, (), *widths)
    cs = max(1, kernel.cluster[0] * kernel.cluster[1])
    slots = max(cs, gpu.sms // cs * cs)  # a cluster's CTAs launch together: leftover SMs stay idle
    # (a kernel resolved: `constants` is TileConstants or None here)
    tc = constants if isinstance(constants, TileConstants) else mainloop.constants_for(a)
    clock, clock_basis = _clock(gpu, sm_clock_hz)
    cap = None
    if power_limit_w is not None and sm_clock_hz is None:  # a stated clock is the better fact: it wins
        capped = capped_clock_hz(gpu, clock, power_limit_w)
        if capped is not None:
            clock, clock_basis = capped
            cap = power_limit_w
    # FLOP per clock per SM: the dense peak over SMs x the clock the datasheet quotes it at
    flop_per_clk = ctx.peak.dense / (gpu.sms * (gpu.boost_clock_hz or clock))
    # A kernel that stages K in slices (SM103 K=768) pipelines slices: model one slice, times the slices per tile.
    slices = bk // fit.stage_k if fit.stage_k and bk % fit.stage_k == 0 else 1
    # stages: the shared-memory fit's, else the config's stated count (SM120 mma.sync kernels of plain dtypes:
    # smem.py models no builder for them, but a stated StageCount still bounds what is in flight)
    stages = fit.stages or (int(config.stages) if config.stages else None)
    cyc = mainloop.kblock_cycles(kernel, (bm, bn, bk // slices), DTYPE_BITS[dtype], a, flop_per_clk, stages, tc,
                                 SF_VEC.get(dtype), OUT_BITS.get(dtype_out, 16), gpu.smem_per_sm,
                                 clock_given=sm_clock_hz is not None)
    if cyc.ctas_per_sm > 1:
        slots *= cyc.ctas_per_sm  # sm80-style kernels: several CTAs share an SM (mainloop.py mechanism 13)
    if slices > 1:
        cyc = cyc._replace(mma=cyc.mma * slices, smem=cyc.smem * slices, kblock=cyc.kblock * slices)
    widen, why = widening(tc, gpu.max_clock_hz is not None or sm_clock_hz is not None, dtype)
    sustained = gpu.sustained_clock(dtype)
    if not (sustained and sm_clock_hz is None and cap is None and sustained < clock):
        sustained = None
    notes = [f"kernel: {kernel.label()}; per k-block {cyc.kblock:,.0f} cycles ({cyc.bottleneck}; MMA alone "
             f"{cyc.mma:,.0f}, shared-memory traffic {cyc.smem:,.0f})"]
    notes.extend(kernel.basis)
    if power_limit_w is not None and sm_clock_hz is None and cap is None:
        if gpu.power_limit_w and gpu.idle_power_w is not None:
            reason = f"at or above its rated {gpu.power_limit_w:,.0f} W"
        else:
            reason = "the table lacks its " + " and ".join(
                w for w, v in (("rated power", gpu.power_limit_w), ("idle power", gpu.idle_power_w)) if v is None)
        notes.append(f"power limit {power_limit_w:,.0f} W not modelled for {gpu.name}: {reason} (gpus.capped_clock_hz)")
    if sm_clock_hz is not None and tc.issue(True) != tc.issue(False):
        notes.append(f"SM clock given: the tensor core issues at {tc.issue(True):.2f}x its per-clock MMA time, not the "
                     f"{tc.issue(False):.2f}x fitted against the table clock, which folds in the clock the fit's timings "
                     f"held under their power limit (mainloop.py mechanism 14)")
    if cyc.core_kb:
        notes.append(f"sm80-style kernel: up to {cyc.ctas_per_sm} CTAs per SM (shared memory, registers and warps), "
                     f"{slots} at once; each CTA waits {cyc.sync:,.0f} cycles per k-block at its barrier, covered by the "
                     f"other CTAs' MMAs where several share an SM (mainloop.py mechanism 13; the k-block above is one "
                     f"CTA alone)")
    if grouped and _FAMILY.get(a, a) in GROUP_SWITCH_FAMILIES:
        notes.append(f"grouped: a CTA whose next tile is in another group rewrites and fences its TMA descriptors "
                     f"first, {tc.latency_cycles:,.0f} cycles per change of group (one global round trip), at most "
                     f"once per tile and once per group (perf.py GROUP_SWITCH_FAMILIES)")
    if kernel.blockwise:
        notes.append("blockwise-scaled fp8: the partial accumulators are scaled and added every 128 K "
                     + ("beside the MMA, from the other TMEM buffer" if _FAMILY.get(a, a) == "sm100" else
                        "after the MMA pipeline drains") + " (mainloop.py mechanism 12); peak: plain fp8")
    if cyc.spills:
        notes.append(f"{cyc.acc_regs} fp32 accumulator registers per math thread"
                     + (" (doubled by fp8 promotion)" if kernel.fast_accum is False else "")
                     + f" exceed the {mainloop.SM90_MATH_REGS}-register budget of a math thread: they spill to "
                       f"local memory (ptxas: 912 B spill stores at fp8 128x256 plain, bench/h200_tile_campaign)")
    if widen:
        notes.append(f"band widened by {widen:.0%} (rule: tiletune/model/transfer.py): " + "; ".join(why))
    m_round = kernel.cluster[0] if _FAMILY.get(a, a) == "sm100" and kernel.cluster[0] > 1 else 1
    return _Plan(config, gpu, constants, ctx, fit, intensity_tile, kernel, slots, ctx.constants, tc,
                 tc.name, cyc, clock, clock_basis, sustained, widen, l2_term.site(gpu, clock), tuple(notes), *widths,
                 m_round, cap)


# The one memo of the model: a big cache models tens of thousands of problems with a few dozen
# catalog configs, and everything but the problem's sizes is the same for each. Keyed by the
# identity of the config, GPU and constants objects (hashing a config costs more than the lookup
# saves); the plan holds them, so an id cannot be reused while its entry exists.
# tests/model/test_perf.py pins `estimate` with the memo to `estimate` with it emptied each call.
_PLANS: Dict[Tuple[Any, ...], _Plan] = {}
_PLANS_MAX = 4096


def _planned(config: TileConfig, gpu: GpuSpec, dtype: str, dtype_out: str, arch: Optional[str], grouped: bool,
             stage_policy: Optional[str], constants: Optional[Union[Constants, TileConstants]],
             schedule: Optional[str], fast_accum: Optional[bool], sm_clock_hz: Optional[float],
             power_limit_w: Optional[float] = None) -> _Plan:
    key = (id(config), id(gpu), dtype, dtype_out, arch, grouped, stage_policy, id(constants), schedule, fast_accum,
           sm_clock_hz, power_limit_w)
    hit = _PLANS.get(key)
    if hit is not None and hit.config is config and hit.gpu is gpu and hit.constants_given is constants:
        return hit
    plan = _plan(config, gpu, dtype, dtype_out, arch, grouped, stage_policy, constants, schedule, fast_accum,
                 sm_clock_hz, power_limit_w)
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


# the L2 state a case is modelled in: "warm", "cold", None (unknown), or the L2Fact a caller knows
L2Arg = Union[str, l2_term.L2Fact, None]


def estimate(problem: Problem, config: TileConfig, gpu: GpuSpec, *, dtype: str, arch: Optional[str] = None,
             stage_policy: Optional[str] = None, split_k: int = 1, grouped: Optional[bool] = None,
             constants: Optional[Union[Constants, TileConstants]] = None, schedule: Optional[str] = None,
             fast_accum: Optional[bool] = None, sm_clock_hz: Optional[float] = None,
             l2: L2Arg = None, power_limit_w: Optional[float] = None, timer: Optional[str] = None) -> ModelResult:
    """The model's answer for `problem` run with `config` on `gpu` in `dtype` (`analyze` without the
    alternatives; see `analyze`). `l2`: the L2 state to model in ("warm", "cold", None: unknown),
    or the `L2Fact` a caller knows: its state is modelled and the result carries it (`.l2`).

    `constants`: None or `TileConstants` -> the tile-aware model (mainloop.py); a `Constants`
    (the cuBLAS sweep's eta_mma model) -> the generic model, tile-blind but for waves and padding.

    `sm_clock_hz`: the SM clock the GPU runs at (a stated or logged clock); `power_limit_w`: a board power cap
    below the SKU's rated power, which sets the clock by gpus.capped_clock_hz (a stated clock wins); `timer`: how
    the timing to compare with was taken (timers.TIMERS: kernel, graph, events, unknown), which sets the fixed
    per-kernel term (timers.fixed_term; None: the fit's own, as before)."""
    return estimate_cases(((problem, l2),), config, gpu, dtype=dtype, arch=arch, stage_policy=stage_policy,
                          split_k=split_k, grouped=grouped, constants=constants, schedule=schedule,
                          fast_accum=fast_accum, sm_clock_hz=sm_clock_hz, power_limit_w=power_limit_w,
                          timer=timer)[0]



def estimate_cases(cases: Iterable[Tuple[Problem, L2Arg]], config: TileConfig, gpu: GpuSpec, *, dtype: str,
                   arch: Optional[str] = None, stage_policy: Optional[str] = None, split_k: int = 1,
                   grouped: Optional[bool] = None, constants: Optional[Union[Constants, TileConstants]] = None,
                   schedule: Optional[str] = None, fast_accum: Optional[bool] = None,
                   sm_clock_hz: Optional[float] = None, power_limit_w: Optional[float] = None,
                   timer: Optional[str] = None) -> List[ModelResult]:
    """`estimate` of each (problem, l2) in `cases` with one config, GPU, dtype and set of options,
    in order: the one implementation of the formulas (`estimate` is this with one case).

    Why a batch: inspect models tens of thousands of distinct problems on a few dozen configs, and
    what depends only on the config, GPU and options (the plan, its constants) is looked up here
    once per run of cases that share it, not once per problem. A bad case raises ModelError for
    the whole call (a caller that wants the others models them one by one)."""
    if split_k < 1:
        raise ModelError(f"split-K {split_k}: must be >= 1")
    try:
        timer = timers.check_timer(timer)
    except ValueError as exc:
        raise ModelError(str(exc)) from None
    stream_k = config.stream_k
    if split_k > 1 and stream_k:
        raise ModelError("split-K and stream-K are alternatives; choose one")
    swap_ab = config.swap_ab
    bw = gpu.mem_bw_bytes_per_s
    out: List[ModelResult] = []
    append = out.append
    plan_grouped: Optional[bool] = None
    plan_dtype_out: Optional[str] = None
    checked_state: Any = ()  # the last L2 state check_state accepted (a batch holds one or two)
    # the NoteFacts every case of this plan and L2 state shares, band widened for the L2 or not
    facts_plan: Any = None  # the plan and L2 state they were made for (identity)
    facts_state: Any = ()
    facts_kept: Optional[NoteFacts] = None
    facts_widened: Optional[NoteFacts] = None
    # module functions as locals: each is called once or more per case
    tile_cycles, soft_max, at_occupancy = mainloop.tile_cycles, combine, mainloop.at_occupancy
    sms = gpu.sms
    for problem, l2 in cases:
        m, n, k, batch = problem.m, problem.n, problem.k, problem.batch
        if not (type(m) is int and type(n) is int and type(k) is int and type(batch) is int  # the usual case, tested cheaply
                and m > 0 and n > 0 and k > 0 and batch > 0):
            for name, v in (("m", m), ("n", n), ("k", k), ("batch", batch)):
                if not isinstance(v, int) or v <= 0:
                    raise ModelError(f"problem size {name}={v!r}: must be a positive integer")
        l2_fact: Optional[l2_term.L2Fact]
        if l2 is None or isinstance(l2, str):
            l2_fact, l2_state = None, l2
        else:
            l2_fact, l2_state = l2, l2.state
        if l2_state is not checked_state:
            checked_state = l2_term.check_state(l2_state)
        experts = problem.experts
        is_grouped = bool(experts) if grouped is None else grouped
        dtype_out = problem.dtype_out or "bf16"
        if is_grouped is not plan_grouped or dtype_out != plan_dtype_out:  # the plan, and what it fixes
            pl = _planned(config, gpu, dtype, dtype_out, arch, is_grouped, stage_policy, constants, schedule,
                          fast_accum, sm_clock_hz, power_limit_w)
            plan_grouped, plan_dtype_out = is_grouped, dtype_out
            ctx, slots, kernel = pl.ctx, pl.slots, pl.kernel
            tile = pl.tile
            bm, bn, bk = tile
            a, peak = ctx.arch, ctx.peak
            dense, ridge = peak.dense, ctx.ridge
            c, cyc, clock, widen_plan = pl.constants, pl.cycles, pl.clock_hz, pl.widen
            tc, l2_site = pl.tile_constants, pl.l2_site
            bits, sf_vec, out_bits = pl.bits, pl.sf_vec, pl.out_bits
            plan_notes, sustained_hz = pl.notes, pl.sustained_hz
            m_round = pl.m_round
            generic = tc is None or cyc is None or clock is None or l2_site is None
            if l2_site is not None:
                l2_usable, l2_bw, l2_measured = l2_site.usable, l2_site.bandwidth, l2_site.measured
        widen = widen_plan

        # --- the problem as the kernel sees it ------------------------------------------------------
        if experts:
            top_k = problem.top_k or 1
            draws = m * top_k
            active = _expected_distinct(experts, draws)
            groups = max(1, round(active))
            rows_total = draws
            rows_per_group = -(-draws // groups)
            weight_groups = active
        else:
            groups = batch
            rows_total = m * batch
            rows_per_group = m
            weight_groups = batch
        mk, nk = (n, rows_per_group) if swap_ab else (rows_per_group, n)
        flops = 2.0 * rows_total * n * k

        # --- schedule: output tiles, CTAs against SMs, waves, K iterations (ceilings as -(-a // b)) --
        tiles_m, tiles_n = -(-mk // bm), -(-nk // bn)
        if m_round > 1:
            tiles_m = -(-tiles_m // m_round) * m_round
        tiles = tiles_m * tiles_n * groups
        k_iters = -(-k // bk)
        if stream_k:
            ctas = min(slots, tiles * k_iters)
            waves = 1
            k_per_cta = -(-(tiles * k_iters) // ctas)
            wave_eff = (tiles * k_iters) / (ctas * k_per_cta) * ctas / slots
        else:
            ctas = tiles * split_k
            waves = -(-ctas // slots)
            wave_eff = ctas / (waves * slots)
            k_per_cta = -(-k_iters // split_k)
        tile_eff = (mk * nk) / (tiles_m * bm * tiles_n * bn)
        k_eff = k / (k_iters * bk)

        # --- DRAM bytes: each operand read once, D written once; scale factors padded as stored -------
        byte_a = rows_total * k * bits // 8
        byte_b = n * k * bits // 8
        byte_sfa = byte_sfb = 0
        if sf_vec:
            kb = ((k + sf_vec - 1) // sf_vec + 3) // 4 * 4  # scale bytes per row (ceil(k / vec)), padded to the 4-wide atom
            byte_sfa = -(-rows_total // 128) * 128 * kb if rows_total else 0
            byte_sfb = -(-n // 128) * 128 * kb
        byte_d = rows_total * n * out_bits // 8
        if weight_groups != 1:  # B and SFB scale with the experts / batch that are actually streamed
            byte_b, byte_sfb = int(byte_b * weight_groups), int(byte_sfb * weight_groups)
        partial_bytes = 0
        if split_k > 1:
            partial_bytes = 2 * (split_k - 1) * rows_total * n * 4
        elif stream_k and tiles % slots and tiles * k_iters > slots:
            partial_bytes = 2 * min(slots, tiles) * bm * bn * 4  # fixup of tiles split between CTAs (upper bound)
        byt = Bytes(byte_a, byte_b, byte_sfa, byte_sfb, byte_d, partial_bytes)
        bytes_min = byte_a + byte_b + byte_sfa + byte_sfb + byte_d  # Bytes.minimum

        t_sustained = None
        l2_widened = False
        if generic:  # the generic model
            if stream_k:
                t_comp = tiles * k_iters * 2.0 * bm * bn * bk / (dense * c.eta_mma * min(1.0, ctas / slots))
            else:
                t_comp = waves * k_per_cta * 2.0 * bm * bn * bk / (ctx.per_sm * c.eta_mma)
            t_mem = (bytes_min + partial_bytes) / (bw * c.eta_bw)
            t_fixed = c.t_fixed_s
            t_exp = t_fixed + combine(t_comp, t_mem, c.p)
            t_low, t_high = c.band(t_exp, t_comp, t_mem)
        else:
            assert tc is not None and cyc is not None and clock is not None and l2_site is not None
            if stream_k:
                per_slot = -(-(tiles * k_iters) // slots)
                cycles = per_slot * cyc.kblock + -(-tiles // slots) * cyc.epilogue + tc.streamk_fixup_cycles
            else:
                kcyc = cyc
                if cyc.core_kb and ctas > sms:  # several CTAs of an sm80-style kernel share an SM (mechanism 13)
                    kcyc = at_occupancy(cyc, min(cyc.ctas_per_sm, -(-ctas // sms)))
                cycles = waves * tile_cycles(k_per_cta, kcyc)
            if is_grouped and groups > 1 and _FAMILY.get(a, a) in GROUP_SWITCH_FAMILIES:
                cycles += group_switches(groups, -(-tiles // slots)) * tc.latency_cycles
            t_comp = cycles / clock
            # L2 residency (l2.py): a warm timing of a working set that stays in L2 reads it at the L2
            # rate. The case's L2 term (l2_term.term_at) read field by field: resident, the site's rate
            resident = l2_usable is not None and bytes_min <= l2_usable
            t_mem = (bytes_min + partial_bytes) / (bw * tc.eta_bw)
            ft = fixed_term(tc.t_fixed_s, clock, timer)  # the in-kernel part and what the timer adds (timers.py)
            t_fixed = ft.expected
            t_cold = t_exp = t_fixed + soft_max(t_comp, t_mem, tc.p)
            t_warm = t_cold
            # the warm time (a cold timing never reads it); an L2 estimated below DRAM never slows it
            if l2_state != "cold" and resident and l2_bw and l2_bw > bw:
                t_mem_warm = (bytes_min + partial_bytes) / (l2_bw * tc.eta_bw)
                t_warm = t_fixed + soft_max(t_comp, t_mem_warm, tc.p)
                if l2_state == "warm":  # L2Term.warm_applies (resident, rate known: tested above)
                    t_mem, t_exp = t_mem_warm, t_warm
            # per case (the plan's widening is per config): the L2 term matters here (>2 %), may apply
            # (warm or unknown) and runs at an estimated L2 rate -> the rule's L2 part (transfer.py)
            if l2_state != "cold" and not l2_measured and t_warm < 0.98 * t_cold:
                widen += W_L2
                l2_widened = True
            lo, hi = tc.ratio_band
            t_low, t_high = t_exp * lo / (1.0 + widen), t_exp * hi * (1.0 + widen)
            if l2_state is None and t_warm < t_exp:  # unknown L2 state: the band reaches down to the warm time
                t_low = min(t_low, t_warm * lo / (1.0 + widen))
            # unknown timer: the band reaches down to a kernel-only timing and up to one taken with events around
            # host-queued launches (each as modelled: the ratio band's evidence already holds such timings' spread)
            if ft.low < t_fixed:
                base = t_warm if l2_state is None and t_warm < t_exp else t_exp
                t_low = min(t_low, base - t_fixed + ft.low)
            if ft.high > t_fixed:
                t_high = max(t_high, t_exp - t_fixed + ft.high)
            if sustained_hz is not None:
                t_sustained = t_fixed + soft_max(cycles / sustained_hz, t_mem, tc.p)
        t_floor = flops / dense
        if bytes_min / bw > t_floor:  # max() without the builtin call
            t_floor = bytes_min / bw
        ai = flops / bytes_min
        bound = "memory" if ai < ridge else "compute"
        if pl is not facts_plan or l2_state is not facts_state:
            site_state = (l2_site, l2_state) if not generic else (None, None)
            facts_kept = NoteFacts((), False, plan_notes, *site_state, None)
            facts_widened = NoteFacts((), True, plan_notes, *site_state, None)
            facts_plan, facts_state = pl, l2_state
        facts = facts_widened if l2_widened else facts_kept
        assert facts is not None  # (made above for this plan and state)

        append(ModelResult(  # every field, in order
            a, dtype, dtype_out, tile, mk, nk, k, groups, flops, byt, ai, pl.intensity_tile, ridge, bound, peak,
            dense, peak.sparse, bw, gpu.sms, ctas, slots, waves, wave_eff, tile_eff, k_eff, k_iters,
            t_floor, t_comp, t_mem, t_fixed, t_exp, t_low, t_high, flops / (dense * t_exp), t_floor / t_exp,
            ai / ridge if ai < ridge else 1.0, pl.fit, c, facts, problem, config, gpu, split_k, kernel, cyc, clock,
            pl.clock_basis, t_sustained, widen, pl.calibration_name, (), l2_fact, pl.power_cap_w, timer))
    return out


def _notes(r: ModelResult) -> Tuple[str, ...]:
    """The model's notes on one result, in the order estimate works them out: from its facts
    (NoteFacts) and its fields (the problem and config it was asked about, the schedule's numbers)."""
    f = r.note_facts
    if f.stated is not None:
        return f.lead + f.stated
    notes = list(f.lead)
    p = r.problem
    if p.experts:
        m, experts = p.m, p.experts
        top_k = p.top_k or 1
        active = _expected_distinct(experts, m * top_k)
        notes.append(f"MoE: {m} tokens x top-{top_k} over {experts} experts, uniform routing -> "
                     f"{active:.1f} active experts with about {m * top_k / active:.1f} rows each (model assumption)")
    if f.l2_widened:
        notes.append(f"band widened by a further {W_L2:.0%} (rule: tiletune/model/transfer.py): {L2_REASON}")
    notes += f.plan
    if f.l2_site is not None:
        l2_line = l2_term.note(l2_term.term_at(f.l2_site, r.bytes.minimum, f.l2_state))
        if l2_line:
            notes.append(l2_line)
    ctas, slots = r.ctas, r.slots
    if ctas < 0.5 * slots and not r.config.stream_k:
        notes.append(f"{ctas} CTAs on {slots} SMs: most SMs idle; swap-AB, a narrower N tile, split-K or stream-K raise it")
    tile_eff = r.tile_efficiency
    if tile_eff < 0.5:
        bm, bn, _ = r.tile
        mk, nk = r.kernel_m, r.kernel_n
        real = mk if -(-mk // bm) * bm != mk else nk
        notes.append(f"tile quantisation: only {tile_eff:.1%} of the MMA work is real ({real} useful rows/cols of "
                     f"{_ceil(real, bm if real == mk else bn) * (bm if real == mk else bn)} per tile)")
    if r.bound == "memory":
        ai, ridge = r.intensity_problem, r.ridge
        notes.append(f"memory bound: intensity {ai:.0f} FLOP/B < ridge {ridge:.0f} FLOP/B; judge it against the DRAM "
                     f"roofline, the best possible compute efficiency is {min(1.0, ai / ridge):.1%}")
    if r.timer is not None and r.clock_hz and r.cycles is not None:
        notes.append(timers.note(r.time_fixed_s, r.clock_hz, r.timer))
    notes += _peak_notes(r.peak)
    return tuple(notes)


def _clock(gpu: GpuSpec, sm_clock_hz: Optional[float]) -> Tuple[float, str]:
    """(SM clock in Hz the model's seconds are at, what it is). Default: the highest clock the SKU
    reaches (short timed bursts, as an autotuner measures), else the datasheet's boost clock."""
    if sm_clock_hz is not None:
        if sm_clock_hz <= 0:
            raise ModelError(f"SM clock {sm_clock_hz / 1e6:g} MHz: must be > 0")
        return sm_clock_hz, "given (--sm-clock)"
    if gpu.max_clock_hz:
        return gpu.max_clock_hz, f"max SM clock (short timed runs; {max_clock_basis(gpu)})"
    if gpu.boost_clock_hz:
        return gpu.boost_clock_hz, "datasheet boost clock (sustained clock not measured)"
    return 1.8e9, "assumed 1800 MHz (the table has no clock for this SKU)"


def max_clock_basis(gpu: GpuSpec) -> str:
    """How the table knows `gpu.max_clock_hz`, from the first word of its source: "measured" (nvidia-smi
    on a card), "inferred" (derived from a published ratio, e.g. the RTX 5090's from a TF32 speed-up), else
    "stated" (a figure whose source does not say it was measured). The clock a result runs at must not be
    called measured where nobody measured it."""
    src = (gpu.clock_source or dict(gpu.sources).get("max_clock_mhz") or "").lstrip().lower()
    if src.startswith("measured"):
        return "measured"
    if "inferred" in src.split(":", 1)[0] or src.startswith("implied"):
        return "inferred"
    return "stated"


_FAMILY = {"sm121": "sm120", "sm103": "sm100"}
# Per-group cost of grouped GEMMs (issue 26 item d). A grouped kernel (CUTLASS's ptr-array / grouped TMA kernels,
# DeepGEMM's and FlashInfer's masked / contiguous ones) keeps one TMA descriptor per operand; when a CTA's next
# tile belongs to another group it rewrites the descriptor in global memory and fences the tensormap proxy
# before its next TMA load (CUTLASS tensormaps_perform_update / tensormaps_cp_fence_release / _fence_acquire),
# one global-memory round trip in which that CTA loads nothing: priced at the family's `latency_cycles`.
# Tiles are issued group by group and a CTA's consecutive tiles are `slots` apart, so a CTA changes group
# at most once per tile it runs and at most once per group: min(tiles per CTA, groups) switches.
# Blackwell families only: the H200 fit (SM90) saw no grouped kernel to check the term on.
GROUP_SWITCH_FAMILIES = ("sm100", "sm120")


def group_switches(groups: int, tiles_per_cta: int) -> int:
    """Group changes one CTA makes in a grouped GEMM (see GROUP_SWITCH_FAMILIES)."""
    return min(groups, tiles_per_cta)
def _tile_facts(config: TileConfig, arch: str, dtype: str, grouped: bool, stage_policy: Optional[str],
                bm: int, bn: int, bk: int, two_sm: bool = False) -> Tuple[SmemFit, float]:
    """(shared-memory fit, the tile's own intensity in FLOP per byte staged per k-step)."""
    fit = smem_fit(config, arch, dtype, grouped=grouped, stage_policy=stage_policy, two_sm=two_sm or None)
    bits = DTYPE_BITS[dtype]
    staged = bm * bk * bits / 8 + bn * bk * bits / 8
    if dtype in SF_VEC:
        staged += (max(bm, 128) + max(bn, 128)) * bk / SF_VEC[dtype]
    return fit, 2.0 * bm * bn * bk / staged


def _peak_notes(peak: Peak) -> Tuple[str, ...]:
    notes = []
    if peak.quoted == "sparse" and peak.sparse:
        notes.append(f"vendor quotes {peak.kind} as {peak.sparse / 1e12:,.0f} TFLOP/s 2:4-sparse; efficiency uses the "
                     f"dense {peak.dense / 1e12:,.0f}")
    if peak.note:
        notes.append(f"{peak.kind} peak: {peak.note}")
    return tuple(notes)


def analyze(problem: Problem, config: TileConfig, gpu: GpuSpec, *, dtype: str, arch: Optional[str] = None,
            stage_policy: Optional[str] = None, split_k: int = 1, grouped: Optional[bool] = None,
            alternatives: bool = False, constants: Optional[Union[Constants, TileConstants]] = None,
            schedule: Optional[str] = None, fast_accum: Optional[bool] = None,
            sm_clock_hz: Optional[float] = None, l2: Optional[str] = None,
            power_limit_w: Optional[float] = None, timer: Optional[str] = None) -> ModelResult:
    """Model `problem` run with `config` on `gpu` in `dtype` (see the module docstring).

    Swap-AB: the kernel's M runs over the problem's N. Grouped/MoE (`problem.experts` set, or
    `grouped=True`): `problem.m` tokens, each routed to `top_k` experts uniformly at random; each
    active expert streams its own N x K weights once. Raises ModelError on bad sizes, a dtype the
    GPU lacks, or an impossible tile.
    """
    e = estimate(problem, config, gpu, dtype=dtype, arch=arch, stage_policy=stage_policy, split_k=split_k,
                 grouped=grouped, constants=constants, schedule=schedule, fast_accum=fast_accum, sm_clock_hz=sm_clock_hz,
                 l2=l2, power_limit_w=power_limit_w, timer=timer)
    if alternatives:
        e = structs.replace(e, alternatives=_alternatives(problem, config, gpu, dtype, e.arch, stage_policy, constants,
                                                  dict(schedule=schedule, fast_accum=fast_accum,
                                                       sm_clock_hz=sm_clock_hz, l2=l2,
                                                       power_limit_w=power_limit_w, timer=timer)))
    return e


def _alternatives(problem: Problem, config: TileConfig, gpu: GpuSpec, dtype: str, arch: str,
                  stage_policy: Optional[str], c, kernel_kw: Optional[dict] = None) -> Tuple[Alternative, ...]:
    """The levers of research 2.7: swap-AB, a narrower N tile, split-K, stream-K (same dtype and GPU)."""
    from msgspec import structs

    bm, bn, bk = config.tile
    out = []
    cands = []
    if not config.swap_ab:
        cands.append(("swap-AB", structs.replace(config, swap_ab=True, tile=(bm, min(bn, max(16, 1 << (max(problem.m, 1) - 1).bit_length())), bk)), 1))
    for nn in (64, 32):
        if nn < bn:
            cands.append((f"tile {bm}x{nn}x{bk}", structs.replace(config, tile=(bm, nn, bk)), 1))
    k_iters = _ceil(problem.k, bk)
    for s in (2, 3, 4):
        if s <= k_iters and not config.stream_k:
            cands.append((f"split-K {s}", config, s))
    if not config.stream_k:
        cands.append(("stream-K", structs.replace(config, stream_k=True), 1))
    for label, cfg, s in cands:
        try:
            kw = dict(kernel_kw or {})
            if kw.get("schedule") == "cooperative" and cfg.tile[0] < 128:
                kw["schedule"] = "pingpong"
            r = analyze(problem, cfg, gpu, dtype=dtype, arch=arch, stage_policy=stage_policy, split_k=s, constants=c, **kw)
        except ModelError as e:
            out.append(Alternative(label, 0, 0.0, 0.0, 0, float("nan"), note=str(e)))
            continue
        note = "" if r.smem.fits in (True, None) else f"smem: {r.smem.verdict}"
        out.append(Alternative(label, r.ctas, r.wave_efficiency, r.tile_efficiency,
                               _ceil(_ceil(problem.k, cfg.tile[2]), s), r.time_expected_s, note))
    return tuple(out)


__all__ = ["analyze", "estimate", "estimate_cases", "with_l2", "ModelResult", "NoteFacts", "stated_notes", "Bytes", "Alternative", "DTYPE_BITS", "DTYPE_PEAK"]
