"""Round six's held-out sources: parse the stored public excerpts in sources/raw6/ into sources/*.tsv.

    python3 bench/blackwell_public/extract_round6.py     # writes the six round-6 TSVs, prints their row counts

Each sources/raw6/*.txt is the text of a GitHub pull request as the search index stores it (copied whole; its
`# ` lines name the URL, the title, where the store cut the text and, where the text does not name the GPU, the
basis on which it was identified). This script reads the numbers from that text and writes them in
build_points.py's TSV form; it decides nothing about the model. Every header says how the source timed its kernels
(the `timing` line) and what it says about the L2. Pure Python.
"""

from __future__ import annotations

import re
from pathlib import Path

from extract_round4 import write

HERE = Path(__file__).resolve().parent
RAW = HERE / "sources" / "raw6"

# kekzl/imp runs on one GPU that its texts call sm_120 / sm_120a; imp1842's excerpt identifies it (the basis is the
# first '#' line of sources/raw6/imp1842_grouped_5090.txt)
IMP_GPU_BASIS = ("inferred: the texts say sm_120 / sm_120a; the repository's ncu grid of 170 CTAs is 'exactly the SM "
                 "count' (docs/audit/gemm_grouped_nvfp4_ceiling_2026_06_09.md) and #1842's floor, 134 MB in 74.9 us = "
                 "1.79 TB/s, is the RTX 5090's 1,792 GB/s: an RTX 5090 (170 SMs)")


def raw(name: str) -> str:
    return (RAW / name).read_text()


def vllm38338() -> None:
    """vLLM PR #38338 (comment): RTX 5090, M = 4096, torch BF16 and the PR's Triton NVFP4 kernel, TFLOP/s."""
    rows = []
    for mt in re.finditer(r"^\| (.+?) (\d+) x (\d+) \| (\d+) \| (\d+) \| [\d.]+x \|$", raw("vllm38338_nvfp4_5090.txt"), re.M):
        name, n, k = mt.group(1), int(mt.group(2)), int(mt.group(3))
        rows.append(dict(gpu="RTX 5090", dtype="bf16", dtype_out="bf16", m=4096, n=n, k=k, batch=1, value=mt.group(4),
                         unit="TFLOP/s", kernel="torch BF16 matmul (cuBLAS; kernel not stated)", note=name))
        rows.append(dict(gpu="RTX 5090", dtype="nvfp4", dtype_out="bf16", m=4096, n=n, k=k, batch=1, value=mt.group(5),
                         unit="TFLOP/s", kernel="the PR's Triton NVFP4 reference GEMM (tile not stated)", note=name))
    write("vllm38338_nvfp4_5090", {
        "source_id": "vllm38338-5090",
        "url": "https://github.com/vllm-project/vllm/pull/38338 (comment by AshtonVaughan, 'Speedup vs BF16, large-batch "
               "(M=4096)'; raw excerpt: sources/raw6/vllm38338_nvfp4_5090.txt)",
        "date": "2026-04-30",
        "gpu_basis": "stated: 'Wider sweep on RTX 5090 SM 12.0'",
        "clock": "not stated",
        "power": "not stated",
        "l2": "not stated",
        "timing": "unknown: the comment does not say how it timed (Triton 3.6.0, Torch 2.8.0+cu128)",
        "how_read": "extract_round6.py: the M=4096 table, one BF16 and one FP4 point per row (TFLOP/s as printed; "
                    "shape column 'N x K')",
    }, rows)


# kekzl/imp #1842's tile-sweep columns: (tile, schedule) of each; 'prod' is the shipping cooperative kernel
IMP_COLUMNS = (("128x128x128", "cooperative", "prod 128x128x128 (shipping)"), ("128x64x128", "cooperative", "128x64x128"),
               ("128x64x128", "pingpong", "128x64 pingpong (tile K not printed: 128 assumed)"),
               ("128x128x256", "cooperative", "128x128x256"),
               ("128x128x128", "pingpong", "128x128 pingpong (tile K not printed: 128 assumed)"))
# per-expert GEMM of each row: 'gate/up N=512 K=2048, down N=2048 K=512'; pp512 = 4096 expanded rows over 256 experts
IMP_NK = {"gate/up": (512, 2048), "down": (2048, 512)}


