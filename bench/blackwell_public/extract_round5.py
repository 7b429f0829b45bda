"""Round five's held-out sources: parse the stored public excerpts in sources/raw5/ into sources/*.tsv.

    python3 bench/blackwell_public/extract_round5.py     # writes the five round-5 TSVs, prints their row counts

Each sources/raw5/*.txt is the text of a GitHub pull request as the search index stores it (copied whole; its
`# ` lines name the URL, the title, what the excerpt is and where the store cut it). This script reads the
numbers from that text and writes them in build_points.py's TSV form; it decides nothing about the model. Every
header says how the source timed its kernels (the `timing` line), because what a timing includes depends on it.
Pure Python.
"""

from __future__ import annotations

import re
from pathlib import Path

from extract_round4 import write

HERE = Path(__file__).resolve().parent
RAW = HERE / "sources" / "raw5"


def raw(name: str) -> str:
    return (RAW / name).read_text()


def table_rows(text: str) -> list:
    """The cells of every Markdown table row in `text` whose first cell is a number (header rows skipped)."""
    out = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and re.fullmatch(r"\d+", cells[0]):
                out.append(cells)
    return out


def fi2540() -> None:
    """FlashInfer PR #2540: mm_fp4 (NVFP4) on GB200, four backends' *_time columns in ms."""
    backends = ("cudnn", "cutlass", "trtllm", "cute_dsl")
    rows = []
    for cells in table_rows(raw("fi2540_mmfp4_gb200.txt")):
        m, n, k = (int(c) for c in cells[:3])
        for i, be in enumerate(backends):
            col = 3 + 3 * i
            if col < len(cells) and cells[col]:
                rows.append(dict(gpu="GB200", dtype="nvfp4", dtype_out="bf16", m=m, n=n, k=k, batch=1,
                                 value=cells[col], unit="ms", kernel=f"flashinfer mm_fp4, backend {be} (not autotuned)",
                                 note="the row is cut after this column in the stored text" if col + 3 >= len(cells)
                                 and i < 3 else ""))
    write("fi2540_mmfp4_gb200", {
        "source_id": "fi2540-gb200",
        "url": "https://github.com/flashinfer-ai/flashinfer/pull/2540 (description, '## GB200 Non-Autotune'; raw excerpt: "
               "sources/raw5/fi2540_mmfp4_gb200.txt)",
        "date": "2026-02-11",
        "gpu_basis": "stated: the table's heading 'GB200 Non-Autotune'",
        "clock": "not stated",
        "power": "not stated",
        "l2": "not stated",
        "timing": "unknown: flashinfer_benchmark.py's columns (median time, ms); its default timer was CUDA graph + CUDA "
                  "events (use_cupti=False, flashinfer 0.4.1) and later CUPTI ('now the default behavior'); which one this "
                  "run used is not stated",
        "how_read": "extract_round5.py: every *_time cell of the rows the store returned (11 rows; the middle of the table "
                    "was not returned); output dtype not in the table (bf16, flashinfer_benchmark's default for mm_fp4, assumed)",
    }, rows)


def sglang13528() -> None:
    """SGLang PR #13528: block-scaled FP8 (1x128 activation, 128x128 weight) on GB200, us, two kernels."""
    text = raw("sglang13528_fp8_gb200.txt")
    parsed = []  # each printed row: index, m, n, k, tp_size, DeepGEMM, Flashinfer
    for line in text.splitlines():
        f = line.split()
        if len(f) == 7 and f[0].isdigit():
            parsed.append(dict(zip(("m", "n", "k", "tp_size", "DeepGEMM", "Flashinfer"), (float(x) for x in f[1:]))))
    for sid, fname, col, kernel in (
            ("sglang13528-flashinfer-gb200", "sglang13528_flashinfer_gb200", "Flashinfer",
             "flashinfer gemm_fp8_nt_groupwise, backend trtllm (kernel not stated)"),
            ("sglang13528-deepgemm-gb200", "sglang13528_deepgemm_gb200", "DeepGEMM",
             "DeepGEMM via sglang w8a8_block_fp8_matmul_deepgemm (UE8M0 scales; kernel not stated)")):
        rows = [dict(gpu="GB200", dtype="fp8", dtype_out="bf16", m=int(r["m"]), n=int(r["n"]), k=int(r["k"]), batch=1,
                     value=f"{r[col]:.6f}", unit="us", kernel=kernel, scaling="blockwise",
                     note="tp-size 4 shape list") for r in parsed]
        write(fname, {
            "source_id": sid,
            "url": "https://github.com/sgl-project/sglang/pull/13528 (description, 'On GB200'; raw excerpt: "
                   "sources/raw5/sglang13528_fp8_gb200.txt)",
            "date": "2025-11-18",
            "gpu_basis": "stated: 'On GB200'",
            "clock": "not stated",
            "power": "not stated",
            "l2": "not stated",
            "timing": "unknown: the script's bench helper (triton.testing-based, CUDA events; whether inside a CUDA graph "
                      "at the PR's commit not verified; not CUPTI), median of the quantiles, us",
            "how_read": "extract_round5.py: rows 0-16 of the printed table (the store cut row 17); column " + col
                        + " (round five's first extraction read the column left of it: corrected after the scoring "
                          "run, SPLIT.md)",
        }, rows)


