"""Tactic catalogs: for each FlashInfer release, arch, op and runner, the ordered config list a
CUTLASS tactic index points into. Extracted from FlashInfer's own C++ source by a development
tool outside this package (`python3 -m tools.catalogs`, tools/catalogs/README.md), shipped as
package data, looked up here.

Data files: `tiletune/catalogs/data/*.json`, one per family (dense GEMMs, fused MoE), with this
schema (`"schema": "tiletune.catalogs/2"`). Nothing is stored twice: a config once in `configs`,
a list once in `lists`, a release's set of catalog rows (and of not-extracted notes) once in
`catalog_sets` (`not_extracted_sets`), each referenced by index or id:

    {"schema": "tiletune.catalogs/2",
     "family": "dense-gemm",
     "generated_by": {"tool": ..., "tool_revision": {"commit": ..., "tools_catalogs_tree": ...}, "command": ..., "sources": ...},
     "releases": {"0.6.11": {"source": {"kind": "wheel", "ref": "<wheel file>", "sha256": ..., "commit": ...}
                                       | {"kind": "git-tag", "ref": "v0.6.18rc1", "commit": ...},
                             "catalogs": "<catalog set id>",
                             "not_extracted": "<note set id>",   # optional
                             "gemm2_id_read_as_relative": "<where>",  # optional, fused MoE: see below
                             "structure": {...}}},               # optional: C++ shapes the extractor checked
     "catalog_sets": {"<id>": [{"op": "fp4_gemm", "runner": "CutlassFp4GemmRunner", "arch": "sm120",
                                "variant": {}, "list": "<list id>"}, ...]},
     "not_extracted_sets": {"<id>": [{"arch": "sm90", "variant": {...}, "why": "..."}, ...]},
     "lists": {"<list id>": {"source_file": "include/flashinfer/gemm/....h", "function": "getConfigs",
                             "fallback": 5 | null,            # index tactic -1 resolves to
                             "fallback_config": {config} | null,  # when -1 is not a list entry
                             "fallback_rule": str,            # optional: -1 picked per shape at run time (rule, file:line)
                             "table_note": str,               # optional: a switch that changes the table (TGV)
                             "index_offset": 0,               # global index of entry 0 (MoE GEMM2 lists)
                             "configs": [<index into configs>, ...]}},
     "configs": [{config}, ...]}

    runs_instead = {"tile": [m, n, k], "when": str, "source": "file:line"}  # optional in a config:
                   # the dispatch runs this tile instead when `when` holds (SM103 FP4 K768 tiles)

    config = {"tile": [m, n, k] (elements), "name": "CtaShape128x128x128B", "cluster": [1, 1, 1],
              "swap_ab": false, "stream_k": false, "mainloop_schedule": str | null,
              "epilogue_schedule": str | null, "epilogue_fusion": str | null, "stages": int | null,
              "style": "tma_ws" | "sm80", "mma_tile": [m, n, k] | null,
              "known_failure": str | null}  # e.g. "dispatcher has no case for this tile: throws ..."

`gemm2_id_read_as_relative` (fused-MoE releases 0.6.3 .. 0.6.14): the binding's
setRunnerProfiles() reads a stored GEMM2 tactic t below the GEMM2 list length as relative to the
GEMM2 list, while the profiler ran the absolute entry: t profiled GEMM2 entry t - len(GEMM1) but
runs GEMM2 entry t whenever len(GEMM1) <= t < len(GEMM2). `resolve` reports both.

`variant` distinguishes lists that share (op, runner, arch) within a release, e.g. fused-MoE
lists per activation/weight dtype: {"act": "bf16", "weight": "bf16"}. A lookup with a partial
variant returns every list that matches it, and decode marks the tactic ambiguous when those
lists disagree.
"""

from __future__ import annotations

import bisect
import functools
import json
from importlib import resources
from typing import Any, Iterable, Iterator, Mapping, Optional

from msgspec import Struct
from packaging.version import Version

from tiletune.core.errors import CatalogError
from tiletune.core.records import CatalogRef, Decode, Decoded, RunsIf, RunsOther, TileConfig, Undecoded, freeze
from tiletune.core.versions import parse_version

SCHEMA = "tiletune.catalogs/2"