def imp1842() -> None:
    """kekzl/imp PR #1842: CUTLASS SM120 NVFP4 grouped GEMM, 256 experts, five tile configs, four shapes, us."""
    text = raw("imp1842_grouped_5090.txt")
    experts = int(re.search(r"(\d+) experts", text).group(1))
    rows = []
    for mt in re.finditer(r"^\| (gate/up|down) pp(\d+) \| ([\d.]+) us \([^)]*\) \| (.+) \|$", text, re.M):
        which, pp, prod = mt.group(1), int(mt.group(2)), float(mt.group(3))
        n, k = IMP_NK[which]
        rows_total = pp * 8  # top-8: pp512 = 4096 expanded rows (stated)
        per = rows_total // experts
        deltas = [None] + [float(c.strip().rstrip("%")) for c in mt.group(4).split("|")]
        for (tile, sched, label), d in zip(IMP_COLUMNS, deltas):
            us = prod if d is None else prod * (1 + d / 100)
            rows.append(dict(gpu="RTX 5090", dtype="nvfp4", dtype_out="bf16", m=per, n=n, k=k, batch=experts, grouped=1,
                             value=f"{us:.2f}", unit="us", kernel=f"CUTLASS SM120 block-scaled grouped GEMM, {label}",
                             tile=tile, cluster="1x1x1", schedule=sched,
                             note=f"{which} pp{pp}: {rows_total} expanded rows over {experts} experts, m = the mean rows "
                                  "per expert (routing varies it); " + ("as printed" if d is None else
                                  f"derived: the prod time x (1 {'+' if d >= 0 else '-'} {abs(d)}%) as printed")))
    write("imp1842_grouped_5090", {
        "source_id": "imp1842-grouped-5090",
        "url": "https://github.com/kekzl/imp/pull/1842 (description, '## Measurements'; raw excerpt: "
               "sources/raw6/imp1842_grouped_5090.txt)",
        "date": "2026-09-01",
        "gpu_basis": IMP_GPU_BASIS,
        "clock": "not stated ('per-shape clock warm-up')",
        "power": "not stated",
        "l2": "cold for the weights: 'weight ring > L2' (stated)",
        "timing": "unknown: a C++ gtest bench (GroupedTileBench) whose timer the text does not name",
        "how_read": "extract_round6.py: the tile-sweep table; the prod column as printed (us), the other four columns "
                    "derived from the stated change against it (+ = slower); gate/up N=512 K=2048, down N=2048 K=512 "
                    "per expert, 256 experts, top-8 (stated)",
    }, rows)


def imp1753() -> None:
    """kekzl/imp PR #1753: M=32 N=5120 K=5120 NVFP4 on sm_120a, the shipping CUTLASS kernel and a hand-written one."""
    text = raw("imp1753_5090.txt")
    m, n, k = (int(x) for x in re.search(r"M=(\d+) N=(\d+) K=(\d+)", text).groups())
    cut = float(re.search(r"CUTLASS 128x128 cooperative \(shipping\) \| ([\d.]+) us", text).group(1))
    own = float(re.search(r"grouped mxf4nvf4 smallM, dense mode \| \*\*([\d.]+) us", text).group(1))
    rows = [dict(gpu="RTX 5090", dtype="nvfp4", dtype_out="bf16", m=m, n=n, k=k, batch=1, value=cut, unit="us",
                 kernel="CUTLASS SM120 block-scaled NVFP4, 128x128 cooperative (shipping; no split-K, 'no-K-split "
                        "ceiling')", tile="128x128x128", cluster="1x1x1", schedule="cooperative",
                 note="tile K not printed: 128 assumed (the SM120 block-scaled K-tile); 40 CTAs"),
            dict(gpu="RTX 5090", dtype="nvfp4", dtype_out="bf16", m=m, n=n, k=k, batch=1, value=own, unit="us",
                 kernel="imp's hand-rolled mxf4nvf4 grouped small-M GEMM driven as one group (tile not stated)",
                 note="the SIMT row (67.8 us) is not a tensor-core GEMM and is not taken")]
    write("imp1753_5090", {
        "source_id": "imp1753-5090",
        "url": "https://github.com/kekzl/imp/pull/1753 (description; raw excerpt: sources/raw6/imp1753_5090.txt)",
        "date": "2026-08-25",
        "gpu_basis": IMP_GPU_BASIS,
        "clock": "not stated",
        "power": "not stated",
        "l2": "not stated",
        "timing": "unknown: the text does not say how it timed",
        "how_read": "extract_round6.py: the two tensor-core rows of the approach table (us)",
    }, rows)


