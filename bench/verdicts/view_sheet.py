"""The working-set judging sheet for issue 23: for every artifact cache_samples/wild/SPLIT.json marks
`working` (never a held-out one), its `expected.view` beside the default `tiletune inspect` view of its
files, the view's items unwrapped one a line, to judge by hand (cache_samples/wild/README.md, "Fully right").

    python bench/verdicts/view_sheet.py [SLUG-PART ...] > sheet.txt

Held-out artifacts are not opened: their slugs are read from SPLIT.json only to be skipped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

WILD = Path(__file__).resolve().parents[2] / "cache_samples" / "wild"


def working() -> list[str]:
    sides = json.loads((WILD / "SPLIT.json").read_text())["sides"]
    return [slug for slug, side in sorted(sides.items()) if side == "working"]


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
    slugs = [s for s in working() if not argv or any(a in s for a in argv)]
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
