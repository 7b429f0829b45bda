"""`tiletune retry`'s summary as a table, Markdown (for a ticket) or JSON (schema tiletune.retry/1)."""

from __future__ import annotations

import json
from typing import Any, List, NamedTuple, Optional

from tiletune.core.ledger_format import Diagnosis
from tiletune.formats.fit import fit_table, prose
from tiletune.tuner import classify
from tiletune.tuner.engine import Attempt, RetryTarget
from tiletune.tuner.ledger import attempt_to_json
from tiletune.tuner.orchestrator import RetryRun


class RetrySummary(NamedTuple):
    """What one retry produced: the run (None when nothing was attempted), the notes to print, and
    with --no-run the targets it would have tried."""

    run: Optional[RetryRun]
    notes: List[str]
    planned: List[RetryTarget] = []


PLANNED_HEADERS = ["op", "runner", "tactic", "b x M x N x K", "tile", "from", "previous error"]


def _planned_rows(targets: List[RetryTarget]) -> List[List[Any]]:
    from tiletune.core.error_text import short_error

    return [[t.op, t.runner, t.tactic, _shape(t), t.config.label() if t.config is not None else "(no decoded tile)",
             t.source, short_error(t.previous_error, 60) if t.previous_error else ""] for t in targets]


def _planned_dicts(targets: List[RetryTarget]) -> List[dict]:
    from tiletune.core.records import to_jsonable

    return [{"key": t.key, "op": t.op, "runner": t.runner, "tactic": to_jsonable(t.tactic), "arch": t.arch,
             "flashinfer_version": t.flashinfer_version, "shape": _shape(t),
             "tile": t.config.label() if t.config is not None else None, "source": t.source,
             "previous_error": t.previous_error} for t in targets]


def _fmt_time(t: Optional[float]) -> str:
    return "" if t is None else f"{t * 1e6:.1f} us"


def render_json(summary: RetrySummary, width: Optional[int] = None) -> str:
    """Schema tiletune.retry/1: each attempt as the ledger writes it (tuner.ledger.attempt_to_json);
    with --no-run, `planned`: the targets it would try."""
    run, notes = summary.run, summary.notes
    attempts: List[Attempt] = run.attempts if run else []
    return json.dumps(
        {
            "schema": "tiletune.retry/1",
            "ledger": str(run.ledger) if run else None,
            "env_id": run.env_id if run else None,
            "error_bounds": classify.ERROR_BOUNDS,
            "attempts": [attempt_to_json(a, env_id=run.env_id) for a in attempts] if run else [],
            "skipped": [t.key for t in run.skipped] if run else [],
            "planned": _planned_dicts(summary.planned),
            "notes": notes,
        },
        indent=2,
    )


HEADERS = ["op", "runner", "tactic", "b x M x N x K", "result", "time (measured, median)", "TFLOP/s",
           "rel. error (bound)", "why"]


def _rows(attempts: List[Attempt]) -> List[List[Any]]:
    rows = []
    for a in attempts:
        bound = f" (<= {a.error_bound:.1e})" if a.error_bound is not None and a.rel_error is not None else ""
        rows.append([
            a.target.op, a.target.runner, a.target.tactic,
            _shape(a.target), a.diagnosis.value, _fmt_time(a.time_s),
            "" if a.tflops is None else f"{a.tflops:.1f}",
            "" if a.rel_error is None else f"{a.rel_error:.2e}{bound}",
            a.message if not a.passed else "",
        ])
    return rows


def _tally(run: RetryRun) -> str:
    passed = sum(1 for a in run.attempts if a.passed)
    not_run = sum(1 for a in run.attempts if a.diagnosis is Diagnosis.ENGINE_ERROR)  # never started: not a failure
    return (f"{passed} passed, {len(run.attempts) - passed - not_run} failed"
            + (f", {not_run} not run (engine_error: see why)" if not_run else "") + f"; ledger: {run.ledger}")


def _skipped(run: Optional[RetryRun]) -> List[str]:
    if run and run.skipped:
        return [f"{len(run.skipped)} already finished in this environment with the same options (see the ledger; --no-resume to redo)"]
    return []


_ERROR_NOTE = ("Relative error = ||out - ref|| / ||ref|| against a float32 reference from the dequantized inputs; "
               "bounds: " + ", ".join(f"{k} {v:.2g}" for k, v in classify.ERROR_BOUNDS.items()))


def render_table(summary: RetrySummary, width: Optional[int] = None) -> str:
    """The summary printed on stdout: one row per attempt made now (measurements are labelled measured);
    with --no-run, one row per target it would try. `width`: the terminal columns to fit (text
    wrapped at spaces, then the least needed columns left out, with a note); None: as wide as it is."""
    run, notes = summary.run, summary.notes
    out = []
    left_out: List[str] = []
    if run is not None and run.attempts:
        text, note = fit_table(HEADERS, _rows(run.attempts), width, wrap=("why", "rel. error (bound)", "time (measured, median)"),
                               drops=("runner", "b x M x N x K"), see=_SEE)
        out.append(text)
        left_out += [note] if note else []
        out.append("\n" + _prose(_tally(run), width))
    if summary.planned:
        out.append(f"Would try ({len(summary.planned)} target(s); --no-run: nothing attempted)")
        text, note = fit_table(PLANNED_HEADERS, _planned_rows(summary.planned), width, wrap=("previous error", "tile"),
                               drops=("runner", "from", "b x M x N x K"), see=_SEE, maxcolwidths=[None] * 6 + [40])
        out.append(text)
        left_out += [note] if note else []
        out.append("")
    out += [_prose(line, width) for line in [*_skipped(run), _ERROR_NOTE, *left_out, *notes]]
    return "\n".join(out)


_SEE = "a wider COLUMNS, -f markdown or -f json"


def _prose(text: str, width: Optional[int]) -> str:
    return text if width is None else prose(text, width)


def render_markdown(summary: RetrySummary, width: Optional[int] = None) -> str:
    """The summary as GitHub Markdown (a ticket): a table of the attempts, then the notes as a list."""
    from tiletune.formats.markdown import cell

    run, notes = summary.run, summary.notes
    out = ["## tiletune retry", ""]
    if run is not None and run.attempts:
        out.append("| " + " | ".join(HEADERS) + " |")
        out.append("|" + "---|" * len(HEADERS))
        out += ["| " + " | ".join(cell(str(c)) for c in row) + " |" for row in _rows(run.attempts)]
        out += ["", cell(_tally(run))]
    else:
        out.append("No attempt was made in this run.")
    if summary.planned:
        out += ["", f"### Would try ({len(summary.planned)} target(s); --no-run: nothing attempted)", ""]
        out.append("| " + " | ".join(PLANNED_HEADERS) + " |")
        out.append("|" + "---|" * len(PLANNED_HEADERS))
        out += ["| " + " | ".join(cell(str(c)) for c in row) + " |" for row in _planned_rows(summary.planned)]
    out += ["", *(f"- {cell(line)}" for line in [*_skipped(run), _ERROR_NOTE, *notes])]
    return "\n".join(out)


def _shape(t: RetryTarget) -> str:
    p = t.problem
    return "?" if p is None else f"{p.batch}x{p.m}x{p.n}x{p.k}"
