"""python3 -m tools.l2_policy FLASHINFER_CLONE [--wheel FILE] [--out FILE]

Writes tiletune/core/data/flashinfer_l2_policy.json: per FlashInfer release, whether the autotuner times
each GEMM / MoE op with a cold L2 (its TuningConfig sets `use_cold_l2_cache=True`) or a warm one
(the field's default, False), read by code from the sources of each release tag of a git clone of
github.com/flashinfer-ai/flashinfer (and, with --wheel, a release wheel the clone has no tag for).

How a call is read: every `choose_one(<op>, <runners>, <config>, ...)` in the GEMM and MoE modules;
its config is cold when `use_cold_l2_cache=True` is set in the config's own definition
(`NAME = TuningConfig(...)` / `replace(...)`) or inline within the lines that build it just before
the call. A config chosen by a condition (`A if ... else B`) whose branches differ is "mixed".
Consecutive releases with the same state are merged into one range.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tiletune" / "data" / "flashinfer_l2_policy.json"
SCHEMA = "tiletune.l2_policy/1"
FILES = ("flashinfer/gemm/gemm_base.py", "flashinfer/gemm_base.py", "flashinfer/gemm.py",
         "flashinfer/fused_moe/core.py")
AUTOTUNERS = ("flashinfer/autotuner.py", "flashinfer/autotuner/autotuner.py")
_CALL = re.compile(r"choose_one\(")
_OP = re.compile(r'(?:custom_op\s*=\s*)?"([\w:]+)"')
_OP_VAR = re.compile(r'custom_op\s*(?::\s*str)?\s*=\s*"([\w:]+)"')
_CFG_KW = re.compile(r"tuning_config\s*=\s*([\w.]+)")
_COLD = re.compile(r"use_cold_l2_cache\s*=\s*True")


def _block(lines: List[str], start: int) -> str:
    """The text of the call/definition opening on line `start`, up to its closing parenthesis."""
    depth, out = 0, []
    for line in lines[start:start + 200]:
        out.append(line)
        depth += line.count("(") - line.count(")")
        if depth <= 0:
            break
    return "\n".join(out)


def _defs(lines: List[str], name: str) -> List[int]:
    """Lines defining config `name`: a module-level assignment for a plain name; for an attribute
    (`runner.tuning_config`) every class-level or `cls.`/`self.` assignment of that attribute."""
    short = re.escape(name.split(".")[-1])
    if "." not in name:
        return [i for i, ln in enumerate(lines) if re.match(rf"{short}\s*=", ln)]
    return [i for i, ln in enumerate(lines) if re.match(rf"(?:    |\s+(?:cls|self)\.){short}\s*=", ln)]


def _rhs_state(lines: List[str], text: str, depth: int = 0) -> Optional[str]:
    """cold/warm/mixed for an assignment's text, following `A if c else B`, `replace(BASE, ...)` and
    plain names to their definitions in the same file (None: not resolved here)."""
    if _COLD.search(text):
        return "cold"
    rhs = text.split("=", 1)[1].strip().strip("()").strip() if "=" in text else text
    cond = re.fullmatch(r"([\w.]+)\s+if\s+.+?\s+else\s+([\w.]+)", rhs, re.S)
    if cond:
        states = {_name_state(lines, n, depth + 1) for n in cond.groups()}
        return states.pop() if len(states) == 1 else "mixed"
    base = re.match(r"replace\(\s*([\w.]+)", rhs)
    if base:
        return _name_state(lines, base.group(1), depth + 1)
    if re.match(r"TuningConfig\(", rhs):
        return "warm"
    if re.fullmatch(r"[\w.]+", rhs):
        return _name_state(lines, rhs, depth + 1)
    return None


def _name_state(lines: List[str], name: str, depth: int) -> Optional[str]:
    """The state of every definition of `name`; None when none is found or they differ."""
    if depth > 6:
        return None
    states = {_rhs_state(lines, _block(lines, i), depth) for i in _defs(lines, name)}
    return states.pop() if len(states) == 1 else None


def _enclosing_def(lines: List[str], i: int) -> int:
    indent = len(lines[i]) - len(lines[i].lstrip())
    d = i
    while d > 0 and not (re.match(r"\s*def ", lines[d]) and len(lines[d]) - len(lines[d].lstrip()) < indent):
        d -= 1
    return d


def call_state(lines: List[str], i: int, cfg: str) -> Optional[str]:
    """The L2 state of the config a choose_one call on line `i` passes."""
    d = _enclosing_def(lines, i)
    body = lines[d:i]
    if _COLD.search("\n".join(body)):
        return "cold"  # set inline (a config built or refined in the function that calls)
    short = re.escape(cfg.split(".")[-1])
    local = [j for j, ln in enumerate(body) if re.match(rf"\s*{short}\s*=", ln)]
    if local:
        states = {_rhs_state(lines, _block(lines, d + j)) for j in local}
        return states.pop() if len(states) == 1 else ("mixed" if None not in states else None)
    return _name_state(lines, cfg, 0)


def calls(text: str) -> Iterator[Tuple[str, str]]:
    """(op, state) for every choose_one call in one source file (state 'unresolved' when the
    config could not be followed to a definition)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _CALL.search(line) or line.lstrip().startswith(("def ", "#")):
            continue
        call = _block(lines, i)
        op = _OP.search(call)
        if not op:  # the op passed as a variable: its value (or default) in the calling function
            op = _OP_VAR.search("\n".join(lines[_enclosing_def(lines, i):i]))
        if not op:
            continue
        args = [a.strip() for a in call.split("(", 1)[1].split(",")]
        kw = _CFG_KW.search(call)
        cfg = kw.group(1) if kw else (args[2] if len(args) > 2 else "")
        state = call_state(lines, i, cfg) if re.fullmatch(r"[\w.]+", cfg or "") else None
        yield op.group(1), state or "unresolved"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def releases(repo: Path) -> List[Tuple[Version, str]]:
    out = []
    for tag in git(repo, "tag").split():
        m = re.fullmatch(r"v(\d+\.\d+\.\d+(?:\.post\d+)?)", tag)
        if m:
            out.append((Version(m.group(1)), tag))
    return sorted(out)


