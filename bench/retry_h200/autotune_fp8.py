"""Make a real FlashInfer fp8_gemm autotune cache and DEBUG log on the GPU machine.

bmm_fp8 with backend="cublas" inside flashinfer.autotune(True, cache=...): FlashInfer profiles
every cuBLASLt algorithm for each M bucket up to the call's M and saves the winners. Then the
same shapes run with the cache loaded (cache hits) and one M outside the tuned range (the
fallback warning), so the log shows all three kinds of lines. Run with
FLASHINFER_LOGGING_LEVEL=debug and stderr captured.

Usage: python bench/retry_h200/autotune_fp8.py CACHE.json
"""

import sys

import flashinfer
import torch

SHAPES = [(8, 4096, 4096), (8, 7168, 2048)]  # (M, N, K): a square projection and a DeepSeek-like down-proj


def fp8(x):
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = amax / torch.finfo(torch.float8_e4m3fn).max
    return (x.float() / scale).to(torch.float8_e4m3fn), scale.reshape(())


def call(m, n, k):
    a, sa = fp8(torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16))
    w, sb = fp8(torch.randn(1, n, k, device="cuda", dtype=torch.bfloat16))
    return flashinfer.bmm_fp8(a, w.transpose(-2, -1), sa, sb, torch.bfloat16, backend="cublas")


def main(cache):
    with flashinfer.autotune(True, cache=cache):
        for m, n, k in SHAPES:
            call(m, n, k)
    torch.cuda.synchronize()
    with flashinfer.autotune(False, cache=cache):
        for m, n, k in SHAPES:
            call(m, n, k)
        call(5000, SHAPES[0][1], SHAPES[0][2])  # outside the tuned buckets: fallback warning
    torch.cuda.synchronize()
    print(f"autotune_fp8: wrote {cache}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
