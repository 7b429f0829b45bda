"""Re-extract the sources/*.tsv files that come from public git repositories (the others were copied by
hand from the page their header names: their TSV is the record).

    python3 bench/blackwell_public/extract_sources.py LEARN_CUDA GN_KERNELS WAYNE

Each argument is a git clone (bare or not) of, in order, github.com/gau-nernst/learn-cuda (read at
1454f8b), github.com/gau-nernst/gn-kernels (ba18197) and github.com/waynehacking8/blackwell-tensorcore-kernels
(c289bde); the files are read from each clone's HEAD with `git show`. Writes learncuda_sm100_b200,
learncuda_sm120_5090, learncuda_rowscaled_5090, gnkernels_5090 and wayne_maxq into sources/.
"""

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "sources"
REPOS = dict(zip(("gau-nernst+learn-cuda", "gau-nernst+gn-kernels", "waynehacking8+blackwell-tensorcore-kernels"),
                 sys.argv[1:4]))
COLS = ["gpu", "dtype", "dtype_out", "m", "n", "k", "batch", "grouped", "value", "unit", "kernel", "tile", "cluster",
        "schedule", "stages", "sm_clock_mhz", "note"]
# RTX 5090 at a 400 W power limit: the SM clock the model runs such points at = the unlocked clock (2,862 MHz,
# gpus.json) / (throughput at 600 W / at 400 W) for the dtype, both measured on one 5090 in gn-kernels'
# README 'Realistic SOL' table (BF16 245.80/229.55, INT8 726.34/602.79, FP8 480.37/447.50, MXFP8 659.95/552.20,
# NVFP4 1306.48/1165.04); fp16/fp32 take BF16's
P400 = {"bf16": 245.80 / 229.55, "int8": 726.34 / 602.79, "fp8": 480.37 / 447.50, "mxfp8": 659.95 / 552.20,
        "nvfp4": 1306.48 / 1165.04}
def clk400(dtype):
    return round(2862 / P400.get(dtype, P400["bf16"]))

def git_show(repo, path):
    return subprocess.run(["git", "-C", REPOS[repo], "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout

def write(name, meta, rows):
    if "5090" in meta.get("gpu_basis", "") and "400" in meta.get("power", ""):
        for r in rows:
            r["sm_clock_mhz"] = clk400(r["dtype"])
        meta["clock"] = (meta["clock"] + "; the model runs these points at 2,862 MHz / (600 W / 400 W throughput of the "
                         "dtype on one 5090, gn-kernels README): column sm_clock_mhz")
    buf = io.StringIO()
    for k, v in meta.items():
        buf.write(f"# {k}: {v}\n")
    w = csv.DictWriter(buf, COLS, delimiter="\t", lineterminator="\n", extrasaction="raise")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLS})
    (OUT / f"{name}.tsv").write_text(buf.getvalue())
    print(name, len(rows))

# 3. learn-cuda 02e (B200) tables
readme = git_show("gau-nernst+learn-cuda", "02e_matmul_sm100/README.md")
tiles = {"v3": ("128x256x128", "1x1x1", "1sm", 2), "v4": ("128x128x64", "1x1x1", "1sm", 7),
         "v5": ("128x256x64", "2x1x1", "2sm", 7), "v6": ("128x256x64", "2x1x1", "2sm", 7),
         "v7a": ("128x256x64", "2x1x1", "2sm", ""), "v7b": ("128x256x64", "2x1x1", "2sm", ""),
         "v7c": ("128x256x64", "2x1x1", "2sm", "")}
