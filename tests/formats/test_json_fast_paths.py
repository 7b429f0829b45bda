"""The hand-written JSON fast paths of formats/json_out.py say byte for byte what the encoder says."""

from __future__ import annotations

import dataclasses
import json

import pytest
from synthetic import SPEC, model_result, problem_at  # a real ModelResult with recorded values (tests/synthetic.py)

from tiletune.formats.json_out import _model_json, _num, analysis_dict
from tiletune.model.perf import stated_notes

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@pytest.mark.parametrize("v", [0.1, 1e-7, 1e22, 3.0, -0.0, float("nan"), float("inf"), -float("inf"), None, True, False,
                               0, -5, 2**70])
def test_num_matches_json_dumps(v):
    assert _num(v) == json.dumps(v)


FULL = model_result(spec=dataclasses.replace(SPEC, name="NVIDIA RTX PRO 6000 Blackwell Server Edition"), note_facts=stated_notes(("a note",)),
                    smem=dict(shared_storage_bytes=83_968, limit_bytes=101_376, stages=2, verdict="fits"),
                    intensity_problem=56.04321, intensity_tile=227.5555, bound="memory", time_floor_s=1.054e-5,
                    time_expected_s=2.2e-5, time_low_s=1.5e-5, time_high_s=3.1e-5, efficiency_compute=0.0123456,
                    efficiency_roofline=0.4791, flops=1.05e9, peak_dense=1.87e15, peak_sparse=3.74e15,
                    bandwidth=1.792e12, ctas=56, sms=188)
NONE = dict.fromkeys(("intensity_problem", "intensity_tile", "bound", "time_floor_s", "time_expected_s", "time_low_s",
                      "time_high_s", "efficiency_compute", "efficiency_roofline", "flops", "peak_dense", "peak_sparse",
                      "bandwidth", "ctas", "sms"))
NO_FIT = dict.fromkeys(("shared_storage_bytes", "limit_bytes", "stages", "verdict"))


@pytest.mark.parametrize("a", [
    FULL,
    # every optional number None, odd characters in the GPU name
    model_result(spec=dataclasses.replace(SPEC, name="H200 \u00e9\"quoted\""), dtype="nvfp4", smem=NO_FIT, **NONE),
    model_result(problem_at(8), smem=dict(NO_FIT, verdict="does_not_build"),
                 **dict(NONE, time_expected_s=float("inf"), efficiency_compute=float("nan"), ctas=0, sms=132)),
    model_result(problem_at(8), smem=NO_FIT, **dict(NONE, intensity_problem=3, time_floor_s=1, efficiency_roofline=1,
                 peak_dense=989_000_000_000_000, time_low_s=-float("inf"))),  # ints where floats are usual
    FULL._replace(time_high_s=float("inf")),  # every number a float, one not finite
    FULL._replace(intensity_problem=1e308, intensity_tile=1e308),  # finite, but their sum is not
])
def test_model_json_matches_the_dict(a):
    parts: dict = {}
    assert _model_json(a, parts) == ENC(analysis_dict(a, notes=False))
    assert _model_json(a, parts) == ENC(analysis_dict(a, notes=False))  # again, from the memoised pieces


def test_model_json_pieces_keep_int_and_float_apart():
    parts: dict = {}
    as_float = FULL._replace(smem=dataclasses.replace(FULL.smem, shared_storage_bytes=83_968.0), ctas=56.0)
    for a in (FULL, as_float, FULL):
        assert _model_json(a, parts) == ENC(analysis_dict(a, notes=False))


def test_fixed_8_writes_what_round_and_repr_write():
    """_fixed_8 (one %-format for the model's eight numbers) == float.__repr__(round(x, nd)), on exact
    ties, negative zero, tiny values and sizes up to the bound it is used below."""
    import random

    from tiletune.formats.json_out import _FIXED_MAX, _fixed_8

    rng = random.Random(7)
    special = [0.0, -0.0, 0.0005, 0.0015, 2.675, 1.0005, 0.00004, -0.00004, 0.00005, 123.4565, _FIXED_MAX * 0.999999,
               -_FIXED_MAX * 0.999999, 1e-300, 0.99995, 9.99995]
    values = special + [rng.uniform(-1, 1) * 10 ** rng.uniform(-8, 11) for _ in range(20000)]
    values += [rng.randrange(-10**9, 10**9) / 2000 for _ in range(5000)]  # exact ties at the last decimal
    values = [v for v in values if abs(v) < _FIXED_MAX]
    for i in range(0, len(values) - 7, 8):
        eight = values[i:i + 8]
        want = [repr(round(v, 3)) for v in eight[:6]] + [repr(round(v, 4)) for v in eight[6:]]
        assert _fixed_8(*eight) == want, eight
