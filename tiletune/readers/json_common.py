"""What every JSON reader shares: the size guard (`load_json`), the path hints the SGLang / vLLM /
TensorRT-LLM layout modules pass in (`PathHints`), and the small helpers their messages use."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Optional, Union

from msgspec import Struct

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import InputProblem, TuningRecord

UNKNOWN_VALUES = (None, "", "unknown", "None", "*")

# A JSON cache is parsed whole; Python needs roughly 8-10x the file size to hold the parsed
# tree. Real caches are far below this (50,000 entries with policies are about 25 MB).
DEFAULT_MAX_JSON_MB = 256

Item = Union[TuningRecord, InputProblem]


class PathHints(Struct, frozen=True, gc=False):
    """What a cache's location says about it (SGLang / vLLM layouts); used when `_metadata` is silent."""

    layout: str  # "sglang", "vllm", "trtllm", ...
    flashinfer_version: Optional[str] = None
    arch: Optional[str] = None
    rank: Optional[str] = None


def max_json_bytes() -> int:
    """The size limit for JSON inputs (env TILETUNE_MAX_JSON_MB overrides the default)."""
    try:
        mb = float(os.environ.get("TILETUNE_MAX_JSON_MB", DEFAULT_MAX_JSON_MB))
    except ValueError:
        mb = DEFAULT_MAX_JSON_MB
    return int(mb * 1024 * 1024)


def load_json(path: Path) -> Union[Any, InputProblem]:
    """Parse a JSON file read-only (a regular file under the size limit, with bounded depth and
    digits: see tiletune.core.bounded_input), or return the one-line reason it cannot be used."""
    try:
        return bounded_input.load_file(path, limit=max_json_bytes(), what="JSON file", override="TILETUNE_MAX_JSON_MB",
                                why=" for caches (parsing it would need about 10x that in memory)")
    except ReaderError as e:
        return InputProblem(str(path), str(e), loses_data=True)


def load_json_object(path: Path, keep: frozenset[str]) -> Union[bounded_input.ObjectPieces, Any, InputProblem]:
    """`load_json` for a file that is a big object read member by member (a v1 cache): its members in
    pieces, one piece's tree held at a time, `keep`'s members at hand first (see
    bounded_input.load_object_pieces); anything that is not a strict JSON object as `load_json` gives it."""
    try:
        return bounded_input.load_object_pieces(
            path, limit=max_json_bytes(), keep=keep, what="JSON file", override="TILETUNE_MAX_JSON_MB",
            why=" for caches (parsing it would need about 10x that in memory)")
    except ReaderError as e:
        return InputProblem(str(path), str(e), loses_data=True)


def json_type_name(v: Any) -> str:
    return {list: "array", dict: "object", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number" if isinstance(v, (int, float)) else type(v).__name__
    )


def quoted_short(text: str, limit: int = 160) -> str:
    """A key as it appears in a message: quoted, shortened in the middle when very long."""
    r = repr(text)
    return r if len(r) <= limit else r[: limit // 2] + " ... " + r[-limit // 2 :]


def finite_or_none(x: Any) -> Optional[float]:
    """A JSON number as float, None for non-numbers and inf/nan (TRT-LLM stores inf for 'never timed')."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        return float(x) if math.isfinite(x) else None
    except OverflowError:  # an integer beyond float range
        return None
