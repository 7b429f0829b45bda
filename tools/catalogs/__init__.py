"""Catalog extraction (a development tool, not part of the tiletune package): reads FlashInfer's
C++ source of every covered release and writes tiletune/catalogs/data/*.json. See README.md."""

from __future__ import annotations

from typing import Callable

from tools.catalogs import dense, moe
from tools.catalogs.document import ReleaseData
from tools.catalogs.sources import Source

# family (data file name) -> (extractor of one release, first release it covers)
FAMILIES: dict[str, tuple[Callable[[Source], ReleaseData], str]] = {
    dense.FAMILY: (dense.extract, "0.6.3"),
    moe.FAMILY: (moe.extract, "0.6.3"),
}
