"""Version strings from inputs and flags, parsed with a bounded grammar.

`packaging.version.Version` turns every number of a version into a Python int: a `_metadata`,
manifest or `--flashinfer-version` holding a 5,000-digit number raised ValueError past Python's
4,300-digit limit (and a shorter one still costs quadratic time). Every version tiletune reads
goes through `parse_version`: at most MAX_VERSION_CHARS characters, no number longer than
MAX_NUMBER_DIGITS digits, else it is not a version (None), like any other text that is not one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from packaging.version import InvalidVersion, Version

__all__ = ["MAX_NUMBER_DIGITS", "MAX_VERSION_CHARS", "parse_version", "shown", "version_problem"]

# Real versions: "0.7.2.post1", "0.6.18rc2", "0.6.14+cu130"; dates as numbers have 8 digits.
MAX_VERSION_CHARS = 64
MAX_NUMBER_DIGITS = 12
_LONG_NUMBER = re.compile(r"[0-9]{%d}" % (MAX_NUMBER_DIGITS + 1))


def version_problem(text: str) -> Optional[str]:
    """Why `text` is not a version tiletune parses (too long, a number too long, not PEP 440), or None."""
    if len(text) > MAX_VERSION_CHARS:
        return f"longer than {MAX_VERSION_CHARS} characters"
    if _LONG_NUMBER.search(text):
        return f"holds a number of more than {MAX_NUMBER_DIGITS} digits"
    try:
        Version(text)
    except InvalidVersion:
        return "not a PEP 440 version"
    return None


def shown(text: str, limit: int = 40) -> str:
    """A version text as a message shows it: cut in the middle past `limit` characters."""
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-limit // 4:]} ({len(text):,} characters)"


@lru_cache(maxsize=1024)
def parse_version(text: Optional[str]) -> Optional[Version]:
    """`Version(text)` for a version of bounded size, else None (never raises)."""
    if not isinstance(text, str) or len(text) > MAX_VERSION_CHARS or _LONG_NUMBER.search(text):
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None
