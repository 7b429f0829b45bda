"""Trim a `pip install --target SITE ray==2.60.0 ...` folder to what `ray start` and plain tasks need, and pack it.

Usage: python3 bench/ray_gpu/trim_site.py SITE OUT.tar.xz

The device tool carries at most 64 MiB (tree included) and Ray 2.60.0's cp312 wheel alone is 79 MB
(201 MB unpacked). What goes, and why it is not needed by `ray start` (head and worker, no
dashboard), `ray status` and `ray.remote` tasks, which is all tiletune's `retry --ray` uses:
checked by starting a head and a worker from the trimmed folder, running tasks on both and `ray
status` (bench/ray_gpu/README.md, "Checked here").
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

DROP = {
    "ray/jars": "Java workers (ray_dist.jar); no Java here",
    "ray/dashboard/client": "the dashboard's web front-end build; the run starts no dashboard (--include-dashboard=false)",
    "ray/rllib": "RLlib library, never imported by ray core",
    "ray/data": "Ray Data library, never imported by ray core",
    "ray/serve": "Ray Serve library, never imported by ray core",
    "ray/train": "Ray Train library, never imported by ray core",
    "ray/tune": "Ray Tune library, never imported by ray core",
    "ray/llm": "Ray LLM library, never imported by ray core",
    "ray/air": "Ray AIR (Train/Tune glue), never imported by ray core",
    "ray/workflow": "deprecated stub package",
    "bin": "console scripts written with the build machine's python path; the run calls ray.scripts.scripts:main",
}


def size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def main() -> int:
    site, out = Path(sys.argv[1]), Path(sys.argv[2])
    before = size(site)
    dropped = {}
    for rel, why in DROP.items():
        p = site / rel
        if p.exists():
            dropped[rel] = {"bytes": size(p), "why": why}
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    for cache in site.rglob("__pycache__"):
        shutil.rmtree(cache)
    after = size(site)
    manifest = {"unpacked_bytes_before": before, "unpacked_bytes_after": after, "dropped": dropped}
    (site / "TRIMMED.json").write_text(json.dumps(manifest, indent=1) + "\n")
    subprocess.run(["tar", "-C", str(site.parent), "-cf", str(out), "-I", "xz -9e -T2", site.name], check=True)
    manifest["packed_bytes"] = out.stat().st_size
    print(json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
