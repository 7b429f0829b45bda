"""Versions from inputs and flags go through one bounded grammar (tiletune.core.versions)."""

from __future__ import annotations

import pytest
from packaging.version import Version

from tiletune.core.versions import MAX_NUMBER_DIGITS, MAX_VERSION_CHARS, parse_version, shown, version_problem


@pytest.mark.parametrize("text", ["0.6.14", "0.7.2.post1", "0.6.18rc2", "0.6.14+cu130", "1!2.0", "20260801.1"])
def test_real_versions_parse_as_packaging_parses_them(text: str) -> None:
    assert parse_version(text) == Version(text)
    assert version_problem(text) is None


@pytest.mark.parametrize("text", ["0." + "9" * 5000, "0.7." + "1" * (MAX_NUMBER_DIGITS + 1), "1" * (MAX_VERSION_CHARS + 1),
                                  "0.6.14" + ".0" * 40, "not a version", "", "0.6.\u00b2"])
def test_oversized_or_invalid_texts_are_no_version(text: str) -> None:
    assert parse_version(text) is None
    assert version_problem(text) is not None


def test_shown_cuts_long_texts() -> None:
    assert shown("0.6.14") == "0.6.14"
    assert len(shown("0." + "9" * 5000)) < 80


def test_versions_from_inputs_are_parsed_only_through_parse_version() -> None:
    """`packaging.version.Version(text)` on a text from an input or a flag turns each of its numbers
    into an int (a 5,000-digit one raised ValueError and sank the run): only core/versions.py calls
    it on such texts; elsewhere only on literals, the package's own catalog releases, or a Version's
    own parts."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "tiletune"
    allowed = {  # (file, the call's argument): package data or a parsed Version's own fields
        ("catalogs/__init__.py", "v"), ("catalogs/__init__.py", "r"), ("catalogs/__init__.py", "want.public"),
        ("decode/buckets.py", '"0.6.10"'), ("decode/buckets.py", "v.base_version"),
        ("analysis/l2_state.py", '".".join(map(str, base))'),
        ("analysis/cache_rules.py", '"0"'), ("tuner/pin_metadata.py", '"0.6.7"'), ("tuner/pin_metadata.py", "first"),
    }
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "core/versions.py":
            continue
        text = path.read_text()
        for m in re.finditer(r"\bVersion\(", text):
            depth, end = 1, m.end()
            while depth:  # the call's argument, parentheses balanced
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            arg = text[m.end():end - 1]
            if (rel, arg) not in allowed:
                found.append(f"{rel}: Version({arg})")
    assert not found, found
