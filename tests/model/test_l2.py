"""The L2-residency term (tiletune/model/l2.py) and its part in the band-widening rule (transfer.py)."""

import pytest

from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import analyze, find
from tiletune.model import l2 as l2_term
from tiletune.model.mainloop import FITTED
from tiletune.model.transfer import W_ARCH, W_CLOCK, W_DTYPE, W_L2, widening

H200 = find("H200")
RTX = find("RTX PRO 6000 Server")
FP4_DECODE = Problem(16, 7168, 4608)  # 7168 x 4608 nvfp4 weights: 16.5 MB + 2 MB of scales
FP4_BIG = Problem(16, 28672, 8192)  # 117 MB of fp4 weights: more than half of a 128 MB L2
TILE = TileConfig(tile=(128, 64, 128), swap_ab=True)


def test_resident_only_up_to_the_usable_share_of_l2():
    usable = int(RTX.l2_bytes * l2_term.USABLE_SHARE)
    assert l2_term.term(RTX, usable, "warm", None).resident
    assert not l2_term.term(RTX, usable + 1, "warm", None).resident
    assert not l2_term.term(RTX, usable + 1, "warm", None).warm_applies
    assert not l2_term.term(RTX, 1000, "cold", None).warm_applies


def test_bandwidth_is_measured_on_the_h200_and_an_estimate_elsewhere():
    bw, measured, basis = l2_term.bandwidth(H200, 1.98e9)
    assert measured and bw == pytest.approx(6.5e12) and "measured" in basis
    bw, measured, basis = l2_term.bandwidth(RTX, 2.43e9)
    assert not measured and "estimate" in basis
    # the estimate is the H200's per-SM-per-clock rate scaled to this GPU
    assert bw == pytest.approx(6.5e12 / (132 * 1.98e9) * 188 * 2.43e9)


def test_sm100_family_l2_rate_is_the_fitted_per_sm_rate_and_above_its_dram():
    # round six (issue 26): the H200's per-SM rate put a B200's L2 below its own DRAM, so a warm timing could never
    # run faster than a cold one; the SM100 family takes the rate fitted on public warm-L2 B200 timings instead
    b200, gb300 = find("B200"), find("GB300")
    bw, measured, basis = l2_term.bandwidth(b200, 1.86e9)
    per_sm = l2_term.L2_FITTED_BYTES_PER_CLK_PER_SM["sm100"]
    assert bw == pytest.approx(per_sm * 148 * 1.86e9) and bw > 2 * b200.mem_bw_bytes_per_s
    assert not measured and "fitted" in basis and "not measured" in basis
    assert l2_term.bandwidth(gb300, 1.9e9)[0] == pytest.approx(l2_term.L2_FITTED_BYTES_PER_CLK_PER_SM["sm103"] * 148 * 1.9e9)
    # SM90 keeps its measured value, SM120 the H200-derived estimate
    assert l2_term.bandwidth(H200, 1.98e9)[0] == pytest.approx(6.5e12)
    assert "estimate: the H200's measured" in l2_term.bandwidth(RTX, 2.43e9)[2]


def test_warm_timing_of_resident_weights_runs_at_the_l2_rate():
    cold = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="cold")
    warm = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="warm")
    # GDDR7 1.6 TB/s against an L2 several times faster: the memory term shrinks by that factor
    assert warm.time_memory_s < 0.3 * cold.time_memory_s and warm.time_expected_s < cold.time_expected_s
    assert any("L2-warm timing" in n for n in warm.notes)
    assert any("cold-L2 timing" in n for n in cold.notes)
    # warm and the L2 rate estimated: the rule widens the band, and says why. SM120 has constants fitted on
    # public RTX 5090 timings (nvfp4 among them, clocks unstated): nothing else widens it (transfer.py)
    assert warm.band_widening == pytest.approx(W_L2)
    assert any("L2 read bandwidth is an estimate" in n for n in warm.notes)
    assert cold.band_widening == 0.0
    # the same case with the SM90 constants transferred widens for arch, clock and dtype too
    from tiletune.model.transfer import transferred

    moved = transferred(FITTED["sm90"], "sm120")
    t_warm = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="warm", constants=moved)
    assert t_warm.band_widening == pytest.approx(W_ARCH + W_CLOCK + W_DTYPE + W_L2)


def test_weights_larger_than_the_usable_l2_are_read_from_dram_even_warm():
    cold = analyze(FP4_BIG, TILE, RTX, dtype="nvfp4", l2="cold")
    warm = analyze(FP4_BIG, TILE, RTX, dtype="nvfp4", l2="warm")
    assert warm.time_expected_s == pytest.approx(cold.time_expected_s)
    assert not any("L2" in n and "fit in" in n for n in warm.notes)


def test_unknown_l2_state_expects_cold_and_the_band_reaches_the_warm_time():
    cold = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="cold")
    warm = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="warm")
    unknown = analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4")
    assert unknown.time_expected_s == pytest.approx(cold.time_expected_s)
    assert unknown.time_low_s <= warm.time_expected_s < unknown.time_expected_s < unknown.time_high_s
    assert any("L2 state is unknown" in n for n in unknown.notes)


def test_the_h200_term_is_measured_so_it_adds_no_widening():
    p = Problem(64, 7168, 2048)  # 14.7 MB of fp8 weights: resident in the H200's usable 31 MB
    warm = analyze(p, TileConfig(tile=(64, 128, 128)), H200, dtype="fp8", l2="warm")
    cold = analyze(p, TileConfig(tile=(64, 128, 128)), H200, dtype="fp8", l2="cold")
    assert warm.band_widening == 0.0 and warm.time_expected_s <= cold.time_expected_s


def test_widening_rule_adds_the_l2_part_only_when_asked():
    tc = FITTED["sm90"]
    assert widening(tc, True, "fp8", l2_estimated=True) == (W_L2, widening(tc, True, "fp8", True)[1])
    assert widening(tc, True, "fp8")[0] == 0.0


def test_a_bad_l2_state_is_a_model_error():
    with pytest.raises(ModelError, match="L2 state"):
        analyze(FP4_DECODE, TILE, RTX, dtype="nvfp4", l2="lukewarm")
