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
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tiletune.tuner.classify import classify_exit  # noqa: E402
from tiletune.tuner.engine import ChildSpec  # noqa: E402
from tiletune.tuner.isolation import run_child  # noqa: E402

SOURCE = REPO / "tests" / "fixtures" / "faulty_kernels.cu"
# mode -> what tiletune must call it
EXPECTED = {
    "ok": "passed",
    "illegal_address": "illegal_address",
    "misaligned_address": "illegal_address",
    # On the H200 these three do not raise "illegal instruction" (see README.md): a jump into bytes
    # that are not code, or into the middle of an instruction, spins until the time limit, and
    # brkpt with no debugger attached is reported as an unspecified launch failure.
    "jump_into_data": "timeout",
    "jump_mid_instruction": "timeout",
    "breakpoint": "launch_failure",
    "trap": "launch_failure",
    "hang": "timeout",
    "out_of_memory": "out_of_memory",
}


def build(arch: str, out_dir: Path) -> Path:
    binary = out_dir / "faulty"
    num = arch.removeprefix("sm_")  # e.g. 90a: arch-specific features (setmaxnreg) need compute_90a
    cmd = ["nvcc", "-O2", f"-gencode=arch=compute_{num},code=sm_{num}", "-o", str(binary), str(SOURCE)]
    subprocess.run(cmd, check=True)
    return binary


def run_mode(binary: Path, mode: str, timeout_s: float) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        child = run_child(ChildSpec(argv=(str(binary), mode)), timeout_s=timeout_s, scratch=Path(scratch))
    ok = child.exit_code == 0 and not child.timed_out and (child.result or {}).get("run") == "ok"
    if ok:
        diagnosis, message = "passed", "ran and synchronised cleanly"
    else:
        v = classify_exit(text=child.stderr_tail + "\n" + child.stdout_tail, exit_code=child.exit_code,
                          signal=child.signal, timed_out=child.timed_out, timeout_s=timeout_s)
        diagnosis, message = v.diagnosis.value, v.message
    return {"mode": mode, "expected": EXPECTED[mode], "diagnosis": diagnosis, "message": message,
            "exit_code": child.exit_code, "signal": child.signal, "timed_out": child.timed_out,
            "duration_s": round(child.duration_s, 3), "result": child.result,
            "stdout_tail": child.stdout_tail[-400:], "stderr_tail": child.stderr_tail[-400:]}


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