class Catalog(Struct, frozen=True, gc=False):
    """One ordered config list as it applies to one release/arch/op/runner/variant."""

    ref: CatalogRef
    configs: tuple[TileConfig, ...]
    known_failures: tuple[Optional[str], ...]  # parallel to configs
    fallback: Optional[int]
    fallback_config: Optional[TileConfig]
    index_offset: int
    variant: Mapping[str, Any]
    # fused-MoE GEMM2 list of a release whose binding reads stored ids below its length as
    # relative: where the data says so (the binding's file and function), else None
    gemm2_relative_ids: Optional[str] = None
    # the data's config objects, parallel to configs: fields TileConfig leaves out (dynamic and
    # fallback cluster, enable_cuda_kernel, ...) for listings; not compared
    raw: tuple[Mapping[str, Any], ...] = ()
    # what tactic -1 runs when no fixed entry does (chosen at run time: the rule, file and line)
    fallback_rule: Optional[str] = None
    # parallel to configs (or empty): a tile the dispatch runs instead under a run-time condition
    runs_if: tuple[Optional[RunsIf], ...] = ()
    # which table the tactic indexes when a switch of the release can change it (TGV: file, line, value)
    table_note: Optional[str] = None


def config_from_json(d: Mapping[str, Any]) -> TileConfig:
    """Build a TileConfig from one catalog config object."""
    return TileConfig(
        tile=tuple(d["tile"]),
        cluster=tuple(d.get("cluster") or (1, 1, 1)),
        swap_ab=bool(d.get("swap_ab", False)),
        stream_k=bool(d.get("stream_k", False)),
        name=d.get("name", ""),
        mainloop_schedule=d.get("mainloop_schedule"),
        epilogue_schedule=d.get("epilogue_schedule"),
        epilogue_fusion=d.get("epilogue_fusion"),
        stages=d.get("stages"),
        style=d.get("style", "tma_ws"),
        mma_tile=tuple(d["mma_tile"]) if d.get("mma_tile") else None,
    )


def _data_files() -> Iterable[tuple[str, str]]:
    base = resources.files("tiletune.catalogs").joinpath("data")
    for item in sorted(base.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".json"):
            yield item.name, item.read_text(encoding="utf-8")


def _version_key(v: str) -> Version:
    return Version(v)


# tools/catalogs writes `configs` last, one compact JSON object per line (tools/catalogs/document.py
# `render`). A run builds a few of the data's lists, so each config line is parsed when a list
# first needs it: parsing all ~2,000 configs up front was three quarters of loading the data.
_CONFIGS_OPEN, _CONFIGS_CLOSE = '\n"configs":[\n', "]\n}\n"
# render writes the tables before `configs` in this order, each opening on its own line, one member
# per line (a catalog set's rows on the lines below its id). A run reads one release's catalog set
# and a few lists: parsing all of them (a quarter of a MB of JSON) was ~3 % of a 2,000-entry inspect.
_TABLES = ("releases", "catalog_sets", "not_extracted_sets", "lists")


class _LazyConfigs:
    """A data file's `configs` array, each element parsed from its own line on first use."""

    def __init__(self, name: str, lines: list[str], first_line: int) -> None:
        self._name, self._lines, self._first_line = name, lines, first_line
        self._parsed: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, i: int) -> Any:
        got = self._parsed.get(i)
        if got is None:
            try:
                got = self._parsed[i] = json.loads(self._lines[i])
            except json.JSONDecodeError as e:
                raise CatalogError(f"tiletune/catalogs/data/{self._name}: invalid JSON ({e.msg} at line "
                                   f"{self._first_line + i})") from e
        return got


class _LazyTable(Mapping[str, Any]):
    """One of a data file's top-level tables (releases, catalog sets, lists): its keys read at load,
    each member's value parsed from its own text on first use."""

    def __init__(self, name: str, text: str, members: dict[str, int], end: int) -> None:
        self._name, self._text, self._end = name, text, end  # the table's members lie before text[end]
        self._members = members  # key -> offset of its value in text
        self._parsed: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __contains__(self, key: object) -> bool:
        return key in self._members

    def __getitem__(self, key: str) -> Any:
        try:
            return self._parsed[key]
        except KeyError:
            start = self._members[key]  # KeyError for a key the table does not hold, as a dict's
        end = self._text.find(',\n"', start, self._end)
        try:
            got = self._parsed[key] = json.loads(self._text[start:self._end if end < 0 else end])
        except json.JSONDecodeError as e:
            raise CatalogError(f"tiletune/catalogs/data/{self._name}: invalid JSON ({e.msg} at line "
                               f"{self._text.count(chr(10), 0, start + e.pos) + 1})") from e
        return got


