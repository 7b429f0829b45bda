"""Fit the SM100 and SM120 tile-model constants on public Blackwell timings, and score them on
GPUs and sources the fit never saw (issue 26).

Library for bench/blackwell_public/validate.py (which prints the results table); pure Python, so it
runs on the CPU-only machines. Reads bench/blackwell_public/points.jsonl (one published timing per
line with its provenance; build_points.py writes it).

What a point predicts:
- the tile the source states (CUTLASS/cuBLAS kernel names, a hand-written kernel's launch
  template), or, where none is stated, the fastest of a fixed catalog of the tiles an autotuned
  library or cuBLAS's heuristic would choose from for that arch and dtype (`catalog`): the
  published number is what the library's choice ran at, so the model's best candidate stands for it.
  A point whose every candidate is declared too big for shared memory counts as a miss
  ("declared too big"); a stated tile declared too big is reported by name.
- the GPU the source names, at the SM clock the source states or its stated power limit implies
  (`clock_hz`: the RTX PRO 6000 Max-Q's logged 2,060 MHz at its 300 W cap; an RTX 5090 limited to
  400 W), passed as `tiletune model --sm-clock` would pass it; elsewhere the GPU table's clock.
  validate.py also scores the held-out GPUs at the table clock, as a user who knows no clock sees them.
- the L2 state the source states ("cold" when it flushes L2; unknown otherwise: the model's default).

Fit: coordinate descent on the mean |log(model / measured)| of the fitting points, pulled weakly
towards the SM90 (H200) constants so a mechanism the public data cannot see keeps the value the
H200 measured (tools/model_fit/tile_fit.py's loss, with the H200 fit as the prior). The band: the
5th / 95th percentile of measured / model over leave-one-source-out predictions of the fitting
points (each source predicted by constants fitted without it), so the band is as wide as the
source-to-source spread the fitting GPUs show, not the in-sample residuals.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from msgspec.structs import replace

from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import l2 as l2_term
from tiletune.model import mainloop
from tiletune.model.calibration import combine
from tiletune.model.gpus import find
from tiletune.model.mainloop import TileConstants
from tiletune.model.perf import DTYPE_BITS, OUT_BITS, SF_VEC, estimate

try:  # baseline.py imports this module next to an older tiletune (its "before" column), which has no timers
    from tiletune.model.timers import fixed_term
except ImportError:  # pragma: no cover - only with a pre-round-five checkout
    fixed_term = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
POINTS = ROOT / "bench" / "blackwell_public" / "points.jsonl"
US = 1e-6

# The GPU each source names -> the GPU table's key.
GPU_KEYS = {"B200": "b200", "GB200": "gb200", "B300": "b300", "GB300": "gb300", "RTX 5090": "rtx-5090",
            "RTX PRO 6000 Max-Q": "rtx-pro-6000-maxq", "RTX PRO 6000 Server": "rtx-pro-6000-server",
            "RTX PRO 6000 WS": "rtx-pro-6000-ws", "GB10": "gb10"}
OUT_DTYPES = ("bf16", "fp16", "fp32", "fp8", "int32")
# Constants fitted for each family, and the bounds of the search (a mechanism each: mainloop.py).
FIT_KEYS = ("issue_cooperative", "smem_bytes_per_clk", "latency_cycles", "epi_bytes_per_clk", "epi_cycles",
            "cluster_cost", "streamk_fixup_cycles", "eta_bw", "t_fixed_s", "p", "sync_cycles")
BOUNDS: Dict[str, Tuple[float, float]] = {
    "issue_cooperative": (1.0, 2.5), "smem_bytes_per_clk": (32.0, 512.0), "latency_cycles": (200.0, 6000.0),
    "epi_bytes_per_clk": (8.0, 256.0), "epi_cycles": (0.0, 4000.0), "cluster_cost": (0.0, 0.3),
    "streamk_fixup_cycles": (0.0, 40000.0), "eta_bw": (0.4, 1.0), "t_fixed_s": (0.5e-6, 15e-6), "p": (1.5, 12.0),
    "sync_cycles": (10.0, 4000.0),
}
PRIOR_WEIGHT = 0.01


def family(arch: str) -> str:
    return "sm100" if arch in ("sm100", "sm103", "sm110") else ("sm120" if arch in ("sm120", "sm121") else arch)


# Round three's held-out sources (bench/blackwell_public/SPLIT.md, 'The third held-out split'): blind until the
# one scoring run (`validate.py --score-round3`); every other use of the points leaves them out, so no fit or
# diagnosis can see them by accident.
ROUND3_HELD = ("tlxbaseline-b200", "tlx220-b200", "tlx1003-b200", "tritonbench-b200", "helion3046-b200",
               "tlx740-gb300", "fi2303-sm103")


# Round four's held-out sources (SPLIT.md, 'The fourth held-out split', committed before round four changed the
# model): blind until the one scoring run; `load` leaves them out unless `round4`.
ROUND4_HELD = ("vllm20071-bench-b200", "vllm19566-bench-b200", "vllm18778-bench-b200", "vllm20071-profiler-b200",
               "cutlass2923-b200", "fi4370-bmm")


# Round five's held-out sources (SPLIT.md, 'The fifth held-out split', committed before round five changed the
# model): blind until the one scoring run; `load` leaves them out unless `round5`.
ROUND5_HELD = ("fi2540-gb200", "sglang13528-flashinfer-gb200", "sglang13528-deepgemm-gb200", "vllm42235-sm100",
               "triton9044-b200")


# Round six's held-out sources (SPLIT.md, 'The sixth held-out split', committed and landed before round six changed
# the model): blind until the one scoring run; `load` leaves them out unless `round6`.
ROUND6_HELD = ("vllm38338-5090", "imp1842-grouped-5090", "imp1753-5090", "imp733-ncu-5090", "imp733-bench-5090",
               "triton10903-gb300")


def load(path: Path = POINTS, round3: bool = False, round4: bool = False, round5: bool = False,
         round6: bool = False) -> List[dict]:
    """The public points; round three's held-out sources only when `round3`, round four's only when `round4`,
    round five's only when `round5`, round six's only when `round6` (its single scoring run)."""
    pts = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pts = [p for p in pts if round6 or p["source_id"] not in ROUND6_HELD]
    pts = [p for p in pts if round5 or p["source_id"] not in ROUND5_HELD]
    pts = [p for p in pts if round4 or p["source_id"] not in ROUND4_HELD]
    return pts if round3 else [p for p in pts if p["source_id"] not in ROUND3_HELD]


# How each source timed its kernels (tiletune.model.timers.TIMERS), read from the source's own words (the TSV's
# `timing` line) or, where marked "inferred", from its data; "unknown": the source does not say and its data do not
# show it. The timer sets the fixed per-kernel term the model adds (timers.fixed_term).
TIMER: Dict[str, Tuple[str, str]] = {
    "cutlass2923-b200": ("kernel", "CUPTI (flashinfer#2146's script)"),
    "triton9044-b200": ("kernel", "proton (CUPTI) kernel durations"),
    "fi2503-grouped": ("kernel", "bench_kineto (torch.profiler kernel durations)"),
    "imp733-ncu-5090": ("kernel", "Nsight Compute kernel duration ('Time (ncu)')"),
    "pytorch155991-5090": ("kernel", "torch._inductor do_bench_using_profiling (profiler kernel durations)"),
    "vllm18778-bench-b200": ("graph", "vLLM benchmarks/kernels/bench_fp8_gemm.py: triton do_bench_cudagraph"),
    "vllm19566-bench-b200": ("graph", "vLLM benchmarks/kernels/bench_fp8_gemm.py: triton do_bench_cudagraph"),
    "vllm20071-bench-b200": ("graph", "vLLM benchmarks/kernels/bench_fp8_gemm.py: triton do_bench_cudagraph"),
    "vllm34424-5090": ("graph", "vLLM benchmarks/kernels/bench_fp8_gemm.py: triton do_bench_cudagraph"),
    "fi1979-b200": ("graph", "flashinfer_benchmark.py of late 2025: CUDA graph, use_cupti off by default (the "
                             "Namespace flashinfer#1959 prints)"),
    "tmoreau-b200": ("events", "triton.testing.do_bench"),
    "gnkernels-5090": ("events", "triton.testing.do_bench"),
    "tlx220-b200": ("events", "the Triton tutorial's triton.testing benchmark"),
    "sa-mainloop-b200": ("events", "CUDA events around 20 launches"),
    "cutex-b300": ("events", "CUDA events"),
    "wayne-maxq": ("events", "CUDA events (src/main.cu)"),
    "aidxhxr-5090": ("events", "CUDA-event median, C++ benches"),
    "aidxhxr-5090-fp8": ("events", "CUDA-event median, C++ benches"),
    "learncuda-b200": ("events", "nvbench (CUDA events)"),
    "learncuda-5090": ("events", "nvbench (CUDA events)"),
    "vllm20071-profiler-b200": ("events", "cutlass_profiler (CUDA events around a launch loop)"),
    "xla-sm100-table": ("events", "inferred: its smallest problem (256^3) takes 4.96 us, over twice the kernel-only "
                                  "floor of a small GEMM (2.1 us on the H200, 2.2 us on the B200): launch time included"),
}


def timer_of(p: dict) -> str:
    """The timer a point's source used (TIMER; "unknown" where it is not listed)."""
    return TIMER.get(p["source_id"], ("unknown", ""))[0]


