"""The L2-residency term: when a GEMM's operands are served from L2 instead of DRAM.

Owns: how much of a GPU's L2 a re-read working set can stay in, the L2 read bandwidth per GPU
(measured, or estimated and labelled so), and the memory bandwidth the time model uses for a
timing taken with a warm or a cold L2. `perf.estimate` calls it; nothing here reads files.

Why it matters: an autotuner that times each tactic repeatedly on the same tensors without
evicting L2 (FlashInfer's and TensorRT-LLM's default, `use_cold_l2_cache=False`) measures the
weights from L2 whenever they fit, while a cold-L2 benchmark (bench/h200_tile_campaign,
FlashInfer's `mm_fp4` from 0.6.14 on) measures them from DRAM. Where L2 is much faster than DRAM
(GDDR7 cards with 128 MB of L2) the two differ by several times; on the H200 (L2 about 1.45x
its DRAM read rate, measured) by 2-30 % (bench/h200_l2_residency).

Rules (each number's basis is in the note the model prints):
- usable share: a working set is L2-resident when it is at most `USABLE_SHARE` of the L2. Measured
  on the H200: a re-read working set keeps the L2 read rate up to 32 MiB of the 60 MiB L2 (the
  share used: 32/60) and has fallen to the DRAM rate by 48 MiB (two L2 partitions;
  bench/h200_l2_residency). Between the two nothing was measured: a step at 32/60 is the
  assumption. Assumed the same elsewhere (B200 and GB202 split their L2 in two as well).
- bandwidth: the table's `l2_read_bw_gbps` where measured; else an estimate: a per-SM-per-clock rate
  times this GPU's SMs and clock: fitted on public warm-L2 timings for the SM100 family
  (`L2_FITTED_BYTES_PER_CLK_PER_SM`), the H200's measured rate elsewhere (an assumption: the per-SM
  L2 path of another architecture was not measured here; the band widens for it, transfer.py).
- the kernel reaches the same share of the L2 rate as of the DRAM rate (the fitted `eta_bw`).
"""

from __future__ import annotations

from typing import Optional

from msgspec import Struct

from tiletune.core.errors import ModelError
from tiletune.model.gpus import GpuSpec

USABLE_SHARE = 32 / 60  # H200: the largest re-read working set measured at the L2 rate, of 60 MiB
# H200 measured: 6.5 TB/s over 132 SMs at the 1980 MHz max clock (bench/h200_l2_residency)
L2_BYTES_PER_CLK_PER_SM = 6.5e12 / (132 * 1.98e9)
# SM100-family GPUs (B200, GB200, B300, GB300): no L2 read rate has been measured on one, and the H200's per-SM
# rate (24.9 B/clk) puts a B200's L2 (6.8 TB/s) below its own DRAM (7.7 TB/s), where public B200 timings taken
# with a warm L2 by their harness (vLLM's bench_fp8_gemm.py: CUDA-graph replays of the same tensors) move 34-52 MB
# of weights at 7-10 TB/s after the launch. Fitted on those timings (issue 26 round six,
# bench/blackwell_public/fit_l2_sm100.py: the value that minimises the mean of the three sources' median errors);
# a fit, not a measurement: the band keeps its L2 widening (transfer.py).
L2_FITTED_BYTES_PER_CLK_PER_SM = {"sm100": 62.0, "sm103": 62.0}
L2_STATES = ("warm", "cold")


class L2Fact(Struct, frozen=True, gc=False):
    """The L2 state a timing (or a tuner's pick) was taken with, and how that is known. Set by the
    caller that knows it (tiletune/analysis/l2_state.py), carried by `ModelResult.l2`. Hashable."""

    state: Optional[str]  # "warm" | "cold" | None (unknown: modelled cold, band down to the warm time)
    how: str  # "decoded" | "inferred" | "unknown"
    basis: str




class L2Term(Struct, frozen=True, gc=False):
    """What the L2 does for one case's memory traffic."""

    state: Optional[str]  # "warm" | "cold" | None (the timing source's L2 state is unknown)
    footprint: int  # bytes of A, B, scale factors and D
    usable: Optional[int]  # bytes of L2 a re-read working set stays in (None: L2 size unknown)
    resident: bool  # footprint fits in `usable`
    bandwidth: Optional[float]  # L2 read bytes/s (None: no L2 size, no estimate)
    measured: bool  # bandwidth measured (or published), not estimated
    basis: str

    @property
    def warm_applies(self) -> bool:
        """The memory term runs at the L2 rate (a warm timing of a resident working set)."""
        return self.state == "warm" and self.resident and self.bandwidth is not None