def imp733() -> None:
    """kekzl/imp PR #733: the shipping CUTLASS SM120 NVFP4 GEMM and a cp.async kernel, 4096^3 (ncu) and 4k/8k TOP/s."""
    text = raw("imp733_nvfp4_5090.txt")
    prod_us, own_us = (float(x) for x in re.search(r"Time \(ncu\) \| \*\*([\d.]+) µs\*\* \| ([\d.]+) µs", text).groups())
    p4, p8, s4, s8 = (float(x) for x in re.search(r"\((\d+) → (\d+) TOP/s @ 4k → 8k vs (\d+) / (\d+)\)", text).groups())
    prod = dict(kernel="CUTLASS SM120 block-scaled NVFP4 dense GEMM (gemm_nvfp4_cutlass_sm120, TMA + warp-specialized; "
                       "tile not stated)")
    own = dict(kernel="imp's standalone cp.async NVFP4 GEMM (tools/standalone/gemm_nvfp4_sm120a.cu; tile not stated)")
    ncu = "Nsight Compute duration (ncu locks the SM clock at base unless told otherwise; the text does not say)"
    ncu_rows, bench_rows = [], []
    for size, value, unit, who, note in ((4096, prod_us, "us", prod, ncu), (4096, p4, "TFLOP/s", prod, "imp-bench"),
                                         (8192, p8, "TFLOP/s", prod, "imp-bench"), (4096, own_us, "us", own, ncu),
                                         (4096, s4, "TFLOP/s", own, "imp-bench"), (8192, s8, "TFLOP/s", own, "imp-bench")):
        (ncu_rows if unit == "us" else bench_rows).append(
            dict(gpu="RTX 5090", dtype="nvfp4", dtype_out="bf16", m=size, n=size, k=size, batch=1, value=value, unit=unit,
                 note=note + ("; TOP/s as printed" if unit != "us" else ""), **who))
    common = {
        "url": "https://github.com/kekzl/imp/pull/733 (description; raw excerpt: sources/raw6/imp733_nvfp4_5090.txt)",
        "date": "2026-06-17",
        "gpu_basis": IMP_GPU_BASIS,
        "power": "not stated",
        "l2": "not stated",
    }
    # two sources of one page: the rows differ in how they were timed
    write("imp733_ncu_5090", {
        "source_id": "imp733-ncu-5090", **common,
        "clock": "not stated (ncu's default clock control locks the base clock; the text does not say which was used)",
        "timing": "kernel-only: 'Time (ncu)', Nsight Compute's kernel duration",
        "how_read": "extract_round6.py: the ncu table's time row (us), M=N=K=4096",
    }, ncu_rows)
    write("imp733_bench_5090", {
        "source_id": "imp733-bench-5090", **common,
        "clock": "not stated",
        "timing": "unknown: imp-bench's TOP/s, timer not named",
        "how_read": "extract_round6.py: the sentence '(903 -> 1284 TOP/s @ 4k -> 8k vs 813 / 972)', M=N=K",
    }, bench_rows)


def triton10903() -> None:
    """Triton PR #10903: triton_kernels NVFP4 x NVFP4 matmul on GB300, old and new opt flags, PFLOPS (tiny shapes)."""
    rows = []
    for mt in re.finditer(r"^\| (\w+) \((\d+), (\d+), (\d+)\) \| ([\d.]+) \| ([\d.]+)? ?\|?", raw("triton10903_nvfp4_gb300.txt"),
                          re.M):
        name, m, n, k = mt.group(1), int(mt.group(2)), int(mt.group(3)), int(mt.group(4))
        for label, value in (("old (main) opt flags", mt.group(5)), ("new (this PR) opt flags", mt.group(6))):
            if value and float(value) > 0:
                rows.append(dict(gpu="GB300", dtype="nvfp4", dtype_out="bf16", m=m, n=n, k=k, batch=1, value=value,
                                 unit="PFLOP/s", kernel=f"triton_kernels matmul, NVFP4 x NVFP4, {label} (tile not stated; "
                                                        "the PR's default BLOCK 128x256x256 shrinks for small shapes)",
                                 note=f"{name}; shape read as (M, N, K): 'small_m_div4' divides the first entry"))
    write("triton10903_nvfp4_gb300", {
        "source_id": "triton10903-gb300",
        "url": "https://github.com/triton-lang/triton/pull/10903 (description, '## Strided A scales'; raw excerpt: "
               "sources/raw6/triton10903_nvfp4_gb300.txt)",
        "date": "2026-07-16",
        "gpu_basis": "stated: 'Benchmarks were run on `second-dev-box` / GB300'",
        "clock": "not stated",
        "power": "not stated",
        "l2": "not stated",
        "timing": "unknown: 'median auto-config results from 5 reps', timer not named",
        "how_read": "extract_round6.py: the rows of the first shape table above the store's cut (the third row keeps "
                    "its old value only)",
    }, rows)


if __name__ == "__main__":
    vllm38338()
    imp1842()
    imp1753()
    imp733()
    triton10903()
