"""The hand-written JSON fast paths of formats/json_out.py say byte for byte what the encoder says."""

from __future__ import annotations

import json

import pytest
from msgspec import structs
from synthetic import SPEC, model_result, problem_at  # a real ModelResult with recorded values (tests/synthetic.py)

from tiletune.formats.json_out import _model_json, _ModelParts, _num, analysis_dict
from tiletune.formats.strict_json import finite_only
from tiletune.model.perf import stated_notes

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@pytest.mark.parametrize("v", [0.1, 1e-7, 1e22, 3.0, -0.0, float("nan"), float("inf"), -float("inf"), None, True, False,
                               0, -5, 2**70])
def test_num_matches_json_dumps(v):
    assert _num(v) == json.dumps(v)


FULL = model_result(spec=structs.replace(SPEC, name="NVIDIA RTX PRO 6000 Blackwell Server Edition"), note_facts=stated_notes(("a note",)),
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
    model_result(spec=structs.replace(SPEC, name="H200 \u00e9\"quoted\""), dtype="nvfp4", smem=NO_FIT, **NONE),
    model_result(problem_at(8), smem=dict(NO_FIT, verdict="does_not_build"),
                 **dict(NONE, time_expected_s=float("inf"), efficiency_compute=float("nan"), ctas=0, sms=132)),
    model_result(problem_at(8), smem=NO_FIT, **dict(NONE, intensity_problem=3, time_floor_s=1, efficiency_roofline=1,
                 peak_dense=989_000_000_000_000, time_low_s=-float("inf"))),  # ints where floats are usual
    structs.replace(FULL, time_high_s=float("inf")),  # every number a float, one not finite
    structs.replace(FULL, intensity_problem=1e308, intensity_tile=1e308),  # finite, but their sum is not
    # the fast path's one size test (the numbers' hypotenuse below half _FIXED_MAX) at its edges
    structs.replace(FULL, intensity_problem=99_999_999_999.99, efficiency_roofline=-99_999_999_999.99),
    structs.replace(FULL, intensity_problem=49_999_999_999.99, efficiency_roofline=-49_999_999_999.99),
    structs.replace(FULL, intensity_problem=49_999_999_999.99),
    structs.replace(FULL, intensity_problem=100_000_000_000.0),
    structs.replace(FULL, efficiency_compute=-1e11),
    structs.replace(FULL, time_high_s=1e5),  # 1e11 us
    structs.replace(FULL, time_high_s=4.9e4, time_low_s=-4.9e4),
    structs.replace(FULL, intensity_problem=1e154),  # its square overflows to inf
    structs.replace(FULL, intensity_problem=1e308, time_floor_s=1e308),
    structs.replace(FULL, time_floor_s=float("nan"), time_expected_s=float("inf")),
    structs.replace(FULL, intensity_tile=float("nan")),  # the tile's intensity (in the shape) not finite
    structs.replace(FULL, intensity_tile=1e300),
    structs.replace(FULL, intensity_tile=-0.0),
    structs.replace(FULL, intensity_tile=7),
    structs.replace(FULL, intensity_tile=True),
    structs.replace(FULL, intensity_problem=10**30),  # an int too big for the fixed digits
    structs.replace(FULL, intensity_problem=True, time_floor_s=2, efficiency_compute=False),  # ints and bools
    structs.replace(FULL, intensity_tile=None),
    structs.replace(FULL, intensity_problem=0.0, time_floor_s=-0.0, efficiency_compute=-1e-9, efficiency_roofline=0.99995),
    structs.replace(FULL, intensity_problem=1.5, intensity_tile=10.0, time_floor_s=1e-4, time_expected_s=1.1e-5),
    structs.replace(FULL, bound="compute"),
    structs.replace(FULL, bound="9.0 % of peak"),  # a bound text with a digit, a point and a `%`: the general path
    structs.replace(FULL, problem=structs.replace(FULL.problem, m=True)),  # M written as it is, not as 1
    structs.replace(FULL, ctas=True),
])
def test_model_json_matches_the_dict(a):
    want, non_finite = finite_only(ENC(analysis_dict(a, notes=False)))  # strict JSON: NaN / Infinity as null
    parts = _ModelParts()
    assert _model_json(a, parts) == want
    assert parts.strict.replaced == non_finite
    assert _model_json(a, parts) == want  # again, from the memoised pieces