def scan(read: Dict[str, str]) -> Dict[str, str]:
    """op -> state for one release's files (an op called in several places: the states joined)."""
    states: Dict[str, set] = {}
    for path in FILES:
        if path in read:
            for op, st in calls(read[path]):
                states.setdefault(op, set()).add(st)
    def join(s: set) -> str:
        if len(s) == 1:
            return next(iter(s))
        return "unresolved" if "unresolved" in s else "mixed"
    return {op: join(s) for op, s in states.items()}


def has_option(read: Dict[str, str]) -> bool:
    return any("use_cold_l2_cache" in read.get(p, "") for p in AUTOTUNERS)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--since", default="0.6.0")
    ap.add_argument("--wheel", type=Path, action="append", default=[])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    per_release: List[Tuple[Version, Dict[str, str], bool]] = []
    for v, tag in releases(a.clone):
        if v < Version(a.since):
            continue
        names = set(git(a.clone, "ls-tree", "-r", "--name-only", tag).split())
        read = {p: git(a.clone, "show", f"{tag}:{p}") for p in FILES + AUTOTUNERS if p in names}
        per_release.append((v, scan(read), has_option(read)))
    for wheel in a.wheel:
        m = re.match(r"flashinfer_python-([^-]+)-", wheel.name)
        if not m:
            sys.exit(f"{wheel}: not a flashinfer_python wheel name")
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            read = {p: z.read(p).decode() for p in FILES + AUTOTUNERS if p in names}
        per_release.append((Version(m.group(1)), scan(read), has_option(read)))
    per_release.sort(key=lambda r: r[0])
    ops = sorted({op for _, s, _ in per_release for op in s})
    rules = []
    for op in ops:
        cur: Optional[dict] = None
        for v, s, opt in per_release:
            st = s.get(op)
            if st is None:
                cur = None
                continue
            if not opt:
                st = "warm"  # no cold-L2 option in this release's autotuner
            if cur and cur["state"] == st:
                cur["to"] = str(v)
            else:
                cur = {"op": op, "from": str(v), "to": str(v), "state": st}
                rules.append(cur)
    tags = {str(v): t for v, t in releases(a.clone)}
    order = [str(v) for v, _, _ in per_release]
    for r in rules:  # the pull requests that changed the cold-L2 setting between the two releases
        i = order.index(r["from"])
        prev = order[i - 1] if i else None
        if prev in tags and r["from"] in tags:
            log = git(a.clone, "log", "--format=%s", "-G", "use_cold_l2_cache",
                      f"{tags[prev]}..{tags[r['from']]}", "--", *FILES, *AUTOTUNERS)
            r["changed_by"] = sorted(set(re.findall(r"\(#(\d+)\)", log)), key=int)
    option = next((str(v) for v, _, opt in per_release if opt), None)
    doc = {
        "schema": SCHEMA,
        "generated_by": {"command": "python3 -m tools.l2_policy FLASHINFER_CLONE --wheel "
                                    "flashinfer_python-0.7.2.post1-py3-none-any.whl",
                         "sources": "release tags of https://github.com/flashinfer-ai/flashinfer; the "
                                    "flashinfer-python 0.7.2.post1 wheel on PyPI",
                         "releases": [str(v) for v, _, _ in per_release]},
        "note": "state: the L2 state FlashInfer's autotuner times an op's tactics with in the releases "
                "from..to (inclusive; releases only, no rc); mixed: the op's config depends on the "
                "backends asked for or differs between its call sites",
        "option_from": option,
        "default": "warm (TuningConfig.use_cold_l2_cache defaults to False; before option_from the "
                   "autotuner has no cold-L2 option)",
        "rules": rules,
    }
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{a.out}: {len(rules)} ranges over {len(ops)} ops, {len(per_release)} releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
