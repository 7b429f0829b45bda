"""FlashInfer 0.7.4's `mm_bf16` tuned by its own autotuner on the GPU machine: a real bf16_gemm cache.

backend="auto" lets FlashInfer profile every bf16 runner that can run here (on SM90: cuBLASLt and
whichever others build); where "auto" fails, backend="cublaslt" alone. Run with
FLASHINFER_LOGGING_LEVEL=debug and stderr captured.

Usage: python3 bench/h200_074/autotune_bf16.py CACHE.json
"""

import sys
import traceback

import flashinfer
import torch

SHAPES = [(8, 4096, 4096), (8, 7168, 2048)]  # (M, N, K), as bench/retry_h200/autotune_fp8.py


def call(m, n, k, backend):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()  # (k, n), column-major
    return flashinfer.mm_bf16(a, b, backend=backend)


def main(cache):
    for backend in ("auto", "cublaslt"):
        try:
            with flashinfer.autotune(True, cache=cache):
                for m, n, k in SHAPES:
                    call(m, n, k, backend)
            torch.cuda.synchronize()
            print(f"autotune_bf16: backend={backend} wrote {cache}", file=sys.stderr)
            return
        except Exception:  # noqa: BLE001 - what failed is the finding; try the next backend
            print(f"autotune_bf16: backend={backend} failed:", file=sys.stderr)
            traceback.print_exc()


if __name__ == "__main__":
    main(sys.argv[1])
