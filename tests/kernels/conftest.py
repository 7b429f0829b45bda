"""Fixtures for the nvcc tests of kernels/: the CUTLASS headers they compile against."""

from __future__ import annotations

import os

import pytest

from tiletune.core.errors import TunerError
from tiletune.tuner import cutlass_toolchain as toolchain


@pytest.fixture(scope="module")
def headers():
    """CUTLASS 4.5 headers (the expected numbers are CUTLASS 4.5's); skip where none are found."""
    try:
        h = toolchain.find_cutlass()
    except TunerError as e:
        if os.environ.get("TILETUNE_REQUIRE_CUTLASS") == "1":  # CI fetches the headers: missing is a failure
            pytest.fail(str(e))
        pytest.skip(f"no CUTLASS headers: {e}")
    if h.version.split(".")[:2] != ["4", "5"]:
        pytest.skip(f"the expected numbers are for CUTLASS 4.5; found {h.version} ({h.origin})")
    return h
