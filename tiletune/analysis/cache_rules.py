"""The rules by which FlashInfer, vLLM and SGLang use or drop a saved autotune cache, as data.

`data/cache_rules.json` is written by `python3 -m tools.cache_rules` from each release's own
source (FlashInfer: `_collect_metadata` and `load_configs`, every wheel from 0.6.7, the first with
a JSON cache; vLLM 0.34.0 and SGLang 0.5.23: the functions that compare ranks' files, with the
sha256 of each function's source). This module only looks rules up; analysis/check.py applies them.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Optional, Tuple

from msgspec import Struct
from packaging.version import Version

from tiletune.core.versions import parse_version


class FlashInferRule(Struct, frozen=True):
    """How one FlashInfer release's `load_configs` decides on a v1 file's `_metadata`."""

    release: str  # the release whose source this was read from
    fields: Tuple[str, ...]  # compared, in `_collect_metadata`'s order
    values: Tuple[Tuple[str, str], ...]  # field -> the expression the release computes it with
    wildcard: Optional[str]  # a saved value that matches anything ("*")
    indeterminate: Tuple[Any, ...]  # saved values that make a mismatch soft (ignored, overwritten by the next save)
    no_metadata_loaded: bool  # a file without `_metadata` is loaded unchecked
    v2_schema: Optional[str]  # the managed store's schema directory, where the release has autotune_v2
    source: str  # "flashinfer_python-0.7.4-py3-none-any.whl (sha256 ...): flashinfer/autotuner/autotuner.py"
    note: Optional[str] = None  # set when the release asked for is not the one read (nearest older)


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(resources.files("tiletune.analysis").joinpath("data/cache_rules.json").read_text())


def _version(text: str) -> Optional[Version]:
    return parse_version(text)  # (bounded: a 5,000-digit version from an input is no version)


def flashinfer_releases() -> Tuple[str, ...]:
    return tuple(_data()["flashinfer"])


def flashinfer_rule(release: str) -> Optional[FlashInferRule]:
    """The rule of `release`; a release not read (a newer or a local build) gets the nearest older
    release's rule with a note saying so; None before 0.6.7 (no JSON cache: nothing is loaded)."""
    table = _data()["flashinfer"]
    chosen, note = release, None
    if release not in table:
        want = _version(release)
        if want is None:
            return None
        older = [v for v in table if (_version(v) or want) <= want]
        if not older:
            return None
        chosen = max(older, key=lambda v: _version(v) or want)
        note = f"FlashInfer {release}'s source was not read: applying {chosen}'s rule (the nearest older release read)"
    raw = table[chosen]
    src = raw["source"]
    return FlashInferRule(
        release=chosen,
        fields=tuple(f["name"] for f in raw["fields"]),
        values=tuple((f["name"], f["value"]) for f in raw["fields"]),
        wildcard=raw.get("wildcard"),
        indeterminate=tuple(raw.get("indeterminate") or ()),
        no_metadata_loaded=raw.get("no_metadata") == "loaded",
        v2_schema=raw.get("v2_schema"),
        source=f"{src['wheel']} (sha256 {src['sha256'][:12]}): {src['file']} {', '.join(src['functions'])}",
        note=note,
    )


def engine_rule(engine: str) -> Tuple[str, dict]:
    """(release read, rule) for "vllm" or "sglang": the one release read (see tools/cache_rules)."""
    table = _data()[engine]
    release = max(table, key=lambda v: _version(v) or Version("0"))
    return release, table[release]


__all__ = ["FlashInferRule", "engine_rule", "flashinfer_releases", "flashinfer_rule"]