def test_model_json_shapes_tell_tile_intensities_apart():
    """The tile's intensity is written in the memoised shape, keyed by its identity: cases that differ
    only there (0.0 and -0.0 are equal, 1 and 1.0 and True too) each get their own text."""
    parts = _ModelParts()
    tiles = [227.5555, 0.0, -0.0, 1, 1.0, True, 227.5555, float("nan"), 1e300, None, 0.0005, 2.675, -0.0]
    for it in tiles + tiles[::-1]:
        a = structs.replace(FULL, intensity_tile=it)
        want, _ = finite_only(ENC(analysis_dict(a, notes=False)))
        assert _model_json(a, parts) == want


def test_model_json_reads_the_fields_it_names():
    """`_model_json` reads ModelResult by position (one unpacking of a slice): the positions it uses
    are those of the fields it means."""
    import inspect

    from tiletune.formats import json_out
    from tiletune.model.perf import ModelResult

    src = inspect.getsource(json_out._model_json)
    targets = src.split("fields: tuple[Any, ...] = structs.astuple(a)")[1].split("= fields")[0]
    names = [t.strip() for t in targets.replace("(", "").replace(")", "").replace("\n", " ").split(",")]
    meant = {"dtype": "dtype", "ip": "intensity_problem", "it": "intensity_tile", "bound": "bound",
             "peak_dense": "peak_dense", "peak_sparse": "peak_sparse", "sms": "sms", "ctas": "ctas",
             "tf": "time_floor_s", "te": "time_expected_s", "tl": "time_low_s", "th": "time_high_s",
             "ec": "efficiency_compute", "er": "efficiency_roofline", "smem": "smem", "problem": "problem",
             "gpu_spec": "gpu_spec", "l2": "l2"}
    assert len(names) == len(ModelResult.__struct_fields__)
    for i, n in enumerate(names):
        if n != "_":
            assert ModelResult.__struct_fields__[i] == meant[n], (i, n)
    assert sorted(n for n in names if n != "_") == sorted(meant)


def test_model_json_pieces_keep_int_and_float_apart():
    parts = _ModelParts()
    as_float = structs.replace(FULL, smem=structs.replace(FULL.smem, shared_storage_bytes=83_968.0), ctas=56.0)
    m_true = structs.replace(FULL, problem=structs.replace(FULL.problem, m=True))
    m_one = structs.replace(FULL, problem=structs.replace(FULL.problem, m=1))
    for a in (FULL, as_float, FULL, m_one, m_true, m_one, structs.replace(FULL, bound="compute"), FULL,
              structs.replace(FULL, sms=170), structs.replace(FULL, sms=170.0), structs.replace(FULL, sms=True), FULL):  # (the SMs: in the shape)
        assert _model_json(a, parts) == ENC(analysis_dict(a, notes=False))


def test_numbers_write_what_round_and_repr_write():
    """The model's seven per-case numbers, written by one %-format and `_without_trailing_zeros`, say
    float.__repr__(round(x, nd)), on exact ties, negative zero, tiny values, numbers with one, two
    or all their decimals zero, and sizes up to the bound the format is used below."""
    import random

    from tiletune.formats.json_out import _FIXED_MAX, _NUMBERS, _without_trailing_zeros

    rng = random.Random(7)
    special = [0.0, -0.0, 0.0005, 0.0015, 2.675, 1.0005, 0.00004, -0.00004, 0.00005, 123.4565, _FIXED_MAX * 0.999999,
               -_FIXED_MAX * 0.999999, 1e-300, 0.99995, 9.99995, 1.0, 10.0, 100.5, 0.1, -0.5, 1e10, 99.99999]
    values = special + [rng.uniform(-1, 1) * 10 ** rng.uniform(-8, 11) for _ in range(20000)]
    values += [rng.randrange(-10**9, 10**9) / 2000 for _ in range(5000)]  # exact ties at the last decimal
    values += [rng.randrange(-10**6, 10**6) / 10 ** rng.randrange(0, 4) for _ in range(5000)]  # trailing zeros
    values = [v for v in values if abs(v) < _FIXED_MAX]
    rng.shuffle(values)
    want_template = _NUMBERS.replace("%.3f", "%s").replace("%.4f", "%s")
    for i in range(0, len(values) - 6, 7):
        seven = tuple(values[i:i + 7])
        want = want_template % tuple([repr(round(v, 3)) for v in seven[:5]] + [repr(round(v, 4)) for v in seven[5:]])
        got = _NUMBERS % seven
        if "0," in got:
            got = _without_trailing_zeros(got)
        assert got == want, seven


