"""What a measured GEMM time includes besides the kernel's work: the fixed per-kernel term, split into the
part that runs inside the kernel and the part the timing method adds (issue 26, round five).

A published time is a kernel's duration only when a profiler read it (CUPTI, proton, nsys, ncu,
torch.profiler: "kernel"). A CUDA graph replayed N times and timed with events (triton's
do_bench_cudagraph, vLLM's bench scripts) adds the gap between graph nodes ("graph"). Events around
launches queued from the host (triton.testing.do_bench, cutlass_profiler, C++ event loops, the H200
fit's own harness) add the front end's launch and event latency, and more when the host launches slower
than the GPU runs ("events"). What the fitted constants call `t_fixed_s` is the fixed term of their
fitting sources, which timed with events: it is the "events" value, and the default (`timer=None`).

    in-kernel part  INKERNEL_CYCLES / SM clock: launch to first TMA issue (TMEM / barrier set-up, descriptor
                    prefetch), the first loads' DRAM round trip, the epilogue's store drain and teardown;
                    what a kernel of one k-block takes beyond its modelled work
    graph gap       GRAPH_GAP_S, added to the in-kernel part for "graph"
    events          the fit's t_fixed_s (in-kernel part and event/launch latency together)
    unknown         expected as "graph"; the band reaches down to "kernel" and up to "events"

Both constants are measured (bench/h200_timer_split: one H200, cuBLAS kernels through torch 2.11, each
problem timed kernel-only by torch.profiler, as a CUDA-graph replay and with host-queued events) and
transferred to Blackwell, where no device was available: a Blackwell kernel's prologue does the same
work (it also allocates TMEM), which the public kernel-only B200 and GB300 timings of 2-3 us
(bench/blackwell_public, fi4370-bmm) agree with.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

# How a timing was taken, as `estimate(timer=...)` and `tiletune model --timer` take it.
TIMERS = ("kernel", "graph", "events", "unknown")
TIMER_WORDS = {
    "kernel": "kernel-only (a profiler's kernel duration: CUPTI, proton, nsys, ncu, torch.profiler)",
    "graph": "CUDA-graph replay timed with events (e.g. triton do_bench_cudagraph)",
    "events": "CUDA events around host-queued launches (e.g. triton do_bench, cutlass_profiler)",
    "unknown": "not stated",
}

# Measured on the H200 (bench/h200_timer_split/timer_split.jsonl, 2026-12-05): median over the six
# problems of 128^3-512^3 (bf16 and fp8 cuBLAS kernels, one kernel per call) of the kernel-only duration
# (torch.profiler) minus the tile model's time without a fixed term (64-256 x 64-128 tiles, warm L2):
# 1.12-2.01 us, median 1.77 us at the 1,980 MHz the GPU ran; 1.77 us x 1.98 GHz = 3,500 cycles.
INKERNEL_CYCLES = 3500.0
# Measured on the same H200, same file: graph replay time per kernel minus the kernel-only duration, median
# over the 18 problems whose call is one kernel (0.34-1.55 us).
GRAPH_GAP_S = 0.68e-6


class FixedTerm(NamedTuple):
    """The fixed term a timing includes: expected, and the values the band's ends take (seconds)."""

    expected: float
    low: float
    high: float
    inkernel: float  # the in-kernel part at the model's clock
    timer: str  # the timer the expected value assumes ("events" for the fit's own)


def check_timer(timer: Optional[str]) -> Optional[str]:
    """`timer` normalised (None: the fit's own); raises ValueError for a word not in TIMERS."""
    if timer is None:
        return None
    t = timer.strip().lower()
    if t not in TIMERS:
        raise ValueError(f"timer {timer!r}: choose one of {', '.join(TIMERS)}")
    return t


def fixed_term(fit_fixed_s: float, clock_hz: float, timer: Optional[str]) -> FixedTerm:
    """The fixed term for a timing taken with `timer` on a kernel at `clock_hz`, given the fit's own (events)
    value `fit_fixed_s`. None keeps the fit's value, which is what every result was before round five."""
    inkernel = INKERNEL_CYCLES / clock_hz
    events = max(fit_fixed_s, inkernel)
    graph = min(events, inkernel + GRAPH_GAP_S)
    if timer is None or timer == "events":
        return FixedTerm(fit_fixed_s, fit_fixed_s, fit_fixed_s, inkernel, "events")
    if timer == "kernel":
        return FixedTerm(inkernel, inkernel, inkernel, inkernel, "kernel")
    if timer == "graph":
        return FixedTerm(graph, graph, graph, inkernel, "graph")
    return FixedTerm(graph, inkernel, events, inkernel, "unknown")


def note(fixed_s: float, clock_hz: float, timer: str) -> str:
    """The model's note on the fixed term `fixed_s` of a result whose caller said how the timing was taken."""
    inkernel = INKERNEL_CYCLES / clock_hz
    head = (f"timer {timer}: {TIMER_WORDS[timer]}; fixed per-kernel term {fixed_s * 1e6:.2f} us = in-kernel "
            f"{inkernel * 1e6:.2f} us ({INKERNEL_CYCLES:,.0f} cycles at {clock_hz / 1e6:,.0f} MHz, measured kernel-only "
            f"on the H200) + {max(0.0, fixed_s - inkernel) * 1e6:.2f} us the timer adds")
    if timer == "unknown":
        return head + (" (as a CUDA graph would; the band reaches down to a kernel-only timing and up to one with "
                       "events, the fit's own fixed term)")
    if timer == "events":
        return head + " (the fit's own fixed term: its sources timed with events)"
    if timer == "kernel":
        return head + " (none)"
    return head + f" (the graph gap, {GRAPH_GAP_S * 1e6:.2f} us, measured on the H200)"
