"""The shipped catalogs rebuild from public sources: two releases' wheels, downloaded from PyPI with
pip, extracted again by tools/catalogs, give exactly the shipped catalogs of those releases, and
the shipped data names the very wheel (file name and sha256) it was read from.

Marked `pypi`: skipped only where PyPI cannot be reached (CI sets TILETUNE_REQUIRE_PYPI=1, so
there it runs). Two small early wheels (9 and 14 MB) and the newest (0.7.4, 101 MB: the SM120 SVDQuant
table, the SM103 K768 notes, the fused-MoE sm89/sm107/sm110 and MXFP8 lists), a few seconds each."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from tools.catalogs import FAMILIES, document

RELEASES = ("0.6.7", "0.6.12", "0.7.4")


def _shipped(family: str) -> dict:
    return json.loads(resources.files("tiletune.catalogs").joinpath(f"data/{family}.json").read_text())


@pytest.mark.pypi
@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_release_rebuilds_from_its_pypi_wheel(flashinfer_wheel, family, version):
    wheel = flashinfer_wheel(version)
    shipped = _shipped(family)
    source = shipped["releases"][version]["source"]
    assert source["kind"] == "wheel" and source["ref"] == wheel.ref
    assert source["sha256"] == wheel.sha256(), "the shipped data was read from another file than PyPI's wheel"
    extract = FAMILIES[family][0]
    fresh = document.build(family, {}, {version: extract(wheel)})
    want = document.expand(shipped)[version]
    got = document.expand(fresh)[version]
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key
    shipped_notes = shipped["releases"][version].get("not_extracted")
    fresh_notes = fresh["releases"][version].get("not_extracted")
    assert (shipped["not_extracted_sets"][shipped_notes] if shipped_notes else None) == \
        (fresh["not_extracted_sets"][fresh_notes] if fresh_notes else None)