rows = []
sec1 = readme.split("Varying problem shapes")[0]
for line in sec1.splitlines():
    m = re.match(r"^(CuBLAS|v\d+[a-z]?) .*\|\s*([\d.]+)\s*$", line)
    if not m:
        continue
    name = m.group(1)
    key = name
    if name in ("v0", "v1a", "v1b", "v2a", "v2b"):
        continue  # sm80-style or unpipelined teaching steps: not the kernel class the model describes
    t = tiles.get(key)
    rows.append(dict(gpu="B200", dtype="bf16", dtype_out="bf16", m=4096, n=4096, k=4096, batch=1, value=m.group(2),
                     unit="TFLOP/s", kernel="cuBLAS (torch.mm)" if name == "CuBLAS" else f"learn-cuda matmul_{name}",
                     tile=t[0] if t else "", cluster=t[1] if t else "", schedule=t[2] if t else "",
                     stages=t[3] if t else "", note=line.split("|")[0].strip()))
sec2 = readme.split("Varying problem shapes")[1].split("Note:")[0]
for line in sec2.splitlines():
    cells = [c.strip() for c in line.split("|")]
    if len(cells) != 4 or not re.match(r"^(CuBLAS|v7[abc])$", cells[0]):
        continue
    for dim, val in zip((2048, 4096, 8192), cells[1:]):
        if dim == 4096:
            continue  # same run as the first table's 4096 column
        t = tiles.get(cells[0])
        rows.append(dict(gpu="B200", dtype="bf16", dtype_out="bf16", m=dim, n=dim, k=dim, batch=1, value=val, unit="TFLOP/s",
                         kernel="cuBLAS (torch.mm)" if cells[0] == "CuBLAS" else f"learn-cuda matmul_{cells[0]}",
                         tile=t[0] if t else "", cluster=t[1] if t else "", schedule=t[2] if t else "",
                         stages=t[3] if t else ""))
write("learncuda_sm100_b200", {
    "source_id": "learncuda-b200",
    "url": "https://github.com/gau-nernst/learn-cuda/blob/1454f8b71499a68eacdbf44c08e36a7003d8ab99/02e_matmul_sm100/README.md",
    "date": "2026-03 (README commits up to 2026-04-05)", "gpu_basis": "stated: Modal B200",
    "clock": "not stated", "power": "not stated", "l2": "cold (nvbench flushes L2 between runs by default; the README says it switched to nvbench)",
    "timing": "nvbench via cuda.bench, BF16, A/B K-major, PyTorch 2.10, CUDA 13.0; the README notes results vary across Modal runs",
    "how_read": (
        "both README tables; tile/stages from the kernels' launch templates in the same commit (matmul_v3: BLOCK_N 256,"
        " BLOCK_K 128, 2 stages, BLOCK_M 128; v4: 128x128x64, 7 stages; v5/v6: 2-SM CTA pair, BLOCK_N 256, BLOCK_K 64, "
        "7 stages (B_size = BLOCK_N/2 per CTA); v7: 2-SM, BLOCK_N 256, BLOCK_K 64, stages from the smem left); tile is "
        "the per-CTA tile (128x256xK), the pair MMA is 256x256xK (tiletune convention). v0-v2 (sm80 path, unpipelined "
        "TMA steps) are skipped: not the pipelined kernel the model describes"
    ),
}, rows)

# 4. learn-cuda 02c (RTX 5090 @400W) BF16 and INT8
readme = git_show("gau-nernst+learn-cuda", "02c_matmul_sm120/README.md")
rows = []
blocks = readme.split("\nINT8\n")
for dtype, block, tile in (("bf16", blocks[0], "256x128x64"), ("int8", blocks[1], "256x128x128")):
    for line in block.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != 4 or cells[0].startswith(("Kernel", "---")) or cells[0].startswith("-"):
            continue
        name = cells[0]
        for dim, val in zip((2048, 4096, 8192), cells[1:]):
            v = val.split()[0]
            own = name.startswith("v")
            rows.append(dict(gpu="RTX 5090", dtype=dtype, dtype_out="bf16" if dtype == "bf16" else "int32", m=dim, n=dim, k=dim,
                             batch=1, value=v, unit="TFLOP/s", kernel=name, tile=tile if own else "",
                             cluster="1x1x1" if own else "", schedule="sm80" if own else "", stages=2 if own else "",
                             note="cp.async" if name.startswith("v0") else ""))
