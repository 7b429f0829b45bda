"""Build tests/fixtures/faulty_kernels.cu and run one mode of it through tiletune's isolation and
classifier, as an engine's failed attempt is. Shared by test_faulty_kernels.py (live, GPU) and the
recording run bench/faults_h200/run_faults.py (the source of tests/data/faults_h200/faults.jsonl).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from tiletune.tuner.classify import classify_exit
from tiletune.tuner.engine import ChildSpec
from tiletune.tuner.isolation import run_child

REPO = Path(__file__).resolve().parents[2]

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
