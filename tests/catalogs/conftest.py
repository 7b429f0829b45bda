"""FlashInfer release wheels from PyPI for the extractor tests (tools/catalogs).

`flashinfer_wheel("0.6.7")` downloads the wheel with pip into a cache directory
($TILETUNE_WHEEL_CACHE, default ~/.cache/tiletune/flashinfer-wheels) and returns it as a
`tools.catalogs.sources.Wheel`. Tests using it are marked `pypi` and skip only where PyPI cannot
be reached; with TILETUNE_REQUIRE_PYPI=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.catalogs import sources

# Asked through pip itself (its configured index), in a child: importing pip's internals here would
# load the standard library's distutils into the test process and break setuptools' later import.
PYPI_PROBE = "pip index versions flashinfer-python"


def _pypi_reachable() -> bool:
    try:
        r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "flashinfer-python"],
                           capture_output=True, text=True, timeout=60)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return r.returncode == 0 and "flashinfer-python" in r.stdout


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