def vllm42235() -> None:
    """vLLM PR #42235: FlashInfer NVFP4 GEMM TFLOP/s on SM100, three backends (the first SM100 table)."""
    rows = []
    text = raw("vllm42235_nvfp4_sm100.txt")
    nk = re.search(r"N=(\d+), K=(\d+)", text)
    n, k = int(nk.group(1)), int(nk.group(2))
    for cells in table_rows(text):
        for be, cell in zip(("CuTeDSL", "CUTLASS", "TRTLLM"), cells[1:4]):
            mt = re.match(r"\**([\d.]+)", cell)
            if mt:
                rows.append(dict(gpu="B200", dtype="nvfp4", dtype_out="bf16", m=int(cells[0]), n=n, k=k, batch=1,
                                 value=mt.group(1), unit="TFLOP/s", kernel=f"flashinfer NVFP4 GEMM, backend {be}"))
    write("vllm42235_nvfp4_sm100", {
        "source_id": "vllm42235-sm100",
        "url": "https://github.com/vllm-project/vllm/pull/42235 (comment by mmangkad 2026-05-14; raw excerpt: "
               "sources/raw5/vllm42235_nvfp4_sm100.txt)",
        "date": "2026-05-14",
        "gpu_basis": "inferred: the section is named 'SM100', not a board; B200 assumed (GB200 is SM100 too)",
        "clock": "not stated",
        "power": "not stated",
        "l2": "not stated",
        "timing": "unknown (not stated in the stored comment)",
        "how_read": "extract_round5.py: the first SM100 table (N=7168, K=2048), rows M=1-32 as far as the store returned them; "
                    "output dtype not stated (bf16 assumed)",
    }, rows)


def triton9044() -> None:
    """Triton PR #9044: MXFP8 8192^3 on B200, Triton tutorial kernel and cuBLAS, proton TFLOP/s."""
    text = raw("triton9044_b200.txt")
    rows = []
    for mt in re.finditer(r"─ ([\d.]+) ([\d.]+) (\S+) \[M=(\d+), N=(\d+), K=(\d+)\]", text):
        name = mt.group(3)
        row = dict(gpu="B200", dtype="mxfp8", dtype_out="bf16", m=int(mt.group(4)), n=int(mt.group(5)),
                   k=int(mt.group(6)), batch=1, value=mt.group(1), unit="TFLOP/s")
        if name == "cublas":
            kn = re.search(r"(nvjet_sm100_\w+)", text).group(1)
            t = re.search(r"_(\d+)x(\d+)_(\d+)x(\d+)_(\d)x(\d)_2cta", kn)
            row.update(kernel=f"cuBLAS {kn}", tile=f"{t.group(1)}x{t.group(2)}x{t.group(3)}", stages=t.group(4),
                       cluster=f"{t.group(5)}x{t.group(6)}x1", schedule="2sm",
                       note="tile, stages, cluster and 2-SM read from the nvjet kernel name")
        else:
            row.update(kernel=f"Triton tutorial {name}")
        rows.append(row)
    write("triton9044_b200", {
        "source_id": "triton9044-b200",
        "url": "https://github.com/triton-lang/triton/pull/9044 (description; raw excerpt: sources/raw5/triton9044_b200.txt)",
        "date": "2025-12-18",
        "gpu_basis": "stated: 'GPU | B200 (unlocked clocks)'",
        "clock": "not stated ('unlocked clocks')",
        "power": "not stated",
        "l2": "not stated",
        "timing": "kernel-only: proton (CUPTI) kernel durations summed over the timed repetitions; TFLOP/s as proton prints",
        "how_read": "extract_round5.py: the mxfp8 example's two kernel lines (the store cut the nvfp4 example before its numbers)",
    }, rows)


if __name__ == "__main__":
    fi2540()
    sglang13528()
    vllm42235()
    triton9044()
