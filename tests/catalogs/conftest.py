"""FlashInfer release wheels from PyPI for the extractor tests (tools/catalogs).

`flashinfer_wheel("0.6.7")` downloads the wheel with pip into a cache directory
($TILETUNE_WHEEL_CACHE, default ~/.cache/tiletune/flashinfer-wheels) and returns it as a
`tools.catalogs.sources.Wheel`. Tests using it are marked `pypi` and skip only where PyPI cannot
be reached; with TILETUNE_REQUIRE_PYPI=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pip._internal.models.index import PyPI

from tools.catalogs import sources

PYPI_PROBE = PyPI.simple_url + "/flashinfer-python/"  # pip's own default index (PyPI)


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen(PYPI_PROBE, timeout=15) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def flashinfer_wheel():
    cache = Path(os.environ.get("TILETUNE_WHEEL_CACHE") or Path.home() / ".cache" / "tiletune" / "flashinfer-wheels")
    checked: dict[str, bool] = {}

    def get(version: str) -> sources.Wheel:
        if sources._wheel_in(version, cache) is None:
            if "up" not in checked:
                checked["up"] = _pypi_reachable()
            if not checked["up"]:
                if os.environ.get("TILETUNE_REQUIRE_PYPI") == "1":
                    pytest.fail(f"PyPI cannot be reached ({PYPI_PROBE}) but TILETUNE_REQUIRE_PYPI=1")
                pytest.skip(f"PyPI cannot be reached ({PYPI_PROBE}): no FlashInfer {version} wheel to read")
        return sources.download_wheel(version, cache)

    return get