def _lazy_tables(name: str, head: str) -> Optional[dict[str, Any]]:
    """The document before `configs` (`head`, ending in its comma) with render's tables as
    `_LazyTable`s; None when the tables are not laid out as render writes them."""
    starts: list[int] = []
    for table in _TABLES:
        at = head.find(f'\n"{table}":{{\n', starts[-1] if starts else 0)
        if at < 0:
            return None
        starts.append(at)
    if not head.endswith("},") or head[starts[0] - 1] != ",":
        return None
    doc = json.loads(head[: starts[0] - 1] + "}")  # schema, family, generated_by
    for i, table in enumerate(_TABLES):
        first = starts[i] + len(table) + 6  # past '\n"<table>":{\n'
        last = (starts[i + 1] if i + 1 < len(_TABLES) else len(head)) - 2  # before its '},'
        if head[last:last + 2] != "},":
            return None
        members: dict[str, int] = {}
        at = first
        while at < last:  # each member: '"key":value', then ',\n' before the next one's quote
            if head[at] != '"':
                return None
            key, after = json.decoder.scanstring(head, at + 1)  # type: ignore[attr-defined]
            if head[after] != ":":
                return None
            members[key] = after + 1
            nxt = head.find(',\n"', after, last)
            at = last if nxt < 0 else nxt + 2
        doc[table] = _LazyTable(name, head, members, last)
    return doc


def _parse(name: str, text: str) -> dict[str, Any]:
    """One data file's document; its tables and `configs` read member by member when it has
    render's layout, else (a hand-edited file) the whole document at once."""
    head, sep, tail = text.rpartition(_CONFIGS_OPEN)
    if sep and head.endswith(",") and tail.endswith(_CONFIGS_CLOSE):
        doc = _lazy_tables(name, head)
        if doc is None:
            doc = json.loads(head[:-1] + "}")
        body = tail[: -len(_CONFIGS_CLOSE)]
        doc["configs"] = _LazyConfigs(name, body.split(",\n") if body else [], head.count("\n") + 3)
        return doc
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _docs() -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every data file, parsed (configs on first use) and schema-checked once: (file name, document)."""
    out = []
    for name, text in _data_files():
        try:
            doc = _parse(name, text)
        except json.JSONDecodeError as e:
            raise CatalogError(f"tiletune/catalogs/data/{name}: invalid JSON ({e.msg} at line {e.lineno})") from e
        if doc.get("schema") != SCHEMA:
            raise CatalogError(f"tiletune/catalogs/data/{name}: schema {doc.get('schema')!r}, expected {SCHEMA!r}")
        out.append((name, doc))
    return tuple(out)


# (data file, list id) -> (configs, known failures): each list is shared by many releases, build it once
_LISTS: dict[tuple[str, str], tuple[tuple[TileConfig, ...], tuple[Optional[str], ...]]] = {}


@functools.lru_cache(maxsize=None)
def _release_index(version: str) -> dict[tuple[str, str, str], list[tuple[str, dict[str, Any]]]]:
    """One release's catalog entries, unbuilt: (arch, op, runner) -> [(data file, entry)]."""
    index: dict[tuple[str, str, str], list[tuple[str, dict[str, Any]]]] = {}
    for name, doc in _docs():
        rel = doc["releases"].get(version)
        if rel is not None:
            for c in doc["catalog_sets"][rel["catalogs"]]:
                index.setdefault((c["arch"], c["op"], c["runner"]), []).append((name, c))
    return index


