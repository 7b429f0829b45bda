"""`tiletune check`'s result as text, Markdown or JSON (schema tiletune.check/1). Computes nothing."""

from __future__ import annotations

import json
from typing import List, Optional

from msgspec import to_builtins as asdict

from tiletune.analysis.check import CheckResult, FileVerdict, GroupVerdict, KeyDifference
from tiletune.formats.fit import prose

SCHEMA = "tiletune.check/1"
_ENGINE = {"vllm": "vLLM", "sglang": "SGLang"}


def headline(r: CheckResult) -> str:
    """The sentence a user reads first: how many files are ignored, how many rank groups discarded."""
    who = f"FlashInfer {r.target.release}" if r.target.release else "the target's FlashInfer (release not known)"
    n = len(r.files)
    ignored = sum(f.verdict in ("ignored", "unreadable") for f in r.files)
    unknown = sum(f.verdict == "unknown" for f in r.files)
    parts = [f"{ignored} of {n} cache file{'s' if n != 1 else ''} will be ignored by {who} on the target"
             + (f", {unknown} cannot be told" if unknown else "")]
    if r.groups:
        dropped = sum(g.verdict == "discarded" for g in r.groups)
        parts.append(f"{dropped} of {len(r.groups)} rank group{'s' if len(r.groups) != 1 else ''} will be discarded")
    deciding = sorted({d for f in r.files if f.verdict == "ignored" for d in f.deciding})
    tail = f" (decided by {', '.join(deciding)})" if deciding else ""
    return "; ".join(parts) + tail + "."


def _target_lines(r: CheckResult) -> List[str]:
    lines = [f"Target: {r.target.source}"]
    if r.rule is not None:
        lines.append(f"Rule: FlashInfer {r.rule.release} load_configs compares {', '.join(r.rule.fields)}"
                     + (f"; '{r.rule.wildcard}' matches anything" if r.rule.wildcard else "")
                     + f" (read from {r.rule.source})")
        if r.rule.note:
            lines.append(f"Note: {r.rule.note}")
    return lines


def _verdict_cell(f: FileVerdict) -> str:
    return f"{f.verdict} ({f.severity})" if f.severity else f.verdict


def _choice_text(d: KeyDifference) -> str:
    cells = []
    for c in d.choices:
        if c.tactic is None:
            cells.append(f"{c.rank}: (no entry)")
        else:
            cells.append(f"{c.rank}: tactic {c.tactic}" + (f" = {c.tile}" if c.tile else "")
                         + (f", {c.time_ms:.4g} ms measured" if c.time_ms is not None else ""))
    return "; ".join(cells)


def _group_lines(g: GroupVerdict, bullet: str = "") -> List[str]:
    lines = [f"{bullet}{_ENGINE[g.engine]} group {g.group} in {g.directory} ({len(g.ranks)} rank file(s)): "
             f"{g.verdict.upper()}: {g.reason}",
             f"{bullet}  rule: {g.rule}"]
    if g.differences_total:
        lines.append(f"{bullet}  keys whose chosen tactic differs between ranks: {g.differences_total} "
                     f"(same on every rank: {g.same_keys})" + (f"; first {len(g.differences)} shown" if len(g.differences) < g.differences_total else ""))
        for d in g.differences:
            lines.append(f"{bullet}    {d.op} {d.runner} {d.problem}: {_choice_text(d)}")
    elif len(g.ranks) > 1:
        lines.append(f"{bullet}  every key has the same tactic on every rank ({g.same_keys} keys)")
    return lines


def render_text(r: CheckResult, width: Optional[int] = None) -> str:
    """The verdicts as text; `width`: the terminal columns it fits (lines wrap at spaces with a
    hanging indent, never inside a word or a path); None: one line per fact, however long."""
    text = _text(r)
    return text if width is None else prose(text, width)


def _text(r: CheckResult) -> str:
    lines = [headline(r), *_target_lines(r), ""]
    for f in r.files:
        lines.append(f"{f.path}" + (f" [{f.rank}]" if f.rank else "") + f": {_verdict_cell(f).upper()}: {f.reason}")
        for c in f.fields:
            if c.state not in ("same",):
                lines.append(f"    {c.name}: file {c.saved!r}, target {c.target!r} ({c.state}; target value: {c.basis})"
                             + (f": {c.why}" if c.why else ""))
    if r.groups:
        lines.append("")
        for g in r.groups:
            lines += _group_lines(g)
    for p in r.problems:
        lines.append(f"{'problem' if p.loses_data else 'note'}: {p.message}")
    return "\n".join(lines) + "\n"


def render_markdown(r: CheckResult, width: Optional[int] = None) -> str:
    from tiletune.formats.markdown import table

    lines = ["## Will these caches be used on the target?", "", headline(r), ""]
    lines += [f"- {x}" for x in _target_lines(r)] + [""]
    rows = [[f.path, f.rank or "", _verdict_cell(f), ", ".join(f.deciding) or "", f.reason] for f in r.files]
    if rows:
        lines += table(["file", "rank", "verdict", "decided by", "why"], rows).splitlines() + [""]
    for g in r.groups:
        lines += _group_lines(g, bullet="- ") + [""]
    for p in r.problems:
        lines.append(f"- {'problem' if p.loses_data else 'note'}: {p.message}")
    return "\n".join(lines).rstrip() + "\n"


def to_json(r: CheckResult, width: Optional[int] = None) -> str:
    body = {
        "schema": SCHEMA,
        "summary": {"headline": headline(r), "files": len(r.files), "misses": r.misses, "unknown": r.unknowns,
                    "groups": len(r.groups)},
        "target": asdict(r.target),
        "rule": asdict(r.rule) if r.rule is not None else None,
        "files": [asdict(f) for f in r.files],
        "groups": [asdict(g) for g in r.groups],
        "problems": [{"source": p.source, "message": p.message, "loses_data": p.loses_data} for p in r.problems],
    }
    return json.dumps(body, indent=1, default=str) + "\n"
