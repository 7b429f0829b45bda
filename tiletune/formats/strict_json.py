"""Strict JSON: no bare NaN / Infinity, which JSON does not have and strict parsers reject.

Python's encoder writes them for non-finite floats (a NaN timing in a log, an Infinity min_time in
a TensorRT-LLM cache). Every JSON tiletune prints passes through `finite_only` (or `dumps`): they
become null, and the document's notes say so. (inspect's fragment writer passes each memoised
fragment once, as it is made: formats/json_out.py `_Strict`.)
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["NOTE", "dumps", "finite_only"]

NOTE = "non-finite numbers (NaN, Infinity) from the inputs are written as null (JSON has no such numbers)"
# strings first, so a "NaN" inside one is skipped whole
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def finite_only(text: str) -> tuple[str, int]:
    """(`text` with every bare NaN/Infinity/-Infinity replaced by null, how many were replaced).

    `text` must be whole JSON values (a chunk boundary never inside a string)."""
    if "NaN" not in text and "Infinity" not in text:  # the usual case: two C-speed scans
        return text, 0
    count = 0

    def sub(m: "re.Match[str]") -> str:
        nonlocal count
        if m.group(1) is None:
            return m.group(0)
        count += 1
        return "null"

    return _TOKEN.sub(sub, text), count


def dumps(doc: Any, *, notes_key: str = "notes", **kwargs: Any) -> str:
    """`json.dumps(doc, **kwargs)` without NaN/Infinity; when any was replaced and `doc` is an object,
    NOTE is appended to its `notes_key` list (created if absent)."""
    kwargs.pop("allow_nan", None)
    text, n = finite_only(json.dumps(doc, **kwargs))
    if n and isinstance(doc, dict):
        notes = doc.get(notes_key)
        doc = {**doc, notes_key: [*(notes if isinstance(notes, list) else ([notes] if notes else [])), NOTE]}
        text, _ = finite_only(json.dumps(doc, **kwargs))
    return text
