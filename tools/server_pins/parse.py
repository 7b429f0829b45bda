"""Find FlashInfer requirements in a requirement file, setup.py, pyproject.toml or wheel METADATA.

Only the packages that carry FlashInfer's Python module count (`flashinfer`, the name of the old
wheels on flashinfer.ai, and `flashinfer-python`); flashinfer-cubin / flashinfer-jit-cache are
add-ons whose version follows flashinfer-python's.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

FLASHINFER_NAMES = frozenset({"flashinfer", "flashinfer-python"})
_QUOTED = re.compile(r""""(?P<d>[^"\n]*)"|'(?P<s>[^'\n]*)'""")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def parse_requirement(text: str) -> Optional[Dict[str, Any]]:
    """One requirement string -> {"name", "spec", "pin", "marker", "extra", "url", "requirement"}, or
    None when it is no FlashInfer requirement (or no requirement at all)."""
    text = text.strip()
    if not text or text.startswith(("-", "#")):
        return None
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    name = canonicalize_name(req.name)
    if name not in FLASHINFER_NAMES:
        return None
    clauses = list(req.specifier)
    spec = str(req.specifier) or None
    pin = None
    # an exact pin: one "==" clause without a wildcard ("===" is an exact string match too)
    if len(clauses) == 1 and clauses[0].operator in ("==", "===") and "*" not in clauses[0].version:
        pin = clauses[0].version
    marker = str(req.marker) if req.marker else None
    extra = _EXTRA.search(marker or "")
    return {"name": name, "spec": spec, "pin": pin, "marker": marker,
            "extra": extra.group(1) if extra else None, "url": req.url, "requirement": text}


def candidates(text: str) -> List[str]:
    """The requirement strings a file holds that mention flashinfer: quoted strings (setup.py,
    pyproject.toml), `Requires-Dist:` values (METADATA), or bare lines (requirement files)."""
    out: List[str] = []
    for raw in text.splitlines():
        if "flashinfer" not in raw.lower():
            continue
        line = raw.strip()
        if line.lower().startswith("requires-dist:"):
            out.append(line.split(":", 1)[1].strip())
            continue
        if line.startswith("#"):
            continue
        # quoted strings (setup.py, pyproject.toml); no requirement: a marker's value (extra == "flashinfer"),
        # a dict key ({"flashinfer": [...]}) or a call's argument (find_spec("flashinfer"))
        quoted = [m.group("d") if m.group("d") is not None else m.group("s") for m in _QUOTED.finditer(raw)
                  if not re.search(r"(?:[=!<>]=|\()\s*$", raw[:m.start()]) and not re.match(r"\s*:", raw[m.end():])]
        quoted = [q for q in quoted if "flashinfer" in q.lower()]
        if quoted:
            out.extend(quoted)
            continue
        out.append(re.split(r"\s+#", line, maxsplit=1)[0])  # requirement files: " # comment" ends a line
    return out


def flashinfer_requirements(text: str) -> List[Dict[str, Any]]:
    """Every FlashInfer requirement in a file's text, in file order, duplicates dropped."""
    seen, out = set(), []
    for c in candidates(text):
        r = parse_requirement(c)
        if r is not None and r["requirement"] not in seen:
            seen.add(r["requirement"])
            out.append(r)
    return out


def summarize(reqs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """A release's table entry from its FlashInfer requirements: `pin` only when every requirement
    pins the same exact version; `spec` the range otherwise (null when none is required)."""
    if not reqs:
        return {"pin": None, "spec": None}
    pins = {r["pin"] for r in reqs}
    pin = next(iter(pins)) if len(pins) == 1 else None
    specs = []
    for r in reqs:
        s = f"{r['name']}{r['spec'] or ''}" if not r["url"] else f"{r['name']} @ {r['url']}"
        if s not in specs:
            specs.append(s)
    entry: Dict[str, Any] = {"pin": pin, "spec": "; ".join(specs) if len(specs) > 1 else specs[0],
                             "requirements": [r["requirement"] for r in reqs]}
    extras = sorted({r["extra"] for r in reqs if r["extra"]})
    if extras:
        entry["extra"] = extras[0] if len(extras) == 1 else extras
    if pin is None:
        entry["note"] = ("requirements pin different versions" if len(pins - {None}) > 1 else
                         "no exact version pinned: the range is what the release allows")
    return entry
