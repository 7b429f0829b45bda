"""Run the person's default view on one side of cache_samples/wild and keep every output verbatim.

For each artifact of the chosen side of ``cache_samples/wild/SPLIT.json`` (held_out_2 by default: round
two's held-out set; held_out_3 is round three's; round one's held_out side was judged and released to working), run
``tiletune inspect <artifact file>`` with no flags, ``COLUMNS=120``, from the checkout's root, and
save stdout as ``<out>/<label>/<slug>.txt`` (stderr, when there is any, as ``<slug>.stderr.txt``),
plus ``<out>/<label>/runs.json`` with each exit status, the exact command, the checkout's commit and
the sha256 of each artifact file (so that two labels can be shown to have read the same bytes).

File rule: an artifact directory holds ``artifact.json`` and the artifact text; every other regular
file in it is an artifact file (each held-out directory holds exactly one). A directory with several
files runs one ``inspect`` per file, named ``<slug>--<file>.txt``.

    python bench/wild_heldout/run_views.py --checkout DIR --tiletune VENV/bin/tiletune \
        --label main-<sha> [--side held_out_2|held_out_3|working] [--out bench/wild_heldout]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
from pathlib import Path


def artifact_files(slug_dir: Path) -> list[Path]:
    return sorted(p for p in slug_dir.iterdir() if p.is_file() and p.name != "artifact.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path, required=True, help="tiletune checkout whose corpus is read")
    ap.add_argument("--tiletune", required=True, help="that checkout's venv console script")
    ap.add_argument("--label", required=True)
    ap.add_argument("--side", default="held_out_2", choices=["held_out_2", "held_out_3", "working"])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args()

    checkout = args.checkout.resolve()
    wild = checkout / "cache_samples" / "wild"
    split = json.loads((wild / "SPLIT.json").read_text())
    slugs = sorted(s for s, side in split["sides"].items() if side == args.side)
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--", "tiletune", "cache_samples"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    where = subprocess.run(
        [str(Path(args.tiletune).parent / "python"), "-c", "import tiletune; print(tiletune.__file__)"],
        capture_output=True, text=True, check=True, cwd="/",
    ).stdout.strip()
    if not where.startswith(str(checkout)):
        raise SystemExit(f"{args.tiletune} imports tiletune from {where}, not from {checkout}")

    dest = args.out / args.label
    dest.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COLUMNS="120")
    env.pop("NO_COLOR", None)
    runs = []
    for slug in slugs:
        files = artifact_files(wild / slug)
        for f in files:
            rel = f.relative_to(checkout).as_posix()
            name = slug if len(files) == 1 else f"{slug}--{f.name}"
            proc = subprocess.run(
                [args.tiletune, "inspect", rel], cwd=checkout, env=env, capture_output=True, text=True
            )
            (dest / f"{name}.txt").write_text(proc.stdout)
            if proc.stderr:
                (dest / f"{name}.stderr.txt").write_text(proc.stderr)
            runs.append({
                "slug": slug,
                "file": rel,
                "sha256": hashlib.sha256(f.read_bytes()).hexdigest(),
                "command": f"COLUMNS=120 tiletune inspect {rel}",
                "exit_status": proc.returncode,
                "stdout": f"{name}.txt",
                "stderr": f"{name}.stderr.txt" if proc.stderr else None,
            })
            print(f"{proc.returncode}  {name}")
    (dest / "runs.json").write_text(json.dumps({
        "label": args.label,
        "commit": commit,
        "side": args.side,
        "checkout_dirty_paths": dirty or None,
        "rule": "one `tiletune inspect FILE` per non-artifact.json file of each directory, cwd = checkout root, COLUMNS=120, no flags",
        "runs": runs,
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
