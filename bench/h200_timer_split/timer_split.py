"""How much of a small GEMM's measured time is the timer's and how much the kernel's, on one Hopper GPU.

    python3 bench/h200_timer_split/timer_split.py OUT.jsonl      # on the device machine (torch + CUDA)

Issue 26: the model's fixed per-kernel term (4.96 us, fitted on the H200 from CUTLASS binaries timed with CUDA
events around one kernel after a 50 us GPU hold, kernels/tt_common.hpp) has to be split into what runs inside the
kernel (prologue, pipeline fill, epilogue, tail) and what the timing method adds, because public Blackwell
timings use every method. For each problem the same cuBLAS kernel (torch.mm / torch._scaled_mm) is timed five
ways, each the median of its samples:

  kernel_us  torch.profiler (CUPTI) kernel duration: the kernel alone
  hold_us    CUDA events around one launch queued behind a ~50 us torch.cuda._sleep (the H200 fit's method)
  loop_us    CUDA events around 200 back-to-back launches from Python, / 200
  graph_us   CUDA events around the replay of a CUDA graph of 200 launches, / 200
  dobench_us triton.testing.do_bench (events around each call, L2 flushed between calls)

One JSON line per (problem, dtype). Nothing here is fitted; bench/h200_timer_split/README.md reads the lines.
"""

from __future__ import annotations

import json
import statistics
import sys

import torch

REPS = 200
SHAPES = [(128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
          (1, 4096, 4096), (16, 4096, 4096), (128, 4096, 4096), (1, 8192, 8192), (128, 8192, 8192),
          (4096, 4096, 4096)]


def operands(m, n, k, dtype):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if dtype == "bf16":
        bt = b.t()
        return lambda: torch.mm(a, bt)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    b8t = b8.t()
    return lambda: torch._scaled_mm(a8, b8t, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def hold_cycles():
    """Clock cycles of torch.cuda._sleep that last about 50 us."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    torch.cuda._sleep(1_000_000)
    e.record()
    torch.cuda.synchronize()
    return int(1_000_000 * 0.05 / s.elapsed_time(e))


def kernel_only(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            fn()
        torch.cuda.synchronize()
    durs: dict = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.device_time > 0:
            durs.setdefault(ev.name, []).append(ev.device_time)
    name, ds = max(durs.items(), key=lambda kv: len(kv[1]) * statistics.median(kv[1]))
    return statistics.median(ds), name, {k: len(v) for k, v in durs.items()}


def hold(fn, cyc):
    out = []
    for _ in range(REPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(cyc)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e3)
    return statistics.median(out)


def loop(fn):
    out = []
    for _ in range(7):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(REPS):
            fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e3 / REPS)
    return statistics.median(out)


def graph(fn):
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(st)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(REPS):
            fn()
    g.replay()
    torch.cuda.synchronize()
    out = []
    for _ in range(7):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e3 / REPS)
    return statistics.median(out)


def main(path):
    import triton.testing
    props = torch.cuda.get_device_properties(0)
    cyc = hold_cycles()
    with open(path, "w") as f:
        f.write(json.dumps({"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
                            "cuda": torch.version.cuda, "hold_cycles": cyc, "reps": REPS}) + "\n")
        for dtype in ("bf16", "fp8"):
            for m, n, k in SHAPES:
                fn = operands(m, n, k, dtype)
                for _ in range(20):
                    fn()
                torch.cuda.synchronize()
                kus, kname, counts = kernel_only(fn)
                row = {"dtype": dtype, "m": m, "n": n, "k": k, "kernel": kname, "kernels_per_call": counts,
                       "kernel_us": round(kus, 3), "hold_us": round(hold(fn, cyc), 3), "loop_us": round(loop(fn), 3),
                       "graph_us": round(graph(fn), 3),
                       "dobench_us": round(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3, 3)}
                print(json.dumps(row), flush=True)
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
