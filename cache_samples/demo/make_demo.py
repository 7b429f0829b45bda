"""Writes the demo's autotune cache from the chosen lines of the demo's own warm-up log.

The demo mirrors what an SGLang warm-up with FlashInfer 0.6.17 on an RTX PRO 6000 Blackwell
Server Edition leaves behind: the JIT workspace log (`flashinfer/0.6.17/120f/flashinfer_jit.log`,
a copy of ../logs/sm120_0.6.17_warmup_debug.log, constructed) and the cache that run saved
(`sglang/flashinfer_autotune/autotune_config.json`, the path its "Saved 4 configs" line names).

The cache is written as FlashInfer 0.6.17's `AutoTuner.save_configs` writes it
(flashinfer/autotuner/autotuner.py): `_metadata` first, then the entries with sorted keys
`str((custom_op, runner_class_name, nearest_profile, extras))` and values `[runner, tactic]`,
`json.dump(indent=2)`. The keys and tactics are copied from the log's `profiling chosen runner`
lines with a regex; nothing comes from tiletune's own code.

    python3 cache_samples/demo/make_demo.py     # rewrites the cache (deterministic)
"""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOG = HERE / "flashinfer/0.6.17/120f/flashinfer_jit.log"
OUT = HERE / "sglang/flashinfer_autotune/autotune_config.json"

CHOSEN = re.compile(
    r"profiling chosen runner: <.*?\.(\w+) object at 0x[0-9a-f]+> (-?\d+) for ProfilingCacheKey\("
    r"custom_op='([^']+)', runner_class_name='(\w+)', runner_hash=-?\d+, nearest_profile=(.*), extras=(.*)\)$"
)

METADATA = {  # _collect_metadata() fields of 0.6.17, as on that machine
    "flashinfer_version": "0.6.17",
    "cuda_version": "12.9",
    "cublas_version": "12.9.1",
    "cudnn_version": "91002",
    "cudnn_frontend_version": "1.14.0",
    "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}


def main() -> None:
    entries = {}
    for line in LOG.read_text().splitlines():
        m = CHOSEN.search(line)
        if m:
            cls, tactic, op, runner, profile, extras = m.groups()
            assert cls == runner
            # str() of the 4-tuple: the profile and extras texts are already Python reprs
            entries[f"('{op}', '{runner}', {profile}, {extras})"] = [runner, int(tactic)]
    doc = {"_metadata": METADATA, **{k: entries[k] for k in sorted(entries)}}
    OUT.write_text(json.dumps(doc, indent=2))
    print(f"wrote {len(entries)} entries to {OUT}")


if __name__ == "__main__":
    main()
