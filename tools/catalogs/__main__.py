"""python3 -m tools.catalogs: rebuild tiletune/catalogs/data/*.json from public sources.

Releases on PyPI are read from their wheels (downloaded with pip into --wheel-dir); the 0.6.18
release candidates, which are not on PyPI, from the tags of a FlashInfer clone (--clone).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from packaging.version import Version

from tools.catalogs import FAMILIES, document, sources
from tools.catalogs.cpp import ExtractError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tiletune" / "catalogs" / "data"

def releases_for(family: str, only: Sequence[str] = ()) -> list[str]:
    first = Version(FAMILIES[family][1])
    every = [v for v in sources.PYPI_RELEASES + sources.GIT_RELEASES if Version(v) >= first]
    if only:
        want = {Version(v) for v in only}
        every = [v for v in every if Version(v) in want]
    return sorted(every, key=Version)


def open_source(version: str, wheel_dir: Path, clone: Optional[Path]) -> sources.Source:
    """The wheel from PyPI for a release PyPI has, else the tag of the clone."""
    if version in sources.PYPI_RELEASES:
        return sources.download_wheel(version, wheel_dir)
    if clone is None:
        raise ExtractError(f"FlashInfer {version} is not on PyPI: pass --clone DIR, a clone of "
                           f"{sources.REPOSITORY} with its tags")
    return sources.git_tag(clone, version)


def tool_revision() -> dict[str, str]:
    """The tiletune commit the extractor ran from, and the git tree id of tools/catalogs at that
    commit: the tree id names the tool's exact code even after the commit is rebased onto a newer
    main ('+modified' when tools/catalogs had uncommitted changes)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()

    try:
        head, tree = git("rev-parse", "HEAD"), git("rev-parse", "HEAD:tools/catalogs")
        dirty = git("status", "--porcelain", "--", "tools/catalogs")
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown (not run from a git checkout)"}
    return {"commit": head, "tools_catalogs_tree": tree + ("+modified" if dirty else "")}


def build_family(family: str, versions: Sequence[str], wheel_dir: Path, clone: Optional[Path], command: str,
                 log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """One family's data document for these releases."""
    extract = FAMILIES[family][0]
    read: dict[str, document.ReleaseData] = {}
    for v in versions:
        src = open_source(v, wheel_dir, clone)
        if src.version != str(Version(v)):
            raise ExtractError(f"{src.ref}: says it is FlashInfer {src.version}, expected {v}")
        read[v] = extract(src)
        log(f"{family} {v:14s} {src.ref}: {len(read[v].catalogs)} catalogs")
    generated_by = {
        "tool": "tools/catalogs (python3 -m tools.catalogs) of tiletune",
        "tool_revision": tool_revision(),
        "command": command,
        "sources": "releases.<version>.source: the PyPI wheel (file name, sha256) or git tag (commit) read",
    }
    return document.build(family, generated_by, read)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.catalogs", description=__doc__.splitlines()[0])
    ap.add_argument("--clone", type=Path, help=f"a git clone of {sources.REPOSITORY} with its tags "
                                               "(needed for the 0.6.18 release candidates, which are not on PyPI)")
    ap.add_argument("--wheel-dir", type=Path, help="where pip downloads the wheels (default: a temporary directory); "
                                                   "wheels already there are reused")
    ap.add_argument("--family", choices=sorted(FAMILIES), action="append", help="only this data file (repeatable)")
    ap.add_argument("--only", action="append", default=[], metavar="VERSION",
                    help="only these releases (repeatable; then --out-dir is required)")
    ap.add_argument("--out-dir", type=Path, help=f"where to write <family>.json (default: {DATA.relative_to(ROOT)})")
    a = ap.parse_args(argv)
    if a.only and a.out_dir is None:
        ap.error("--only writes a partial catalog: give --out-dir (the shipped data is never overwritten by a subset)")
    out_dir = a.out_dir or DATA
    families = a.family or sorted(FAMILIES)
    # the command as a reader reruns it: the clone path is the reader's, the wheel cache irrelevant
    cmd = ["python3", "-m", "tools.catalogs"] + (["--clone", "FLASHINFER_CLONE"] if a.clone else [])
    cmd += [x for f in (a.family or []) for x in ("--family", f)] + [x for v in a.only for x in ("--only", v)]
    log = lambda s: print(s, file=sys.stderr)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="tiletune-wheels-") as tmp:
        wheel_dir = a.wheel_dir or Path(tmp)
        try:
            docs = {f: build_family(f, releases_for(f, a.only), wheel_dir, a.clone, " ".join(cmd), log) for f in families}
        except ExtractError as e:
            print(f"tools.catalogs: {e}", file=sys.stderr)
            return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    for family, doc in docs.items():
        path = out_dir / f"{family}.json"
        tmp_path = path.with_suffix(".json.tmp")
        tmp_path.write_text(document.render(doc), encoding="utf-8")
        tmp_path.replace(path)
        log(f"wrote {path}: {len(doc['releases'])} releases, {len(doc['lists'])} lists, {len(doc['configs'])} distinct configs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
