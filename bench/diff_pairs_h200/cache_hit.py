"""A server restart that reuses a saved cache: load CACHE.json in a fresh process and run the same
bmm_fp8 shapes with tuning off, so FlashInfer serves them from the file and logs its INFO
'[Autotuner]: Config cache hit for OP (runner=..., source=config file)' line. Then one M past
the tuned buckets (fallback). Run with stderr captured; default (INFO) logging.

Usage: python cache_hit.py CACHE.json
"""

import sys

import flashinfer
import torch
from warmup import M_MAX, NK, call


def main(cache):
    with flashinfer.autotune(False, cache=cache):
        for n, k in NK:
            for m in (1, 8, 37, M_MAX):
                call(m, n, k)
        call(4 * M_MAX + 3, *NK[0])
    torch.cuda.synchronize()
    print(f"cache_hit: served from {cache}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