def _bk(dtype: str) -> int:
    """K elements of a 128-byte k-block (the K step CUTLASS and cuBLAS pick for TMA tiles)."""
    return 1024 // DTYPE_BITS[dtype]


def catalog(fam: str, dtype: str) -> List[TileConfig]:
    """The tiles an autotuned library chooses from, per family and dtype (fixed before fitting;
    each with swap-AB, and stream-K for the large tiles)."""
    out: List[TileConfig] = []
    bk = _bk(dtype)
    if fam == "sm100":
        # small-N tiles (round six): decode-size GEMMs run swap-AB kernels whose N tile holds the few tokens
        # (tcgen05.mma, cta_group::1: N = 16..256 in steps of 16 at M = 128, 8..256 in steps of 8 at M = 64; PTX ISA,
        # 'tcgen05 Matrix Shape'); a 64-wide N tile over 1-32 tokens stages and reads 2-64x the operand bytes
        for bm, bn in ((128, 64), (128, 128), (128, 256), (64, 64), (64, 128), (64, 256), (128, 16), (128, 32), (64, 16),
                       (64, 32)):
            for sw in (False, True):
                out.append(TileConfig(tile=(bm, bn, bk), swap_ab=sw, mainloop_schedule="1sm"))
        for bn in (128, 256):
            for sw in (False, True):
                for sk in (False, True):
                    out.append(TileConfig(tile=(128, bn, bk), cluster=(2, 1, 1), swap_ab=sw, stream_k=sk,
                                          mainloop_schedule="2sm", mma_tile=(256, bn, bk)))
        return out
    if dtype in SF_VEC:  # SM120 block-scaled: TMA warp-specialised kernels (CUTLASS / FlashInfer tile lists)
        tiles = ((128, 128, bk), (128, 64, bk), (128, 32, bk), (256, 128, bk // 2), (128, 256, bk // 2),
                 (128, 128, bk // 2)) if DTYPE_BITS[dtype] == 4 else ((128, 128, 128), (128, 64, 128))
        for t in tiles:
            for sw in (False, True):
                for sk in ((False, True) if t[0] * t[1] >= 128 * 128 else (False,)):
                    out.append(TileConfig(tile=t, swap_ab=sw, stream_k=sk))
        return out
    # SM120 plain dtypes: Ampere-style multistage mma.sync kernels (cuBLAS runs cutlass_80 / sm89 xmma ones)
    kk = max(16, 512 // DTYPE_BITS[dtype])  # 64 bytes of K
    for bm, bn in ((128, 128), (128, 256), (256, 128), (128, 64), (64, 128), (64, 64)):
        for sw in (False, True):
            out.append(TileConfig(tile=(bm, bn, kk), swap_ab=sw, style="sm80", stages=3))
    return out


def candidates(fam: str, p: dict) -> List[TileConfig]:
    """The kernels a point is priced on: the one its source states, else the family's catalog; blockwise-scaled
    FP8 points (column scaling = blockwise) take CUTLASS's blockwise mainloop on each (mainloop.py mechanism 12)."""
    stated = stated_config(p)
    cands = [stated] if stated is not None else catalog(fam, p["dtype"])
    if p.get("scaling") != "blockwise":
        return cands
    if fam == "sm100":
        return [replace(c, mainloop_schedule="KernelTmaWarpSpecializedBlockwise"
                        + ("2SmSm100" if c.mainloop_schedule == "2sm" else "1SmSm100")) for c in cands]
    return [replace(c, mainloop_schedule="KernelScheduleSm120Blockwise") for c in cands]


def stated_config(p: dict) -> Optional[TileConfig]:
    """The kernel a point's source states, as a TileConfig (None: not stated)."""
    if not p.get("tile"):
        return None
    t = tuple(int(x) for x in str(p["tile"]).split("x"))
    cl = tuple(int(x) for x in str(p.get("cluster") or "1x1x1").split("x"))
    sched = p.get("schedule") or None
    stages = int(p["stages"]) if p.get("stages") not in (None, "") else None
    two = sched == "2sm"
    return TileConfig(tile=(t[0], t[1], t[2]), cluster=(cl[0], cl[1], cl[2]), stages=stages,
                      mainloop_schedule=None if sched == "sm80" else sched, style="sm80" if sched == "sm80" else "tma_ws",
                      mma_tile=(2 * t[0], t[1], t[2]) if two and t[0] <= 128 else None,
                      epilogue_schedule=p.get("epilogue") or None)


# Sources whose harness re-times the same tensors without touching L2 between repetitions: vLLM's
# bench_fp8_gemm.py times with triton.testing.do_bench_cudagraph, which replays a graph of the same call and,
# unlike do_bench, never zeroes its L2-flush buffer (triton/testing.py); their TSVs' l2 lines (round four) said
# do_bench and cold, which the script's source contradicts.
L2_WARM_BY_HARNESS = ("vllm18778-bench-b200", "vllm19566-bench-b200", "vllm20071-bench-b200")


def l2_state(p: dict) -> Optional[str]:
    """The L2 state the source states or its numbers or harness imply ("cold" / "warm"), else None (unknown)."""
    if p.get("source_id") in L2_WARM_BY_HARNESS:
        return "warm"
    state = str(p.get("l2", "")).split(" ")[0]
    return state if state in ("cold", "warm") else None


def clock_hz(p: dict) -> Optional[float]:
    """The SM clock a point's source states or its stated power limit implies (column sm_clock_mhz;
    sources/*.tsv say how), fed to the model as --sm-clock would be; None: the GPU table's clock."""
    return float(p["sm_clock_mhz"]) * 1e6 if p.get("sm_clock_mhz") else None


def power_w(p: dict) -> Optional[float]:
    """The board power limit a point's source states (column power_limit_w), fed to the model as --power-limit
    would be (tiletune.model.gpus.capped_clock_hz); None: the SKU's rated power."""
    return float(p["power_limit_w"]) if p.get("power_limit_w") else None


class Pre(NamedTuple):
    """One (point, candidate kernel)'s constant-free numbers."""

    facts: mainloop.TileFacts
    waves: int
    kblocks: int
    stream_k: Tuple[int, int]
    clock: float
    mem_bytes: float
    bw: float
    fits: Optional[bool]
    label: str
    switches: int = 0  # group changes per CTA (grouped GEMMs on SM100 / SM120: perf.group_switches)
    resident: int = 1  # CTAs of an sm80-style kernel sharing an SM (mainloop.at_occupancy)
    clock_given: bool = False  # the source states the SM clock (mainloop.py mechanism 14)
    timer: Optional[str] = None  # how the source timed (TIMER; timers.fixed_term)


class Case(NamedTuple):
    point: dict
    gpu_key: str
    family: str
    pres: Tuple[Pre, ...]  # the candidates that fit (or whose fit is unknown)
    too_big: Tuple[str, ...]  # candidates declared too big for shared memory
    stated: bool
    log_meas: float


def _problem(p: dict) -> Problem:
    out = p.get("dtype_out") if p.get("dtype_out") in OUT_DTYPES else "bf16"
    return Problem(m=int(p["m"]), n=int(p["n"]), k=int(p["k"]), batch=int(p.get("batch", 1)),
                   dtype_out="fp32" if out == "int32" else out)


def _pre(p: dict, cfg: TileConfig, gpu, prior: TileConstants) -> Optional[Pre]:
    # imported here so that baseline.py can import this module next to an older tiletune (its "before" column)
    from tiletune.model.perf import GROUP_SWITCH_FAMILIES, group_switches

    try:
        e = estimate(_problem(p), cfg, gpu, dtype=p["dtype"], constants=prior, l2=l2_state(p),
                     grouped=bool(p.get("grouped")), sm_clock_hz=clock_hz(p), power_limit_w=power_w(p),
                     timer=timer_of(p))
    except ModelError:
        return None
    assert e.kernel is not None and e.clock_hz is not None
    flop_per_clk = e.peak_dense / (gpu.sms * (gpu.boost_clock_hz or e.clock_hz))
    stages = e.smem.stages or (int(cfg.stages) if cfg.stages else None)  # as perf._plan
    f = mainloop.tile_facts(e.kernel, e.tile, DTYPE_BITS[p["dtype"]], e.arch, flop_per_clk, stages,
                            SF_VEC.get(p["dtype"]), OUT_BITS.get(e.problem.dtype_out or "bf16", 16), gpu.smem_per_sm)
    # output tiles as perf.estimate_cases counts them (SM100 clusters round the M tiles up to cluster M)
    m_round = e.kernel.cluster[0] if family(e.arch) == "sm100" and e.kernel.cluster[0] > 1 else 1
    tiles_m = -(-e.kernel_m // e.tile[0])
    tiles_m = -(-tiles_m // m_round) * m_round
    tiles = tiles_m * -(-e.kernel_n // e.tile[1]) * e.groups
    sk = (0, 0)
    if cfg.stream_k:
        sk = (-(-(tiles * e.k_iters) // e.slots), -(-tiles // e.slots))
    t = l2_term.term(gpu, e.bytes.minimum, l2_state(p), e.clock_hz)  # as perf.estimate: warm + resident -> L2 rate
    bw = t.bandwidth if t.warm_applies and t.bandwidth and t.bandwidth > e.bandwidth else e.bandwidth
    grouped = bool(p.get("grouped")) and e.groups > 1 and family(e.arch) in GROUP_SWITCH_FAMILIES
    sw = group_switches(e.groups, -(-tiles // e.slots)) if grouped else 0  # as perf.estimate_cases
    res = min(f.ctas_per_sm, -(-e.ctas // gpu.sms)) if f.sm80_sync and not cfg.stream_k else 1  # as perf
    return Pre(f, e.waves, e.k_iters, sk, e.clock_hz, e.bytes.minimum + e.bytes.partials, bw, e.smem.fits, cfg.label(),
               sw, res, clock_hz(p) is not None, timer_of(p))


def cases(points: Iterable[dict], priors: Dict[str, TileConstants]) -> List[Case]:
    """Every point with its candidates worked out once (the fit evaluates thousands of constants)."""
    out = []
    for p in points:
        gpu = find(GPU_KEYS[p["gpu"]])
        fam = family(gpu.arch)
        cfg = stated_config(p)
        cands = candidates(fam, p)
        pres: list[Any] = []
        big: list[Any] = []
        for c in cands:
            pre = _pre(p, c, gpu, priors[fam])
            if pre is None:
                continue
            (big if pre.fits is False else pres).append(pre if pre.fits is not False else pre.label)
        out.append(Case(p, gpu.key, fam, tuple(pres), tuple(big), cfg is not None, math.log(p["time_us"] * US)))
    return out


def fast_time(pre: Pre, tc: TileConstants) -> float:
    """perf.estimate's expected time from precomputed facts (validate.py checks the two agree)."""
    c = mainloop.cycles(pre.facts, tc, pre.clock_given)
    if pre.stream_k[0]:
        t_comp = (pre.stream_k[0] * c.kblock + pre.stream_k[1] * c.epilogue + tc.streamk_fixup_cycles) / pre.clock
    else:
        t_comp = pre.waves * mainloop.tile_cycles(pre.kblocks, mainloop.at_occupancy(c, pre.resident)) / pre.clock
    if pre.switches:
        t_comp += pre.switches * tc.latency_cycles / pre.clock
    fixed = tc.t_fixed_s if fixed_term is None else fixed_term(tc.t_fixed_s, pre.clock, pre.timer).expected
    return fixed + combine(t_comp, pre.mem_bytes / (pre.bw * tc.eta_bw), tc.p)


def predict(case: Case, tc: TileConstants) -> Optional[float]:
    """The model's time for a point: its stated kernel, or the fastest catalog candidate that fits."""
    if not case.pres:
        return None
    return min(fast_time(pre, tc) for pre in case.pres)


def _loss(cs: Sequence[Case], tc: TileConstants, prior: TileConstants, keys: Sequence[str] = FIT_KEYS) -> float:
    errs = []
    for c in cs:
        t = predict(c, tc)
        if t is not None:
            errs.append(abs(math.log(t) - c.log_meas))
    err = statistics.fmean(errs) if errs else 0.0
    pull = sum(math.log((getattr(tc, k) + 1e-9) / (getattr(prior, k) + 1e-9)) ** 2 for k in keys)
    return err + PRIOR_WEIGHT * pull


def fit(cs: Sequence[Case], prior: TileConstants, name: str, rounds: int = 4,
        keys: Sequence[str] = FIT_KEYS) -> TileConstants:
    """Constants `keys` minimising `_loss` on `cs`, starting from (and pulled towards) `prior`."""
    return _descend(cs, replace(prior, name=name), prior, rounds, keys)


def _descend(cs: Sequence[Case], tc: TileConstants, prior: TileConstants, rounds: int,
             keys: Sequence[str]) -> TileConstants:
    """Coordinate descent over `keys` from `tc` (multiplicative steps within BOUNDS)."""
    best = _loss(cs, tc, prior, keys)
    steps = (0.6, 0.8, 0.9, 0.95, 1.05, 1.11, 1.25, 1.6)
    for _ in range(rounds):
        improved = False
        for key in keys:
            lo, hi = BOUNDS[key]
            for f in steps:
                v = getattr(tc, key)
                cand_v = min(hi, max(lo, (v if v > 0 else (hi - lo) * 0.05) * f))
                if cand_v == v:
                    continue
                change: Dict[str, Any] = {key: cand_v}
                cand = replace(tc, **change)
                loss = _loss(cs, cand, prior, keys)
                if loss < best - 1e-6:
                    best, tc, improved = loss, cand, True
        if not improved:
            break
    return tc


def quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def source_out_ratios(cs: Sequence[Case], prior: TileConstants, name: str,
                      keys: Sequence[str] = FIT_KEYS) -> List[float]:
    """measured / model of every fitting point, each predicted by constants fitted without its source."""
    return [r for _, r in source_out_pairs(cs, prior, name, keys)]


def fastest_measured(points: Iterable[dict]) -> set:
    """Ids of the points the band's evidence keeps: every point whose source states its kernel (the model prices
    that kernel), and of the others, per source and problem (GPU, dtype, scaling, M, N, K, batch, clock, power,
    L2), the fastest kernel measured. Where no kernel is stated the model prices the fastest kernel of its catalog
    (an autotuner's pick); a kernel its own source measured slower on the same problem (a tutorial kernel beside
    cuBLAS, a configuration before its tuning) is not that kernel, so its time says nothing about the band."""
    best: Dict[tuple, dict] = {}
    keep = set()
    for p in points:
        if p.get("tile"):
            keep.add(p["id"])
            continue
        key = (p["source_id"], p["gpu"], p["dtype"], p.get("scaling"), p["m"], p["n"], p["k"], p.get("batch", 1),
               p.get("sm_clock_mhz"), p.get("power_limit_w"), p.get("l2"), p.get("dtype_out"))
        if key not in best or p["time_us"] < best[key]["time_us"]:
            best[key] = p
    return keep | {p["id"] for p in best.values()}


def source_out_pairs(cs: Sequence[Case], prior: TileConstants, name: str,
                     keys: Sequence[str] = FIT_KEYS, keep: Optional[set] = None) -> List[Tuple[str, float]]:
    """(source, measured / model) of every fitting point (those in `keep` where given), predicted by constants
    fitted without its source."""
    ratios: List[Tuple[str, float]] = []
    for src in sorted({c.point["source_id"] for c in cs}):
        rest = [c for c in cs if c.point["source_id"] != src]
        if not rest:
            continue
        tc = fit(rest, prior, f"{name} without {src}", rounds=2, keys=keys)
        for c in cs:
            if c.point["source_id"] == src and (keep is None or c.point["id"] in keep):
                t = predict(c, tc)
                if t is not None:
                    ratios.append((src, math.exp(c.log_meas) / t))
    return ratios


def source_weighted_quantile(pairs: Sequence[Tuple[str, float]], q: float) -> float:
    """The q-quantile of (source, value) pairs with every source weighted equally (each point 1 / its source's
    count): a source of 700 microbenchmark points counts as much as one of 6 (round three of issue 26)."""
    counts: Dict[str, int] = {}
    for src, _ in pairs:
        counts[src] = counts.get(src, 0) + 1
    items = sorted((v, 1.0 / counts[src]) for src, v in pairs)
    total = float(len(counts))
    acc = 0.0
    for v, w in items:
        acc += w
        if acc >= q * total - 1e-12:
            return v
    return items[-1][0]


def with_band(tc: TileConstants, ratios: Sequence[float], fitted_on: str) -> TileConstants:
    return replace(tc, ratio_band=(round(min(quantile(ratios, 0.05), 0.97), 3), round(max(quantile(ratios, 0.95), 1.03), 3)),
                   fitted_on=fitted_on)


def score(cs: Sequence[Case], tc: TileConstants, widen: float = 0.0) -> Dict[str, Any]:
    """n, median |model - measured| / measured, share inside the band, median band width (high / low),
    and the points declared too big (every candidate, or the stated kernel)."""
    errs, inside, widths, big = [], 0, [], []
    lo_r, hi_r = tc.ratio_band
    lo_f, hi_f = lo_r / (1 + widen), hi_r * (1 + widen)
    for c in cs:
        t = predict(c, tc)
        meas = math.exp(c.log_meas)
        if t is None:
            big.append((c.point["id"], c.too_big))
            continue
        errs.append(abs(t - meas) / meas)
        inside += t * lo_f <= meas <= t * hi_f
        widths.append(hi_f / lo_f)
    n = len(errs)
    return {"n": n, "median": statistics.median(errs) if errs else float("nan"),
            "p90": quantile(errs, 0.9) if errs else float("nan"), "inside": inside / n if n else float("nan"),
            "width": statistics.median(widths) if widths else float("nan"), "too_big": big}
