#!/usr/bin/env python3
"""Extract the FlashInfer version each vLLM / SGLang release pins, from the releases' own metadata.

tiletune reads a server's version banner ("vLLM API server version 0.10.2", "sglang==0.5.5") and
turns it into the FlashInfer version that release installs: `tiletune/data/server_flashinfer_pins.json`.
This tool builds that table BY CODE from what the projects publish, never by hand:

- a wheel (`*.whl`): the `Requires-Dist` lines of its METADATA;
- an sdist (`*.tar.gz`): PKG-INFO's `Requires-Dist`, else `requirements/cuda.txt` /
  `requirements-cuda.txt` / `python/pyproject.toml` / `pyproject.toml` inside it;
- a git checkout (`--repo PATH`): the same files at every release tag (`git show TAG:FILE`).

A requirement `flashinfer-python==X` (or `flashinfer_python==X`) is a pin; any other specifier
(`>=0.2.9`, none at all) is recorded as the range it allows, with `pin: null`.

Rebuild (what produced the shipped table; PyPI files via pip, the ordinary client):

    pip download --no-deps --only-binary :all: -d /tmp/sglang-wheels sglang==0.5.5 ...   # one per release
    python3 tools/server_pins.py --server sglang /tmp/sglang-wheels/*.whl --out tiletune/data/server_flashinfer_pins.json
    python3 tools/server_pins.py --server vllm --repo <vllm git clone> --merge tiletune/data/server_flashinfer_pins.json

The table records each release's source file and the command that produced it.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Iterable, Optional

_REQ = re.compile(r"^\s*flashinfer[-_]python\s*(?P<spec>[^;#\s][^;#\n]*)?", re.I | re.M)
_PIN = re.compile(r"^==\s*(?P<v>\d[\w.+-]*)\s*$")
_SDIST_FILES = ("requirements/cuda.txt", "requirements-cuda.txt", "python/pyproject.toml", "pyproject.toml")
_TAG = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)$")


def pin_from_text(text: str) -> Optional[dict]:
    """{"pin": exact version or None, "spec": the requirement as written} from requirement text."""
    for m in _REQ.finditer(text.replace('"', "\n").replace("'", "\n")):
        spec = (m.group("spec") or "").strip().rstrip(",")
        p = _PIN.match(re.sub(r"^\[[^\]]*\]", "", spec.replace(" ", "")))  # "[cu13]==0.6.12": an extra, then the pin
        return {"pin": p.group("v") if p else None, "spec": ("flashinfer-python" + spec) if spec else "flashinfer-python (any version)"}
    return None


def from_wheel(path: Path) -> tuple[str, Optional[dict], str]:
    with zipfile.ZipFile(path) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode("utf-8", "replace"))
    reqs = "\n".join(r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r or "cuda" in r or "srt" in r)
    return meta["Version"], pin_from_text(reqs), f"{path.name}:{meta_name} Requires-Dist"


def from_sdist(path: Path) -> tuple[str, Optional[dict], str]:
    with tarfile.open(path) as t:
        names = {m.name.split("/", 1)[-1]: m for m in t.getmembers() if m.isfile()}
        version = None
        if "PKG-INFO" in names:
            info = email.parser.Parser().parsestr(t.extractfile(names["PKG-INFO"]).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
            version = info["Version"]
            hit = pin_from_text("\n".join(info.get_all("Requires-Dist") or []))
            if hit:
                return version, hit, f"{path.name}:PKG-INFO Requires-Dist"
        for f in _SDIST_FILES:
            if f in names:
                hit = pin_from_text(t.extractfile(names[f]).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
                if hit:
                    return version or "?", hit, f"{path.name}:{f}"
    return version or "?", None, path.name


def from_repo(repo: Path) -> Iterable[tuple[str, Optional[dict], str]]:
    tags = subprocess.run(["git", "-C", str(repo), "tag"], capture_output=True, text=True, check=True).stdout.split()
    for tag in tags:
        m = _TAG.match(tag)
        if not m:
            continue
        for f in _SDIST_FILES:
            r = subprocess.run(["git", "-C", str(repo), "show", f"{tag}:{f}"], capture_output=True, text=True)
            if r.returncode == 0:
                hit = pin_from_text(r.stdout)
                if hit:
                    yield m.group(1), hit, f"git tag {tag}:{f}"
                    break
        else:
            yield m.group(1), None, f"git tag {tag}"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, choices=("vllm", "sglang"))
    ap.add_argument("files", nargs="*", type=Path, help="wheels (*.whl) or sdists (*.tar.gz) of the server")
    ap.add_argument("--repo", type=Path, help="a git clone of the server (its release tags are read)")
    ap.add_argument("--merge", type=Path, help="an existing table to add to (written back)")
    ap.add_argument("--out", type=Path, help="where to write the table (default: --merge, else stdout)")
    args = ap.parse_args(argv)
    table = json.loads(args.merge.read_text()) if args.merge and args.merge.exists() else {}
    table.setdefault("schema", "tiletune.server_pins/1")
    table.setdefault("description", "FlashInfer version each server release pins (pin) or allows (spec), extracted by "
                                    "tools/server_pins.py from the releases' own metadata; source names the file")
    table.setdefault("servers", {})
    rows = []
    for f in args.files:
        rows.append(from_wheel(f) if f.suffix == ".whl" else from_sdist(f))
    if args.repo:
        rows.extend(from_repo(args.repo))
    releases = table["servers"].setdefault(args.server, {})
    for version, hit, source in rows:
        entry = dict(hit) if hit else {"pin": None, "spec": "no flashinfer-python requirement found (unknown)"}
        entry["source"] = source
        releases[version] = entry
    table["servers"][args.server] = dict(sorted(releases.items(), key=lambda kv: [int(x) if x.isdigit() else x for x in re.split(r"[.]", kv[0])]))
    cmd = table.setdefault("generated_by", [])
    line = "python3 tools/server_pins.py --server " + args.server + (" <wheels/sdists>" if args.files else "") + (" --repo <clone>" if args.repo else "")
    if line not in cmd:
        cmd.append(line)
    text = json.dumps(table, indent=1, sort_keys=False) + "\n"
    out = args.out or args.merge
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