def check_state(state: Optional[str]) -> Optional[str]:
    if state is not None and state not in L2_STATES:
        raise ModelError(f"L2 state {state!r}: choose warm or cold")
    return state


def bandwidth(gpu: GpuSpec, clock_hz: Optional[float]) -> tuple:
    """(L2 read bytes/s, measured?, basis) for `gpu` (clock: the SM clock the model runs at)."""
    if gpu.l2_read_bw_bytes_per_s:
        return gpu.l2_read_bw_bytes_per_s, True, f"L2 read {gpu.l2_read_bw_bytes_per_s / 1e12:.1f} TB/s (measured)"
    clk = clock_hz or gpu.boost_clock_hz
    if not clk:
        return None, False, "L2 read bandwidth unknown (no clock in the table)"
    fitted = L2_FITTED_BYTES_PER_CLK_PER_SM.get(gpu.arch)
    if fitted is not None:
        bw = fitted * gpu.sms * clk
        return bw, False, (f"L2 read ~{bw / 1e12:.1f} TB/s (fitted: {fitted:.0f} B/clk/SM on public warm-L2 B200 "
                           f"timings x {gpu.sms} SMs x {clk / 1e6:.0f} MHz; not measured on this GPU; "
                           f"bench/blackwell_public/fit_l2_sm100.py)")
    bw = L2_BYTES_PER_CLK_PER_SM * gpu.sms * clk
    return bw, False, (f"L2 read ~{bw / 1e12:.1f} TB/s (estimate: the H200's measured {L2_BYTES_PER_CLK_PER_SM:.0f} "
                       f"B/clk/SM x {gpu.sms} SMs x {clk / 1e6:.0f} MHz; not measured on this GPU)")


class L2Site(Struct, frozen=True, gc=False):
    """What a GPU's L2 offers at one SM clock, whatever the problem: worked out once per
    (GPU, clock) by the model's plan (perf._plan), and per call by `term`."""

    usable: Optional[int]  # bytes a re-read working set stays in (None: L2 size unknown)
    bandwidth: Optional[float]
    measured: bool
    basis: str


def site(gpu: GpuSpec, clock_hz: Optional[float]) -> L2Site:
    """The L2 of `gpu` at `clock_hz` (the SM clock the model runs at)."""
    if not gpu.l2_bytes:
        return L2Site(None, None, False, "L2 size unknown for this GPU: DRAM assumed")
    bw, measured, basis = bandwidth(gpu, clock_hz)
    return L2Site(int(gpu.l2_bytes * USABLE_SHARE), bw, measured, basis)


def term_at(s: L2Site, footprint: int, state: Optional[str]) -> L2Term:
    """The L2 term of one case on a known site."""
    usable = s.usable
    return L2Term(state, footprint, usable, usable is not None and footprint <= usable, s.bandwidth, s.measured, s.basis)


def term(gpu: GpuSpec, footprint: int, state: Optional[str], clock_hz: Optional[float]) -> L2Term:
    """The L2 term of one case: does its working set stay in L2, and at what rate is it read."""
    return term_at(site(gpu, clock_hz), footprint, state)


def note(t: L2Term) -> Optional[str]:
    """One line for the output, or None when L2 changes nothing for this case."""
    if t.usable is None or not t.resident:
        return None
    fits = (f"operands {t.footprint / 1e6:.1f} MB fit in the L2's usable {t.usable / 1e6:.0f} MB "
            f"({USABLE_SHARE:.0%} of the {t.usable / USABLE_SHARE / 1e6:.0f} MB L2; rule: tiletune/model/l2.py)")
    if t.state == "warm":
        return f"{fits}; L2-warm timing: memory term at the L2 rate, {t.basis}"
    if t.state == "cold":
        return f"{fits}; cold-L2 timing: memory term at the DRAM rate"
    return (f"{fits}; the timing's L2 state is unknown: expected time at the DRAM rate (cold), band's low edge "
            f"at the L2-warm time ({t.basis}); autotuners time warm unless the op asks for cold L2")
