"""python3 -m tools.flashinfer_writers.check: does tiletune read what a FlashInfer release writes?

Two checks, each a list of findings (empty = everything read):

- `check_written(dir)`: the bytes a release's own writers wrote (`python3 -m tools.flashinfer_writers`,
  one OUT/<release>/ directory): every cache entry and store entry read with nothing left unknown
  (no note naming parts tiletune does not know, no entry lost), every `_metadata` / manifest key
  known, every autotuner line of the log read (LogFacts.unread), and each raised text
  (sticky.stderr.txt, group.rank<r>.stderr.txt of a process that ended in it) read as its specific
  event; a rank that ended normally (a release without the group gate) left a log, checked as one.
- `check_source(wheel)`: every message the release's autotuner can log or raise with its tag
  (`logger.<level>(...)` and `raise ...("[Autotuner]: ...")` in flashinfer/autotuner*.py,
  flashinfer/autotuner/*.py, flashinfer/autotune_cache.py, flashinfer/tactics_blocklist.py, and
  `_TuningGroupError("Autotune group ...")`), rendered from its f-string with a placeholder for
  each value, is one a rule of the log parser reads: this covers the lines the CPU run cannot make
  print. A message built in a way this does not render is a finding too (file:line).

    python3 -m tools.flashinfer_writers.check DIR... [--wheel WHEEL...]
exit 1 when anything is not read, naming it.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import zipfile
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tiletune.core.records import InputProblem  # noqa: E402
from tiletune.readers import read_inputs  # noqa: E402
from tiletune.readers.flashinfer_format import MANIFEST_KEYS, METADATA_KEYS  # noqa: E402
from tiletune.readers.interface import ReadContext  # noqa: E402
from tiletune.readers.logs import LogParser, read_log  # noqa: E402
from tiletune.readers.logs.events import EventLog  # noqa: E402
from tiletune.readers.logs.parser import unread_messages  # noqa: E402

CTX = ReadContext()
TAGS = ("[Autotuner]", "[AutoTuner]", "[AutoTunner]", "[TacticsBlocklist]")
PLACEHOLDER = "<v>"  # what stands for each value of a rendered message
# the specific event each raised text must become (not the generic "exception")
RAISED_KINDS = {"sticky.stderr.txt": "cuda_error", "group.rank0.stderr.txt": "tuning_group_failed",
                "group.rank1.stderr.txt": "tuning_group_failed"}


# --- what a release wrote ------------------------------------------------------------------------
def check_written(release_dir: Path) -> list[str]:
    out: list[str] = []
    cache = release_dir / "cache.json"
    if cache.exists():
        out += _check_cache(cache)
    for manifest in sorted((release_dir / "v2root").glob("v2/*/manifest.json")):
        out += _check_store(manifest.parent)
    log = release_dir / "flashinfer_jit.log"
    if log.exists():
        p = LogParser(str(log), CTX.environment())
        items = list(read_log(log, CTX, parser=p))
        for words, n in p.facts.unread.items():
            out.append(f"{log}: {n} autotuner line(s) tiletune does not read: '{words}...'")
        out += [f"{log}: {i.message}" for i in items if isinstance(i, InputProblem) and i.loses_data]
    prov = json.loads((release_dir / "PROVENANCE.json").read_text()) if (release_dir / "PROVENANCE.json").exists() else {}
    scenarios = prov.get("scenarios", {})
    for name, kind in RAISED_KINDS.items():
        path = release_dir / name
        if not path.exists():
            continue
        scenario, rank = (name.split(".")[0], name.split(".")[1] if name.startswith("group.") else None)
        status = scenarios.get(scenario, {}).get(f"{rank}_exit_status" if rank else "exit_status", 1)
        if status == 0:  # the process ended normally (a release without the gate): its stderr is a log
            p = LogParser(str(path), CTX.environment())
            list(read_log(path, CTX, parser=p))
            out += [f"{path}: {n} autotuner line(s) tiletune does not read: '{w}...'" for w, n in p.facts.unread.items()]
            continue
        res = read_inputs([path], CTX)
        if not any(e.kind == kind for e in res.events):
            out.append(f"{path}: the raised text is not read as a {kind} event "
                       f"(events: {sorted({e.kind for e in res.events})})")
    return out


def _check_cache(cache: Path) -> list[str]:
    raw = json.loads(cache.read_text())
    res = read_inputs([cache], CTX)
    out = [f"{cache}: {p.message}" for p in res.problems]  # any note: a part not understood
    n = sum(1 for k in raw if not k.startswith("_"))
    if len(res.records) < n:
        out.append(f"{cache}: {n - len(res.records)} of {n} entries not read")
    meta = raw.get("_metadata") or {}
    out += [f"{cache}: _metadata key {k!r} tiletune does not know" for k in meta if k not in METADATA_KEYS]
    return out


def _check_store(store: Path) -> list[str]:
    res = read_inputs([store], CTX)
    out = [f"{store}: {p.message}" for p in res.problems]
    n = len(list((store / "entries").glob("*.json")))
    if len(res.records) < n:
        out.append(f"{store}: {n - len(res.records)} of {n} entries not read")
    manifest = json.loads((store / "manifest.json").read_text())
    out += [f"{store}: manifest key {k!r} tiletune does not know" for k in manifest if k not in MANIFEST_KEYS]
    return out


# --- what a release's source can print ------------------------------------------------------------
def _sources(wheel: Path) -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            if (name in ("flashinfer/autotuner.py", "flashinfer/autotune_cache.py", "flashinfer/tactics_blocklist.py")
                    or (name.startswith("flashinfer/autotuner/") and name.endswith(".py"))):
                yield name, z.read(name).decode("utf-8", "replace")


class _Renderer:
    """A message expression -> its text with PLACEHOLDER for each value, or None when not renderable.
    Names resolve to their last assignment in the same function (`message = f"..."` then `logger.x(message)`)."""

    def __init__(self, assigns: dict[str, ast.expr]) -> None:
        self.assigns = assigns

    def __call__(self, node: Optional[ast.expr], depth: int = 0) -> Optional[str]:
        if node is None or depth > 8:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.replace("%s", PLACEHOLDER).replace("%d", PLACEHOLDER).replace("%r", PLACEHOLDER)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                else:
                    parts.append(PLACEHOLDER)
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self(node.left, depth + 1), self(node.right, depth + 1)
            return None if a is None or b is None else a + b
        if isinstance(node, ast.Name) and node.id in self.assigns:
            return self(self.assigns[node.id], depth + 1)
        if isinstance(node, ast.IfExp):  # either branch may print: the first renderable
            return self(node.body, depth + 1) or self(node.orelse, depth + 1)
        return None


def _messages(name: str, text: str) -> Iterator[tuple[int, Optional[str], str]]:
    """(line, rendered message or None, how) for each logger call and tagged raise in one source."""
    tree = ast.parse(text)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        assigns: dict[str, ast.expr] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigns[node.targets[0].id] = node.value
        render = _Renderer(assigns)
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in
                    ("debug", "info", "warning", "error", "critical", "debug_once", "info_once", "warning_once")
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "logger" and node.args):
                yield node.lineno, render(node.args[0]), "logged"
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                yield node.lineno, render(node.exc.args[0]), "raised:" + ast.unparse(node.exc.func)


def check_source(wheel: Path) -> list[str]:
    out: list[str] = []
    seen: set[tuple[str, int]] = set()
    for name, text in _sources(wheel):
        for line, msg, how in _messages(name, text):
            if (name, line) in seen:
                continue
            seen.add((name, line))
            if msg is None:
                if how == "logged":
                    out.append(f"{wheel.name}:{name}:{line}: a logged message tiletune's watch cannot render; read it")
                continue
            if how.startswith("raised:") and "_TuningGroupError" in how:
                ev = EventLog("<message>")
                ev.scan_line(1, "flashinfer.autotuner.autotuner._TuningGroupError: " + msg)
                if not any(e.kind == "tuning_group_failed" for e in ev.events()):
                    out.append(f"{wheel.name}:{name}:{line}: raised {msg!r} is not read as tuning_group_failed")
                continue
            at = min((msg.find(t) for t in TAGS if t in msg), default=-1)
            if at < 0:
                continue  # not an autotuner message (other loggers' lines, plain exceptions)
            if unread_messages([msg[at:]]):
                out.append(f"{wheel.name}:{name}:{line}: {how} message tiletune does not read: {msg[at:][:160]!r}")
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.flashinfer_writers.check", description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="OUT/<release>/ directories written by tools.flashinfer_writers")
    ap.add_argument("--wheel", action="append", type=Path, default=[], help="a flashinfer-python wheel whose source to check")
    args = ap.parse_args(argv)
    findings: list[str] = []
    for d in args.dirs:
        findings += check_written(d)
    for w in args.wheel:
        findings += check_source(w)
    for f in findings:
        print(f)
    print(f"{len(findings)} finding(s) in {len(args.dirs)} release dir(s) and {len(args.wheel)} wheel(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())


__all__: list[Any] = ["check_source", "check_written"]