@functools.lru_cache(maxsize=None)
def _catalogs(version: str, arch: str, op: str, runner: str) -> tuple[Catalog, ...]:
    """The catalogs of one release/arch/op/runner, built on first use: a run decodes a few of the
    thousands the data holds (building a whole release's was most of a small inspect's start-up)."""
    out = []
    docs = dict(_docs())
    for name, c in _release_index(version).get((arch, op, runner), ()):
        quirk = docs[name]["releases"][version].get("gemm2_id_read_as_relative")
        lst = docs[name]["lists"][c["list"]]
        built = _LISTS.get((name, c["list"]))
        if built is None:
            built = _LISTS[(name, c["list"])] = (
                tuple(config_from_json(docs[name]["configs"][i]) for i in lst["configs"]),
                tuple(docs[name]["configs"][i].get("known_failure") for i in lst["configs"]),
            )
        configs, failures = built
        ref = CatalogRef(
            flashinfer_version=version,
            arch=arch,
            op=op,
            runner=runner,
            source_file=lst.get("source_file", ""),
            variant=freeze(c.get("variant") or {}),
            size=len(configs),
        )
        fb_cfg = lst.get("fallback_config")
        out.append(Catalog(
            ref=ref,
            configs=configs,
            known_failures=failures,
            fallback=lst.get("fallback"),
            fallback_config=config_from_json(fb_cfg) if fb_cfg else None,
            index_offset=int(lst.get("index_offset", 0)),
            variant=dict(c.get("variant") or {}),
            gemm2_relative_ids=quirk if quirk and int(lst.get("index_offset", 0)) > 0 else None,
            raw=tuple(docs[name]["configs"][i] for i in lst["configs"]),
            fallback_rule=lst.get("fallback_rule"),
            runs_if=_runs_if(configs, [docs[name]["configs"][i] for i in lst["configs"]]),
            table_note=lst.get("table_note"),
        ))
    return tuple(out)


def _runs_if(configs: tuple[TileConfig, ...], raw: list[Mapping[str, Any]]) -> tuple[Optional[RunsIf], ...]:
    """Each config's `runs_instead` (data) as a RunsIf, or () when no config of the list has one."""
    if not any("runs_instead" in r for r in raw):
        return ()
    out: list[Optional[RunsIf]] = []
    for cfg, r in zip(configs, raw):
        alt = r.get("runs_instead")
        if alt is None:
            out.append(None)
            continue
        tile = tuple(alt["tile"])
        mma = (2 * tile[0], tile[1], tile[2]) if cfg.mma_tile is not None else None  # the same 1-SM / 2-SM cluster
        out.append(RunsIf(config=TileConfig(tile=tile, cluster=cfg.cluster, swap_ab=cfg.swap_ab, stream_k=cfg.stream_k,
                                            name=f"{cfg.name} (runs {'x'.join(map(str, tile))})", mma_tile=mma),
                          when=alt["when"], source=alt["source"]))
    return tuple(out)


def keys() -> list[tuple[str, str, str, str]]:
    """(version, arch, op, runner) of every catalog in the data, oldest release first (no catalog built)."""
    return [(v, *k) for v in releases() for k in _release_index(v)]


@functools.lru_cache(maxsize=256)
def not_extracted(version: str, arch: str) -> tuple[tuple[tuple[tuple[str, Any], ...], str], ...]:
    """(variant as sorted pairs, why) of the lists the extractors left out for this release and
    arch, as the data files' per-release `not_extracted` entries record them."""
    notes = []
    for _name, doc in _docs():
        notes_id = doc["releases"].get(version, {}).get("not_extracted")
        for n in doc["not_extracted_sets"][notes_id] if notes_id else ():
            if n.get("arch") == arch:
                notes.append((tuple(sorted(n["variant"].items())), n["why"]))
    return tuple(notes)


@functools.lru_cache(maxsize=1)
def releases() -> tuple[str, ...]:
    """Every FlashInfer release some catalog covers, oldest first (read from the tables' keys)."""
    return tuple(sorted({v for _name, doc in _docs() for v in doc["releases"]}, key=_version_key))


@functools.lru_cache(maxsize=1024)
def nearest_releases(version: str, count: int = 2) -> list[str]:
    """Up to `count` covered releases on each side of `version` (or the newest ones if unparsable)."""
    rels = list(releases())
    want = parse_version(version)
    if want is None:
        return rels[-2 * count:]
    keys = [Version(r) for r in rels]
    i = bisect.bisect_left(keys, want)
    return rels[max(0, i - count):i + count]


@functools.lru_cache(maxsize=1024)
def canonical_version(version: str) -> Optional[str]:
    """The catalog release string equal to `version` (PEP 440 equality, local part dropped), or None.
    Cached like `nearest_releases`: every decode asks, and parsing every release each time was a
    quarter of a 2,000-entry inspect."""
    want = parse_version(version)
    if want is None:
        return None
    want_public = Version(want.public)
    for v in releases():
        if Version(v) == want_public:
            return v
    return None


def lookup(
    version: str, arch: str, op: str, runner: str, variant: Optional[Mapping[str, Any]] = None
) -> list[Catalog]:
    """Catalogs for exactly this release/arch/op/runner whose variant contains `variant`'s items."""
    canon = canonical_version(version)
    if canon is None:
        return []
    cats = _catalogs(canon, arch, op, runner)
    return [c for c in cats if not variant or all(c.variant.get(k) == v for k, v in variant.items())]


