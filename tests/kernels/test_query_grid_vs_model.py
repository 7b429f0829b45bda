"""The shared-memory model (tiletune/model/smem.py) against CUTLASS itself, tile by tile.

tests/kernels/data/query_grid.json holds what the --query builds of kernels/ printed for a grid
of tiles (kernels/query_grid.py wrote it with nvcc 13.0 and FlashInfer 0.7.2.post1's CUTLASS 4.5):
whether the builders accept the tile, the stage count and GemmKernel::SharedStorageSize. The
model must agree on whether each tile builds and on its stage count, and its kernel total must
be within the error it states (`error_bytes`). Cases where it does not are listed by
`test_known_disagreements_are_still_there`, so a model fix shows up as a failing test to update.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiletune.core.records import TileConfig

smem = pytest.importorskip("tiletune.model.smem")

DATA = Path(__file__).resolve().parent / "data" / "query_grid.json"

# (arch, tile, grouped, stages, cluster, mma_tile) -> what the model gets wrong, found by this grid.
# SM100 MMA tile N = 256: the model's epilogue carveout (67,584 B, from CUTLASS 4.7 builds in the
# research note) is larger than what CUTLASS 4.5's builders give this reproducer's epilogue
# (EpilogueTileAuto, bf16 D, C = void: 17,408 B, as for N = 128), so it counts one stage fewer.
# FlashInfer's SM100 FP4 runner picks a 128x64 epilogue tile for its 128x256x256 CTA: which
# carveout its kernel gets was not compiled here. Reported to the lead; not fixed (smem.py is not ours).
KNOWN_DISAGREEMENTS: dict = {
    ("sm100", (128, 256, 256), False, False, (1, 1, 1), None): "stages: CUTLASS 4.5 3 (183,296 B), model 2",
    ("sm100", (128, 256, 256), False, False, (2, 1, 1), (256, 256, 256)): "stages: CUTLASS 4.5 5 (211,968 B), model 4",
}


def _cases():
    if not DATA.is_file():
        pytest.skip(f"{DATA} not generated")
    return json.loads(DATA.read_text())["cases"]


def _key(c):
    return (c["arch"], tuple(c["tile"]), c["grouped"], c["stage_policy"] == "explicit" and c.get("stages"),
            tuple(c.get("cluster") or (1, 1, 1)), tuple(c["mma_tile"]) if c.get("mma_tile") else None)


def _model(c):
    cfg = TileConfig(tile=tuple(c["tile"]), cluster=tuple(c.get("cluster") or (1, 1, 1)),
                     mma_tile=tuple(c["mma_tile"]) if c.get("mma_tile") else None)
    policy = f"fixed:{c['stages']}" if c["stage_policy"] == "explicit" else None
    return smem.smem_fit(cfg, c["arch"], c["dtype"].replace("fp8_e4m3", "fp8"), grouped=c["grouped"],
                         stage_policy=policy)


def _disagreement(c, m):
    """None if the model matches the compiled kernel; else one line saying how it differs."""
    if not c["builds"]:
        return None if m.verdict == "does_not_build" else f"CUTLASS rejects the tile ({c['error'][:80]}), model says {m.verdict}"
    if m.verdict == "does_not_build":
        return f"CUTLASS builds it ({c['stages']} stages, {c['smem_bytes']:,} B), model says does_not_build"
    if m.stages != c["stages"]:
        return f"stages: CUTLASS {c['stages']}, model {m.stages}"
    if m.shared_storage_bytes is None or abs(m.shared_storage_bytes - c["smem_bytes"]) > (m.error_bytes or 0):
        return (f"SharedStorageSize: CUTLASS {c['smem_bytes']:,} B, model {m.shared_storage_bytes} B "
                f"(stated error {m.error_bytes} B)")
    fits = c["smem_bytes"] <= c["smem_limit"]
    if (m.verdict == "fits") != fits:
        return f"fit: CUTLASS {c['smem_bytes']:,} B vs {c['smem_limit']:,} B limit, model verdict {m.verdict}"
    return None


def test_grid_was_compiled_with_cutlass_4_5():
    doc = json.loads(DATA.read_text()) if DATA.is_file() else pytest.skip("no data")
    assert doc["cutlass_version"] == "4.5.0"
    assert len(doc["cases"]) >= 30


def test_the_three_anchor_tiles_are_in_the_grid():
    by = {(c["arch"], tuple(c["tile"]), c["grouped"], c["stage_policy"]): c for c in _cases()}
    assert (by[("sm120", (128, 128, 256), False, "auto_carveout")]["stages"],
            by[("sm120", (128, 128, 256), False, "auto_carveout")]["smem_bytes"]) == (2, 83_968)
    assert (by[("sm120", (256, 128, 128), False, "auto_carveout")]["stages"],
            by[("sm120", (256, 128, 128), False, "auto_carveout")]["smem_bytes"]) == (3, 93_184)
    assert by[("sm120", (256, 128, 256), False, "auto_carveout")]["builds"] is False


def test_model_agrees_with_compiled_cutlass():
    bad = []
    for c in _cases():
        if _key(c) in KNOWN_DISAGREEMENTS:
            continue
        why = _disagreement(c, _model(c))
        if why:
            bad.append(f"{c['arch']} {c['dtype']} {'x'.join(map(str, c['tile']))} grouped={c['grouped']} "
                       f"{c['stage_policy']}: {why}")
    assert not bad, "model vs compiled CUTLASS:\n" + "\n".join(bad)


def test_known_disagreements_are_still_there():
    for c in _cases():
        if _key(c) in KNOWN_DISAGREEMENTS:
            assert _disagreement(c, _model(c)) is not None, f"{_key(c)} now agrees: drop it from KNOWN_DISAGREEMENTS"
