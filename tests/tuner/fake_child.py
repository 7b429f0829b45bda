"""A child process that really misbehaves, for the retry machinery's CPU tests.

`python fake_child.py MODE RESULT_FILE`: each MODE does to the parent what a broken kernel
would: crash by a real signal, hang, exit non-zero with a library's error text, print garbage,
leave a torn result file. No mock: the parent sees a real process end the real way.
"""

import json
import os
import signal
import subprocess
import sys
import time


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def main():
    mode, result = sys.argv[1], sys.argv[2]
    if mode == "pass":
        write(result, {"ok": True, "time_s": 1.5e-5, "times_s": [1.4e-5, 1.5e-5, 1.6e-5], "tflops": 100.0,
                       "rel_error": 1e-3, "nonfinite": 0, "env": {"gpu": "Fake GPU"}})
    elif mode == "slowpass":
        time.sleep(float(os.environ.get("FAKE_SLEEP", "0.5")))
        write(result, {"ok": True, "time_s": 2e-5, "times_s": [2e-5], "rel_error": 1e-3, "nonfinite": 0})
    elif mode == "abort":
        print("about to abort", flush=True)
        os.abort()
    elif mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "hang":
        print("hanging", flush=True)
        time.sleep(600)
    elif mode == "hang_grandchild":
        # a grandchild that would outlive a plain kill of the child; it records its pid
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(result + ".grandchild.tmp", "w") as f:
            f.write(f"{p.pid} {os.getpid()}")  # grandchild, then child
        os.replace(result + ".grandchild.tmp", result + ".grandchild")
        time.sleep(600)
    elif mode == "exit3":
        print("RuntimeError: [FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal",
              file=sys.stderr)
        sys.exit(3)
    elif mode == "smem":
        print("[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal "
              "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)", file=sys.stderr)
        sys.exit(1)
    elif mode == "garbage":
        sys.stdout.write("\x00\x01 not json {{{ \n" * 50)
        sys.exit(0)
    elif mode == "torn":
        with open(result, "w") as f:
            f.write('{"ok": true, "time_s": 1.2e-5, "tim')
        sys.exit(0)
    elif mode == "nan":
        write(result, {"ok": True, "time_s": 1e-5, "times_s": [1e-5], "rel_error": None, "nonfinite": 7})
    elif mode == "inaccurate":
        write(result, {"ok": True, "time_s": 1e-5, "times_s": [1e-5], "rel_error": 0.5, "nonfinite": 0})
    elif mode == "oom":
        write(result, {"ok": False, "error": "OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 GiB"})
        sys.exit(1)
    elif mode == "refuse":  # what the worker writes for a runner this GPU cannot run (worker.arch_refusal)
        write(result, {"ok": False, "engine_error": True,
                       "error": "fp4_gemm / CutlassFp4GemmRunner runs only on SM100/SM120 (CUTLASS, Blackwell only); "
                                "this GPU is Fake GPU (SM90): not attempted, nothing built"})
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
