#!/usr/bin/env python3
"""Peak memory of reading a big DEBUG log and a big retry ledger (issue 13: streamed and aggregated).

Generates a DEBUG autotuner log and a tiletune ledger of about --mb MiB each (default 1024) by
repeating sample lines (cache_samples/logs/sm120_0.6.17_warmup_debug.log, a constructed log, and
cache_samples/ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl, with runner addresses and times
varied so nothing is byte-identical), then runs `tiletune inspect --format json` on each in a
fresh process and prints its peak RSS (ru_maxrss of the child), wall time, and the aggregate
counts. Target: under 200 MB peak for 1 GB. Figures belong to the machine that printed them.

    python3 bench/log_memory/run.py            # 1 GiB each (minutes on a 2-core machine)
    python3 bench/log_memory/run.py --mb 64    # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "cache_samples/logs/sm120_0.6.17_warmup_debug.log"
LEDGER = ROOT / "cache_samples/ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"


def make_log(path: Path, size: int) -> int:
    src = LOG.read_text().splitlines()
    written = i = 0
    with open(path, "w") as f:
        while written < size:
            chunk = "\n".join(src).replace("0x7f3c2a1b5e50", f"0x7f{i:010x}") + "\n"
            f.write(chunk)
            written += len(chunk)
            i += 1
    return written


def make_ledger(path: Path, size: int) -> int:
    lines = [json.loads(ln) for ln in LEDGER.read_text().splitlines() if ln.strip()]
    written = i = 0
    with open(path, "w") as f:
        while written < size:
            for a in lines:
                b = dict(a)
                if isinstance(b.get("time_s"), (int, float)):
                    b["time_s"] = b["time_s"] * (1 + (i % 17) / 1000)
                b["started_at"] = f"2026-11-30T00:00:{i % 60:02d}Z"
                text = json.dumps(b) + "\n"
                f.write(text)
                written += len(text)
            i += 1
    return written


def measure(path: Path) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", (
        "import resource, sys, json\n"
        "from tiletune.analysis.pipeline import inspect\n"
        "from tiletune.readers.interface import ReadContext\n"
        "from tiletune.formats.json_out import inspect_dict\n"
        f"r = inspect([{str(path)!r}], ReadContext())\n"
        "d = inspect_dict(r)\n"
        "print(json.dumps({'entries': len(d['entries']), 'counts': sum(e['count'] for e in d['entries']),"
        " 'events': len(d['events']), 'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n")],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if p.returncode != 0:
        raise SystemExit(p.stderr[-2000:])
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1024, help="size of each generated file in MiB")
    args = ap.parse_args()
    size = args.mb << 20
    with tempfile.TemporaryDirectory() as d:
        for name, make in (("debug.log", make_log), ("ledger.jsonl", make_ledger)):
            path = Path(d) / name
            n = make(path, size)
            res = measure(path)
            print(f"{name}: {n / 2**20:.0f} MiB -> peak RSS {res['peak_mb']:.0f} MB, {res['wall_s']} s, "
                  f"{res['entries']} aggregated entries covering {res['counts']} lines, {res['events']} events")
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
