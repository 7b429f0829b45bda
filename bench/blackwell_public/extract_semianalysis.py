"""Re-extract sources/semianalysis_mainloop_b200.tsv from a clone of
github.com/SemiAnalysisAI/microbench-blackwell (read at 9a068d8).

    python3 bench/blackwell_public/extract_semianalysis.py CLONE

Reads cutlass_gemm_mainloop/results.csv from the clone's HEAD with `git show` and writes one row per
timed configuration (the `# BUILD_FAILED` lines are configurations CUTLASS could not build; they are
not points). The kernel facts in the header are read from cutlass_gemm_bench.cu and sweep.sh of the
same commit: CUTLASS SM100 1-SM TMA warp-specialised mainloop, no-smem epilogue, one CTA
(hw_info.sm_count = 1, M = TILE_M, N = TILE_N), K = 131072, BF16 output, STAGES 0 = the builder's
StageCountAutoCarveout.
"""

import csv
import io
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "sources" / "semianalysis_mainloop_b200.tsv"
COLS = ["gpu", "dtype", "dtype_out", "m", "n", "k", "batch", "grouped", "value", "unit", "kernel", "tile", "cluster",
        "schedule", "stages", "epilogue", "sm_clock_mhz", "note"]
META = {
    "source_id": "sa-mainloop-b200",
    "url": "https://github.com/SemiAnalysisAI/microbench-blackwell/blob/9a068d8/cutlass_gemm_mainloop/results.csv "
           "(kernel: cutlass_gemm_mainloop/cutlass_gemm_bench.cu, sweep: sweep.sh, same commit)",
    "date": "2026-03 (repository of the SemiAnalysis article 'Dissecting Nvidia Blackwell', 2026-03-31)",
    "gpu_basis": "stated: B200 (cutlass_gemm_bench.cu: NUM_SMS = 148 // B200; README: B200 nodes from Nebius and Verda)",
    "clock": "not stated",
    "power": "not stated",
    "l2": "not stated (1 warm-up launch, then 20 launches of the same operands)",
    "timing": "CUDA events around 20 launches, average (cutlass_gemm_bench.cu)",
    "how_read": "every timed row of results.csv: time_ms is the point; M = TILE_M, N = TILE_N, K = 131072, one CTA "
                "on one SM (hw_info.sm_count = 1); KernelTmaWarpSpecialized1SmSm100 mainloop, "
                "NoSmemWarpSpecialized1Sm epilogue, cluster 1x1x1, A row-major / B column-major (both K-major), "
                "BF16 D; STAGES 0 = StageCountAutoCarveout (stages column left empty). TFLOPS column kept in the note",
}


def main(clone: str) -> None:
    text = subprocess.run(["git", "-C", clone, "show", "HEAD:cutlass_gemm_mainloop/results.csv"], capture_output=True,
                          text=True, check=True).stdout
    rows = []
    for r in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
        dtype = {"BF16": "bf16", "FP8_E4M3": "fp8"}[r["dtype"]]
        stages = "" if r["STAGES"] == "0" else r["STAGES"]
        rows.append(dict(gpu="B200", dtype=dtype, dtype_out="bf16", m=r["M"], n=r["N"], k=r["K"], batch=1,
                         value=r["time_ms"], unit="ms",
                         kernel="CUTLASS KernelTmaWarpSpecialized1SmSm100 (cutlass_gemm_bench.cu)",
                         tile=f"{r['TILE_M']}x{r['TILE_N']}x{r['TILE_K']}", cluster="1x1x1", schedule="1sm",
                         stages=stages, epilogue="nosmem",
                         note=f"single CTA; TFLOPS column {r['TFLOPS']}" + ("; stages: auto carveout" if not stages else "")))
    buf = io.StringIO()
    for k, v in META.items():
        buf.write(f"# {k}: {v}\n")
    w = csv.DictWriter(buf, COLS, delimiter="\t", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLS})
    OUT.write_text(buf.getvalue())
    print(OUT.name, len(rows))


if __name__ == "__main__":
    main(sys.argv[1])
