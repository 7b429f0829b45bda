"""`tiletune diff OLD NEW`: both sides inspected, compared in tile terms, rendered; the exit status
says whether anything differs (or, with --fail-on, what NEW holds)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from tiletune.cli.commands.inspect import inspected
from tiletune.cli.output import FailOn, OutputFormat, emit, gate, refuse_outputs_over_inputs, report_problems


def diff_status(old: Path, new: Path, *, old_also: Sequence[Path], new_also: Sequence[Path], fmt: OutputFormat,
                arch: Optional[str], old_version: Optional[str], new_version: Optional[str], output: Optional[Path],
                fail_on: Optional[FailOn], baseline: Optional[Path] = None) -> int:
    """`tiletune diff`'s body (typer_app.diff_command holds its options' help)."""
    from tiletune.analysis.diff import diff, side_of
    from tiletune.analysis.results import InspectResult
    from tiletune.cli.output import load_baseline
    from tiletune.formats import render

    named = [old, new, *old_also, *new_also]
    refuse_outputs_over_inputs([("--output", output)], [*named, *((baseline,) if baseline else ())])
    accepted = load_baseline(baseline)
    # OLD is read, checked and reduced to what the comparison needs before NEW is read: one side's
    # whole result in memory at a time (docs/bounded_memory.md)
    whole = inspected([old, *old_also], arch, old_version, None, keep=False)
    refuse_outputs_over_inputs([("--output", output)], [], whole)
    old_side = side_of(whole)
    before = InspectResult((), (), (), (), whole.problems, whole.sources)  # (its problems and exit status)
    del whole
    after = inspected([new, *new_also], arch, new_version, None)
    refuse_outputs_over_inputs([("--output", output)], [], after)
    result = diff(old_side, after)
    from tiletune.cli.commands.inspect import terminal_width

    view = {"width": terminal_width(output)} if fmt is OutputFormat.table else {}
    emit(render("diff", result, fmt.value, **view), output, json=fmt is OutputFormat.json)
    report_problems(before)
    report_problems(after)
    if before.exit_code or after.exit_code:
        return 2
    if fail_on is not None:  # a deployment gate on the new warm-up: its findings, not the changes
        return gate(after, fail_on, side="NEW: ", baseline=accepted)
    return 1 if result.differs else 0
