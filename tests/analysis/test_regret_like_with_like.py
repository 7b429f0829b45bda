"""Cost notes compare like with like (issue 25, item 1).

A failed or never-tried tile is priced only against measured times of its own source group (one
server's inputs), FlashInfer release and problem bucket. Before, the 0.6.14 layout's 11
never-tried tiles (N 5120, K 2560, no times) were priced against the demo's 0.6.17 log
(N 7168, K 4608): "best of 11 never-tried tiles ... against 128x64x128 swapAB's measured 11.8 us".
"""

from __future__ import annotations

import re

from tiletune.analysis.pipeline import inspect
from tiletune.readers.interface import ReadContext

NEVER = "never-tried tiles"


def _notes(paths, select=None):
    return inspect(list(paths), ReadContext(), select=select)


def test_never_tried_tiles_of_another_group_and_release_are_not_priced(sample):
    res = _notes([sample("demo"), sample("layouts/sglang/flashinfer/autotune/0.6.14")])
    # the layout group does have never-tried tiles, and the demo group has measured times ...
    assert any(nt.tactics and nt.flashinfer_version == "0.6.14" for nt in res.not_tried)
    assert any("calibrated on" in n for n in res.notes)
    # ... but no note prices the 0.6.14 tiles against the 0.6.17 demo's times
    assert not [n for n in res.notes if NEVER in n], [n for n in res.notes if NEVER in n]
    # the demo's own failures (same group, release and bucket as its times) are still priced
    failed = [n for n in res.notes if n.startswith("failed ")]
    assert failed and all("M 9-16" in n and "128x32x128's measured" in n for n in failed)


def test_every_priced_tile_shares_group_release_and_bucket_with_its_measured_best(sample):
    """The positive side: drop some profiled tactics of the demo's own log, so they become never
    tried in that very group and release; they are priced, against that group's times only."""
    dropped = {9, 10}

    def keep(e):
        r = e.record
        return not (r.op == "fp4_gemm" and r.tactic in dropped and r.status.value == "profiled")

    res = _notes([sample("demo"), sample("layouts/sglang/flashinfer/autotune/0.6.14")], select=keep)
    nt = [n for n in res.not_tried if n.flashinfer_version == "0.6.17" and n.op == "fp4_gemm"]
    assert nt and {i for i, _ in nt[0].tactics} == dropped
    lines = [n for n in res.notes if NEVER in n]
    assert lines and all(re.search(r"best of 2 never-tried tiles", n) for n in lines), lines
    # against the demo's measured best of the same bucket (M 9-16: 11.8 us; M 17-32: 13.0 us)
    assert {re.search(r"at (M [\d-]+)", n).group(1) for n in lines} == {"M 9-16", "M 17-32"}
