"""The judging sheet for issue 23: for every artifact cache_samples/wild/SPLIT.json marks `working`, its
`expected.view` beside the default `tiletune inspect` view of its files, the view's items unwrapped one a
line, to judge by hand (cache_samples/wild/README.md, "Fully right").

    python bench/verdicts/view_sheet.py [--side working|held_out] [SLUG-PART ...] > sheet.txt

`--side held_out` takes round one's held-out artifacts (side `held_out`), released as working material
after their judging (bench/wild_heldout/RESULTS.md). Any other held-out side (`held_out_2`, ...) is never
opened: its slugs are read from SPLIT.json only to be skipped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

WILD = Path(__file__).resolve().parents[2] / "cache_samples" / "wild"


RELEASED = ("working", "held_out")  # the sides a developer may run: the working set and round one's released held-out


def working(side: str = "working") -> list[str]:
    if side not in RELEASED:
        raise SystemExit(f"side {side!r} is held out: never opened by this sheet")
    sides = json.loads((WILD / "SPLIT.json").read_text())["sides"]
    return [slug for slug, s in sorted(sides.items()) if s == side]


def view_items(stdout: str) -> list[str]:
    """The default view's Verdicts, Events and Notes items, each continuation line joined to its item."""
    items: list[str] = []
    cur, sec = None, None
    for ln in stdout.splitlines():
        if ln and not ln.startswith(" "):
            sec = ln
            if cur:
                items.append(cur)
                cur = None
            continue
        if sec is None or not sec.startswith(("Verdicts", "Stated in the text", "Events", "Notes on the inputs", "Inputs that")):
            continue
        if ln.startswith("  ") and not ln.startswith("   "):
            if cur:
                items.append(cur)
            cur = f"[{sec.split()[0]}] " + ln.strip()
        elif cur is not None:
            cur += " " + ln.strip()
    if cur:
        items.append(cur)
    return [re.sub(r"\s+", " ", it) for it in items]


def main(argv: list[str]) -> int:
    side = "working"
    if argv[:1] == ["--side"] and len(argv) > 1:
        side, argv = argv[1], argv[2:]
    slugs = [s for s in working(side) if not argv or any(a in s for a in argv)]
    for slug in slugs:
        d = WILD / slug
        files = [f.name for f in sorted(d.iterdir()) if f.name != "artifact.json"]
        r = subprocess.run([sys.executable, "-m", "tiletune", "inspect", *files], capture_output=True, text=True, cwd=d)
        v = json.loads((d / "artifact.json").read_text())["expected"]["view"]
        print(f"##### {slug} (exit {r.returncode})")
        print("FIRST: " + str(v.get("first_sentence")))
        for m in v.get("must_say", []):
            print("  +say: " + m)
        for m in v.get("must_not_say", []):
            print("  -not: " + m)
        for it in view_items(r.stdout):
            print("  > " + it)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
