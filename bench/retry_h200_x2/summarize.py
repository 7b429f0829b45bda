"""One line per attempt of a `tiletune retry` ledger, then the attempts per physical GPU.

Usage: python3 bench/retry_h200_x2/summarize.py LEDGER.jsonl
The GPU columns come from the ledger's fingerprint: `cuda_visible_devices` (what the parent pinned
the child to) and `gpu_uuid` / `gpu_pci_bus_id` (what the child's CUDA context reported).
"""

import collections
import json
import sys


def main(path: str) -> None:
    per_gpu = collections.Counter()
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for r in rows:
        env = r.get("env") or {}
        p = r.get("problem") or {}
        shape = f"{p.get('m')}x{p.get('n')}x{p.get('k')}"
        t = f"{r['time_s'] * 1e6:8.1f} us" if r.get("time_s") else " " * 11
        err = f"{r['rel_error']:.2e}" if r.get("rel_error") is not None else ""
        gpu = f"cvd={env.get('cuda_visible_devices')} {str(env.get('gpu_uuid') or '')[:13]} {env.get('gpu_pci_bus_id') or ''}"
        print(f"{r['op']:10} {r['runner']:24} {str(r['tactic']):>4} {shape:16} {r['diagnosis']:16} {t} {err:9} {gpu} | {r['message'][:150]}")
        per_gpu[(env.get("cuda_visible_devices"), env.get("gpu_uuid"), env.get("gpu_pci_bus_id"))] += 1
    print()
    for (cvd, uuid, bus), n in sorted(per_gpu.items(), key=lambda kv: str(kv[0])):
        print(f"CUDA_VISIBLE_DEVICES={cvd} uuid={uuid} pci={bus}: {n} attempt(s)")


if __name__ == "__main__":
    main(sys.argv[1])
