"""How far to trust the model on a GPU nobody measured here: the band-widening rule.

The tile model's constants are fitted on one arch family (SM90, the H200). On another family the
mechanisms carry over (MMA rate, shared-memory traffic, Little's law over the stages, waves,
DRAM), but the fitted numbers that price them (issue factors, latency, epilogue rate) were never
measured there. The band therefore widens, by a rule, not by feel:

    band = (model x lo / (1 + w),  model x hi x (1 + w))
    lo, hi = the 5th / 95th percentiles of measured / model on the H200 fitting data
    w      = w_arch + w_clock + w_dtype
    w_arch  = 0.30  when the constants were fitted on another MMA architecture (SM100 tcgen05,
                    SM120 / SM80 mma.sync), 0 on the fitted family
    w_clock = 0.10  when the SKU's sustained clock under GEMM load is not measured (the model
                    then uses the table's boost clock, or a power-limited estimate), else 0
    w_dtype = 0.10  for a dtype the fit never saw (fp4 / block-scaled: no measured CUTLASS kernel)
    w_l2    = 0.20  when the case's operands fit in L2, its timing may be L2-warm (warm, or the
                    state is unknown) so that the L2 term moves the time by more than 2 %, and this
                    GPU's L2 read bandwidth is an estimate (l2.py), not a measurement
    and, separately, when the timing's L2 state is unknown and the operands fit in L2, the low
    edge reaches down to the L2-warm time (l2.py): the model cannot tell which one was timed.

Why these sizes: w_arch is set from the only evidence about those archs, the published SM100 /
SM120 timings (research hardware-perf-model.md 3.2, tests/model/test_perf.py): the transferred
model's largest miss there is a factor 0.62 (GB200 nvfp4 1024 x 7168 x 4608, 128x256x256), which
needs a total widening of 0.45 with the H200 band; 0.30 + 0.10 + 0.10 = 0.50 holds it with a
margin. w_clock: the H200 ran dense GEMMs at 1365-1500 MHz at its power cap against 1980 MHz max
(bench/h200_clocks), a 25-30 % spread the model only avoids where the clock is known; 0.10 is the
part a datasheet boost clock already accounts for being a lower, "typical" figure (an assumption).
w_l2: the H200's L2 reads at 1.45x its DRAM rate (measured, bench/h200_l2_residency); the estimate
elsewhere scales the H200's per-SM rate, which for a GDDR7 card (RTX PRO 6000: 1.6 TB/s DRAM, an
estimated 11 TB/s L2) says the L2 term can halve a decode GEMM's time: a factor that large rests on
an unmeasured number, so the band widens for it (0.20: an assumption, not fitted on anything).
The rule is tested (tests/model/test_tile_model.py, tests/model/test_l2.py) and README'd; the
output says the band was widened and why.

SM100 and SM120 (issue 26) have constants of their own, fitted on public B200 and RTX 5090
timings (bench/blackwell_public): w_arch does not apply to them, and their band is the spread of
leave-one-source-out predictions over sources that ran at unstated clocks and in fp4, fp8, bf16
and more, so neither w_clock nor w_dtype is added for what the band already holds
(`TileConstants.clock_in_band`, `fitted_dtypes`). Whether that band is wide enough on GPUs the fit
never saw (RTX PRO 6000 Max-Q, GB10, B300) is what bench/blackwell_public/RESULTS.md reports.

Checked, not fitted, on real Blackwell timings: the only ones we have are 6 cold-L2 tactics of one
nvfp4 problem (M 512, N 6144, K 6144) FlashInfer 0.6.16 profiled on an SM103 GPU (flashinfer#4163,
tests/data/real_sm103_4163, bench/model_validation/sm103_4163_check.py): all 6 fall inside the band
with w = 0.50 (measured / model 0.69-0.84: the transferred model is slow there, and its low edge,
0.60x, holds it), so the rule is not widened for them. One shape of one GPU: it could have refuted
the rule, it cannot confirm it. The SM120 DEBUG log in cache_samples/ is constructed (its times are
invented, cache_samples/logs/README.md): bench/model_validation/sm120_log_check.py on it checks the
plumbing only.
"""

from __future__ import annotations

from typing import Tuple

from msgspec import structs

W_ARCH = 0.30
W_CLOCK = 0.10
W_DTYPE = 0.10
W_L2 = 0.20
L2_REASON = "the operands fit in L2 and this GPU's L2 read bandwidth is an estimate (tiletune/model/l2.py)"
MEASURED_DTYPES = frozenset({"bf16", "fp16", "fp8"})  # dtypes the SM90 fit has measured kernels for
_RATE_ALIAS = {"fp16": "bf16"}  # same tensor-core rate and bytes: a fit that saw bf16 has seen fp16


def transferred(tc, family: str):
    """`tc` (fitted on SM90) used for `family`: marked transferred, with the arch part of the widening."""
    if family == "sm90":
        return tc
    return structs.replace(tc, name=f"{tc.name} (transferred to {family}, not measured there)", transferred_from="sm90",
                   widen=W_ARCH)


def widening(tc, clock_measured: bool, dtype: str, l2_estimated: bool = False) -> Tuple[float, Tuple[str, ...]]:
    """(w, reasons): the total relative widening for this (constants, GPU clock, dtype, L2 term).

    `l2_estimated`: the case's working set fits in L2, its timing may be L2-warm, and this GPU's L2
    read bandwidth is an estimate (l2.py), not a measurement."""
    w = 0.0
    why = []
    if tc.transferred_from:
        w += W_ARCH
        why.append(f"+{W_ARCH:.0%}: constants fitted on {tc.transferred_from} (H200), this arch's MMA pipeline "
                   f"was not measured")
    if not clock_measured and not getattr(tc, "clock_in_band", False):
        w += W_CLOCK
        why.append(f"+{W_CLOCK:.0%}: sustained SM clock of this SKU not measured (table clock used)")
    if _RATE_ALIAS.get(dtype, dtype) not in (getattr(tc, "fitted_dtypes", ()) or MEASURED_DTYPES):
        w += W_DTYPE
        why.append(f"+{W_DTYPE:.0%}: no {dtype} kernel was measured for the fit")
    if l2_estimated:
        w += W_L2
        why.append(f"+{W_L2:.0%}: {L2_REASON}")
    return w, tuple(why)
