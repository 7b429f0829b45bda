"""The shipped JSON Schemas are what the output types say (tools/schemas.py writes them from the
Structs), and the documents the CLI prints are valid against them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from wild_split import without_held_out  # (held-out artifacts are never read)

from tools import schemas


def test_the_shipped_schemas_are_the_generated_ones():
    for name, schema in schemas.documents().items():
        shipped = (schemas.OUT / name).read_text(encoding="utf-8")
        assert shipped == schemas.text(schema), f"tiletune/schemas/{name}: run python3 -m tools.schemas"


def test_the_check_fails_on_a_stale_file(tmp_path, monkeypatch):
    for name, schema in schemas.documents().items():
        (tmp_path / name).write_text(schemas.text(schema))
    monkeypatch.setattr(schemas, "OUT", tmp_path)
    assert schemas.main(["--check"]) == 0
    (tmp_path / "diff.schema.json").write_text("{}\n")
    assert schemas.main(["--check"]) == 1


@pytest.mark.parametrize("name", ["demo", "logs", "trtllm", "wild", "ledgers", "v2store"])
def test_what_inspect_prints_is_valid(run, sample, name):
    # the wild corpus's held-out artifacts are never read (wild_split: only its working artifacts)
    doc = json.loads(run("inspect", *map(str, without_held_out(sample(name))), "--format", "json").stdout)
    jsonschema.validate(doc, json.loads((schemas.OUT / "inspect.schema.json").read_text()))


def test_what_diff_prints_is_valid(run, sample):
    out = run("diff", str(sample("logs/sm120_0.6.17_warmup_debug.log")), str(sample("demo")), "--format", "json").stdout
    jsonschema.validate(json.loads(out), json.loads((schemas.OUT / "diff.schema.json").read_text()))


def test_a_broken_document_is_refused():
    schema = json.loads((schemas.OUT / "inspect.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "tiletune.inspect/1", "entries": "no"}, schema)
    assert Path(schemas.__file__).name == "schemas.py"
