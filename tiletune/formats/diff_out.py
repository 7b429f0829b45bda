"""Rendering of a `DiffResult` (tiletune diff): a terminal table, GitHub Markdown, and JSON
(schema `tiletune.diff/1`). Pure: result in, string out; nothing is computed here.

Times are measured (from the inputs) and shown in microseconds; a change is called beyond noise
only against the threshold the result carries.
"""

from __future__ import annotations

import json
import textwrap
from typing import Annotated, Any, Literal, Optional

import msgspec
from msgspec import Meta, Struct, structs

from tiletune.analysis.diff import Change, DiffResult, Side, Undetermined, summary_counts
from tiletune.core.records import Problem, to_jsonable
from tiletune.formats.inspect_doc import ConfigOut, ProblemNotesOut, Strict, config_out, problem_notes_out
from tiletune.formats.strict_json import NOTE as STRICT_NOTE

SCHEMA: Literal["tiletune.diff/1"] = "tiletune.diff/1"

_KIND_TEXT = {
    "winner_changed": "winner changed",
    "added": "bucket added",
    "removed": "bucket removed",
    "newly_failing": "newly failing",
    "recovered": "recovered",
}


# --- shared cells ------------------------------------------------------------------------------


def _problem_label(p: Optional[Problem]) -> str:
    if p is None:
        return "any bucket"
    if p.m_range is not None:
        lo, hi = p.m_range
        m = f"M {lo}-{hi}" if lo != hi else f"M {lo}"
    else:
        m = f"M {p.m}"
    s = f"{m}, N {p.n}, K {p.k}"
    if p.batch != 1:
        s += f", batch {p.batch}"
    if p.experts is not None:
        s += f", {p.experts} experts"
    if p.top_k is not None:
        s += f", top-{p.top_k}"
    return s


def _side_label(s: Optional[Side]) -> str:
    if s is None:
        return "-"
    if s.config is not None:
        what = s.config.label()
    else:
        what = "non-CUTLASS tactic" if s.not_cutlass else "(not decoded)"
    text = f"{what} (tactic {_tactic(s.tactic)}"
    if s.flashinfer_version:
        text += f", FlashInfer {s.flashinfer_version}"
    text += ")"
    if s.time_ms is not None:
        text += f" {s.time_ms * 1000:.1f} us measured"
    if s.margin is not None:
        text += f", won by {s.margin * 100:.1f}%" + (" (within noise)" if s.won_by_noise else "")
    return text


def _tactic(t: Any) -> str:
    return json.dumps(to_jsonable(t)) if not isinstance(t, (int, str)) else str(t)


def _time_cell(c: Change) -> str:
    if c.time_change is None:
        return ""
    verdict = "beyond noise" if c.beyond_noise else "within noise"
    if c.noise is None:
        return f"{c.time_change * 100:+.1f} %"
    basis = " from the samples' spread" if c.noise_basis == "samples" else ""
    return f"{c.time_change * 100:+.1f} % ({verdict}, threshold {c.noise * 100:.0f} %{basis})"


def _where(c: Change) -> str:
    if c.group is not None:  # the sides were matched server by server: name the server
        return f"{c.group}: " + _where(structs.replace(c, group=None))
    if c.problem is not None:
        return _problem_label(c.problem)
    if c.problems:
        shown = "; ".join(_problem_label(p) for p in c.problems[:3])
        more = len(c.problems) - 3
        return shown + (f"; and {more} more" if more > 0 else "")
    return "any bucket"


def _undetermined_where(u: Undetermined) -> str:
    if u.kind == "failure":
        shown = "; ".join(_problem_label(p) for p in u.problems[:3]) or "any bucket"
        return f"failure ({shown}{'; ...' if len(u.problems) > 3 else ''})"
    return _problem_label(u.problem)


def _headline(result: DiffResult) -> str:
    counts = summary_counts(result)
    if not counts and not result.undetermined:
        head = f"no entry differs ({result.unchanged} matched bucket(s) with the same winner)"
    else:
        parts = [f"{n} {_KIND_TEXT[k]}" for k, n in counts]
        if result.undetermined:
            parts.append(f"{len(result.undetermined)} undetermined")
        head = ", ".join(parts) + f"; {result.unchanged} bucket(s) unchanged"
    differs = [e.field for e in result.environment if not e.one_sided]
    unknown = [e.field for e in result.environment if e.one_sided]
    if differs:
        head += "; environment differs: " + ", ".join(differs)
    if unknown:
        head += "; stated on one side only: " + ", ".join(unknown)
    return head


