"""Compile the --query build of kernels/ for a grid of tiles and write the exact numbers as JSON.

The result is the reference the shared-memory model (tiletune/model/smem.py) is tested against
(tests/kernels/test_query_grid_vs_model.py): for each tile, whether CUTLASS's builders accept it,
the mainloop stage count and GemmKernel::SharedStorageSize, with the CUTLASS version used.

    python3 kernels/query_grid.py --jobs 2 -o tests/kernels/data/query_grid.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tiletune.core.records import TileConfig  # noqa: E402
from tiletune.tuner import cutlass_build as cb  # noqa: E402
from tiletune.tuner import cutlass_toolchain as toolchain  # noqa: E402


def grid():
    """(arch, dtype, tile, grouped, stages) cases."""
    cases = []
    for m in (128, 256):
        for n in (32, 64, 128, 256):
            for k in (128, 256):
                cases.append(("sm120", "nvfp4", (m, n, k), False, None))
    for tile in ((128, 64, 128), (128, 64, 256), (128, 128, 128), (128, 128, 256), (256, 128, 128), (128, 256, 128)):
        cases.append(("sm120", "nvfp4", tile, True, None))
    cases.append(("sm120", "nvfp4", (128, 128, 128), False, 2))  # FlashInfer's pre-#3026 StageCount<2>
    cases.append(("sm120", "nvfp4", (256, 128, 128), False, 4))  # fixed count past the limit
    for tile in ((128, 128, 64), (128, 256, 64), (256, 128, 64), (64, 128, 64), (64, 256, 64)):
        cases.append(("sm90", "bf16", tile, False, None))
    for tile in ((128, 128, 128), (128, 256, 128), (256, 128, 128), (64, 128, 128), (64, 256, 128)):
        cases.append(("sm90", "fp8", tile, False, None))
    cases.append(("sm90", "bf16", (128, 256, 64), False, 8))
    cases.append(("sm90", "fp8", (256, 128, 128), False, 6))
    return [c + (None,) for c in cases] + SM100_CASES


# SM100: (arch, dtype, per-CTA tile, grouped, stages, (cluster, MMA tile)); 2-SM MMA spans a CTA pair.
SM100_CASES = [
    ("sm100", "nvfp4", (128, 128, 256), False, None, ((1, 1, 1), None)),
    ("sm100", "nvfp4", (128, 256, 256), False, None, ((1, 1, 1), None)),
    ("sm100", "nvfp4", (128, 128, 256), False, None, ((2, 1, 1), (256, 128, 256))),
    ("sm100", "nvfp4", (128, 256, 256), False, None, ((2, 1, 1), (256, 256, 256))),
]


def _config(tile, extra) -> TileConfig:
    if extra is None:
        return TileConfig(tile=tile)
    cluster, mma = extra
    return TileConfig(tile=tile, cluster=cluster, mma_tile=mma)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    headers = toolchain.find_cutlass()
    cases = grid()
    builds = []
    for arch, dtype, tile, grouped, stages, extra in cases:
        sched = "pingpong" if tile[0] == 64 else "cooperative"  # SM90 cooperative needs tile M >= 128
        builds.append(cb.kernel_build(_config(tile, extra), arch, dtype, grouped=grouped, stages=stages, query=True,
                                      schedule=sched))
    t0 = time.monotonic()
    cb.build_many(builds, jobs=a.jobs, headers=headers)  # compile in parallel, then query one by one
    rows = []
    for (arch, dtype, tile, grouped, stages, extra), kb in zip(cases, builds):
        sched = "pingpong" if tile[0] == 64 else "cooperative"
        cfg = _config(tile, extra)
        q = cb.query_smem(cfg, arch, dtype, grouped=grouped, stages=stages, schedule=sched, headers=headers)
        q["schedule"] = sched if arch != "sm100" else ("2sm" if extra and extra[1] else "1sm")
        q["cluster"] = list(cfg.cluster)
        q["mma_tile"] = list(cfg.mma_tile) if cfg.mma_tile else None
        q.pop("build_seconds", None)
        q.pop("cutlass_origin", None)
        if q.get("error"):  # keep the message, not this machine's include path
            q["error"] = q["error"].split("/include/", 1)[-1]
        rows.append(q)
    doc = {
        "what": "exact CUTLASS shared storage (GemmKernel::SharedStorageSize) and mainloop stages from kernels/ --query builds",
        "cutlass_version": headers.version,
        "cutlass_source": (headers.include.parent / "SOURCE").read_text().strip()
        if (headers.include.parent / "SOURCE").is_file() else headers.origin,
        "nvcc": toolchain.nvcc_version(),
        "epilogue": "bf16 D, C = void, EpilogueTileAuto; StageCountAutoCarveout<sizeof(epilogue SharedStorage)> unless stages is set",
        "command": "python3 kernels/query_grid.py --jobs 2 -o tests/kernels/data/query_grid.json",
        "seconds": round(time.monotonic() - t0),
        "cases": rows,
    }
    a.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.output.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(a.output)
    print(f"{a.output}: {len(rows)} cases in {doc['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
