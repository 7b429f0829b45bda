"""Round four's held-out sources: parse the stored public excerpts in sources/raw4/ into sources/*.tsv.

    python3 bench/blackwell_public/extract_round4.py     # writes the six round-4 TSVs, prints their row counts

Each sources/raw4/*.txt is the text of a GitHub pull request or issue as the search index stores it
(copied whole, `# ` lines name the URL, the title and what the excerpt is); this script reads the
numbers from that text and writes them in build_points.py's TSV form. It decides nothing about the
model: the GPU, dtype, kernel and scaling of each column come from the page (the TSV header says
which are stated and which inferred). Pure Python.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW = HERE / "sources" / "raw4"
OUT = HERE / "sources"
COLS = ["gpu", "dtype", "dtype_out", "m", "n", "k", "batch", "grouped", "value", "unit", "kernel", "tile", "cluster",
        "schedule", "stages", "sm_clock_mhz", "scaling", "note"]


def write(name: str, meta: dict, rows: list) -> None:
    buf = io.StringIO()
    for k, v in meta.items():
        buf.write(f"# {k}: {v}\n")
    w = csv.DictWriter(buf, COLS, delimiter="\t", lineterminator="\n", extrasaction="raise")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLS})
    (OUT / f"{name}.tsv").write_text(buf.getvalue())
    print(name, len(rows))


def raw(name: str) -> str:
    return (RAW / name).read_text()


# vLLM benchmarks/kernels/bench_fp8_gemm.py (PR #17126) columns that time one GEMM kernel; the other two
# (fp8-tensor-w-tensor-a, fp8-channel-w-token-a) include the activation quantisation kernel and are not taken
BENCH_COLS = {
    "torch-bf16": ("bf16", "torch bf16 linear (cuBLAS; kernel not stated)", ""),
    "fp8-tensor-w-tensor-a-noquant": ("fp8", "vLLM cutlass_scaled_mm, per-tensor scales (CUTLASS SM100 FP8; config by "
                                      "vLLM's M dispatch, not stated)", "per-tensor"),
    "fp8-channel-w-token-a-noquant": ("fp8", "vLLM cutlass_scaled_mm, per-channel weight / per-token activation scales "
                                      "(CUTLASS SM100 FP8; config by vLLM's M dispatch, not stated)", "per-row"),
}
HEAD = re.compile(r"N=(\d+) K=(\d+), BF16 vs FP8 GEMMs TFLOP/s")


def bench_rows(text: str, note: str, nk_before_first_head: tuple | None = None) -> list:
    """Rows of every bench_fp8_gemm table in `text`: one point per timed column present on a row. A row
    before the first heading (the tail of a table the excerpt cut) takes `nk_before_first_head`."""
    rows: list = []
    nk = nk_before_first_head
    cols: list = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        h = HEAD.search(line)
        if h:
            nk = (int(h.group(1)), int(h.group(2)))
            continue
        if "batch_size" in line and "torch-bf16" in line:
            cols = line.split()[1:]
            continue
        f = line.split()
        if len(f) >= 3 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"\d+\.0", f[1]) and nk:
            if not cols:  # the cut table's tail: bench_fp8_gemm's fixed column order
                cols = ["torch-bf16", "fp8-tensor-w-tensor-a", "fp8-channel-w-token-a",
                        "fp8-tensor-w-tensor-a-noquant", "fp8-channel-w-token-a-noquant"]
            m = int(float(f[1]))
            for col, val in zip(cols, f[2:]):
                if col not in BENCH_COLS:
                    continue
                dt, kern, scaling = BENCH_COLS[col]
                rows.append(dict(gpu="B200", dtype=dt, dtype_out="bf16", m=m, n=nk[0], k=nk[1], batch=1, value=val,
                                 unit="TFLOP/s", kernel=kern, scaling=scaling, note=f"{note}; column {col}"))
    return rows


BENCH_META = dict(
    clock="not stated", power="not stated",
    l2="not stated (bench_fp8_gemm.py times with triton.testing, whose do_bench clears L2 between repetitions: inferred, "
       "not stated)",
    timing="bench_fp8_gemm.py (vLLM PR #17126): TFLOP/s = 2*M*N*K / time; M = batch_size",
)


def vllm_bench() -> None:
    t = raw("vllm20071_bench.txt")
    write("vllm20071_bench_b200", dict(
        source_id="vllm20071-bench-b200", url="https://github.com/vllm-project/vllm/pull/20071 (description; "
        "raw excerpt: sources/raw4/vllm20071_bench.txt)", date="2025-06-25",
        gpu_basis="inferred: SM100 FP8 kernels (title); the author's companion PR #19566 states 'Kernel benchmarks "
                  "using #17126 on B200'", **BENCH_META,
        how_read="extract_round4.py: the torch-bf16 and the two -noquant columns of each bench_fp8_gemm table whose "
                 "heading (N, K) the excerpt shows"), bench_rows(t, "vllm#20071"))
    t = raw("vllm19566_bench.txt")
    rows = bench_rows(t.split("# excerpt 2")[0], "vllm#19566 bench table", nk_before_first_head=(6144, 4096))
    # the before/after markdown table (N=6144 K=4096): fp8 -noquant columns before and after the PR's configs
    for line in t.split("# excerpt 2")[1].splitlines():
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) == 7 and f[0].isdigit():
            m = int(f[0])
            for val, col, when in ((f[1], "fp8-channel-w-token-a-noquant", "before"),
                                   (f[2], "fp8-channel-w-token-a-noquant", "after"),
                                   (f[4], "fp8-tensor-w-tensor-a-noquant", "before"),
                                   (f[5], "fp8-tensor-w-tensor-a-noquant", "after")):
                dt, kern, scaling = BENCH_COLS[col]
                rows.append(dict(gpu="B200", dtype=dt, dtype_out="bf16", m=m, n=6144, k=4096, batch=1, value=val,
                                 unit="TFLOP/s", kernel=f"{kern}; {when} the PR's configs", scaling=scaling,
                                 note=f"vllm#19566 before/after table; column {col} {when}"))
    write("vllm19566_bench_b200", dict(
        source_id="vllm19566-bench-b200", url="https://github.com/vllm-project/vllm/pull/19566 (description; raw "
        "excerpt: sources/raw4/vllm19566_bench.txt)", date="2025-06-12",
        gpu_basis="stated: 'Kernel benchmarks using #17126 on B200'", **BENCH_META,
        how_read="extract_round4.py: bench_fp8_gemm tables (the row cut above the N=4096 K=4096 heading is the "
                 "N=6144 K=4096 table's, the script's first shape) and the before/after markdown table"), rows)
    t = raw("vllm18778_bench.txt")
    write("vllm18778_bench_b200", dict(
        source_id="vllm18778-bench-b200", url="https://github.com/vllm-project/vllm/pull/18778 (description; raw "
        "excerpt: sources/raw4/vllm18778_bench.txt)", date="2025-05-27",
        gpu_basis="stated: 'For Llama 8B on B200', '# B200 original tunings'", **BENCH_META,
        how_read="extract_round4.py: the one bench_fp8_gemm table the excerpt shows whole (original or new configs: "
                 "not visible in the excerpt)"), bench_rows(t, "vllm#18778"))


def vllm_profiler() -> None:
    rows: list = []
    for line in raw("vllm20071_profiler.txt").splitlines():
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) != 8 or not f[0].isdigit():
            continue
        tile = "x".join(f[0:3])
        cluster = "x".join(f[3:6])
        shapes = re.findall(r"'(\d+)x(\d+)x(\d+):(\d+)'", f[6])
        gflops = re.findall(r"([\d.]+)", f[7])
        assert len(shapes) == len(gflops), line
        for (m, n, k, rank), g in zip(shapes, gflops):
            rows.append(dict(gpu="B200", dtype="fp8", dtype_out="bf16", m=int(m), n=int(n), k=int(k), batch=1,
                             value=g, unit="GFLOP/s", kernel="CUTLASS SM100 FP8 GEMM (cutlass_profiler)", tile=tile,
                             cluster=cluster, note=f"rank {rank} of the configs for this shape"))
    write("vllm20071_profiler_b200", dict(
        source_id="vllm20071-profiler-b200", url="https://github.com/vllm-project/vllm/pull/20071 (description, the "
        "cutlass_profiler rankings; raw excerpt: sources/raw4/vllm20071_profiler.txt)", date="2025-06-25",
        gpu_basis="inferred: SM100 FP8 (title); the author's companion PR #19566 states B200",
        clock="not stated", power="not stated", l2="not stated (cutlass_profiler: no flush between runs by default)",
        timing="cutlass_profiler GFLOP/s per problem (M x N x K), tile (cta_m x cta_n x cta_k) and cluster stated",
        how_read="extract_round4.py: each config row's 'Rank' shapes paired with its 'GFLOPs' list; output dtype "
                 "not stated (bf16 assumed, vLLM's scaled_mm output); mainloop schedule not stated"), rows)


def cutlass2923() -> None:
    rows: list = []
    for line in raw("cutlass2923_b200.txt").splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+\|(.*)", line)
        if not m:
            continue
        n, k, batch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        parts = m.group(4).split("|")
        for part, (dt, dto, kern, scaling) in zip(parts, (
                ("fp16", "fp16", "torch.nn.functional.linear fp16 (cuBLAS; kernel not stated)", ""),
                ("fp8", "bf16", "flashinfer gemm_fp8_nt_groupwise, backend cutlass", "blockwise"),
                ("fp8", "bf16", "flashinfer gemm_fp8_nt_groupwise, backend trtllm", "blockwise"))):
            f = part.split()
            if f and re.fullmatch(r"\d+\.\d\d", f[0]):
                rows.append(dict(gpu="B200", dtype=dt, dtype_out=dto, m=batch, n=n, k=k, batch=1, value=f[0],
                                 unit="us", kernel=kern, scaling=scaling,
                                 note="scales 1x128 (activation, per token) and 128x128 (weight), scale mode MN"
                                 if scaling else ""))
    write("cutlass2923_b200", dict(
        source_id="cutlass2923-b200", url="https://github.com/NVIDIA/cutlass/issues/2923 (description; raw excerpt: "
        "sources/raw4/cutlass2923_b200.txt)", date="2026-01-03",
        gpu_basis="stated: 'slower than FP16 PyTorch on B200 ... I've been able to reproduce this'",
        clock="not stated", power="not stated", l2="cold (flashinfer#2146's script: 'L2 flush: Enabled')",
        timing="median of 100 iterations, CUPTI (flashinfer#2146's method); Out = N, In = K, Batch = M",
        how_read="extract_round4.py: the Median(us) of each of the three kernels per row; the excerpt ends in the "
                 "7th row's TRT-LLM column (not taken); FP8 output dtype not stated (bf16 assumed)"), rows)


def fi4370() -> None:
    rows: list = []
    for line in raw("fi4370_bmm.txt").splitlines():
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) != 8 or f[0] not in ("B200", "GB300"):
            continue
        m = re.fullmatch(r"correctness_(grid|trace)_b(\d+)_m(\d+)_n(\d+)_k(\d+)(?:_(bfloat16|float16|float32))?", f[1])
        if not m:  # api_* rows name no shape; the cache row times the module cache: not taken
            continue
        out = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", None: "bf16"}[m.group(6)]
        for col, val in zip("ABC", f[2:5]):
            rows.append(dict(gpu=f[0], dtype="bf16", dtype_out=out, m=int(m.group(3)), n=int(m.group(4)),
                             k=int(m.group(5)), batch=int(m.group(2)), value=val, unit="us",
                             kernel=f"flashinfer bmm_bf16 timing column {col} of three (the cake backend's source and "
                                    f"export and a baseline; the excerpt does not say which column is which)",
                             note=f"case {f[1]}; gate flags {f[7]}"))
    write("fi4370_bmm", dict(
        source_id="fi4370-bmm", url="https://github.com/flashinfer-ai/flashinfer/pull/4370 (description; raw excerpt: "
        "sources/raw4/fi4370_bmm.txt)", date="2026-08-06",
        gpu_basis="stated per row (B200 = sm_100a, GB300 = sm_103a: the description)",
        clock="not stated", power="not stated", l2="not stated",
        timing="per-case kernel times in us (the table's three timing columns)",
        how_read="extract_round4.py: rows whose case name states batch, M, N, K (grid / trace cases); output dtype "
                 "from the name's suffix, bf16 where none"), rows)


if __name__ == "__main__":
    vllm_bench()
    vllm_profiler()
    cutlass2923()
    fi4370()
