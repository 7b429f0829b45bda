"""`tiletune inspect --fleet`'s result as text, Markdown or JSON (schema tiletune.fleet/1). Computes nothing."""

from __future__ import annotations

import json
from typing import List, Optional

from msgspec import to_builtins as asdict

from tiletune.analysis.fleet import FleetGroup, FleetResult, KeySummary, TileChoice

SCHEMA = "tiletune.fleet/1"
SHOWN = 30  # keys, failures and outliers per group in the text views without -v


def headline(r: FleetResult) -> str:
    """The sentence a user reads first: hosts, groups, and how many keys the units disagree on."""
    dis = sum(g.disagreements for g in r.groups)
    keys = sum(len(g.keys) for g in r.groups)
    out = (f"{r.hosts} host{'s' if r.hosts != 1 else ''}, {r.files} input{'s' if r.files != 1 else ''} in "
           f"{len(r.groups)} group{'s' if len(r.groups) != 1 else ''} (GPU, driver, CUDA, FlashInfer release); "
           f"units disagree in tile terms on {dis} of {keys} key{'s' if keys != 1 else ''}")
    outliers = sum(g.outliers_total for g in r.groups)
    if outliers:
        out += f"; {outliers} outlier{'s' if outliers != 1 else ''}"
    return out + "."


def _time(c: TileChoice) -> str:
    if c.fastest_us is None:
        return "no time stated"
    if c.slowest_us is None or c.timed < 2 or c.slowest_us == c.fastest_us:
        return f"{c.fastest_us:.4g} us measured"
    return f"{c.fastest_us:.4g}-{c.slowest_us:.4g} us measured over {c.timed} units"


def _named(names: tuple, total: int) -> str:
    more = total - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def key_line(k: KeySummary) -> str:
    top = k.choices[0]
    if k.agree:
        return f"{k.op} {k.problem}: {top.tile}, all {k.units} unit(s) ({_time(top)})"
    parts = [f"{c.tile}: {c.units} of {k.units} ({_time(c)}; {_named(c.named, c.units)})" for c in k.choices]
    return f"{k.op} {k.problem}: DISAGREE: " + "; ".join(parts)


def _group_lines(g: FleetGroup, limit: Optional[int], bullet: str, sub: str) -> List[str]:
    lines = [f"{bullet}{g.label}: {g.hosts} host(s), {g.units} unit(s), {len(g.keys)} key(s), "
             f"{g.disagreements} with more than one tile"]
    keys = sorted(g.keys, key=lambda k: k.agree)  # disagreements first, each part in op / M order
    shown = keys if limit is None else keys[:limit]
    lines += [sub + key_line(k) for k in shown]
    if len(keys) > len(shown):
        lines.append(f"{sub}{len(keys) - len(shown)} more key(s): -v or -f json lists them all")
    outliers = g.outliers if limit is None else g.outliers[:limit]
    for o in outliers:
        lines.append(f"{sub}outlier ({o.kind}): {o.text}" + (f" [{', '.join(o.units)}]" if o.kind == "minority tile" else ""))
    if g.outliers_total > len(outliers):
        lines.append(f"{sub}{g.outliers_total - len(outliers)} more outlier(s): -f json lists the first "
                     f"{len(g.outliers)}")
    fails = g.failures if limit is None else g.failures[:limit]
    for f in fails:
        lines.append(f"{sub}failed: {f.op} {f.runner} {f.tactic} on {f.units} unit(s) ({_named(f.named, f.units)}): {f.reason}")
    if len(g.failures) > len(fails):
        lines.append(f"{sub}{len(g.failures) - len(fails)} more failure(s): -v or -f json lists them all")
    return lines


def render_text(r: FleetResult, *, verbose: bool = False) -> str:
    lines = [f"tiletune inspect --fleet: {headline(r)}", ""]
    lines.append("A unit is one host's file (a rank's file in per-rank layouts); times are measured, as the caches "
                 "state them (FlashInfer 0.7.x writes each entry's time_ms), in microseconds.")
    lines.append("")
    for g in r.groups:
        lines += _group_lines(g, None if verbose else SHOWN, "== ", "  ")
        lines.append("")
    for n in r.notes:
        lines.append(f"note: {n}")
    for p in r.problems:
        lines.append(f"{'problem' if p.loses_data else 'note'}: {p.message}")
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(r: FleetResult, *, verbose: bool = False) -> str:
    from tiletune.formats.markdown import cell

    lines = ["## Fleet", "", cell(headline(r)), "",
             "_A unit is one host's file (a rank's file in per-rank layouts); times are measured, as the caches state "
             "them, in microseconds._", ""]
    for g in r.groups:
        gl = _group_lines(g, None if verbose else SHOWN, "### ", "- ")
        lines += ["### " + cell(gl[0][4:]), ""] + ["- " + cell(x[2:]) for x in gl[1:]] + [""]
    for n in r.notes:
        lines.append(f"- note: {cell(n)}")
    for p in r.problems:
        lines.append(f"- {'problem' if p.loses_data else 'note'}: {cell(p.message)}")
    return "\n".join(lines).rstrip() + "\n"


def to_json(r: FleetResult, *, verbose: bool = False) -> str:
    body = {
        "schema": SCHEMA,
        "summary": {"headline": headline(r), "hosts": r.hosts, "inputs": r.files, "groups": len(r.groups),
                    "disagreements": sum(g.disagreements for g in r.groups),
                    "time_unit": "us, measured (the caches' time_ms)"},
        "groups": [dict(asdict(g), label=g.label) for g in r.groups],
        "notes": list(r.notes),
        "problems": [{"source": p.source, "message": p.message, "loses_data": p.loses_data} for p in r.problems],
    }
    return json.dumps(body, indent=1, default=str) + "\n"
