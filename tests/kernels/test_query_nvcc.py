"""Exact shared memory from compiled CUTLASS, no GPU: the --query build of kernels/ on SM120 NVFP4.

These compile with nvcc against the CUTLASS FlashInfer 0.7.2.post1 bundles (4.5.0; kernels/
get_cutlass.sh puts it in .cutlass/) and check the numbers measured with that CUTLASS:
128x128x256 -> 2 stages, 83,968 B; 256x128x128 -> 3 stages, 93,184 B; 256x128x256 does not build
(the builder's "Stages set to value 2 or more" static assertion). Three type-only compiles, two
at a time: about 40 s on a 2-core machine.
"""

from __future__ import annotations

import pytest

from tiletune.core.records import TileConfig
from tiletune.tuner import cutlass_build as cb

pytestmark = pytest.mark.nvcc


@pytest.fixture(scope="module")
def queried(headers, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cutlass-builds")
    tiles = [(128, 128, 256), (256, 128, 128), (256, 128, 256)]
    builds = [cb.kernel_build(TileConfig(tile=t), "sm120", "nvfp4", query=True) for t in tiles]
    cb.build_many(builds, jobs=2, headers=headers, cache=cache)  # the compiles, in parallel
    return {t: cb.query_smem(TileConfig(tile=t), "sm120", "nvfp4", headers=headers, cache=cache) for t in tiles}


def test_128x128x256_two_stages(queried):
    q = queried[(128, 128, 256)]
    assert (q["builds"], q["stages"], q["smem_bytes"], q["smem_limit"], q["fits"]) == (True, 2, 83_968, 101_376, True)
    assert q["cutlass_version"].startswith("4.5")
    assert q["source"] == "compiled"


def test_256x128x128_three_stages(queried):
    q = queried[(256, 128, 128)]
    assert (q["builds"], q["stages"], q["smem_bytes"], q["fits"]) == (True, 3, 93_184, True)


def test_256x128x256_does_not_build(queried):
    q = queried[(256, 128, 256)]
    assert q["builds"] is False and q["fits"] is False
    assert q["stages"] is None and q["smem_bytes"] is None
    assert "static assertion failed" in q["error"]
    assert "Stages set to value 2 or more" in q["error"]