write("learncuda_sm120_5090", {
    "source_id": "learncuda-5090",
    "url": "https://github.com/gau-nernst/learn-cuda/blob/1454f8b71499a68eacdbf44c08e36a7003d8ab99/02c_matmul_sm120/README.md",
    "date": "2026-03-27", "gpu_basis": "stated: 5090 @ 400W",
    "clock": "not stated", "power": "400 W (stated)", "l2": "cold (nvbench)",
    "timing": "nvbench; CUDA 13.0; PyTorch 2.11; A row-major x B column-major",
    "how_read": (
        "TFLOPS column values (the %SOL in brackets dropped). Own kernels v0-v2: BLOCK 256x128, BK 64 (bf16) / 128 "
        "(int8), 2 stages, 4x2 warps (from matmul_v*.cu host launch code, same commit). INT8 output int32 "
        "(torch._int_mm)"
    ),
}, rows)

# 5. learn-cuda 08 row-scaled (5090 @400W)
readme = git_show("gau-nernst+learn-cuda", "08_row_scaled_mm/README.md")
rows = []
cur = None
for line in readme.splitlines():
    if line.startswith("### INT8"):
        cur = "int8"
    elif line.startswith("### FP8"):
        cur = "fp8"
    cells = [c.strip() for c in line.split("|")]
    if cur and len(cells) == 3 and re.match(r"^[\d.]+$", cells[1]):
        mx = cur == "fp8" and cells[0] == "v1"
        rows.append(dict(gpu="RTX 5090", dtype="mxfp8" if mx else cur, dtype_out="bf16", m=4096, n=4096, k=8192, batch=1, value=cells[1],
                         unit="TFLOP/s", kernel=cells[0],
                         note=("row-scaled; the README says its own FP8 v1 uses the MXFP8 (block-scaled) MMA instruction"
                               if (cur == "fp8" and cells[0] == "v1") else "row-scaled")))
write("learncuda_rowscaled_5090", {
    "source_id": "learncuda-rowscaled-5090",
    "url": "https://github.com/gau-nernst/learn-cuda/blob/1454f8b71499a68eacdbf44c08e36a7003d8ab99/08_row_scaled_mm/README.md",
    "date": "2025-08-27", "gpu_basis": "stated: 5090 @ 400W", "clock": "not stated", "power": "400 W (stated)",
    "l2": "not stated", "timing": "CUDA 12.9; method not stated in the README",
    "how_read": "TFLOPS column of both tables (M=N=4096, K=8192 stated)",
}, rows)

# 6. gn-kernels README matmul table (RTX 5090 @400W)
readme = git_show("gau-nernst+gn-kernels", "README.md")
rows = []
tab = readme.split("### Matmul")[1]
for line in tab.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 5 or not cells[0] or not re.match(r"^[\d.]+$", cells[1]):
        continue
    name = cells[0]
    low = name.lower()
    if "int8" in low:
        dt = "int8"
    elif "nvfp4" in low:
        dt = "nvfp4"
    elif "mxfp8" in low:
        dt = "mxfp8"
    elif "fp8" in low:
        dt = "fp8"
    elif "fp16 w/ fp16 accumulate" in low:
        continue  # FP16-accumulate path: not a dtype the model has a peak for
    else:
        dt = "bf16"
    for dim, val in zip((1024, 2048, 4096), cells[1:4]):
        rows.append(dict(gpu="RTX 5090", dtype=dt, dtype_out="int32" if (dt == "int8" and "row-scaled" not in low) else "bf16",
                         m=dim, n=dim, k=dim, batch=1, value=val, unit="TFLOP/s", kernel=name,
                         note=f"README SOL column {cells[4]}"))
