"""Load a cache into FlashInfer's own autotuner and say whether it took it (run on the GPU machine).

AutoTuner.load_configs is what `flashinfer.autotune(cache=...)` calls on entry: it returns False
and logs "... created in a different environment ... Ignoring cached configs" when the file's
_metadata does not match this environment. Then the tuned shapes run with tuning off, so the DEBUG
log shows whether each call was served from the file.

Usage: FLASHINFER_LOGGING_LEVEL=debug python3 bench/h200_074/reload_pinned.py CACHE.json
"""

import json
import sys

import flashinfer
import torch
from flashinfer.autotuner import AutoTuner

sys.path.insert(0, "bench/retry_h200")
from autotune_fp8 import SHAPES, call  # noqa: E402  (the shapes the cache was tuned on)


def main(path):
    tuner = AutoTuner.get()
    took = tuner.load_configs(path)
    # _file_configs is private: the count is read only to report what load_configs kept
    print(json.dumps({"cache": path, "load_configs": took, "entries_kept": len(tuner._file_configs),
                      "flashinfer": flashinfer.__version__}))
    with flashinfer.autotune(False, cache=path):
        for m, n, k in SHAPES:
            call(m, n, k)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1])