def _env_value(values: tuple[str, ...]) -> str:
    return ", ".join(values) if values else "(not stated)"


def _env_note(e: Any) -> str:
    """Why a field stated on one side only is no difference, and what states it."""
    if not e.one_sided:
        return ""
    side = "OLD" if not e.before else "NEW"
    flag = f"; {e.settled_by} states it" if e.settled_by else ""
    return f"undetermined: {side} does not state it{flag}"


# --- table -------------------------------------------------------------------------------------


def _fit(lines: list[str], width: Optional[int]) -> list[str]:
    """Each line wrapped at spaces to `width` (None: as they are), continued 4 columns further in;
    no word is cut (a path longer than the width stays whole on its line)."""
    if width is None:
        return lines
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out += textwrap.wrap(line.strip(), width, initial_indent=indent, subsequent_indent=indent + "    ",
                             break_long_words=False, break_on_hyphens=False)
    return out


def format_table(result: DiffResult, width: Optional[int] = None) -> str:
    """The terminal view, laid out for `width` columns (the CLI passes COLUMNS or the terminal's)."""
    out = [f"tiletune diff: {_headline(result)}", ""]
    out.append("OLD: " + ", ".join(result.old_sources))
    out.append("NEW: " + ", ".join(result.new_sources))
    if result.environment:
        out += ["", "Environment"]
        for e in result.environment:
            note = _env_note(e)
            out.append(f"  {e.field}: {_env_value(e.before)} -> {_env_value(e.after)}" + (f" ({note})" if note else ""))
    if result.changes:
        out += ["", "Changes"]
        for c in result.changes:
            out.append(f"  {_KIND_TEXT[c.kind]}: {c.arch or 'arch ?'} {c.op} {c.runner}, {_where(c)}")
            if c.kind in ("winner_changed", "removed", "recovered"):
                out.append(f"      before: {_side_label(c.before)}")
            if c.kind in ("winner_changed", "added", "newly_failing"):
                out.append(f"      after:  {_side_label(c.after)}")
            if c.time_change is not None:
                out.append(f"      time:   {_time_cell(c)}")
            if c.errors:
                out.append(f"      error:  {c.errors[0]}")
    if result.undetermined:
        out += ["", "Undetermined (not counted as changes)"]
        for u in result.undetermined:
            out.append(f"  {u.arch or 'arch ?'} {u.op} {u.runner}, {_undetermined_where(u)}: {u.reason}")
    for n in result.notes:
        out += ["", f"note: {n}"]
    out += ["", "Times are measured by the inputs (µs); tiles are decoded from each side's own FlashInfer release."]
    return "\n".join(_fit(out, width)) + "\n"


# --- markdown ----------------------------------------------------------------------------------


def format_markdown(result: DiffResult) -> str:
    from tiletune.formats.markdown import cell, table

    out = ["## tiletune diff", "", cell(_headline(result)) + ".", ""]
    out.append("OLD: " + ", ".join(f"`{cell(s)}`" for s in result.old_sources) + "  ")
    out.append("NEW: " + ", ".join(f"`{cell(s)}`" for s in result.new_sources))
    if result.environment:
        out += ["", "### Environment", ""]
        out.append(table(["field", "OLD", "NEW", "note"],
                         [[e.field, _env_value(e.before), _env_value(e.after), _env_note(e)] for e in result.environment]))
    if result.changes:
        out += ["", "### Changes", ""]
        rows = [[_KIND_TEXT[c.kind], c.arch or "?", c.op, c.runner, _where(c), _side_label(c.before), _side_label(c.after),
                 _time_cell(c)] for c in result.changes]
        out.append(table(["change", "arch", "op", "runner", "bucket", "before", "after", "time (measured)"], rows))
    if result.undetermined:
        out += ["", "### Undetermined (not counted as changes)", ""]
        out.append(table(["arch", "op", "bucket", "why"], [[u.arch or "?", u.op, _undetermined_where(u), u.reason] for u in result.undetermined]))
    for n in result.notes:
        out += ["", f"Note: {cell(n)}"]
    return "\n".join(out) + "\n"