def _odd_result():
    """An inspect result with NaN and infinities wherever an input or the model can put one (tactic,
    shapes, extras, detail, time_ms, problem fields, the model's numbers), next to strings that only
    spell them, and entries that share an analysis."""
    from synthetic import ENV, REF, T128, port, problem

    from tiletune.analysis.pipeline import build
    from tiletune.analysis.results import AnalyzedEntry
    from tiletune.core.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded

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
    odd = structs.replace(fits[1].analysis, time_expected_s=nan, intensity_problem=inf, peak_dense=inf, ctas=nan)
    entries = list(res.entries)
    for i, ae in enumerate(entries):  # two entries share the odd analysis, one keeps its own
        if ae is fits[1] or ae is fits[2]:
            entries[i] = AnalyzedEntry(ae.entry, odd, ae.analysis_note)
    return structs.replace(res, entries=tuple(entries))


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
    cut = '],"failures":'  # (no input here names a "failures" key)
    assert "NaN" in loose[: loose.index(cut)] and "Infinity" in loose[: loose.index(cut)]
    # (the tail, made strict by its own pass, still holds the note: the overview's times are non-finite too)
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
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats import json_out
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


def _canonical(text):
    """The JSON with keys sorted (the fast writer orders an entry's keys its own way): true and 1
    stay apart, as they do in the text."""
    return json.dumps(json.loads(text), sort_keys=True)


def test_entry_pieces_memoised_by_value_and_identity_write_what_the_tree_says():
    """The entry loop looks the problem's tail up by its notes tuple's identity and the values it
    shows, its M range and the model note by value: tuples equal but distinct, notes apart,
    experts / top_k of different types (1 and True), records with and without rank / line /
    time, and problem-less entries each write what `inspect_dict` writes."""
    from synthetic import ENV, REF, T128, port

    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded
    from tiletune.formats import json_out

    def rec(tactic, **kw):
        return TuningRecord(source="/data/a.json", source_kind="flashinfer-v1", op="fp4_gemm",
                            runner="CutlassFp4GemmRunner", tactic=tactic, status=Status.CHOSEN, env=ENV, **kw)

    def prob(m, notes, **kw):
        return Problem(m=m, n=7168, k=4608, m_range=kw.pop("m_range", (1, m)), dtype_a="nvfp4", dtype_b="nvfp4",
                       dtype_out=kw.pop("dtype_out", "bf16"), notes=notes, **kw)

    one, same, other = ("k from the key",), tuple(["k from the key"]), ("another note", "k from the key")
    assert one == same and one is not same
    ents = [
        Entry(rec(3), prob(16, one), Decoded(T128, REF, 3)),
        Entry(rec(3), prob(32, same), Decoded(T128, REF, 3)),
        Entry(rec(4), prob(64, other), Decoded(T128, REF, 4)),
        Entry(rec(4), prob(64, one, dtype_out="fp16"), Decoded(T128, REF, 4)),
        Entry(rec(5), prob(16, one, experts=8, top_k=2), Decoded(T128, REF, 5)),
        Entry(rec(5), prob(16, one, experts=True, top_k=1), Decoded(T128, REF, 5)),
        Entry(rec(5), prob(16, one, experts=1, top_k=True), Decoded(T128, REF, 5)),
        Entry(rec(6), prob(16, one, m_range=None), Undecoded("out of range")),
        Entry(rec(6), prob(16, one, m_range=None), Undecoded("out of range")),
        Entry(rec(3, rank="rank1", line=7, time_ms=0.25, count=2), prob(16, one), Decoded(T128, REF, 3)),
        Entry(rec(3, error="Error Internal"), prob(16, one), Decoded(T128, REF, 3)),
        # a count that equals 1 but is not the int 1 takes the long way and writes itself
        Entry(rec(3, count=True), prob(16, one), Decoded(T128, REF, 3)),
        Entry(rec(3, count=1.0), prob(16, one), Decoded(T128, REF, 3)),
        Entry(rec(3, count=int("1")), prob(16, one), Decoded(T128, REF, 3)),
        # M ranges: equal but distinct tuples, with the notes and dtypes of other entries
        Entry(rec(3), prob(16, one, m_range=tuple([1, 16])), Decoded(T128, REF, 3)),
        Entry(rec(3), prob(16, other, m_range=(1, 16)), Decoded(T128, REF, 3)),
        Entry(rec(3), prob(16, other, m_range=(9, 16)), Decoded(T128, REF, 3)),
        Entry(rec(7, shapes=((16, 2), (3,))), None, Undecoded("no problem"), problem_note="unknown op"),
        Entry(rec(3), prob(16, one), Decoded(T128, REF, 3)),
    ]
    res = build(ents, sources=[("/data/a.json", "flashinfer-v1")], model=port())
    assert sum(ae.analysis_note is not None for ae in res.entries) >= 3  # model notes repeat
    fast = json_out.format_inspect(res)
    assert _canonical(fast) == _canonical(ENC(json_out.inspect_dict(res)))
    entries = json.loads(fast)["entries"]
    assert [(e["problem"] or {}).get("experts") for e in entries[4:7]] == [8, True, 1]
    assert [e["count"] for e in entries[10:14]] == [1, True, 1.0, 1]
    assert [e["problem"]["m_range"] for e in entries[14:17]] == [[1, 16], [1, 16], [9, 16]]
    assert len({json.dumps(e["problem"]["note_ids"]) for e in entries[:4]}) == 2


