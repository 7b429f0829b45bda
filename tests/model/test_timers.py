"""The fixed per-kernel term split by how a timing was taken (tiletune/model/timers.py, issue 26 round five)."""

import json

import pytest
from typer.testing import CliRunner

from tiletune.cli.typer_app import app
from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import timers
from tiletune.model.gpus import find
from tiletune.model.perf import estimate

SMALL = Problem(m=16, n=1024, k=1024, batch=4)
TILE = TileConfig(tile=(64, 64, 64))


def test_fixed_term_orders_the_timers_and_keeps_the_fit_value_by_default():
    fit, clock = 4.96e-6, 1.86e9
    k, g, e, u = (timers.fixed_term(fit, clock, t) for t in ("kernel", "graph", "events", "unknown"))
    assert timers.fixed_term(fit, clock, None) == e and e.expected == fit  # not stated: the fit's own, as before
    assert k.expected == pytest.approx(timers.INKERNEL_CYCLES / clock)
    assert k.expected < g.expected < e.expected
    assert g.expected == pytest.approx(k.expected + timers.GRAPH_GAP_S)
    assert (u.expected, u.low, u.high) == (g.expected, k.expected, e.expected)  # unknown: the band spans both


def test_the_in_kernel_part_runs_at_the_sm_clock_and_never_exceeds_the_fit():
    slow, fast = timers.fixed_term(4.96e-6, 1.0e9, "kernel"), timers.fixed_term(4.96e-6, 2.0e9, "kernel")
    assert slow.expected == pytest.approx(2 * fast.expected)
    tiny_fit = timers.fixed_term(1e-6, 1.0e9, "graph")  # a fit whose whole fixed term is below the in-kernel part
    assert tiny_fit.expected <= max(1e-6, timers.INKERNEL_CYCLES / 1.0e9)


def test_estimate_prices_a_small_kernel_by_its_timer_and_says_so():
    gpu = find("B200")
    plain = estimate(SMALL, TILE, gpu, dtype="bf16")
    events = estimate(SMALL, TILE, gpu, dtype="bf16", timer="events")
    kernel = estimate(SMALL, TILE, gpu, dtype="bf16", timer="kernel")
    unknown = estimate(SMALL, TILE, gpu, dtype="bf16", timer="unknown")
    assert events.time_expected_s == plain.time_expected_s and plain.timer is None
    assert kernel.time_expected_s < plain.time_expected_s - 2e-6  # 3 us of launch and event latency gone
    # unknown: the band holds the kernel-only and the events expectations (no extra ratio widening on top)
    assert unknown.time_low_s <= kernel.time_expected_s and unknown.time_high_s >= events.time_expected_s
    assert unknown.time_high_s < events.time_high_s
    assert kernel.time_low_s <= kernel.time_expected_s <= kernel.time_high_s
    assert any(n.startswith("timer kernel:") and "in-kernel" in n for n in kernel.notes)
    assert not any(n.startswith("timer") for n in plain.notes)


def test_a_large_kernel_barely_moves_and_sm90_default_is_unchanged():
    gpu = find("B200")
    big = Problem(m=8192, n=8192, k=8192)
    cfg = TileConfig(tile=(128, 256, 64))
    a, b = (estimate(big, cfg, gpu, dtype="bf16", timer=t).time_expected_s for t in ("events", "kernel"))
    assert 0 < a - b < 0.01 * a
    h200 = find("H200")
    assert estimate(SMALL, TILE, h200, dtype="bf16").time_fixed_s == pytest.approx(4.96e-6)


def test_a_bad_timer_is_a_model_error():
    with pytest.raises(ModelError, match="timer"):
        estimate(SMALL, TILE, find("B200"), dtype="bf16", timer="stopwatch")


def test_cli_timer_reaches_json_and_table_and_a_bad_one_is_one_line():
    runner = CliRunner()
    args = ["model", "--gpu", "GB300", "--dtype", "bf16", "--m", "128", "--n", "64", "--k", "64", "--tile", "64x64x64"]
    base = json.loads(runner.invoke(app, args + ["--format", "json"]).stdout)
    r = runner.invoke(app, args + ["--timer", "kernel", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["time_us"]["timer"] == "kernel" and d["time_us"]["fixed"] < base["time_us"]["fixed"] - 2
    text = runner.invoke(app, args + ["--timer", "kernel"], env={"COLUMNS": "400"}).stdout
    assert "timer kernel:" in text and "a timing taken with kernel" in text
    bad = runner.invoke(app, args + ["--timer", "wallclock"])
    assert bad.exit_code == 2 and "--timer" in bad.output and "Traceback" not in bad.output


def test_timer_split_measurement_is_what_the_constants_say():
    """The two constants are the medians the docstring names, recomputed from the committed raw lines."""
    import statistics
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "h200_timer_split" / "timer_split.jsonl"
    rows = [json.loads(line) for line in raw.read_text().splitlines()][1:]
    gaps = [r["graph_us"] - r["kernel_us"] for r in rows if len(r["kernels_per_call"]) == 1]
    assert len(gaps) == 18 and statistics.median(gaps) == pytest.approx(timers.GRAPH_GAP_S * 1e6, abs=0.01)


def test_in_kernel_cycles_are_the_h200_measurement_through_todays_sm90_model():
    from pathlib import Path

    from tools.model_fit import timer_split

    rows = timer_split.rows(Path(__file__).resolve().parents[1] / "data" / "h200_timer_split" / "timer_split.jsonl")
    seconds, cycles = timer_split.inkernel(rows)
    assert 1.0e-6 < seconds < 2.5e-6  # a kernel-only floor of about 2 us, less its modelled work
    assert cycles == pytest.approx(timers.INKERNEL_CYCLES, rel=0.05)
    assert timer_split.graph_gap(rows) == pytest.approx(timers.GRAPH_GAP_S, rel=0.02)