# --- json --------------------------------------------------------------------------------------


class SideOut(Struct):
    """One side's winner (or failure) in tile terms."""

    tactic: Any
    config: Optional[ConfigOut]
    flashinfer_version: Optional[str]
    time_us: Annotated[Optional[float], Meta(description="microseconds, measured by the input")]
    time_basis: Optional[Literal["measured"]]
    not_a_cutlass_tactic: bool
    margin: Annotated[Optional[float], Meta(description="(runner-up time - winner time) / winner time, measured")]
    won_by_noise: Optional[bool]
    spread: Optional[float]


class ChangeOut(Struct):
    kind: Literal["winner_changed", "added", "removed", "newly_failing", "recovered"]
    arch: Optional[str]
    op: str
    runner: str
    problem: Optional[ProblemNotesOut]
    problems: list[ProblemNotesOut]
    before: Optional[SideOut]
    after: Optional[SideOut]
    time_change: Annotated[Optional[float], Meta(description="(new - old) / old of the winners' measured times")]
    noise: Optional[float]
    noise_basis: Optional[str]
    beyond_noise: Optional[bool]
    errors: list[str]
    group: Optional[str]


class UndeterminedOut(Struct):
    """What cannot be compared (another release on each side and no decoded config on one)."""

    arch: Optional[str]
    op: str
    runner: str
    problem: Optional[ProblemNotesOut]
    before: SideOut
    after: SideOut
    reason: str
    kind: str
    problems: list[ProblemNotesOut]


class EnvironmentValues(Struct):
    before: list[str]
    after: list[str]


class DiffDoc(Struct):
    """What `tiletune diff --format json` prints."""

    schema: Literal["tiletune.diff/1"]
    changes: list[ChangeOut]
    undetermined: list[UndeterminedOut]
    environment: dict[str, EnvironmentValues]
    unchanged: int
    old_sources: list[str]
    new_sources: list[str]
    notes: list[str]


def _side_out(s: Optional[Side], strict: Strict) -> Optional[SideOut]:
    if s is None:
        return None
    num = strict.num
    return SideOut(strict.value(s.tactic), config_out(s.config), s.flashinfer_version,
                   None if s.time_ms is None else num(s.time_ms * 1000.0), None if s.time_ms is None else "measured",
                   s.not_cutlass, num(s.margin), s.won_by_noise, num(s.spread))


def diff_doc(result: DiffResult) -> DiffDoc:
    strict = Strict()

    def problems(ps: Any) -> list[ProblemNotesOut]:
        return [po for po in (problem_notes_out(p, strict) for p in ps) if po is not None]

    changes = [ChangeOut(c.kind, c.arch, c.op, c.runner, problem_notes_out(c.problem, strict), problems(c.problems),  # type: ignore[arg-type]
                         _side_out(c.before, strict), _side_out(c.after, strict), strict.num(c.time_change),
                         strict.num(c.noise), c.noise_basis, c.beyond_noise, list(c.errors), c.group)
               for c in result.changes]
    undetermined = []
    for u in result.undetermined:
        before, after = _side_out(u.before, strict), _side_out(u.after, strict)
        assert before is not None and after is not None
        undetermined.append(UndeterminedOut(u.arch, u.op, u.runner, problem_notes_out(u.problem, strict), before, after,
                                            u.reason, u.kind, problems(u.problems)))
    environment = {e.field: EnvironmentValues(list(e.before), list(e.after)) for e in result.environment}
    return DiffDoc(SCHEMA, changes, undetermined, environment, result.unchanged, list(result.old_sources),
                   list(result.new_sources), list(result.notes) + ([STRICT_NOTE] if strict.replaced else []))


def diff_dict(result: DiffResult) -> dict[str, Any]:
    out: dict[str, Any] = _json_values(diff_doc(result))
    return out


def format_json(result: DiffResult) -> str:
    return msgspec.json.format(msgspec.json.encode(diff_doc(result)), indent=2).decode() + "\n"


def _json_values(doc: Any) -> Any:
    """An output object as the plain JSON values it encodes to (lists, dicts, numbers, strings)."""
    return msgspec.json.decode(msgspec.json.encode(doc))
