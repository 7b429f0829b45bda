"""Writes tests/model/data/estimate_notes.json: `estimate`'s notes over a grid of cases.

    python3 tests/model/make_estimate_notes.py

The file was first written at 7769da8, when `estimate` formatted every note as it modelled; since
then `ModelResult.notes` formats them on demand from the facts the result keeps, and
tests/model/test_perf.py::test_lazy_notes_match_the_eager_ones compares the two. Rerun this only
when a note's wording changes on purpose (and say so in the commit).
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "estimate_notes.json"


def grid():
    """(label, problem, config, gpu name, estimate's keyword arguments) for each case."""
    from tiletune.core.records import Problem, TileConfig
    from tiletune.model.calibration import constants_for
    from tiletune.model.mainloop import FITTED

    configs = [TileConfig(tile=(128, 128, 256)), TileConfig(tile=(128, 256, 64), cluster=(2, 1, 1)),
               TileConfig(tile=(64, 128, 128), swap_ab=True), TileConfig(tile=(128, 128, 128), stream_k=True),
               TileConfig(tile=(256, 128, 64), cluster=(2, 1, 1))]
    problems = [Problem(m=1, n=7168, k=4608, dtype_out="bf16"), Problem(m=4096, n=4096, k=4096),
                Problem(m=128, n=2 * 768, k=2048, experts=128, top_k=8), Problem(m=48, n=1000, k=333, batch=3),
                Problem(m=8, n=512, k=512), Problem(m=3, n=20000, k=8192, experts=8)]
    cases = [("H200", "sm90", "bf16"), ("H200", "sm90", "fp8"), ("RTX PRO 6000 WS", "sm120", "nvfp4"),
             ("RTX 5090", "sm120", "nvfp4"), ("B200", "sm100", "fp8"), ("B200", "sm100", "nvfp4")]
    kws = [{}, {"split_k": 2}, {"constants": constants_for("sm90", "fp8")}, {"constants": FITTED["sm90"]},
           {"sm_clock_hz": 1.5e9}, {"l2": "warm"}, {"l2": "cold"}]
    for g, arch, dtype in cases:
        for ki, kw in enumerate(kws):
            for ci, cfg in enumerate(configs):
                for pi, p in enumerate(problems):
                    yield f"{g}|{arch}|{dtype}|kw{ki}|cfg{ci}|p{pi}", p, cfg, g, dict(dtype=dtype, arch=arch, **kw)


def notes_of_grid() -> dict:
    from tiletune.core.errors import ModelError
    from tiletune.model import gpus
    from tiletune.model.perf import estimate

    out = {}
    for label, p, cfg, g, kw in grid():
        try:
            out[label] = list(estimate(p, cfg, gpus.find(g), **kw).all_notes)
        except ModelError as e:
            out[label] = f"ModelError: {e}"
    return out


def compact(notes: dict) -> dict:
    """Each distinct note text once ("texts"); each case lists its notes by index ("cases")."""
    texts: list = []
    index: dict = {}
    cases = {}
    for label, got in notes.items():
        if isinstance(got, str):
            cases[label] = got
            continue
        ids = []
        for t in got:
            if t not in index:
                index[t] = len(texts)
                texts.append(t)
            ids.append(index[t])
        cases[label] = ids
    return {"texts": texts, "cases": cases}


def expand(doc: dict) -> dict:
    return {label: v if isinstance(v, str) else [doc["texts"][i] for i in v] for label, v in doc["cases"].items()}


if __name__ == "__main__":
    doc = {"command": "python3 tests/model/make_estimate_notes.py", **compact(notes_of_grid())}
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")
