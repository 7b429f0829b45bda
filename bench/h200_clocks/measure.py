"""Sustained SM clock and power of the H200 under back-to-back dense GEMMs (bf16 and fp8).

Runs each GEMM in a loop for --seconds while a thread samples nvidia-smi every 100 ms
(clocks.sm, clocks.mem, power.draw, power.limit, temperature, clocks_event_reasons.active).
Prints one JSON document: per dtype/shape the sampled clocks (MHz) and power (W) during the loop,
and the GEMM rate (TFLOP/s, CUDA events). Command: see README.md beside this file.
"""
import argparse
import json
import statistics
import subprocess
import threading
import time

import torch

Q = "clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active"


def sample(stop, out):
    while not stop.is_set():
        r = subprocess.run(["nvidia-smi", f"--query-gpu={Q}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        parts = [p.strip() for p in r.stdout.strip().split(",")]
        if len(parts) == 6:
            out.append({"t": time.time(), "sm_mhz": float(parts[0]), "mem_mhz": float(parts[1]),
                        "power_w": float(parts[2]), "power_limit_w": float(parts[3]), "temp_c": float(parts[4]),
                        "reasons": parts[5]})
        time.sleep(0.1)


def run(dtype, n, seconds):
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    if dtype == "fp8":
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device="cuda")
        f = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
    else:
        a16, b16 = a.bfloat16(), b.bfloat16()
        f = lambda: a16 @ b16  # noqa: E731
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    samples, stop = [], threading.Event()
    th = threading.Thread(target=sample, args=(stop, samples))
    th.start()
    t0 = time.time()
    iters = 0
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    while time.time() - t0 < seconds:
        for _ in range(20):
            f()
        iters += 20
        torch.cuda.synchronize()
    e1.record()
    torch.cuda.synchronize()
    stop.set()
    th.join()
    ms = e0.elapsed_time(e1) / iters
    steady = [s for s in samples if s["t"] - t0 > 1.0] or samples
    return {"dtype": dtype, "n": n, "iters": iters, "ms_per_gemm": ms, "tflops": 2 * n ** 3 / (ms * 1e-3) / 1e12,
            "sm_mhz_median": statistics.median(s["sm_mhz"] for s in steady),
            "sm_mhz_min": min(s["sm_mhz"] for s in steady), "sm_mhz_max": max(s["sm_mhz"] for s in steady),
            "power_w_median": statistics.median(s["power_w"] for s in steady),
            "power_limit_w": steady[0]["power_limit_w"] if steady else None, "samples": samples}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    idle = subprocess.run(["nvidia-smi", f"--query-gpu=name,driver_version,clocks.max.sm,{Q}", "--format=csv"],
                          capture_output=True, text=True).stdout
    runs = [run(d, n, args.seconds) for d, n in (("bf16", 8192), ("fp8", 8192), ("bf16", 4096), ("fp8", 4096))]
    print(json.dumps({"schema": "tiletune.h200_clocks/1", "gpu": torch.cuda.get_device_name(), "idle": idle,
                      "torch": torch.__version__, "runs": runs}))
