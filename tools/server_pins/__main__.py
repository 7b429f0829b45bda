"""python3 -m tools.server_pins [--vllm-repo CLONE] [--sglang-repo CLONE] [--since vllm=0.9.0] [--out FILE]

Writes tiletune/core/data/server_flashinfer_pins.json: for each vLLM / SGLang release, the FlashInfer
version it pins (or the range it allows, or that it requires none), read by code from PyPI wheel
METADATA (default) or from the requirement files at each tag of a clone.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from packaging.version import InvalidVersion, Version

from tools.server_pins import parse, sources

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tiletune" / "core" / "data" / "server_flashinfer_pins.json"
SCHEMA = "tiletune.server_pins/1"
SERVERS = ("vllm", "sglang")
PLACEHOLDER = {"vllm": "VLLM_CLONE", "sglang": "SGLANG_CLONE"}


def tool_revision() -> Dict[str, str]:
    """The tiletune commit the tool ran from and the git tree id of tools/server_pins (names the
    code exactly even after a rebase; '+modified' when it had uncommitted changes)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()

    try:
        head, tree = git("rev-parse", "HEAD"), git("rev-parse", "HEAD:tools/server_pins")
        dirty = git("status", "--porcelain", "--", "tools/server_pins")
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown (not run from a git checkout)"}
    return {"commit": head, "tools_server_pins_tree": tree + ("+modified" if dirty else "")}


def table(reads: List[sources.Read], on_pypi: Optional[List[Version]] = None) -> Dict[str, Dict[str, Any]]:
    """version -> entry, in version order. `on_pypi`: the flashinfer-python releases PyPI lists;
    a flashinfer-python pin then says whether PyPI has it (`pin_on_pypi`)."""
    out: Dict[str, Dict[str, Any]] = {}
    for r in sorted(reads, key=lambda r: Version(r.version)):
        reqs = parse.flashinfer_requirements(r.text)
        entry = parse.summarize(reqs)
        entry["source"] = r.source
        if on_pypi is not None and entry["pin"] and all(q["name"] == "flashinfer-python" for q in reqs):
            entry["pin_on_pypi"] = Version(entry["pin"]) in on_pypi
        if not reqs:
            entry["note"] = "this release requires no FlashInfer package (its version is unknown from the banner)"
        if r.commit:
            entry["commit"] = r.commit
        out[r.version] = entry
    return out


def scanned(server: str, rows: Dict[str, Dict[str, Any]], how: Dict[str, Any], skipped: List[str]) -> Dict[str, Any]:
    with_fi = [v for v, e in rows.items() if e["spec"] is not None]
    return {"server": server, **how, "releases_scanned": len(rows),
            "first_scanned": next(iter(rows), None), "last_scanned": next(reversed(rows), None) if rows else None,
            "releases_with_flashinfer": len(with_fi), "first_with_flashinfer": with_fi[0] if with_fi else None,
            "releases_pinned": sum(1 for e in rows.values() if e["pin"]), "skipped": skipped}


def build(args: argparse.Namespace, log=print) -> Dict[str, Any]:
    servers: Dict[str, Any] = {}
    srcs: List[Dict[str, Any]] = []
    cmd = ["python3", "-m", "tools.server_pins"]
    # which pinned FlashInfer releases PyPI has (vLLM 0.34.0 pins 0.7.3, which it never had); asked
    # only where a server is read from PyPI anyway (clone mode stays off the network)
    pypi_mode = any(getattr(args, f"{s}_repo") is None for s in args.servers)
    on_pypi = sources.pypi_versions("flashinfer-python") if pypi_mode else None
    for server in args.servers:
        since = args.since.get(server)
        repo: Optional[Path] = getattr(args, f"{server}_repo")
        if repo is not None:
            reads = list(sources.repo_releases(server, repo, since))
            how: Dict[str, Any] = {"kind": "git clone", "repository": sources.REPOSITORIES[server],
                                   "clone": PLACEHOLDER[server], "files": list(sources.REPO_FILES[server])}
            skipped: List[str] = []
            cmd += [f"--{server}-repo", PLACEHOLDER[server]]
        else:
            reads, skipped = sources.pypi_releases(server, since)
            how = {"kind": "PyPI wheel METADATA (PEP 658 .metadata files)", "index": f"PyPI JSON API for {server} (pip's default index)",
                   "repository": sources.REPOSITORIES[server]}
        rows = table(reads, on_pypi)
        servers[server] = rows
        srcs.append(scanned(server, rows, how, skipped))
        log(f"{server}: {len(rows)} releases read, {srcs[-1]['releases_with_flashinfer']} with a FlashInfer requirement, "
            f"{srcs[-1]['releases_pinned']} pinned")
    for server, v in args.since.items():
        cmd += ["--since", f"{server}={v}"]
    if list(args.servers) != list(SERVERS):
        cmd += ["--servers", ",".join(args.servers)]
    return {"schema": SCHEMA,
            "generated_by": {"command": " ".join(cmd), "tool": "tools/server_pins (python3 -m tools.server_pins) of tiletune",
                             "tool_revision": tool_revision(), "sources": srcs,
                             "flashinfer_python_on_pypi": None if on_pypi is None else {
                                 "index": "PyPI JSON API for flashinfer-python (pip's default index)",
                                 "releases_listed": len(on_pypi), "newest": str(on_pypi[-1]) if on_pypi else None},
                             "note": "pin: the one exact FlashInfer version a release requires (==); spec: what it allows "
                                     "(null: requires none); extra: the pip extra that carries the requirement; "
                                     "pin_on_pypi: whether PyPI lists that flashinfer-python release (when the table was built; "
                                     "not recorded from clones)"},
            "servers": servers}


def _since(text: str) -> Dict[str, Version]:
    out = {}
    for part in filter(None, text.split(",")):
        server, _, ver = part.partition("=")
        if server not in SERVERS:
            raise argparse.ArgumentTypeError(f"--since {part}: server must be one of {', '.join(SERVERS)}")
        try:
            out[server] = Version(ver)
        except InvalidVersion:
            raise argparse.ArgumentTypeError(f"--since {part}: '{ver}' is not a version") from None
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.server_pins", description=__doc__.split("\n\n")[1])
    ap.add_argument("--vllm-repo", type=Path, help="a clone of vllm-project/vllm with its tags (default: PyPI wheel METADATA)")
    ap.add_argument("--sglang-repo", type=Path, help="a clone of sgl-project/sglang with its tags (default: PyPI wheel METADATA)")
    ap.add_argument("--since", type=_since, action="append", default=[], help="SERVER=VERSION: skip older releases")
    ap.add_argument("--servers", default=",".join(SERVERS), help="comma-separated (default: vllm,sglang)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output JSON (default: the shipped table)")
    args = ap.parse_args(argv)
    args.since = {k: v for d in args.since for k, v in d.items()}
    args.servers = [s for s in args.servers.split(",") if s]
    bad = [s for s in args.servers if s not in SERVERS]
    if bad:
        print(f"--servers: unknown server {bad[0]} (known: {', '.join(SERVERS)})", file=sys.stderr)
        return 2
    try:
        doc = build(args, log=lambda s: print(s, file=sys.stderr))
    except sources.SourceError as e:
        print(f"server_pins: {e}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(text)
    tmp.replace(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
