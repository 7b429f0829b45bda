"""Calibration on the user's own measured times (issue 10 item 4): on times the model generated (constants
known) and on the SM120 DEBUG log in cache_samples/, which is constructed (its times are invented): it
checks the fit's mechanics, not the model's accuracy on SM120."""

from pathlib import Path

import pytest

from tiletune.analysis.pipeline import inspect
from tiletune.core.records import Problem, TileConfig
from tiletune.model import find
from tiletune.model.evidence import MIN_SAMPLES, Sample, _parts, _time, calibrate
from tiletune.readers import ReadContext

ROOT = Path(__file__).resolve().parents[2]
SM120_LOG = ROOT / "cache_samples" / "logs" / "sm120_0.6.17_warmup_debug.log"


@pytest.fixture(scope="module")
def sm120():
    r = inspect([SM120_LOG], ReadContext(arch="sm120", flashinfer_version="0.6.17"))
    fp4 = [Sample(ae.config.label(), ae.entry.problem, ae.config, ae.record.time_ms * 1e-3)
           for ae in r.entries if ae.record.time_ms is not None and ae.config is not None and ae.record.op == "fp4_gemm"]
    return r, fp4


def test_recovers_known_constants_from_model_generated_times():
    gpu = find("H200")
    tiles = [(128, 128, 64), (128, 256, 64), (64, 128, 64), (256, 128, 64), (64, 256, 64)]
    samples = []
    for m, n in ((1, 16384), (16, 16384), (4096, 4096)):  # memory-bound decode shapes and a compute-bound one
        for t in tiles:
            p, c = Problem(m, n, 8192, dtype_a="bf16"), TileConfig(tile=t)
            samples.append(Sample("x".join(map(str, t)), p, c, _time(_parts(p, c, gpu, "bf16", "sm90"), 1.3, 0.7, 3e-6)))
    cal = calibrate(samples, gpu, "bf16", "sm90")
    assert cal.compute_scale == pytest.approx(1.3, rel=0.06) and cal.eta_bw == pytest.approx(0.7, abs=0.051)
    assert cal.heldout_median < 0.02 and cal.n == 15


def test_sm120_log_calibration_beats_the_table_model_on_held_out_tactics(sm120):
    _, fp4 = sm120
    gpu = find("RTX PRO 6000 Server")
    cal = calibrate(fp4, gpu, "nvfp4", "sm120")
    assert cal.n == 64 and cal.heldout_n >= 20
    assert cal.heldout_median < 0.15 and cal.heldout_median < cal.uncalibrated_median / 3
    assert "calibrated on 64 measured tactics of this log" in cal.summary("this log")


def test_a_tactic_left_out_of_the_fit_is_predicted_within_its_band(sm120):
    _, fp4 = sm120
    gpu = find("RTX PRO 6000 Server")
    best = min(fp4, key=lambda s: s.measured_s)  # the winner: the tile a regret is measured against
    cal = calibrate([s for s in fp4 if s is not best], gpu, "nvfp4", "sm120")
    t, lo, hi = cal.predict(best.problem, best.config)
    assert abs(t / best.measured_s - 1) < 0.25 and lo < t < hi


def test_too_few_samples_is_no_calibration(sm120):
    _, fp4 = sm120
    assert calibrate(fp4[:MIN_SAMPLES - 1], find("RTX PRO 6000 Server"), "nvfp4", "sm120") is None


def test_inspect_says_it_calibrated_and_prices_each_failure(sm120):
    r, _ = sm120
    cal_notes = [n for n in r.notes if "calibrated on" in n and "measured tactics of this input" in n]
    assert {n.split(" ")[0] for n in cal_notes} == {"fp4_gemm", "mxfp8_gemm"}
    regrets = [n for n in r.notes if n.startswith("failed ")]
    failed = [f for f in r.failures if f.config is not None]
    assert len(regrets) == sum(len(f.problems) for f in failed) == 4
    for n in regrets:
        assert "(model, calibrated on this input)" in n and "measured" in n and " us" in n


def test_inputs_without_times_get_no_calibration_note():
    r = inspect([ROOT / "cache_samples" / "logs" / "h200_0.7.2.post1_fp8_gemm_cublas.log"], ReadContext())
    # timed, but cuBLAS tactics have no tile: nothing to calibrate a tile model on
    assert not any("calibrated on" in n for n in r.notes)
