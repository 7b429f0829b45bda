"""H200 calibration sweep: cuBLAS BF16 and FP8 GEMM times over M = 1..8192 for a few (N, K).

Runs on the device machine (torch with CUDA). Measures, for every shape:
  * BF16: torch.matmul(A[M,K], W[N,K].T) -> bf16        (the nn.Linear layout, "TN")
  * FP8:  torch._scaled_mm(A_e4m3[M,K], W_e4m3[N,K].T, per-tensor fp32 scales) -> bf16
with random data, a warm-up, a cold L2 before every timed call (a 256 MiB buffer, over 4x the
60 MiB L2, is overwritten between calls), CUDA events around the GEMM alone, and EVERY sample kept.
The cuBLAS kernel names come from one torch.profiler pass afterwards (shapes are separated by a
marker fill kernel), so the profiler does not disturb the timings.

Usage (device):  python3 bench/h200_sweep/sweep.py --out $OUT/h200_sweep.json
Usage (CPU, logic check only, tiny shapes, no FP8, no profiler): python3 sweep.py --dry-run --out /tmp/x.json

The JSON holds the environment, the two measured ceilings (D2D copy bandwidth, big BF16 GEMM),
and one row per (dtype, M, N, K): samples_us, median_us, min_us, p10/p90, TFLOP/s, kernels.
The script writes what it has after each phase, so a run killed at its time limit still returns data.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

M_VALUES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
            4096, 6144, 8192]
NK_PAIRS = [(4096, 4096), (7168, 2048), (2048, 7168), (14336, 4096), (7168, 4608), (4096, 14336)]
DTYPES = ["bf16", "fp8"]
FLUSH_BYTES = 256 * 1024 * 1024


def _smi(query: str) -> str | None:
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        return r.stdout.strip() or r.stderr.strip()
    except Exception as e:  # the sweep must not die for lack of nvidia-smi
        return f"unavailable: {e}"


def environment(dev: torch.device) -> dict:
    env = {"python": sys.version.split()[0], "torch": torch.__version__, "platform": platform.platform(),
           "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        env.update({
            "gpu": p.name, "sms": p.multi_processor_count, "cc": f"{p.major}.{p.minor}",
            "l2_bytes": getattr(p, "L2_cache_size", None), "total_memory": p.total_memory,
            "cuda_runtime": torch.version.cuda, "cublas": _cublas_version(),
            "smi": _smi("name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit,temperature.gpu"),
        })
    return env


def _cublas_version() -> str | None:
    """The cuBLAS wheel torch loads (nvidia-cublas*); None where it came from elsewhere."""
    from importlib import metadata

    for dist in ("nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu12"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return None


class Case:
    """The operands of one shape and the call that runs it."""

    def __init__(self, dtype: str, m: int, n: int, k: int, dev: torch.device):
        self.dtype, self.m, self.n, self.k = dtype, m, n, k
        g = torch.Generator(device=dev).manual_seed(1000003 * m + 1009 * n + k)
        a = torch.randn(m, k, device=dev, generator=g, dtype=torch.float32)
        w = torch.randn(n, k, device=dev, generator=g, dtype=torch.float32)
        if dtype == "bf16":
            self.a = a.to(torch.bfloat16)
            self.bt = w.to(torch.bfloat16).t()  # [K, N] view of a row-major [N, K] weight
        else:
            self.a = a.to(torch.float8_e4m3fn)
            self.bt = w.to(torch.float8_e4m3fn).t()  # column-major [K, N], as _scaled_mm wants
            self.sa = torch.tensor(1.0, device=dev)
            self.sb = torch.tensor(1.0, device=dev)

    def __call__(self):
        if self.dtype == "bf16":
            return torch.matmul(self.a, self.bt)
        return torch._scaled_mm(self.a, self.bt, scale_a=self.sa, scale_b=self.sb, out_dtype=torch.bfloat16)

    def check(self) -> float:
        """Relative error against a float32 product of the same (rounded) operands."""
        ref = self.a.float() @ self.bt.float()
        out = self().float()
        return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


def time_case(case: Case, flush: torch.Tensor, warmup: int, reps: int, dev: torch.device) -> list[float]:
    for _ in range(warmup):
        case()
    if dev.type != "cuda":
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            case()
            out.append((time.perf_counter() - t0) * 1e6)
        return out
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.zero_()  # evict A and B from L2; also gives the CPU a lead so launch gaps stay out
        starts[i].record()
        case()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]


def ceilings(dev: torch.device, reps: int) -> dict:
    """The two ceilings METHOD.md asks for: D2D copy bandwidth and a big BF16 GEMM rate."""
    n = 1 << 30  # 1 GiB each way
    src = torch.empty(n, dtype=torch.uint8, device=dev).random_(0, 255)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    t = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        torch.cuda.synchronize()
        t.append(s.elapsed_time(e) * 1e-3)
    copy_tbps = [2 * n / x / 1e12 for x in t]
    del src, dst
    c = Case("bf16", 8192, 8192, 8192, dev)
    for _ in range(3):
        c()
    g = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        c()
        e.record()
        torch.cuda.synchronize()
        g.append(2 * 8192**3 / (s.elapsed_time(e) * 1e-3) / 1e12)
    return {"d2d_copy_TBps_read_plus_write": copy_tbps, "bf16_8192cubed_TFLOPs": g}


def kernel_names(cases: list[Case], dev: torch.device) -> list[list[str]]:
    """One profiler pass: run each case once, a marker fill between cases; split the kernel list on it."""
    from torch.profiler import ProfilerActivity, profile

    marker = torch.empty(1, device=dev)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for c in cases:
            marker.fill_(7.0)
            c()
        marker.fill_(7.0)
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if getattr(e, "device_type", None) is not None
               and str(e.device_type).endswith("CUDA")]
    kernels.sort(key=lambda e: e.time_range.start)
    groups: list[list[str]] = []
    current: list[str] | None = None
    for e in kernels:
        if "FillFunctor" in e.name:
            if current is not None:
                groups.append(current)
            current = []
        elif current is not None:
            current.append(e.name)
    return groups


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--budget-s", type=float, default=170.0, help="stop starting new shapes after this")
    ap.add_argument("--dry-run", action="store_true", help="CPU logic check: tiny shapes, bf16 only")
    args = ap.parse_args()

    t_start = time.time()
    dev = torch.device("cpu" if args.dry_run else "cuda")
    m_values, nk_pairs, dtypes = M_VALUES, NK_PAIRS, DTYPES
    if args.dry_run:
        m_values, nk_pairs, dtypes, args.reps, args.warmup = [1, 16, 64], [(256, 128), (128, 256)], ["bf16"], 3, 1
    result: dict = {"schema": "tiletune.h200_sweep/1", "command": " ".join([sys.executable] + sys.argv),
                    "method": {"reps": args.reps, "warmup": args.warmup, "l2_flush_bytes": FLUSH_BYTES,
                               "timer": "cuda events around the GEMM call only", "data": "randn, seeded per shape",
                               "bf16": "torch.matmul(A[M,K], W[N,K].t())",
                               "fp8": "torch._scaled_mm(A e4m3 [M,K], W e4m3 [N,K].t(), scale_a=scale_b=1.0 fp32, out_dtype=bf16)"},
                    "env": environment(dev), "rows": []}

    def dump() -> None:
        result["elapsed_s"] = round(time.time() - t_start, 2)
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.out)

    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        result["ceilings"] = ceilings(dev, 10)
        dump()
    flush = torch.empty(FLUSH_BYTES // 4 if dev.type == "cuda" else 16, dtype=torch.float32, device=dev)

    cases: list[Case] = []
    for dtype in dtypes:
        for n, k in nk_pairs:
            for m in m_values:
                if time.time() - t_start > args.budget_s:
                    result.setdefault("skipped", []).append([dtype, m, n, k])
                    continue
                row = {"dtype": dtype, "m": m, "n": n, "k": k}
                try:
                    c = Case(dtype, m, n, k, dev)
                    row["rel_err_vs_fp32"] = c.check()
                    samples = time_case(c, flush, args.warmup, args.reps, dev)
                    q = statistics.quantiles(samples, n=10)
                    med = statistics.median(samples)
                    row.update({"samples_us": [round(s, 3) for s in samples], "median_us": round(med, 3),
                                "min_us": round(min(samples), 3), "p10_us": round(q[0], 3),
                                "p90_us": round(q[-1], 3), "tflops": 2 * m * n * k / (med * 1e-6) / 1e12})
                    cases.append(c)
                    row["_case_index"] = len(cases) - 1
                except Exception as e:  # one bad shape must not end the sweep; record why
                    row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                result["rows"].append(row)
        dump()

    if dev.type == "cuda":
        try:
            names = kernel_names(cases, dev)
            for row in result["rows"]:
                i = row.get("_case_index")
                if i is not None and i < len(names):
                    row["kernels"] = names[i]
            result["kernel_names_ok"] = len(names) == len(cases)
        except Exception as e:
            result["kernel_names_error"] = f"{type(e).__name__}: {e}"[:300]
    for row in result["rows"]:
        row.pop("_case_index", None)
    result["env"]["smi_after"] = _smi("clocks.sm,clocks.mem,temperature.gpu") if dev.type == "cuda" else None
    dump()

    # Short summary last (the reply carries only the tail of the output).
    print(f"rows {len(result['rows'])}, errors {sum('error' in r for r in result['rows'])}, "
          f"skipped {len(result.get('skipped', []))}, elapsed {time.time() - t_start:.1f}s")
    if "ceilings" in result:
        c = result["ceilings"]
        print(f"copy {statistics.median(c['d2d_copy_TBps_read_plus_write']):.2f} TB/s, "
              f"bf16 8192^3 {statistics.median(c['bf16_8192cubed_TFLOPs']):.0f} TFLOP/s")
    for r in result["rows"]:
        if r["m"] in (1, 16, 128, 1024, 8192) and (r["n"], r["k"]) in ((7168, 4608), (4096, 4096)):
            k = (r.get("kernels") or ["?"])[0][:60]
            print(f"{r['dtype']:4} {r['m']:5} {r['n']:5} {r['k']:5} {r.get('median_us', float('nan')):9.2f} us "
                  f"{r.get('tflops', 0):7.1f} TF  {r.get('error', k)}")


if __name__ == "__main__":
    main()
