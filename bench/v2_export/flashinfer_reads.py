"""Run in a venv with FlashInfer 0.7.x (CPU torch is enough): does FlashInfer's own ManagedAutotuneCache
find and serve a store that `tiletune deploy --layout flashinfer-v2` wrote?

    VENV/bin/python bench/v2_export/flashinfer_reads.py ROOT TABLE [NAME=VALUE ...]

ROOT: the -o of deploy; TABLE: the v1 table it was written from; NAME=VALUE: the --measure fields.
Builds the manifest as autotune_v2 does (the table's _metadata stands for _collect_metadata() on the
target, plus MeasurementPolicy.manifest_fields()), then checks with FlashInfer's code: the store's
directory is the one FlashInfer computes, preload() serves every entry (none skipped), and lookup()
returns each key's runner, tactic and profiling policy. Prints one JSON object.
"""

import json
import sys

import flashinfer
from flashinfer.autotune_cache import ManagedAutotuneCache

root, table_path, *measure = sys.argv[1:]
table = json.load(open(table_path))
manifest = dict(table["_metadata"])
for item in measure:
    name, _, value = item.partition("=")
    manifest[f"measure_{name}"] = value
store = ManagedAutotuneCache(manifest=manifest, root=root)
entries, total, skipped = store.preload()
store.clear_memo()
keys = [k for k in table if k.startswith("('")]
served = mismatched = 0
for k in keys:
    hit = store.lookup(k)
    want = table[k]
    policy = tuple(want[2]) if len(want) > 2 and isinstance(want[2], list) else None
    if hit is not None:
        served += 1
        if (hit.runner, hit.tactic, hit.profiling_policy) != (want[0], want[1], policy):
            mismatched += 1
print(json.dumps({"flashinfer": flashinfer.__version__, "env_dir": str(store.env_dir), "dir_exists": store.env_dir.is_dir(),
                  "keys": len(keys), "preloaded": len(entries), "preload_total": total, "preload_skipped": skipped,
                  "lookup_served": served, "lookup_mismatched": mismatched}))
