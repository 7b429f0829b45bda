"""The hand-written JSON fast paths of formats/json_out.py say byte for byte what the encoder says."""

from __future__ import annotations

import dataclasses
import json

import pytest
from synthetic import SPEC, model_result, problem_at  # a real ModelResult with recorded values (tests/synthetic.py)

from tiletune.formats.json_out import _model_json, _ModelParts, _num, analysis_dict
from tiletune.formats.strict_json import finite_only
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
    want, non_finite = finite_only(ENC(analysis_dict(a, notes=False)))  # strict JSON: NaN / Infinity as null
    parts = _ModelParts()
    assert _model_json(a, parts) == want
    assert parts.strict.replaced == non_finite
    assert _model_json(a, parts) == want  # again, from the memoised pieces


def test_model_json_pieces_keep_int_and_float_apart():
    parts = _ModelParts()
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


def _odd_result():
    """An inspect result with NaN and infinities wherever an input or the model can put one (tactic,
    shapes, extras, detail, time_ms, problem fields, the model's numbers), next to strings that only
    spell them, and entries that share an analysis."""
    from synthetic import ENV, REF, T128, port, problem

    from tiletune.pipeline import build
    from tiletune.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded
    from tiletune.results import AnalyzedEntry

    nan, inf = float("nan"), float("inf")

    def rec(tactic, **kw):
        return TuningRecord(source="/data/a/NaN Infinity.json", source_kind="flashinfer-v1", op="fp4_gemm",
                            runner="CutlassFp4GemmRunner", tactic=tactic, status=Status.CHOSEN, env=ENV, **kw)

    ents = [
        Entry(rec(3), problem(1, 1, 1), Decoded(T128, REF, 3)),
        Entry(rec(nan), problem(16, 9, 16), Undecoded("tactic NaN -Infinity")),
        Entry(rec((1, inf)), problem(16, 9, 16), Undecoded("a tuple tactic")),
        Entry(rec(3, time_ms=inf, error="Infinity ms", line=3, count=2), problem(16, 9, 16), Decoded(T128, REF, 3)),
        Entry(rec(3, time_ms=-inf), problem(256, 129, 256), Decoded(T128, REF, 3)),
        Entry(rec(4, detail=(("min_time", -inf), ("policy", ("NaN", nan)))), problem(256, 129, 256), Decoded(T128, REF, 4)),
        Entry(rec(5, extras=(nan, 1, "NaN")), problem(16, 9, 16), Decoded(T128, REF, 5)),
        Entry(rec(6, shapes=((nan, 2), (inf,))), None, Undecoded("no problem"), problem_note="unknown op NaN"),
        Entry(rec(7), Problem(m=8, n=16, k=32, experts=nan, top_k=inf, notes=("NaN note",)), Undecoded("odd MoE")),
    ]
    res = build(ents, sources=[("/data/a/NaN Infinity.json", "flashinfer-v1")], model=port())
    fits = [ae for ae in res.entries if ae.analysis is not None]
    assert len(fits) >= 3
    odd = fits[1].analysis._replace(time_expected_s=nan, intensity_problem=inf, peak_dense=inf, ctas=nan)
    entries = list(res.entries)
    for i, ae in enumerate(entries):  # two entries share the odd analysis, one keeps its own
        if ae is fits[1] or ae is fits[2]:
            entries[i] = AnalyzedEntry(ae.entry, odd, ae.analysis_note)
    return dataclasses.replace(res, entries=tuple(entries))


def _refuse(name):
    raise AssertionError(f"bare {name} in the output")


def test_strict_fragments_equal_one_pass_over_the_whole_text(monkeypatch):
    """The fragment writer makes each memoised fragment strict once, where it is made; the plain way
    is one `finite_only` pass over the whole text. Both must write the same entries, and the note."""
    from tiletune.formats import json_out
    from tiletune.formats.strict_json import NOTE

    res = _odd_result()
    fast = json_out.format_inspect(res)
    doc = json.loads(fast, parse_constant=_refuse)
    assert NOTE in doc["notes"]
    monkeypatch.setattr(json_out._Strict, "__call__", lambda self, text: text)  # every fragment as written
    loose = json_out.format_inspect(res)
    assert "NaN" in loose and "Infinity" in loose and NOTE not in json.loads(loose)["notes"]
    cut = '],"failures":'  # (no input here names a "failures" key)
    plain, replaced = finite_only(loose[: loose.index(cut)])
    assert replaced >= 9
    assert fast[: fast.index(cut)] == plain
    assert "NaN Infinity.json" in fast and "Infinity ms" in fast  # strings keep what they say


@pytest.mark.parametrize("held", [1, 2])
def test_bounded_model_memo_writes_the_same(monkeypatch, held):
    from tiletune.formats import json_out

    res = _odd_result()
    want = json_out.format_inspect(res)
    monkeypatch.setattr(json_out, "_MODELS_HELD", held)
    assert json_out.format_inspect(res) == want


def test_equal_values_of_different_types_keep_their_own_text(tmp_path):
    """The writer memoises extras, tactic tuples and detail pairs by value; 0, 0.0 and False (and
    1 and True) are equal and hash alike in Python, but JSON writes them apart. Keys that differ
    only so must each print their own (a plain value memo once printed the first key's `false`
    for the others), and the same as the writer's tree (`inspect_dict`) says."""
    from tiletune.formats import json_out
    from tiletune.pipeline import inspect
    from tiletune.readers.interface import ReadContext

    shapes = "((16, 2048), (2048, 4096), (-1, 256), (256, 4096), (), (0,), (-1, 4096), (0,), (0,), (-1,))"
    doc = {"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}}
    extras = ("(False, 1)", "(0, 1)", "(0.0, True)", "(0, 1.0)")
    replays = (1, True, 1.0, 1)
    for ex, rep in zip(extras, replays):
        doc[f"('fp4_gemm', 'CutlassFp4GemmRunner', {shapes}, {ex})"] = [
            "CutlassFp4GemmRunner", 3, ["cuda_graph_profile_replays", rep, "l2_cache_policy", "cold"]]
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(doc, indent=2))
    res = inspect([path], ReadContext())
    fast = json.loads(json_out.format_inspect(res))
    tree = json.loads(ENC(json_out.inspect_dict(res)))
    got = {json.dumps(e["extras"]): json.dumps(e["detail"]) for e in fast["entries"]}
    assert got == {json.dumps(e["extras"]): json.dumps(e["detail"]) for e in tree["entries"]}
    assert set(got) == {"[false, 1]", "[0, 1]", "[0.0, true]", "[0, 1.0]"}
    assert sorted(got.values()).count(
        '{"profiling_policy": [["cuda_graph_profile_replays", 1], ["l2_cache_policy", "cold"]]}') == 2
    assert '{"profiling_policy": [["cuda_graph_profile_replays", true], ["l2_cache_policy", "cold"]]}' in got.values()
