"""The wild corpus's split (cache_samples/wild/SPLIT.json) for tests that sweep cache_samples/.

Held-out artifacts are kept for the final, hand-judged evaluation of issue 23: no test runs
tiletune on them. A sweep names the working artifacts one by one instead of the wild directory (or
the whole of cache_samples/, which holds it)."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "cache_samples"
WILD = SAMPLES / "wild"
_SPLIT = json.loads((WILD / "SPLIT.json").read_text(encoding="utf-8")) if (WILD / "SPLIT.json").is_file() else {"sides": {}}
HELD_OUT = frozenset(slug for slug, side in _SPLIT["sides"].items() if side != "working")


# sides whose hand judgement is published (round two's, released after it was judged): tests may name their artifacts
# one by one; a sweep still takes the working side only, and a side held out now is never read
PUBLISHED_SIDES = frozenset({"working", "held_out_2"})


def published(slug: str) -> bool:
    """True for an artifact a test may run by name: its side's judgement is published."""
    return _SPLIT["sides"].get(slug) in PUBLISHED_SIDES


def working_wild() -> list[Path]:
    """The working artifacts' directories, sorted."""
    return sorted(p for p in WILD.iterdir() if p.is_dir() and p.name not in HELD_OUT) if WILD.is_dir() else []


def is_held_out(path: Path) -> bool:
    """True for a held-out artifact's directory or anything in it."""
    return bool(HELD_OUT.intersection(Path(path).parts))


def without_held_out(path: Path) -> list[Path]:
    """`path` as inputs that hold no held-out artifact: the wild directory becomes its working
    artifacts; cache_samples/ becomes its other directories plus those; anything else stays."""
    p = Path(path)
    if p == WILD:
        return working_wild()
    if p == SAMPLES:
        return [d for d in sorted(SAMPLES.iterdir()) if d.is_dir() and d.name not in ("wild", "__pycache__")] + working_wild()
    return [] if is_held_out(p) else [p]


def samples_mirror(tmp: Path) -> Path:
    """cache_samples/ as one directory without the held-out artifacts: symbolic links to its other
    directories and, under wild/, to the working artifacts (a walk follows them)."""
    root = tmp / "cache_samples"
    (root / "wild").mkdir(parents=True)
    for d in sorted(SAMPLES.iterdir()):
        if d.is_dir() and d.name not in ("wild", "__pycache__"):
            (root / d.name).symlink_to(d, target_is_directory=True)
    for d in working_wild():
        (root / "wild" / d.name).symlink_to(d, target_is_directory=True)
    return root
