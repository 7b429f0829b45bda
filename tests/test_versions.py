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
