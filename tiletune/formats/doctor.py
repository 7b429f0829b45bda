"""`tiletune doctor`'s report as text or JSON (schema tiletune.doctor/1)."""

from __future__ import annotations

import json
from typing import Optional

import msgspec

from tiletune.analysis.doctor import DoctorReport
from tiletune.formats.fit import prose, wrap_prose

SCHEMA = "tiletune.doctor/1"


def to_json(report: DoctorReport, width: Optional[int] = None) -> str:
    return json.dumps({"schema": SCHEMA, **msgspec.to_builtins(report)}, indent=2)


def render_text(report: DoctorReport, width: Optional[int] = None) -> str:
    """The report as text; `width`: the terminal columns it fits (long values and notes wrap at
    spaces under their column, never inside a word); None: one line per item, however long."""
    item_width = max(len(c.item) for c in report.checks) + 2
    # a wrapped value continues under the value column while that leaves room for a few words
    hang = " " * (item_width + 11) if width is None or width - item_width - 11 >= 24 else "    "
    lines = []
    for c in report.checks:
        state = "found    " if c.found else "not found"
        text = " ".join(x for x in (c.value, f"({c.note})" if c.note else None) if x)
        line = f"{c.item:<{item_width}}{state}  {text}".rstrip()
        # a word too long for the value column (a path) starts a line of its own further left
        fits = width is None or max((len(w) for w in text.split()), default=0) <= width - len(hang)
        lines += [line] if width is None else wrap_prose(line, width, hang=hang if fits else "    ")
    return "\n".join(lines + [_rest(report, width)])


def _rest(report: DoctorReport, width: Optional[int]) -> str:
    """What follows the items: workspaces, FlashInfer's cache metadata, caches, variables."""
    lines: list[str] = []
    for w in report.workspaces:
        lines.append(f"  workspace {w.path}: FlashInfer {w.flashinfer_version or '?'}, arch {w.arch or w.arch_dir}, "
                     f"{len(w.modules_built)} module(s) built"
                     + (f", {len(w.modules_not_built)} not built ({', '.join(w.modules_not_built[:5])})" if w.modules_not_built else "")
                     + (", flashinfer_jit.log" if w.has_log else ""))
    fm = report.flashinfer_metadata
    if fm is not None:
        how = (f"FlashInfer {fm.release}'s own _collect_metadata()" if fm.source == "flashinfer"
               else "inferred without FlashInfer")
        lines.append(f"FlashInfer cache metadata here ({how}; `tiletune check --env` compares caches with it):")
        basis = dict(fm.basis)
        for k, v in fm.values:
            lines.append(f"  {k} = {v if v is not None else '(not known)'}" + (f"  [{basis[k]}]" if fm.source != "flashinfer" and k in basis else ""))
        if fm.note:
            lines.append(f"  ({fm.note})")
    for p in report.caches:
        lines.append(f"  cache {p}")
    if not report.caches and report.searched:
        lines.append("  searched: " + "; ".join(report.searched))
    for tree in report.cutlass[1:]:
        lines.append(f"  also {tree}")
    lines.append("")
    if report.variables:
        lines.append("Environment variables (FLASHINFER_*, TLLM_*, VLLM_*, SGLANG_*, TILETUNE_*, CUDA_*)")
        lines += [f"  {name}={value}" for name, value in report.variables]
    else:
        lines.append("Environment variables: no FLASHINFER_*, TLLM_*, VLLM_*, SGLANG_*, TILETUNE_* or CUDA_* variable set")
    text = "\n".join(lines) + "\n"
    return text if width is None else prose(text, width)


def render_markdown(report: DoctorReport, width: Optional[int] = None) -> str:
    """For a ticket (as `flashinfer collect-env` is): the checks as a table, then the variables."""
    from tiletune.formats.markdown import cell, table

    out = ["## tiletune doctor", ""]
    rows = [[c.item, "found" if c.found else "not found", " ".join(x for x in (c.value, f"({c.note})" if c.note else None) if x)]
            for c in report.checks]
    out += [table(["item", "state", "value"], rows), ""]
    if report.workspaces:
        out += ["### FlashInfer JIT workspaces", ""]
        out += [f"- `{cell(w.path)}`: FlashInfer {cell(w.flashinfer_version or '?')}, arch {cell(w.arch or w.arch_dir)}, "
                f"{len(w.modules_built)} module(s) built, {len(w.modules_not_built)} not built" for w in report.workspaces]
        out.append("")
    if report.cutlass:
        out += ["### CUTLASS headers", "", *(f"- {cell(c)}" for c in report.cutlass), ""]
    out += ["### Environment variables", ""]
    if report.variables:
        out += ["```", *(f"{name}={value}" for name, value in report.variables), "```"]
    else:
        out.append("_no FLASHINFER\\_\\*, TLLM\\_\\*, VLLM\\_\\*, SGLANG\\_\\*, TILETUNE\\_\\* or CUDA\\_\\* variable set_")
    return "\n".join(out) + "\n"
