"""catalogs._parse reads a data file's tables (releases, catalog sets, lists) member by member and its
`configs` line by line on first use; the document must be the one `json.loads` gives (the plain
reference), for every shipped data file, for a file in any other layout, and a broken member or
config line must still be one CatalogError naming the file and line. What the catalogs answer from
them (releases, keys, has_catalogs_for) must be what the plain documents give."""

from __future__ import annotations

import json

import pytest

from tiletune import catalogs
from tiletune.core.errors import CatalogError

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
    for table in catalogs._TABLES:
        assert isinstance(doc[table], catalogs._LazyTable)
    fresh = catalogs._parse(name, text)
    assert all(fresh[t]._parsed == {} for t in catalogs._TABLES)  # nothing parsed until asked
    some = next(iter(fresh["lists"]))
    assert fresh["lists"][some] is fresh["lists"][some] and list(fresh["lists"]._parsed) == [some]
    assert "no such id" not in fresh["lists"] and fresh["lists"].get("no such id") is None
    with pytest.raises(KeyError):
        fresh["lists"]["no such id"]


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


def _plain_docs() -> list[dict]:
    return [json.loads(text) for _, text in FILES]


def test_releases_keys_and_runners_are_the_plain_ones() -> None:
    from packaging.version import Version

    plain = _plain_docs()
    pairs = {(c["op"], c["runner"]) for d in plain for rel in d["releases"].values() for c in d["catalog_sets"][rel["catalogs"]]}
    versions = sorted({v for d in plain for v in d["releases"]}, key=Version)
    assert catalogs.releases() == tuple(versions)
    want_keys = [(v, c["arch"], c["op"], c["runner"]) for v in versions for d in plain if v in d["releases"]
                 for c in d["catalog_sets"][d["releases"][v]["catalogs"]]]
    assert sorted(set(catalogs.keys())) == sorted(set(want_keys))
    ops = {op for op, _ in pairs} | {"fp8_gemm", "nope"}
    runners = {r for _, r in pairs} | {"CublasFp8GemmRunner", "nope"}
    for op in ops:
        for runner in runners:
            assert catalogs.has_catalogs_for.__wrapped__(op, runner) == ((op, runner) in pairs), (op, runner)


def test_tables_in_another_order_or_missing_are_read_whole() -> None:
    name, text = FILES[-1]
    moved = text.replace('\n"lists":{\n', '\n"lists_":{\n', 1)  # no `lists` table where render puts it
    doc = catalogs._parse(name, moved)
    assert isinstance(doc["releases"], dict) and doc["lists_"] == json.loads(text)["lists"]
    assert isinstance(doc["configs"], catalogs._LazyConfigs)


def test_a_broken_table_member_names_the_file_and_line() -> None:
    name, text = FILES[-1]
    lines = text.split("\n")
    at = lines.index('"lists":{') + 2  # 0-based index of the second list's line
    key = json.loads("{" + lines[at].rstrip(",") + "}").popitem()[0]
    lines[at] = lines[at].replace('"configs":', '"configs"', 1)
    doc = catalogs._parse(name, "\n".join(lines))
    assert doc["lists"][next(iter(doc["lists"]))] == next(iter(json.loads(text)["lists"].values()))
    with pytest.raises(CatalogError, match=rf"tiletune/catalogs/data/{name}: invalid JSON \(.* at line {at + 1}\)"):
        doc["lists"][key]
