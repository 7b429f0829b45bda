"""catalogs._parse reads a data file's `configs` line by line on first use; the document must be
the one `json.loads` gives (the plain reference), for every shipped data file, for a file in any
other layout, and a broken config line must still be one CatalogError naming the file and line."""

from __future__ import annotations

import json

import pytest

from tiletune import catalogs
from tiletune.errors import CatalogError

FILES = list(catalogs._data_files())


def _plain_equal(doc: dict, plain: dict) -> None:
    assert doc.keys() == plain.keys()
    for key in plain:
        if key != "configs":
            assert doc[key] == plain[key], key
    assert len(doc["configs"]) == len(plain["configs"])
    assert [doc["configs"][i] for i in range(len(plain["configs"]))] == plain["configs"]


@pytest.mark.parametrize("name,text", FILES, ids=[n for n, _ in FILES])
def test_every_data_file_parses_as_json_loads_does(name: str, text: str) -> None:
    doc = catalogs._parse(name, text)
    assert isinstance(doc["configs"], catalogs._LazyConfigs)  # the shipped layout takes the lazy path
    assert doc["configs"]._parsed == {}  # nothing parsed until asked
    _plain_equal(doc, json.loads(text))
    assert doc["configs"][3] is doc["configs"][3]  # parsed once, the same object for every list


def test_catalogs_built_from_it_are_the_plain_ones() -> None:
    """Every catalog of the newest release, built through the lazy configs, against the same lists built
    from json.loads' documents."""
    plain = {name: json.loads(text) for name, text in FILES}
    version = catalogs.releases()[-1]
    seen = 0
    for (arch, op, runner), rows in catalogs._release_index(version).items():
        built = catalogs._catalogs(version, arch, op, runner)
        for cat, (name, row) in zip(built, rows):
            ids = plain[name]["lists"][row["list"]]["configs"]
            assert cat.raw == tuple(plain[name]["configs"][i] for i in ids)
            assert cat.configs == tuple(catalogs.config_from_json(plain[name]["configs"][i]) for i in ids)
            seen += 1
    assert seen > 10


@pytest.mark.parametrize("indent", [None, 2])
def test_another_layout_is_read_whole(indent: int | None) -> None:
    name, text = FILES[0]
    other = json.dumps(json.loads(text), indent=indent)
    doc = catalogs._parse(name, other)
    assert isinstance(doc["configs"], list)
    _plain_equal(doc, json.loads(text))


def test_an_empty_configs_array() -> None:
    doc = catalogs._parse("x.json", '{\n"schema":"s",\n"configs":[\n]\n}\n')
    assert len(doc["configs"]) == 0 and doc["schema"] == "s"


def test_a_broken_config_line_names_the_file_and_line() -> None:
    name, text = FILES[0]
    lines = text.split("\n")
    first = lines.index('"configs":[') + 1  # 0-based index of the first config line
    lines[first + 2] = lines[first + 2].replace('"tile":', '"tile"', 1)
    doc = catalogs._parse(name, "\n".join(lines))
    assert doc["configs"][1] == json.loads(text.split("\n")[first + 1].rstrip(","))
    with pytest.raises(CatalogError, match=rf"tiletune/catalogs/data/{name}: invalid JSON \(.* at line {first + 3}\)"):
        doc["configs"][2]
