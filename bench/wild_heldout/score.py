"""Tally a hand judgement of cache_samples/wild views: fully right N of M, per issue-23 class, per Blackwell.

    python bench/wild_heldout/score.py bench/wild_heldout/judgement-main-<sha>.json [more.json ...]

The judgement files are written by hand (see RESULTS.md for the rules); this only counts them and lists
every miss with the item that failed.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main() -> None:
    for path in sys.argv[1:]:
        doc = json.load(open(path))
        arts = doc["artifacts"]
        n = sum(r["fully_right"] for r in arts.values())
        print(f"{doc['label']} ({doc['commit'][:12]}, {doc['side']}): fully right {n} of {len(arts)}")
        per_class: dict[int, list[bool]] = defaultdict(list)
        per_bw: dict[bool, list[bool]] = defaultdict(list)
        fs_ok = sum(r["first_sentence"]["ok"] for r in arts.values())
        for r in arts.values():
            for c in r["issue_classes"] or [0]:
                per_class[c].append(r["fully_right"])
            per_bw[r["blackwell"]].append(r["fully_right"])
        print(f"  first sentence right: {fs_ok} of {len(arts)}")
        for c in sorted(per_class):
            name = f"class {c}" if c else "no class"
            print(f"  {name}: {sum(per_class[c])} of {len(per_class[c])}")
        for bw in (True, False):
            if per_bw[bw]:
                print(f"  {'Blackwell' if bw else 'non-Blackwell'}: {sum(per_bw[bw])} of {len(per_bw[bw])}")
        for slug, r in sorted(arts.items()):
            if not r["fully_right"]:
                print(f"  miss {slug}: {', '.join(r['failed_items'])}")
        print()


if __name__ == "__main__":
    main()
