"""One data file (`tiletune/catalogs/data/<family>.json`) from the releases an extractor read.

Nothing is stored twice: each distinct config once in `configs` (lists hold their indices),
each distinct list once in `lists`, each distinct set of catalog rows (and of not-extracted
notes) once, referenced by id from every release that has it. The loader
(`tiletune.catalogs`) documents the schema.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

SCHEMA = "tiletune.catalogs/2"


@dataclass
class ReleaseData:
    """What an extractor read from one release."""

    source: dict[str, Any]  # Source.describe(): kind, ref, commit, sha256 (wheels)
    catalogs: list[dict[str, Any]]  # {"op", "runner", "arch", "variant", "list": list id}
    lists: dict[str, dict[str, Any]]  # list id -> {head fields..., "configs": [config, ...]}
    not_extracted: list[dict[str, Any]] = field(default_factory=list)  # {"arch", "variant", "why"}
    structure: dict[str, str] = field(default_factory=dict)  # function -> shape hash the extractor checked
    extra: dict[str, Any] = field(default_factory=dict)  # further per-release facts (loader documents them)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:10]


def build(family: str, generated_by: dict[str, Any], releases: dict[str, ReleaseData]) -> dict[str, Any]:
    """The whole document, releases oldest first, tables in first-use order."""
    configs: list[dict[str, Any]] = []
    config_ids: dict[str, int] = {}
    lists: dict[str, dict[str, Any]] = {}
    catalog_sets: dict[str, list[dict[str, Any]]] = {}
    note_sets: dict[str, list[dict[str, Any]]] = {}
    out_releases: dict[str, Any] = {}

    def config_id(cfg: dict[str, Any]) -> int:
        key = json.dumps(cfg, sort_keys=True)
        if key not in config_ids:
            config_ids[key] = len(configs)
            configs.append(cfg)
        return config_ids[key]

    for version in sorted(releases, key=Version):
        rd = releases[version]
        for lid in sorted({c["list"] for c in rd.catalogs}):
            if lid not in lists:
                body = rd.lists[lid]
                lists[lid] = {**{k: v for k, v in body.items() if k != "configs"},
                              "configs": [config_id(c) for c in body["configs"]]}
        rows = sorted(rd.catalogs, key=lambda c: (c["op"], c["arch"], c["runner"], json.dumps(c["variant"], sort_keys=True)))
        set_id = "c-" + _digest(rows)
        catalog_sets.setdefault(set_id, rows)
        rel: dict[str, Any] = {"source": rd.source, "catalogs": set_id}
        if rd.not_extracted:
            notes_id = "n-" + _digest(rd.not_extracted)
            note_sets.setdefault(notes_id, rd.not_extracted)
            rel["not_extracted"] = notes_id
        rel.update(rd.extra)
        if rd.structure:
            rel["structure"] = dict(sorted(rd.structure.items()))
        out_releases[version] = rel
    return {"schema": SCHEMA, "family": family, "generated_by": generated_by, "releases": out_releases,
            "catalog_sets": catalog_sets, "not_extracted_sets": note_sets, "lists": lists, "configs": configs}


def render(doc: dict[str, Any]) -> str:
    """Compact JSON, one release / catalog row / list / config per line, so a rebuild diffs readably."""

    def j(v: Any) -> str:
        return json.dumps(v, separators=(",", ":"))

    def table(items: list[str]) -> str:
        return ",\n".join(items)

    parts = ["{", f'"schema":{j(doc["schema"])},', f'"family":{j(doc["family"])},',
             f'"generated_by":{j(doc["generated_by"])},']
    parts.append('"releases":{\n' + table([f"{j(v)}:{j(r)}" for v, r in doc["releases"].items()]) + "},")
    parts.append('"catalog_sets":{\n' + table(
        [f"{j(k)}:[\n" + table([" " + j(row) for row in rows]) + "]" for k, rows in doc["catalog_sets"].items()]) + "},")
    parts.append('"not_extracted_sets":{\n' + table(
        [f"{j(k)}:[\n" + table([" " + j(n) for n in notes]) + "]" for k, notes in doc["not_extracted_sets"].items()]) + "},")
    parts.append('"lists":{\n' + table([f"{j(k)}:{j(v)}" for k, v in doc["lists"].items()]) + "},")
    parts.append('"configs":[\n' + table([j(c) for c in doc["configs"]]) + "]")
    parts.append("}")
    return "\n".join(parts) + "\n"


def expand(doc: dict[str, Any]) -> dict[str, dict[tuple[str, str, str, str], dict[str, Any]]]:
    """Every release's catalogs with their lists resolved (configs inline), keyed (op, runner,
    arch, variant as JSON): what two builds must agree on, whatever their ids and sources."""
    out: dict[str, dict[tuple[str, str, str, str], dict[str, Any]]] = {}
    for version, rel in doc["releases"].items():
        rows = doc["catalog_sets"][rel["catalogs"]]
        per: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for c in rows:
            lst = doc["lists"][c["list"]]
            per[(c["op"], c["runner"], c["arch"], json.dumps(c["variant"], sort_keys=True))] = {
                **{k: v for k, v in lst.items() if k != "configs"},
                "configs": [doc["configs"][i] for i in lst["configs"]],
            }
        out[version] = per
    return out
