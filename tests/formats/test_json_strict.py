"""inspect's JSON (formats/inspect_doc.py, encoded by msgspec) is strict JSON whatever the inputs hold:
non-finite numbers become null and the notes say so, values equal in Python but written apart in
JSON (1, 1.0, True) keep their own text, and the model's per-case fast path writes what the general
one writes."""

from __future__ import annotations

import json

from msgspec import structs

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _strict_loads(text):
    return json.loads(text, parse_constant=_refuse)


def _canonical(text):
    return json.dumps(json.loads(text), sort_keys=True)


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


def test_non_finite_numbers_are_null_and_the_notes_say_so():
    from tiletune.formats import json_out
    from tiletune.formats.strict_json import NOTE

    doc = _strict_loads(json_out.format_inspect(_odd_result()))
    assert NOTE in doc["notes"]
    e = doc["entries"]
    assert e[1]["tactic"] is None and e[2]["tactic"] == [1, None] and e[3]["time_ms"] is None
    assert e[5]["detail"] == {"min_time": None, "policy": ["NaN", None]} and e[6]["extras"] == [None, 1, "NaN"]
    assert e[7]["shapes"] == [[None, 2], [None]] and e[8]["problem"]["experts"] is None
    assert e[3]["error"] == "Infinity ms" and e[0]["source"].endswith("NaN Infinity.json")  # strings keep what they say
    odd = [x["model"] for x in e if x["model"] is not None and x["model"]["time_us"]["expected"] is None]
    assert len(odd) == 2 and all(m["peak_tflops"]["dense"] is None and m["ctas"] is None for m in odd)


def test_a_finite_document_has_no_strict_note():
    from synthetic import ENV, REF, T128, port, problem

    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Decoded, Entry, Status, TuningRecord
    from tiletune.formats import json_out
    from tiletune.formats.strict_json import NOTE

    rec = TuningRecord(source="/data/a.json", source_kind="flashinfer-v1", op="fp4_gemm", runner="CutlassFp4GemmRunner",
                       tactic=3, status=Status.CHOSEN, env=ENV, time_ms=0.5)
    doc = _strict_loads(json_out.format_inspect(build([Entry(rec, problem(16, 7168, 4608), Decoded(T128, REF, 3))],
                                                      model=port())))
    assert NOTE not in doc["notes"] and doc["entries"][0]["time_ms"] == 0.5


def test_the_model_fast_path_writes_what_the_general_one_writes(sample):
    """EntryWriter.model (one finiteness check per case, the parts a plan or GPU shares made once)
    against model_out, over real results and the odd one."""
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats.inspect_doc import EntryWriter, NoteTable, Strict, model_out
    from tiletune.readers.interface import ReadContext

    seen = 0
    for res in [inspect([sample(n)], ReadContext()) for n in ("demo", "v1", "real", "ledgers", "trtllm")] + [_odd_result()]:
        write = EntryWriter(NoteTable(), Strict())
        for ae in res.entries:
            if ae.analysis is not None:
                assert write.model(ae.analysis) == model_out(ae.analysis, Strict())
                seen += 1
    assert seen > 100


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
    got = {json.dumps(e["extras"]): json.dumps(e["detail"]) for e in fast["entries"]}
    assert set(got) == {"[false, 1]", "[0, 1]", "[0.0, true]", "[0, 1.0]"}
    assert sorted(got.values()).count(
        '{"profiling_policy": [["cuda_graph_profile_replays", 1], ["l2_cache_policy", "cold"]]}') == 2
    assert '{"profiling_policy": [["cuda_graph_profile_replays", true], ["l2_cache_policy", "cold"]]}' in got.values()


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