@functools.lru_cache(maxsize=1024)
def has_catalogs_for(op: str, runner: str) -> bool:
    """True if any release has a catalog for this (op, runner): a CUTLASS tactic worth decoding.

    Searched release by release, newest first in each data file, each catalog set once, stopping
    at the first that has it: a run then parses one release and one set, not the whole table."""
    for _name, doc in _docs():
        seen: set[str] = set()
        for version in reversed(list(doc["releases"])):
            sid = doc["releases"][version]["catalogs"]
            if sid not in seen:
                seen.add(sid)
                if any(c["op"] == op and c["runner"] == runner for c in doc["catalog_sets"][sid]):
                    return True
    return False


def resolve(cat: Catalog, tactic: Any) -> Decode:
    """Map a tactic integer to the config it indexes in `cat` (after index_offset; -1 = fallback)."""
    if isinstance(tactic, bool) or not isinstance(tactic, int):
        return Undecoded(reason=f"tactic {tactic!r} is not an integer index")
    if tactic == -1:
        if cat.fallback is not None:
            return Decoded(config=cat.configs[cat.fallback], catalog=cat.ref, index=cat.fallback,
                           runs_if=cat.runs_if[cat.fallback] if cat.runs_if else None)
        if cat.fallback_config is not None:
            return Decoded(config=cat.fallback_config, catalog=cat.ref, index=-1)
        if cat.fallback_rule:  # the binding picks the row per shape at run time: no one entry to name
            return Undecoded(reason=f"{_where(cat)}: {cat.fallback_rule}")
        return Undecoded(reason=f"{_where(cat)}: tactic -1 has no recorded fallback")
    local = tactic - cat.index_offset
    if not cat.configs:  # e.g. SM120 CutlassFp8GemmRunner: its runner offers tactic -1 only
        return Undecoded(reason=f"{_where(cat)} has no indexed configs (only tactic -1 exists); index {tactic} cannot occur")
    if not 0 <= local < len(cat.configs):
        lo, hi = cat.index_offset, cat.index_offset + len(cat.configs) - 1
        return Undecoded(
            reason=f"{_where(cat)} has {len(cat.configs)} configs (indices {lo}..{hi}); index {tactic} out of range"
        )
    if cat.gemm2_relative_ids and tactic < len(cat.configs):
        return Decoded(config=cat.configs[local], catalog=cat.ref, index=local,
                       runs=_runs_relative(cat, tactic, local))
    if cat.runs_if and cat.runs_if[local] is not None:
        return Decoded(config=cat.configs[local], catalog=cat.ref, index=local, runs_if=cat.runs_if[local])
    return Decoded(config=cat.configs[local], catalog=cat.ref, index=local)


def _runs_relative(cat: Catalog, tactic: int, local: int) -> RunsOther:
    """What a GEMM2 tactic runs in a release whose binding reads ids below the GEMM2 list length as
    relative (the profiler ran the absolute entry `local`; the server runs entry `tactic`)."""
    cfg = cat.configs[tactic]
    return RunsOther(config=cfg, index=tactic, reason=(
        f"FlashInfer {cat.ref.flashinfer_version}'s fused-MoE binding ({cat.gemm2_relative_ids}) reads a stored "
        f"GEMM2 id below the GEMM2 list length ({len(cat.configs)}) as relative to that list: tactic {tactic} was "
        f"profiled as GEMM2 entry {local} ({cat.configs[local].label()}) but runs GEMM2 entry {tactic} "
        f"({cfg.label()}); fixed in FlashInfer 0.6.15"))


def known_failure(decoded: Decoded) -> Optional[str]:
    """A failure the catalog source itself guarantees for this config (e.g. no dispatch case)."""
    for cat in lookup(decoded.catalog.flashinfer_version, decoded.catalog.arch, decoded.catalog.op, decoded.catalog.runner):
        if cat.ref == decoded.catalog and 0 <= decoded.index < len(cat.known_failures):
            return cat.known_failures[decoded.index]
    return None


def _where(cat: Catalog) -> str:
    r = cat.ref
    v = "".join(f" {k}={val}" for k, val in r.variant)
    return f"flashinfer {r.flashinfer_version} {r.arch} {r.op}/{r.runner}{v} catalog"