def test_shared_pieces_follow_each_change_of_context_and_decode():
    """The entry loop reuses the entry before's shared pieces while its record's context (env,
    source, op, runner, status, extras, detail) and decode are the same objects, and looks them
    up otherwise: contexts and decodes that switch back and forth, equal strings that are other
    objects, and extras equal in Python but written apart (1 and True) each write what
    `inspect_dict` writes."""

    from synthetic import ENV, REF, T128, T256, port

    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded
    from tiletune.formats import json_out

    other_env = structs.replace(ENV, gpu="NVIDIA GeForce RTX 5090")
    source = "/data/a.json"
    same_text = "".join(["/data/", "a.json"])  # equal to `source`, another object
    assert same_text == source and same_text is not source

    def rec(tactic, **kw):
        fields = dict(source=source, source_kind="flashinfer-v1", op="fp4_gemm", runner="CutlassFp4GemmRunner",
                      tactic=tactic, status=Status.CHOSEN, env=ENV)
        fields.update(kw)
        return TuningRecord(**fields)

    prob = Problem(m=16, n=7168, k=4608, m_range=(1, 16), dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")
    d3, d4, u = Decoded(T128, REF, 3), Decoded(T256, REF, 4), Undecoded("out of range")
    records = [
        (rec(3), d3), (rec(3), d3), (rec(4), d4), (rec(3), d3),
        (rec(3, env=other_env), d3), (rec(3, env=other_env), d3), (rec(3), d3),
        (rec(3, source=same_text), d3), (rec(3, status=Status.FAILED, error="Error Internal"), d3),
        (rec(3, extras=(1, 2)), d3), (rec(3, extras=(True, 2)), d3), (rec(3, extras=(1, 2)), d3),
        (rec(3, detail=(("policy", 1),)), d3), (rec(3, detail=(("policy", True),)), d3),
        (rec(3, op="fp8_gemm", runner="CublasFp8GemmRunner"), u), (rec(40), u), (rec(3), d3),
    ]
    ents = [Entry(r, prob, d) for r, d in records]
    res = build(ents, sources=[(source, "flashinfer-v1")], model=port())
    fast = json_out.format_inspect(res)
    assert _canonical(fast) == _canonical(ENC(json_out.inspect_dict(res)))
    got = json.loads(fast)["entries"]
    assert [e["extras"] for e in got[9:12]] == [[1, 2], [True, 2], [1, 2]]
    assert [e["gpu"] for e in got[3:7]] == [ENV.gpu, other_env.gpu, other_env.gpu, ENV.gpu]


def test_problem_sizes_looked_up_by_value_keep_their_types():
    """The entry loop looks the text of the tactic and M, and of N, K and the batch, up by value,
    for exact ints only: sizes equal in Python but of another type (16 and 16.0, 1 and 1.0), and
    a tactic of 3 then True, each write what `inspect_dict` writes, whichever came first."""
    from synthetic import ENV, REF, T128, port

    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded
    from tiletune.formats import json_out

    def rec(tactic):
        return TuningRecord(source="/data/a.json", source_kind="flashinfer-v1", op="fp4_gemm",
                            runner="CutlassFp4GemmRunner", tactic=tactic, status=Status.CHOSEN, env=ENV)

    def prob(m=16, n=7168, k=4608, batch=1):
        return Problem(m=m, n=n, k=k, batch=batch, m_range=(1, 16), dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")

    sizes = [dict(), dict(m=16.0), dict(n=7168.0), dict(k=4608.0), dict(batch=1.0), dict(), dict(m=32), dict(n=7168.0)]
    ents = [Entry(rec(3), prob(**kw), Decoded(T128, REF, 3)) for kw in sizes]
    ents += [Entry(rec(True), prob(), Undecoded("a bool tactic")), Entry(rec(1), prob(), Undecoded("tactic 1"))]
    res = build(ents, sources=[("/data/a.json", "flashinfer-v1")], model=port())
    fast = json_out.format_inspect(res)
    assert _canonical(fast) == _canonical(ENC(json_out.inspect_dict(res)))
    got = json.loads(fast)["entries"]
    assert [type(e["problem"]["m"]) for e in got[:3]] == [int, float, int]
    assert [e["problem"]["n"] for e in got[5:8]] == [7168, 7168, 7168] and type(got[7]["problem"]["n"]) is float
    assert [e["tactic"] for e in got[8:]] == [True, 1]


def _strict_loads(text):
    """json.loads that rejects what JSON does not have (NaN, Infinity), as a strict parser does."""
    def reject(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=reject)


def test_problem_sizes_of_any_type_write_strict_json():
    """A bool is an int subclass: an M / N / K / batch / M range that is a bool (or a float, a
    string, NaN) is not an exact int, and the entry loop once wrote it with str(), `True`, which is
    not JSON. Each writes what the encoder writes (NaN as null, the notes say so), and the same
    as `inspect_dict` writes where the value is finite."""
    from synthetic import ENV, REF, T128, port

    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Decoded, Entry, Problem, Status, TuningRecord, Undecoded
    from tiletune.formats import json_out
    from tiletune.formats.strict_json import NOTE

    def rec(tactic):
        return TuningRecord(source="/data/a.json", source_kind="flashinfer-v1", op="fp4_gemm",
                            runner="CutlassFp4GemmRunner", tactic=tactic, status=Status.CHOSEN, env=ENV)

    def prob(m=16, n=7168, k=4608, batch=1, m_range=(1, 16)):
        return Problem(m=m, n=n, k=k, batch=batch, m_range=m_range, dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")

    odd = [dict(m=True), dict(n=False), dict(k=True), dict(batch=True), dict(m="16"), dict(m_range=(True, 16)),
           dict(m_range=(1, 16.0)), dict(), dict(m_range=(1, 16))]
    ents = [Entry(rec(3), prob(**kw), Decoded(T128, REF, 3)) for kw in odd]
    res = build(ents, sources=[("/data/a.json", "flashinfer-v1")], model=port())
    fast = json_out.format_inspect(res)
    got = _strict_loads(fast)["entries"]
    assert _canonical(fast) == _canonical(ENC(json_out.inspect_dict(res)))
    sizes = [[e["problem"][f] for f in ("m", "n", "k", "batch", "m_range")] for e in got]
    assert sizes[:4] == [[True, 7168, 4608, 1, [1, 16]], [16, False, 4608, 1, [1, 16]],
                         [16, 7168, True, 1, [1, 16]], [16, 7168, 4608, True, [1, 16]]]
    assert sizes[4][0] == "16" and sizes[5][4] == [True, 16] and sizes[6][4] == [1, 16.0]
    assert [type(v) for v in sizes[6][4]] == [int, float] and [type(v) for v in sizes[8][4]] == [int, int]

    nan = float("nan")
    ents = [Entry(rec(3), prob(**kw), Undecoded("odd sizes")) for kw in (dict(n=nan), dict(m_range=(1, nan)), dict())]
    doc = _strict_loads(json_out.format_inspect(build(ents, sources=[("/data/a.json", "flashinfer-v1")], model=port())))
    assert doc["entries"][0]["problem"]["n"] is None and doc["entries"][1]["problem"]["m_range"] == [1, None]
    assert doc["entries"][2]["problem"]["n"] == 7168 and NOTE in doc["notes"]
