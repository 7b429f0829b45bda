"""The committed H200 sweep and the fitted constants: held-out error, split rule, nvjet tile parsing."""

import json
import statistics
from pathlib import Path

import pytest

from tiletune.model.calibration import DEFAULT, FITTED, constants_for
from tools.model_fit.fit import fit, nvjet_tile, predict, split_rows

SWEEP = Path(__file__).resolve().parents[2] / "tests" / "data" / "h200_sweep" / "h200_sweep.json"


@pytest.fixture(scope="module")
def rows():
    doc = json.loads(SWEEP.read_text())
    assert doc["env"]["gpu"] == "NVIDIA H200" and len(doc["rows"]) == 276
    return doc["rows"]


def test_sweep_keeps_every_sample_and_kernel_name(rows):
    for r in rows:
        assert len(r["samples_us"]) == 40 and r["median_us"] == pytest.approx(statistics.median(r["samples_us"]), abs=1e-3)
        assert any(k.startswith("nvjet_sm90") or "gemv" in k for k in r["kernels"])


def test_split_is_fixed_and_disjoint(rows):
    a, b = split_rows(rows)
    assert len(a) == len(b) == 138
    key = lambda r: (r["dtype"], r["m"], r["n"], r["k"])  # noqa: E731
    assert not {key(r) for r in a} & {key(r) for r in b}
    assert {r["dtype"] for r in b} == {"bf16", "fp8"} and {(r["n"], r["k"]) for r in b} == {(r["n"], r["k"]) for r in a}


def test_held_out_median_error_under_15_percent(rows):
    _, held = split_rows(rows)
    errs = sorted(abs(predict(r, constants_for("sm90", r["dtype"]))[0] / (r["median_us"] * 1e-6) - 1) for r in held)
    assert statistics.median(errs) < 0.15
    assert errs[-1] < 0.25  # worst held-out shape (RESULTS.md: 16.8 %)


def test_refit_reproduces_committed_fp8_constants(rows):
    fit_rows, _ = split_rows(rows)
    c = fit([r for r in fit_rows if r["dtype"] == "fp8"], "fp8")
    f = FITTED[("sm90", "fp8")]
    assert (c.eta_mma, c.eta_bw, c.t_fixed_s, c.p) == pytest.approx((f.eta_mma, f.eta_bw, f.t_fixed_s, f.p))


def test_nvjet_name_parsing_and_defaults():
    assert nvjet_tile(["nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT"]) == ((64, 8, 64), 16, True, (2, 1))
    assert nvjet_tile(["Memset (Device)", "nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN"]) == ((144, 128, 128), 6, False, (1, 2))
    assert nvjet_tile(["gemv2T_kernel"]) is None
    assert constants_for("sm120", "nvfp4") is DEFAULT and constants_for("sm90", "fp16") is FITTED[("sm90", "bf16")]
