"""The check every fixture writer under tools/ runs before keeping what it wrote: no file names a
path of the machine that wrote it (its work folder, the checkout, the home directory)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def refuse_machine_paths(dest: Path, paths: Sequence[str]) -> None:
    """SystemExit naming the first file under `dest` that holds one of `paths` (empty ones ignored)."""
    for p in dest.rglob("*"):
        if p.is_file():
            text = p.read_text(errors="replace")
            for bad in paths:
                if bad and bad in text:
                    raise SystemExit(f"{p}: names a path of this machine ({bad}); not kept")
