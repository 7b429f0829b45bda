"""Run every mode of tests/fixtures/faulty_kernels.cu through tiletune's isolation and classifier.

Each mode runs in a fresh child (`isolation.run_child`, a time limit), and what the child left
(its JSON line, stderr, exit status, signal, timeout) goes through `classify.classify_exit`,
exactly as an engine's failed attempt does. Writes one JSON line per mode (the child's raw result
and the diagnosis) to OUT/faults.jsonl and prints a table.

    python3 bench/faults_h200/run_faults.py --out DIR [--arch sm_90a] [--build-only]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "tests" / "tuner"))  # the driver lives beside the test that runs it live

from faulty_driver import EXPECTED, build, run_mode  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--modes", default="", help="comma-separated subset of the modes (default: all)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    binary = build(args.arch, args.out)
    if args.build_only:
        print(f"built {binary}")
        return 0
    modes = args.modes.split(",") if args.modes else list(EXPECTED)
    rows = [run_mode(binary, mode, args.timeout) for mode in modes]
    with open(args.out / "faults.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{'mode':<20} {'expected':<20} {'diagnosis':<20} message")
    for r in rows:
        mark = "" if r["diagnosis"] == r["expected"] else "  <-- MISMATCH"
        print(f"{r['mode']:<20} {r['expected']:<20} {r['diagnosis']:<20} {r['message'][:70]}{mark}")
    return 0 if all(r["diagnosis"] == r["expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
