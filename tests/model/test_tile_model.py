"""The tile-aware model: kernel identity, the mechanisms one at a time, the measured H200 grid's
ordering, clocks, and the band-widening rule for archs nobody measured here."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tiletune.cli.typer_app import app
from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import analyze, find
from tiletune.model.kernel import normalize_schedule, resolve
from tiletune.model.mainloop import FITTED, TileConstants
from tiletune.model.transfer import W_ARCH, W_CLOCK, W_DTYPE, widening
from tools.model_fit import tile_fit as tf

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "tests" / "data" / "cutlass_sm90_grid" / "run2" / "raw.jsonl"
H200 = find("H200")
P4K = Problem(4096, 4096, 4096)


def t_us(tile, dtype="bf16", **kw):
    cluster = kw.pop("cluster", (1, 1, 1))
    return analyze(P4K, TileConfig(tile=tile, cluster=cluster), H200, dtype=dtype, **kw).time_expected_s * 1e6


# --- kernel identity --------------------------------------------------------------------------

def test_schedule_names_from_catalogs_and_cli_normalise():
    assert normalize_schedule("COOPERATIVE") == "cooperative"
    assert normalize_schedule("KernelTmaWarpSpecializedPingpongFP8FastAccum") == "pingpong"
    assert normalize_schedule("KernelTmaWarpSpecialized2SmNvf4Sm100") == "2sm"
    assert normalize_schedule("AUTO") is None and normalize_schedule(None) is None
    with pytest.raises(ModelError, match="choose one of"):
        normalize_schedule("zigzag")


def test_auto_schedule_is_inferred_with_its_basis_and_cooperative_needs_128_rows():
    k = resolve(TileConfig(tile=(64, 128, 64), mainloop_schedule="AUTO"), "sm90", "bf16")
    assert k.schedule == "pingpong" and "inferred" in k.basis[0]
    assert resolve(TileConfig(tile=(128, 128, 64)), "sm90", "bf16").schedule == "cooperative"
    assert resolve(TileConfig(tile=(128, 128, 64), mainloop_schedule="PINGPONG"), "sm90", "bf16").basis == ()
    with pytest.raises(ModelError, match="tile M >= 128"):
        resolve(TileConfig(tile=(64, 128, 64)), "sm90", "bf16", schedule="cooperative")
    fp8 = resolve(TileConfig(tile=(128, 128, 128)), "sm90", "fp8")
    assert fp8.fast_accum is True and any("assumed" in b for b in fp8.basis)
    assert resolve(TileConfig(tile=(128, 128, 128)), "sm90", "fp8", fast_accum=False).fast_accum is False
    assert resolve(TileConfig(tile=(128, 128, 64)), "sm90", "bf16").fast_accum is None


# --- mechanisms -------------------------------------------------------------------------------

def test_pingpong_costs_more_than_cooperative_on_the_same_tile_at_long_k():
    # one warpgroup issues at a time; at K = 4096 the epilogue overlap it buys is small
    assert t_us((128, 128, 64), schedule="pingpong") > 1.2 * t_us((128, 128, 64), schedule="cooperative")


def test_wider_tiles_move_fewer_operand_bytes_per_flop():
    assert t_us((128, 256, 64)) < t_us((128, 128, 64)) < t_us((64, 128, 64))


def test_fp8_promotion_spills_wide_tiles_only():
    wide = analyze(P4K, TileConfig(tile=(128, 256, 128)), H200, dtype="fp8", fast_accum=False)
    narrow = analyze(P4K, TileConfig(tile=(128, 128, 128)), H200, dtype="fp8", fast_accum=False)
    fast = analyze(P4K, TileConfig(tile=(128, 256, 128)), H200, dtype="fp8", fast_accum=True)
    assert wide.cycles.spills and not narrow.cycles.spills and not fast.cycles.spills
    assert wide.cycles.acc_regs == 128 and narrow.cycles.acc_regs == 64
    assert wide.time_expected_s > 1.5 * narrow.time_expected_s  # measured: 282 vs 153 us
    assert fast.time_expected_s < narrow.time_expected_s
    assert any("exceed the 232-register budget" in n and "spill" in n for n in wide.notes)


def test_fewer_stages_slow_a_latency_bound_small_m_problem():
    small = Problem(16, 4096, 4096)
    few = analyze(small, TileConfig(tile=(128, 128, 64), stages=2), H200, dtype="bf16")
    many = analyze(small, TileConfig(tile=(128, 128, 64), stages=6), H200, dtype="bf16")
    assert few.time_expected_s > many.time_expected_s and "memory latency" in few.cycles.bottleneck


def test_cluster_launch_leaves_no_odd_sm_and_pays_its_barrier():
    r = analyze(P4K, TileConfig(tile=(128, 256, 64), cluster=(2, 1, 1)), H200, dtype="bf16")
    assert r.slots % 2 == 0 and r.kernel.cluster == (2, 1, 1)
    assert r.time_expected_s > analyze(P4K, TileConfig(tile=(128, 256, 64)), H200, dtype="bf16").time_expected_s


# --- the measured grid (done-when check of issue 10) --------------------------------------------

def test_grid_pairs_more_than_5_percent_apart_are_ordered_as_measured():
    rows = tf.load([str(GRID)])
    assert len(rows) == 14 and {r["dtype"] for r in rows} == {"bf16", "fp8"}
    pred = {i: t_us(r["tile"], r["dtype"], cluster=r["cluster"], schedule=r["schedule"], fast_accum=r["fast_accum"])
            for i, r in enumerate(rows)}
    good, total, best_ok, problems = tf.ranking(pred, rows)
    assert total >= 30 and good == total and best_ok == problems == 2
    errs = sorted(abs(pred[i] / (r["time_s"] * 1e6) - 1) for i, r in enumerate(rows))
    assert errs[len(errs) // 2] < 0.15


def test_fast_path_of_the_fit_equals_the_model():
    rows = tf.load([str(GRID)])
    for r in rows:
        assert tf.fast_time(tf._pre(r), FITTED["sm90"]) == pytest.approx(tf.predict(r, FITTED["sm90"])[0], rel=1e-9)


def test_fit_recovers_constants_it_generated():
    # rows whose "measured" time is the model's own with known constants: the fit must find a loss near 0
    truth = TileConstants("truth", issue_cooperative=1.5, issue_pingpong=1.9, spill_factor=2.0)
    rows = [dict(r, time_s=tf.predict(r, truth)[0]) for r in tf.load([str(GRID)])]
    got = tf.fit(rows, "refit", rounds=6)
    errs = [abs(tf.predict(r, got)[0] / r["time_s"] - 1) for r in rows]
    assert max(errs) < 0.03
    assert got.issue_cooperative == pytest.approx(1.5, rel=0.1)


# --- clocks and power -------------------------------------------------------------------------

def test_default_clock_is_the_measured_max_and_sustained_time_is_longer():
    r = analyze(P4K, TileConfig(tile=(128, 256, 64)), H200, dtype="bf16")
    assert r.clock_hz == 1.98e9 and r.power_limit_w == 700
    assert r.time_sustained_s == pytest.approx(
        r.time_fixed_s + (r.time_expected_s - r.time_fixed_s) * 1980 / 1500, rel=0.02)
    slow = analyze(P4K, TileConfig(tile=(128, 256, 64)), H200, dtype="bf16", sm_clock_hz=1.5e9)
    assert slow.time_sustained_s is None and slow.time_expected_s == pytest.approx(r.time_sustained_s, rel=1e-6)


def test_power_limits_per_sku_and_the_table_rejects_bad_clocks(tmp_path):
    assert find("RTX PRO 6000 Max-Q").power_limit_w == 300 and find("RTX PRO 6000 WS").power_limit_w == 600
    bad = tmp_path / "g.json"
    doc = {"gpus": [{"key": "x", "name": "X GPU", "arch": "sm90", "sms": 1, "mem_bw_gbps": 1, "smem_per_block_optin": 1,
                     "smem_per_sm": 1, "sustained_clock_mhz": {"bf16": -5}}]}
    bad.write_text(json.dumps(doc))
    from tiletune.model.gpus import table

    with pytest.raises(ModelError, match="sustained_clock_mhz"):
        table(str(bad))


# --- archs nobody measured --------------------------------------------------------------------

def test_band_widening_rule_for_unmeasured_archs():
    from tiletune.model.transfer import transferred

    h = analyze(P4K, TileConfig(tile=(128, 128, 64)), H200, dtype="bf16")
    assert h.band_widening == 0.0
    # SM100 / SM120 have constants of their own (public timings, issue 26): their band holds the clock and
    # dtype spread of the sources it was fitted on, so nothing widens it for what those sources covered
    b = analyze(P4K, TileConfig(tile=(128, 128, 128)), find("B200"), dtype="fp8")
    assert b.band_widening == 0.0 and b.calibration == FITTED["sm100"].name
    assert analyze(P4K, TileConfig(tile=(128, 128, 256)), find("RTX PRO 6000 WS"), dtype="nvfp4",
                   l2="cold").band_widening == 0.0
    # a dtype the family's fit never saw still widens (tf32 on SM120: no fp32 GEMM among the RTX 5090 timings)
    t = analyze(P4K, TileConfig(tile=(128, 128, 32), style="sm80", stages=3), find("RTX 5090"), dtype="fp32", l2="cold")
    assert t.band_widening == pytest.approx(W_DTYPE)
    # the rule on constants transferred from SM90 (what every Blackwell GPU got before issue 26)
    moved = transferred(FITTED["sm90"], "sm120")
    r = analyze(P4K, TileConfig(tile=(128, 128, 256)), find("RTX PRO 6000 WS"), dtype="nvfp4", l2="cold",
                constants=moved)
    assert r.band_widening == pytest.approx(W_ARCH + W_CLOCK + W_DTYPE)
    lo, hi = FITTED["sm90"].ratio_band
    w = r.band_widening
    assert r.time_low_s == pytest.approx(r.time_expected_s * lo / (1 + w))
    assert r.time_high_s == pytest.approx(r.time_expected_s * hi * (1 + w))
    assert any("band widened" in n and "not measured" in n for n in r.notes)
    # the rule itself: a fitted family with a measured clock and dtype adds nothing
    assert widening(FITTED["sm90"], True, "fp8") == (0.0, ())
    # a given --sm-clock counts as a known clock
    g = analyze(P4K, TileConfig(tile=(128, 128, 128)), find("B200"), dtype="fp8", sm_clock_hz=1.8e9,
                constants=transferred(FITTED["sm90"], "sm100"))
    assert g.band_widening == pytest.approx(W_ARCH)


# --- CLI ------------------------------------------------------------------------------------------

def _cli(*args):
    return CliRunner().invoke(app, ["model", "--gpu", "H200", "--m", "4096", "--n", "4096", "--k", "4096", *args])


def test_cli_schedule_fast_accum_and_clock_reach_the_json():
    r = _cli("--dtype", "fp8", "--tile", "128x256x128", "--schedule", "cooperative", "--no-fast-accum", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["kernel"]["schedule"] == "cooperative" and d["kernel"]["fast_accum"] is False
    assert d["kernel"]["accumulators_spill"] is True and d["clock"]["sm_mhz"] == 1980
    assert d["clock"]["power_limit_w"] == 700 and d["time_us"]["expected"] > 240
    r2 = _cli("--dtype", "bf16", "--tile", "128x128x64", "--sm-clock", "1500", "-f", "json")
    assert json.loads(r2.output)["clock"]["basis"].startswith("given")


@pytest.mark.parametrize("args,msg", [
    (("--dtype", "bf16", "--tile", "64x128x64", "--schedule", "cooperative"), "tile M >= 128"),
    (("--dtype", "bf16", "--tile", "128x128x64", "--schedule", "zigzag"), "choose one of"),
    (("--dtype", "bf16", "--tile", "128x128x64", "--sm-clock", "0"), "--sm-clock"),
    (("--dtype", "bf16", "--tile", "128x128x64", "--stages", "0"), "--stages"),
])
def test_cli_bad_kernel_options_are_one_line_exit_2(args, msg):
    r = _cli(*args)
    assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output


# --- the H200 tile campaign (bench/h200_tile_campaign) --------------------------------------------

CAMPAIGN = ROOT / "tests" / "data" / "h200_tile_campaign"  # the campaign's results, fields the loader reads


@pytest.fixture(scope="module")
def campaign():
    rows = tf.load([str(CAMPAIGN)])
    assert len(rows) > 1500  # 2,536 lines, re-timed pairs deduplicated
    return rows


def test_campaign_lines_read_with_their_kernel_identity(campaign):
    assert {r["l2"] for r in campaign} == {"warm", "cold"}
    assert any(r["swap_ab"] for r in campaign) and any(r["stream_k"] for r in campaign)
    assert {r["fast_accum"] for r in campaign if r["dtype"] == "fp8"} == {True, False}
    assert {r["epilogue"] for r in campaign} == {"tma", "no_smem"}
    keys = [tf.config_key(r) + tf.problem_key(r) for r in campaign]
    assert len(keys) == len(set(keys))  # one row per config, problem and L2 state


def test_a_held_out_family_is_predicted_and_ranked(campaign):
    held = [r for r in campaign if (r["n"], r["k"]) == (5120, 8192)]
    tc = tf.fit([r for r in campaign if (r["n"], r["k"]) != (5120, 8192)], "without qwen3 o_proj", rounds=2)
    pred = {i: tf.predict(r, tc) for i, r in enumerate(held)}
    e = tf.errors(pred, held)
    good, total, _, _ = tf.ranking({i: p[0] for i, p in pred.items()}, held)
    assert e["median"] < 0.15 and e["band"] >= 0.8 and good / total >= 0.85