write("gnkernels_5090", {
    "source_id": "gnkernels-5090",
    "url": "https://github.com/gau-nernst/gn-kernels/blob/ba18197032228d112a36bf4105b1a0a96dd0ca50/README.md",
    "date": "2026-08-11 (README commit)", "gpu_basis": "stated: RTX 5090 @ 400W", "clock": "not stated", "power": "400 W (stated)",
    "l2": "cold (benchmark_mm.py times with triton.testing.do_bench, which clears a 256 MB buffer)",
    "timing": "triton.testing.do_bench; torch 2.12, triton 3.7; Row-major x Column-major; M=N=K=dim",
    "how_read": (
        "the 'Matmul' table, columns 1024/2048/4096 (TFLOPS). The FP16-with-FP16-accumulate row is skipped. The "
        "'Realistic SOL' table (max over unstated shapes) is not a point: its values are quoted in README.md as peak "
        "evidence only"
    ),
}, rows)

# 7. waynehacking8 bench.csv (RTX PRO 6000 Max-Q)
csvtext = git_show("waynehacking8+blackwell-tensorcore-kernels", "results/bench.csv")
rows = []
for r in csv.DictReader(io.StringIO(csvtext)):
    if not r["device"].startswith("NVIDIA RTX PRO 6000"):
        continue
    kn = r["kernel"]
    spec = {"cublas_tc": ("fp16", "fp16", "cutlass_80_tensorop_s16816gemm_f16_128x64_64x3_nn_align8 (results/ncu_sm120_cublastc_8192.txt)", "", "", ""),
            "cublas_tf32": ("fp32", "fp32", "cuBLAS cublasGemmEx TF32", "", "", ""),
            "cublaslt_fp8": ("fp8", "fp16", "cuBLASLt sm89_xmma_gemm_e4m3 tilesize128x128x64 stage3 "
                             "(stated in results/phase3_lowprec.md)", "128x128x64", "sm80", 3)}
    if kn not in spec:
        continue
    dt, out, kname, tile, sched, st = spec[kn]
    if r["M"] != "8192":  # the kernel names were read (ncu, phase3_lowprec.md) at 8192^3 only
        kname, tile, sched, st = kname.split(" (")[0].split(" tilesize")[0] + " (kernel not stated at this size)", "", "", ""
    elif kn == "cublas_tc":
        tile, sched, st = "128x64x64", "sm80", 3
    rows.append(dict(gpu="RTX PRO 6000 Max-Q", dtype=dt, dtype_out=out, m=r["M"], n=r["N"], k=r["K"], batch=1, sm_clock_mhz=2060,
                     value=r["ms"], unit="ms", kernel=kname, tile=tile, cluster="1x1x1" if tile else "", schedule=sched,
                     stages=st, note=f"tflops column {r['tflops']}"))
write("wayne_maxq", {
    "source_id": "wayne-maxq",
    "url": "https://github.com/waynehacking8/blackwell-tensorcore-kernels/blob/c289bdedb5f256fdf1351de3cacf7757564a0dd0/results/bench.csv",
    "date": "2026-06-02..04", "gpu_basis": "stated: NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "clock": (
        "session clocks logged in results/clock_state_*.txt: 2257 MHz average under the rate probe, 1995-2060 MHz in "
        "the GEMM sessions, 300 W cap (throttle reason SW power cap); results/phase3_lowprec.md states 'avg SM clock "
        "2.06 GHz' with the 300 W cap reached: the model runs these points at 2,060 MHz (column sm_clock_mhz)"
    ),
    "power": "300 W cap reached", "l2": "not stated", "timing": "CUDA events in the repo's harness (src/main.cu)",
    "how_read": (
        "rows of the Max-Q device for the library kernels cublas_tc (FP16 in, FP32 acc), cublas_tf32, cublaslt_fp8; ms "
        "column is the point, tflops kept in the note. Kernel tiles only where the repo names the kernel: at 8192^3, "
        "cuBLAS FP16 = cutlass_80 128x64x64, 3 stages (ncu), cuBLASLt FP8 = sm89_xmma 128x128x64, 3 stages "
        "(results/phase3_lowprec.md). Own teaching kernels are not taken. Max-Q FP16 FP32-accumulate rate 1023.8 "
        "FLOP/clk/SM measured by the same repo's results/mma_rate_probe.csv"
    ),
}, rows)
