"""Build points.jsonl (one public Blackwell GEMM timing per line, with its provenance) from sources/*.tsv.

    python3 bench/blackwell_public/build_points.py > bench/blackwell_public/points.jsonl

Each sources/*.tsv holds one public source: `# key: value` header lines (source_id, url, date,
gpu_basis, clock, power, l2, timing, how_read) and then a tab-separated table whose rows are the
numbers as the source prints them (`value` in `unit`: PFLOP/s, TFLOP/s, GFLOP/s, FLOP/s, ms or us). This
script only converts units (time = 2*batch*M*N*K / rate for a throughput) and attaches the source's
header to every point; it decides nothing. Pure Python, no tiletune import.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RATE = {"PFLOP/s": 1e15, "TFLOP/s": 1e12, "GFLOP/s": 1e9, "FLOP/s": 1.0}
TIME = {"ms": 1e3, "us": 1.0}
INT_COLS = ("m", "n", "k", "batch", "grouped", "sm_clock_mhz", "power_limit_w")
HEADER_KEYS = ("source_id", "url", "date", "gpu_basis", "clock", "power", "l2", "timing", "how_read")


def read_source(path: Path) -> tuple[dict, list[dict]]:
    """(header, rows) of one sources/*.tsv file."""
    header: dict = {}
    body = []
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            header[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    missing = [k for k in HEADER_KEYS if k not in header]
    if missing:
        raise SystemExit(f"{path.name}: header lacks {', '.join(missing)}")
    return header, list(csv.DictReader(body, delimiter="\t"))


def time_us(row: dict) -> float:
    """The point's time in microseconds, from the published number and its unit."""
    value, unit = float(row["value"]), row["unit"]
    if unit in TIME:
        return value * TIME[unit]
    flops = 2.0 * int(row["batch"]) * int(row["m"]) * int(row["n"]) * int(row["k"])
    return flops / (value * RATE[unit]) * 1e6


def points(src_dir: Path = HERE / "sources"):
    for path in sorted(src_dir.glob("*.tsv")):
        header, rows = read_source(path)
        for i, row in enumerate(rows):
            p = {"id": f"{header['source_id']}#{i}", "source_id": header["source_id"], "source_file": f"sources/{path.name}"}
            for key, value in row.items():
                if value in ("", None):
                    continue
                p[key] = int(value) if key in INT_COLS else value
            p["batch"] = p.get("batch", 1)
            p["time_us"] = round(time_us(row), 4)
            for key in ("url", "date", "gpu_basis", "clock", "power", "l2", "timing"):
                p[key] = header[key]
            yield p


if __name__ == "__main__":
    for p in points(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "sources"):
        print(json.dumps(p, sort_keys=True))
