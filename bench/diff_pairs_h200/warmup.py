"""One real FlashInfer warm-up on the GPU machine: bmm_fp8 (cuBLAS backend) autotuned inside
flashinfer.autotune(True, cache=...) for every default M bucket up to M_MAX, for three (N, K) of
real models; the DEBUG log (stderr) holds every profiled tactic's time, the cache the winners.

Usage: python warmup.py CACHE.json [--replays N]
  --replays: cuda_graph_profile_replays (FlashInfer's default is 1; more samples per profile).
Run with FLASHINFER_LOGGING_LEVEL=debug and stderr captured.
"""

import argparse
import sys

import flashinfer
import torch

M_MAX = 256
# (N, K): Llama-3-8B q/k/v+o projection (4096, 4096), Llama-3-70B down projection (8192, 28672),
# DeepSeek-V3 shared-expert down projection (7168, 2048).
NK = [(4096, 4096), (8192, 28672), (7168, 2048)]


def fp8(x):
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = amax / torch.finfo(torch.float8_e4m3fn).max
    return (x.float() / scale).to(torch.float8_e4m3fn), scale.reshape(())


def call(m, n, k):
    a, sa = fp8(torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16))
    w, sb = fp8(torch.randn(1, n, k, device="cuda", dtype=torch.bfloat16))
    return flashinfer.bmm_fp8(a, w.transpose(-2, -1), sa, sb, torch.bfloat16, backend="cublas")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--replays", type=int, default=None)
    args = ap.parse_args()
    kw = {} if args.replays is None else {"cuda_graph_profile_replays": args.replays}
    with flashinfer.autotune(True, cache=args.cache, **kw):
        for n, k in NK:
            call(M_MAX, n, k)
    torch.cuda.synchronize()
    print(f"warmup: wrote {args.cache}", file=sys.stderr)


if __name__ == "__main__":
    main()
