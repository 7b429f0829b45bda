"""`tiletune report`: a bug-ticket report written to stdout or beside `-o FILE` with its pictures.

The command's body: the inspect result, the files it becomes (`render_files`: the clock, the host
and user names to redact, which pictures), and their writing. The Markdown and JSON themselves
are formats/report.py's; this module decides what is written where.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

from tiletune.analysis.results import InspectResult
from tiletune.cli.commands.inspect import inspected
from tiletune.cli.output import FailOn, gate, refuse_outputs_over_inputs, report_problems, say, write_stdout
from tiletune.formats.redact import Redactor, local_identity
from tiletune.formats.report import ReportContext, format_report, iter_report_json


def report_status(paths: Optional[List[Path]], *, output: Optional[Path], as_json: bool, redact: bool, full: bool,
                  gpu: Optional[str], plot: bool, arch: Optional[str], flashinfer_version: Optional[str],
                  fail_on: Optional[FailOn], only_op: Optional[List[str]] = None, only_rank: Optional[List[str]] = None,
                  runtime_m: Union[None, str, Sequence[str]] = None, uncalibrated: bool = False, baseline: Optional[Path] = None) -> int:
    """`tiletune report`'s body (typer_app.report_command holds its options' help): write the report
    and its pictures, report the problems, return the exit status. --op / --rank narrow the entries
    as inspect's do; --m adds which tile runs at those runtime M."""
    from tiletune.analysis.entry_filter import EntryFilter
    from tiletune.cli.commands.inspect import runtime_ms  # (--m as inspect parses it)
    from tiletune.cli.output import load_baseline
    from tiletune.core.fileio import write_atomic
    from tiletune.formats.safe_text import terminal_safe

    refuse_outputs_over_inputs([("--output", output)], [*(paths or []), *((baseline,) if baseline else ())])
    accepted = load_baseline(baseline)
    ms = runtime_ms(runtime_m)
    result = inspected(paths, arch, flashinfer_version, gpu, EntryFilter.of(only_op, None, only_rank, None))
    notices: list[str] = []
    files = render_files(
        result,
        output=output,
        as_json=as_json,
        plot=plot,
        redact_names=redact,
        paths=[str(p) for p in (paths or [])],
        gpu=gpu,
        options=[*(("--arch", arch) if arch else ()), *(("--flashinfer-version", flashinfer_version) if flashinfer_version else ())],
        full=full,
        notices=notices,
        uncalibrated=uncalibrated,
        runtime_m=ms,
    )
    for n in notices:
        say(f"tiletune: note: {n}")
    refuse_outputs_over_inputs([("--output", p) for p in files if p is not None], paths or [], result)
    for path, data in files.items():
        if isinstance(data, bytes) and path is not None:  # a picture (there are some with -o only)
            write_atomic(path, data)
            continue
        # the report's text, whole (Markdown) or in pieces written as they are made (JSON)
        chunks = (terminal_safe(chunk) for chunk in ([data] if isinstance(data, str) else data))
        if path is None:
            write_stdout(chunks)
        else:
            write_atomic(path, chunks)
    if output is not None:
        extra = len(files) - 1
        say(f"tiletune: wrote {output}" + (f" and {extra} picture(s) beside it" if extra else ""))
    report_problems(result)
    return gate(result, fail_on, baseline=accepted)


def render_files(
    result: InspectResult,
    *,
    output: Optional[Path],
    as_json: bool,
    plot: bool,
    redact_names: bool,
    paths: Sequence[str],
    gpu: Optional[str],
    generated_at: Optional[str] = None,
    options: Sequence[str] = (),
    full: bool = False,
    notices: Optional[list] = None,
    uncalibrated: bool = False,
    runtime_m: Sequence[int] = (),
) -> dict[Optional[Path], Any]:
    """Everything `tiletune report` writes: {report path (None = stdout): text (Markdown) or an iterator
    of text pieces (JSON), PNG path: bytes}.

    Pictures go beside the report as `<stem>-roofline-<arch>-<op>.png` and are linked by that
    relative name; without `output` there is nowhere to put them, and the report says so. What is
    for the user and not for the ticket (how to install matplotlib) is appended to `notices`, for
    stderr. `redact_names`: directories, user and host names replaced (see formats.redact).
    """
    import datetime

    from tiletune.formats import roofline

    stamp = generated_at if generated_at is not None else datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    # one redaction for every channel (the Markdown or JSON, every picture's labels and titles), applied
    # to each text before it is escaped or drawn; its numbering (<dir1>, ...) is shared by them all
    redactor: Optional[Redactor] = None
    if redact_names:
        hosts, users, home = local_identity()
        known = [*paths, *(src for src, _kind in result.sources), *(p.source for p in result.problems)]
        redactor = Redactor(known, host_names=hosts, user_names=users, home=home,
                            aliases=[(g.label, g.name) for g in result.source_groups])
    label = redactor if redactor is not None else str
    files: dict[Optional[Path], Any] = {}
    plots: list[tuple[str, str, str]] = []
    note: Optional[str] = None
    data = roofline.roofline_data(result, uncalibrated)
    if not plot:
        note = "Roofline pictures skipped (--no-plot)."
    elif output is None:
        note = "Roofline pictures are written only with -o FILE (they go beside the report)."
    elif not data:
        note = "No roofline picture: no chosen tile has model numbers (nothing decoded, or the model could not run)."
    elif not roofline.matplotlib_available():
        note = "No roofline picture (matplotlib is not installed where the report was made)."
        if notices is not None:
            notices.append("roofline pictures need matplotlib: pip install 'tiletune[plot]'")
    else:
        skipped = []
        for p in data:
            why = roofline.unplottable(p)
            if why is not None:
                skipped.append(why)
                continue
            png = roofline.render_png(p, text=label)
            if png is None:
                continue
            name = f"{output.stem}-{p.filename_stem}.png"
            files[output.parent / name] = png
            plots.append((p.arch, p.op, name))
        if skipped:
            note = "Roofline picture(s) not drawn: " + "; ".join(skipped) + "."
    tile_map_name = None
    if plot and output is not None and roofline.matplotlib_available():
        from tiletune.formats.glance import tile_map_png

        png = tile_map_png(result.overview, text=label)
        if png is not None:
            tile_map_name = f"{output.stem}-tilemap.png"
            files[output.parent / tile_map_name] = png
    ctx = ReportContext(
        paths=tuple(paths),
        generated_at=stamp,
        plots=tuple(plots),
        plot_note=note,
        gpu=gpu,
        output_name=output.name if output is not None else "report.md",
        options=tuple(options),
        tile_map_png=tile_map_name,
        uncalibrated=uncalibrated,
        runtime_m=tuple(runtime_m),
    )
    # JSON as pieces made while they are written (a big cache's report is never one tree or one string)
    text = (iter_report_json(result, ctx, redact=redactor) if as_json
            else format_report(result, ctx, full=full, redact=redactor))
    report: dict[Optional[Path], Any] = {output: text}
    report.update(files)
    return report
