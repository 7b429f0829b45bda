"""`--format json`: the tiletune.inspect/1 contract of DESIGN.md, validated against the shipped schema."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from tiletune.formats.json_out import format_inspect


@pytest.fixture(scope="module")
def schema():
    return json.loads(resources.files("tiletune").joinpath("schemas/inspect.schema.json").read_text())


def test_contract_fields(synthetic_result, schema):
    doc = json.loads(format_inspect(synthetic_result))
    jsonschema.validate(doc, schema)
    assert doc["schema"] == "tiletune.inspect/1"
    e = doc["entries"][0]
    assert (e["op"], e["runner"], e["tactic"], e["arch"], e["flashinfer_version"], e["status"]) == (
        "fp4_gemm", "CutlassFp4GemmRunner", 3, "sm120", "0.6.14", "chosen")
    assert e["problem"]["m"] == 1 and e["problem"]["k"] == 4608
    assert e["config"]["tile"] == [128, 128, 256] and e["config"]["cluster"] == [1, 1, 1]
    assert e["config"]["swap_ab"] is False and e["config"]["name"] == "CtaShape128x128x128B"
    assert e["model"]["kind"] == "model" and e["model"]["smem"] == {
        "bytes": 83968, "limit": 101376, "stages": 2, "fits": True, "verdict": "fits"}
    (f,) = doc["failures"]
    assert (f["op"], f["tactic"], f["count"], f["config"]["tile"]) == ("fp4_gemm", 7, 16, [256, 128, 128])
    assert f["reason"]["model_disagrees"] is True and "Error Internal" in f["error"]
    assert doc["exit_status"] == 0


def test_undecoded_config_is_null_with_reason(synthetic_result, schema):
    doc = json.loads(format_inspect(synthetic_result))
    e = next(x for x in doc["entries"] if x["tactic"] == 40)
    assert e["config"] is None and not e["decode"]["decoded"] and "out of range" in e["decode"]["reason"]
    cub = next(x for x in doc["entries"] if x["op"] == "fp8_gemm")
    assert cub["config"] is None and cub["decode"]["not_a_cutlass_tactic"] is True


def test_schema_rejects_a_broken_document(synthetic_result, schema):
    doc = json.loads(format_inspect(synthetic_result))
    doc["entries"][0]["status"] = "won"  # not a status
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
    doc = json.loads(format_inspect(synthetic_result))
    del doc["failures"][0]["count"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_fast_output_equals_the_plain_dict(synthetic_result):
    # format_inspect splices pre-encoded fragments; it must say exactly what inspect_dict says
    from tiletune.formats.json_out import inspect_dict

    fast = json.loads(format_inspect(synthetic_result))
    plain = json.loads(json.dumps(inspect_dict(synthetic_result)))
    assert fast == plain


@pytest.mark.parametrize("chunk", [1, 2, 3, 10_000])
def test_chunked_output_is_one_json_object(synthetic_result, monkeypatch, chunk):
    # iter_inspect writes entries in chunks (the CLI streams them): any chunk size, the same text
    from tiletune.formats import json_out

    whole = format_inspect(synthetic_result)
    monkeypatch.setattr(json_out, "_CHUNK_ENTRIES", chunk)
    chunks = list(json_out.iter_inspect(synthetic_result))
    assert len(synthetic_result.entries) > 3
    assert len(chunks) == 2 + -(-len(synthetic_result.entries) // chunk)
    assert b"".join(chunks).decode() == whole
    assert json.loads(whole)["entries"]


def test_problem_notes_are_listed_once_and_referenced(synthetic_result):
    from tiletune.core.records import Problem
    from tiletune.formats.json_out import inspect_dict

    doc = json.loads(format_inspect(synthetic_result))
    for e in doc["entries"]:
        if e["problem"]:
            assert all(0 <= i < len(doc["problem_notes"]) for i in e["problem"]["note_ids"])
    # a note shared by two problems appears once
    p1 = Problem(m=1, n=2, k=3, notes=("a", "b"))
    p2 = Problem(m=2, n=2, k=3, notes=("b", "c"))
    table = __import__("tiletune.formats.inspect_doc", fromlist=["NoteTable"]).NoteTable()
    assert table.ids(p1.notes) == [0, 1] and table.ids(p2.notes) == [1, 2] and table.texts == ["a", "b", "c"]
    assert inspect_dict(synthetic_result)["problem_notes"] == doc["problem_notes"]
