"""The typer CLI: argument parsing, output routing and exit codes only.

Every command delegates to a library function the tests can call directly. `TiletuneError`s
are caught here alone and printed as one line ("tiletune: <message>") with exit status 2;
anything else is a bug, and is still printed as one line naming the inputs, exit status 2.
Reports go to stdout (or `--output`, written atomically); progress and summaries to stderr.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations at each
# start, and as strings it compiles and evaluates each twice (~40 ms for these eight commands);
# evaluated once at import they cost ~5 ms. tests/test_cli_annotations.py pins the result.
import enum
import gc
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Callable, Iterable, Iterator, List, Optional, Sequence, TypeVar, Union

import click
import typer

from tiletune import __version__
from tiletune.errors import TiletuneError

_APP_SETTINGS: dict = dict(
    name="tiletune",
    help="See which CUTLASS tiles FlashInfer's autotuner picked, which failed and why; model them; re-try them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # click's plain help: rendering it with rich imports ~1 s of modules first
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,  # --install-completion / --show-completion (typer: bash, zsh, fish, powershell)
)
app = typer.Typer(**_APP_SETTINGS)

T = TypeVar("T")


class OutputFormat(str, enum.Enum):
    """Output formats shared by inspect / model / report."""

    table = "table"
    json = "json"
    markdown = "markdown"


def _guard(fn: Callable[[], T], inputs: Sequence[object] = ()) -> T:
    """Run `fn`; turn a TiletuneError into its one-line message and exit code, no traceback.

    The last resort: any other exception (a bug an input provoked) becomes one line naming the
    inputs and exit status 2. Readers already turn one input's surprise into a problem of that
    input, so by then everything else has been read; this catches what is left.
    """
    try:
        return fn()
    except TiletuneError as e:
        _say(f"tiletune: {e}")
        raise typer.Exit(code=e.exit_code) from None
    except (click.exceptions.Exit, click.exceptions.Abort, click.exceptions.ClickException):
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for what an input did
        from tiletune.errors import unexpected

        named = ", ".join(str(i) for i in inputs) or "the default inputs"
        _say(f"tiletune: {_clip(named)}: {unexpected(e)}")
        raise typer.Exit(code=2) from None


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _say(message: str) -> None:
    """One line to stderr, without the terminal escapes an input may have put in it."""
    from tiletune.formats.safe_text import terminal_safe

    typer.echo(terminal_safe(message), err=True)


def _emit(text: Union[str, Iterable[str]], output: Optional[Path], *, json: bool = False, colour: bool = False) -> None:
    """Print `text` (or text chunks, written as they come) to stdout, or write it atomically to
    `output`; a newline is added when the text does not end with one. Terminal escapes and control
    characters from the inputs are removed from every chunk (a sequence cut between two chunks
    loses its ESC, which leaves harmless text)."""
    from tiletune.formats.safe_text import json_safe, terminal_safe

    def safe(chunk: str) -> str:
        return json_safe(chunk) if json else terminal_safe(chunk, keep_colours=colour)

    chunks = map(safe, _newline_ended([text] if isinstance(text, str) else text))
    if output is None:
        _write_stdout(chunks)
        return
    from tiletune.fileio import write_atomic

    write_atomic(output, chunks)


def _write_stdout(chunks: Iterable[str]) -> None:
    """Write to stdout; a failed write (`> /dev/full`) is one line and exit 2, not a traceback.
    A closed pipe (`| head`) is the reader's choice and not reported."""
    try:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        _detach_stdout()
    except OSError as e:
        _detach_stdout()
        from tiletune.errors import OutputError

        raise OutputError(f"stdout: cannot write it ({e.strerror or e})") from None


def _detach_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _refuse_outputs_over_inputs(outputs: Iterable[tuple], named: Iterable[Path], result=None) -> None:  # noqa: ANN001
    """No output option may name an input: the named ones, and the files a result was read from."""
    from tiletune.fileio import refuse_outputs_over_inputs

    read = [path for path, _ in result.sources] if result is not None else []
    refuse_outputs_over_inputs(outputs, [*named, *read])


def _newline_ended(chunks: Iterable[str]) -> Iterator[str]:
    last = ""
    for chunk in chunks:
        yield chunk
        last = chunk or last
    if not last.endswith("\n"):
        yield "\n"


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Run one command with the cyclic garbage collector paused (restored afterwards).

    Why: inspect keeps ~10 container objects per entry alive until it has printed them, so the
    collector's periodic full scans re-walk the whole growing heap (about 1 s of a 50,000-entry
    run) while finding nothing: records, entries, analyses and rows form no reference cycles. On
    the way out the objects still alive are frozen (`gc.freeze`): freed by reference counting
    when dropped, but never rescanned; re-enabling without it costs one full scan of them all.
    A process policy, so it lives here and not in the library.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def _inspected(paths: Optional[List[Path]], arch: Optional[str], flashinfer_version: Optional[str], gpu: Optional[str],
               select: Optional[Callable[..., bool]] = None):
    """The inspect result for these inputs (what inspect and report start from), kept until the
    process exits (see `main`)."""
    from tiletune.pipeline import inspect

    result = inspect(list(paths or []), _inspect_context(arch, flashinfer_version), gpu=gpu, select=select)
    _keep_until_exit(result)
    return result


def _run_batch(run: Callable[[], int], inputs: Sequence[object]) -> None:
    """Run an inspecting command's body with the collector paused; exit with the status it returns."""
    with _gc_paused():
        code = _guard(run, inputs)
    if code:
        raise typer.Exit(code=code)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tiletune {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    """tiletune: inspect, explain and re-try FlashInfer's CUTLASS autotuner tiles."""


# --- commands -------------------------------------------------------------------------------
# Each command below is owned by the module it calls; keep the bodies thin.


def _inspect_context(arch: Optional[str], flashinfer_version: Optional[str]):  # -> ReadContext
    """--arch / --flashinfer-version checked and normalised (bad values: one line, exit 2)."""
    from tiletune.archs import KNOWN_ARCHS, normalize_arch
    from tiletune.errors import UsageError
    from tiletune.readers.interface import ReadContext

    norm = None
    if arch is not None:
        norm = normalize_arch(arch)
        if norm is None:
            raise UsageError(f"--arch {arch!r} is not an architecture; use one of {', '.join(KNOWN_ARCHS)}")
    if flashinfer_version is not None:
        from packaging.version import InvalidVersion, Version

        try:
            Version(flashinfer_version)
        except InvalidVersion:
            raise UsageError(f"--flashinfer-version {flashinfer_version!r} is not a version (e.g. 0.6.14)") from None
    return ReadContext(arch=norm, flashinfer_version=flashinfer_version)


def _report_problems(result, to_stderr: bool = True) -> None:  # noqa: ANN001 - InspectResult
    """Problems go to stderr, so `> out.txt` still shows them; skipped only when stdout (which
    already shows them in the table) is the very terminal stderr is."""
    if to_stderr and not _stdout_is_the_stderr_terminal():
        from tiletune.results import loses_data

        for p in result.problems:
            _say(f"tiletune: {'' if loses_data(p) else 'note: '}{p.message}")


def _stdout_is_the_stderr_terminal() -> bool:
    try:
        return sys.stdout.isatty() and os.path.samestat(os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno()))
    except (OSError, ValueError, AttributeError):  # a replaced stream without a file descriptor
        return False


class FailOn(str, enum.Enum):
    """Findings that make an inspecting command exit 1 (for deployment gates)."""

    fatal = "fatal"
    failed = "failed"


_FAIL_ON_HELP = ("Exit 1 when such findings exist: fatal (an event that ended a run: runner init failure, CUDA "
                 "abort, TMA descriptor, shared memory) or failed (any failed tactic, or a fatal event). "
                 "Unusable inputs still exit 2.")


def _gate(result, fail_on: Optional[FailOn], side: str = "") -> int:  # noqa: ANN001 - InspectResult
    """The exit status: 2 for unusable inputs, else 1 when --fail-on findings exist, else 0."""
    code = result.exit_code
    if code == 0 and fail_on is not None and result.fails_on(fail_on.value):
        typer.echo(f"tiletune: --fail-on {fail_on.value}: {side}"
                   + (f"{len(result.fatal_events)} fatal event(s)" if result.fatal_events else f"{len(result.failures)} failure(s)")
                   + " found", err=True)
        return 1
    return code


_PATHS_HELP = "Caches, logs, blocklists, JIT workspaces, retry ledgers, or directories holding them. None: search the default places."


@app.command("inspect")
def inspect_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help=_PATHS_HELP, show_default=False, readable=False)] = None,
    *,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json (schema tiletune.inspect/1) or markdown.")] = OutputFormat.table,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply (sm90, sm100, sm120, ...).")] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU to model on (a `tiletune gpus` name). Default: the GPU the inputs name, else the arch's default SKU.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=_FAIL_ON_HELP)] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="One row per tactic (every profiled, failed and chosen one) instead of one line per M bucket.")] = False,
    only_op: Annotated[Optional[List[str]], typer.Option("--op", help="Only this op (repeatable), e.g. fp4_gemm.")] = None,
    only_arch: Annotated[Optional[List[str]], typer.Option("--only-arch", help="Only entries of this arch (repeatable); --arch sets the arch instead.")] = None,
    only_rank: Annotated[Optional[List[str]], typer.Option("--rank", help="Only this rank (repeatable), as inspect names it: tp1_pp0_dp0, rank3.")] = None,
    only_status: Annotated[Optional[List[str]], typer.Option("--status", help="Only entries with this status (repeatable): chosen, failed, profiled, ...")] = None,
    runtime_m: Annotated[Optional[str], typer.Option("--m", help="Which tile runs at these runtime M (e.g. 37 or the CUDA-graph sizes 1,2,4,8,16,24,32), through the release's bucket mapping.")] = None,
) -> None:
    """Which tiles won, which failed and why, which were never tried: per arch and op.

    The table shows one line per M bucket (chosen tile, measured time, runner-up and margin,
    failed and never-tried counts) and a tile map; --all lists every tactic. JSON always holds
    every entry. Exit status 0 when every input was read (findings are not errors), 2 when any
    input was unusable (after printing everything that could be inspected). With no PATH and
    nothing found, says what was searched and exits 0.
    """

    def run() -> int:
        _refuse_outputs_over_inputs([("--output", output)], paths or [])
        select = _entry_filter(only_op, only_arch, only_rank, only_status)
        ms = _runtime_ms(runtime_m)
        result = _inspected(paths, arch, flashinfer_version, gpu, select)
        _refuse_outputs_over_inputs([("--output", output)], [], result)
        from tiletune.formats import render

        colour = _colour(output)
        view = {"all_rows": all_rows, "runtime_m": ms, "width": _terminal_width(output), "colour": colour}
        _emit(render("inspect", result, format.value, **view), output,  # JSON comes in chunks, written as made
              json=format is OutputFormat.json, colour=colour)
        _report_problems(result)
        return _gate(result, fail_on)

    _run_batch(run, paths or ())


def _entry_filter(ops, archs, ranks, statuses):  # -> Optional[Callable[[Entry], bool]]
    """inspect's --op / --only-arch / --rank / --status as one predicate (None: keep everything)."""
    from tiletune.archs import normalize_arch
    from tiletune.errors import UsageError
    from tiletune.records import Status

    if not (ops or archs or ranks or statuses):
        return None
    want_arch = set()
    for a in archs or ():
        norm = normalize_arch(a)
        if norm is None:
            raise UsageError(f"--only-arch {a!r} is not an architecture (sm90, sm100, sm120, ...)")
        want_arch.add(norm)
    known = {s.value for s in Status}
    for s in statuses or ():
        if s not in known:
            raise UsageError(f"--status {s!r} is not a status; use one of {', '.join(sorted(known))}")
    want_ops, want_ranks, want_status = set(ops or ()), set(ranks or ()), set(statuses or ())

    def keep(e) -> bool:  # noqa: ANN001 - records.Entry
        r = e.record
        return ((not want_ops or r.op in want_ops) and (not want_arch or r.env.arch in want_arch)
                and (not want_ranks or r.rank in want_ranks) and (not want_status or r.status.value in want_status))

    return keep


def _runtime_ms(text: Optional[str]) -> tuple[int, ...]:
    """--m '1,2,4,8' -> (1, 2, 4, 8); at most 64 values, each 1..2**31."""
    from tiletune.errors import UsageError

    if text is None:
        return ()
    out = []
    for part in text.replace(" ", "").split(","):
        if not part.isdigit() or not 1 <= int(part) <= 1 << 31:
            raise UsageError(f"--m {text!r}: each value must be a whole number of tokens from 1 to 2**31 (e.g. --m 1,2,4,8,37)")
        out.append(int(part))
    if len(out) > 64:
        raise UsageError(f"--m takes at most 64 values ({len(out)} given)")
    return tuple(out)


def _colour(output: Optional[Path]) -> bool:
    """ANSI colours only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _terminal_width(output: Optional[Path]) -> int:
    """The terminal's width for the table (120 when writing a file or not to a terminal)."""
    import shutil

    if output is not None or not sys.stdout.isatty():
        return 120
    return max(80, shutil.get_terminal_size((120, 24)).columns)


class ReportFormat(str, enum.Enum):
    """Report formats."""

    markdown = "markdown"
    json = "json"


@app.command("report")
def report_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help=_PATHS_HELP, show_default=False, readable=False)] = None,
    *,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Report file (e.g. report.md); roofline PNGs are written beside it. Default: stdout, no pictures.", readable=False)] = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f", help="markdown (for a GitHub issue) or json.")] = ReportFormat.markdown,
    redact: Annotated[bool, typer.Option("--redact/--no-redact", help="Replace directories, host and user names (the default: reports leave the machine); --no-redact keeps them.")] = True,
    full: Annotated[bool, typer.Option("--full", help="Everything, uncapped (to attach as a file); by default the report is capped to fit a GitHub issue.")] = False,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU to model on (a `tiletune gpus` name).")] = None,
    no_plot: Annotated[bool, typer.Option("--no-plot", help="Do not draw roofline PNGs.")] = False,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply.")] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=_FAIL_ON_HELP)] = None,
) -> None:
    """A self-contained bug-ticket report: verdicts, environment, chosen tiles, failures and why, commands.

    Exit status as for inspect: 2 when any input was unusable (the report is still written).
    """

    def run() -> int:
        from tiletune.fileio import write_atomic
        from tiletune.formats.report import render_files
        from tiletune.formats.safe_text import terminal_safe

        _refuse_outputs_over_inputs([("--output", output)], paths or [])
        result = _inspected(paths, arch, flashinfer_version, gpu)
        notices: list[str] = []
        files = render_files(
            result,
            output=output,
            as_json=format is ReportFormat.json,
            plot=not no_plot,
            redact_names=redact,
            paths=[str(p) for p in (paths or [])],
            gpu=gpu,
            options=[*(("--arch", arch) if arch else ()), *(("--flashinfer-version", flashinfer_version) if flashinfer_version else ())],
            full=full,
            notices=notices,
        )
        for n in notices:
            _say(f"tiletune: note: {n}")
        _refuse_outputs_over_inputs([("--output", p) for p in files if p is not None], paths or [], result)
        for path, data in files.items():
            if path is None:
                _write_stdout([terminal_safe(data if isinstance(data, str) else data.decode())])
            else:
                write_atomic(path, terminal_safe(data) if isinstance(data, str) else data)
        if output is not None:
            extra = len(files) - 1
            typer.echo(f"tiletune: wrote {output}" + (f" and {extra} picture(s) beside it" if extra else ""), err=True)
        _report_problems(result)
        return _gate(result, fail_on)

    _run_batch(run, paths or ())


@app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The earlier warm-up: a cache, log, ledger or a directory of them.", show_default=False, readable=False)],
    new: Annotated[Path, typer.Argument(help="The later warm-up, likewise.", show_default=False, readable=False)],
    *,
    old_also: Annotated[Optional[List[Path]], typer.Option("--old", help="Another input of the OLD side (repeatable).", readable=False)] = None,
    new_also: Annotated[Optional[List[Path]], typer.Option("--new", help="Another input of the NEW side (repeatable).", readable=False)] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json (schema tiletune.diff/1) or markdown.")] = OutputFormat.table,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch both sides imply.")] = None,
    old_version: Annotated[Optional[str], typer.Option("--old-flashinfer-version", help="Override the FlashInfer version OLD implies.")] = None,
    new_version: Annotated[Optional[str], typer.Option("--new-flashinfer-version", help="Override the FlashInfer version NEW implies.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=(
        "Gate on the NEW warm-up instead of on changes: exit 1 when NEW holds such findings (fatal: an event "
        "that ended a run; failed: any failed tactic, or a fatal event, as `inspect --fail-on` on NEW), else 0, "
        "whatever changed. Unusable inputs still exit 2."))] = None,
) -> None:
    """Compare two warm-ups in tile terms: winners that moved, buckets added or removed, tactics newly
    failing or recovered, and what changed in the environment.

    Across FlashInfer releases configs are compared, never tactic numbers. Exit status 0 when no
    entry differs (environment differences alone are shown), 1 when an entry does, 2 when an
    input is unusable. With --fail-on the findings in NEW decide 0 or 1 instead of the changes.
    """

    def run() -> int:
        from tiletune.diff import diff

        named = [old, new, *(old_also or []), *(new_also or [])]
        _refuse_outputs_over_inputs([("--output", output)], named)
        before = _inspected([old, *(old_also or [])], arch, old_version, None)
        after = _inspected([new, *(new_also or [])], arch, new_version, None)
        _refuse_outputs_over_inputs([("--output", output)], [], before)
        _refuse_outputs_over_inputs([("--output", output)], [], after)
        result = diff(before, after)
        from tiletune.formats import render

        _emit(render("diff", result, format.value), output, json=format is OutputFormat.json)
        _report_problems(before)
        _report_problems(after)
        if before.exit_code or after.exit_code:
            return 2
        if fail_on is not None:  # a deployment gate on the new warm-up: its findings, not the changes
            return _gate(after, fail_on, side="NEW: ")
        return 1 if result.differs else 0

    _run_batch(run, [old, new, *(old_also or []), *(new_also or [])])


class CatalogFormat(str, enum.Enum):
    """Output formats of `tiletune catalog`."""

    table = "table"
    json = "json"
    markdown = "markdown"


@app.command("catalog")
def catalog_cmd(
    flashinfer_version: Annotated[
        Optional[str], typer.Option("--flashinfer-version", help="Release whose tactic tables to show (e.g. 0.6.14).")
    ] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="sm90, sm100, sm103, sm107, sm110, sm120 (sm121 uses sm120's).")] = None,
    op: Annotated[Optional[str], typer.Option("--op", help="fp4_gemm, mxfp8_gemm, fp8_gemm, bf16_gemm, ...")] = None,
    fmt: Annotated[CatalogFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = CatalogFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """List the FlashInfer releases the tactic catalogs cover, or one release's tactic tables."""
    def run() -> None:
        from tiletune.catalogs.listing import catalog_view
        from tiletune.formats import render

        _emit(render("catalog", catalog_view(flashinfer_version, arch, op), fmt.value), output)

    _guard(run)


class RetryEngine(str, enum.Enum):
    """Retry engines."""

    flashinfer = "flashinfer"
    cutlass = "cutlass"


@app.command("retry")
def retry_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help="Caches, logs, blocklists or ledgers to take the configs from.", show_default=False, readable=False)] = None,
    *,
    ledger: Annotated[Path, typer.Option("--ledger", help="JSONL ledger: one line appended per attempt; a rerun resumes from it.", readable=False)] = Path("tiletune-ledger.jsonl"),
    engine: Annotated[RetryEngine, typer.Option("--engine", help="flashinfer: FlashInfer's own runner with the tactic forced; cutlass: a kernels/ reproducer of the decoded tile.")] = RetryEngine.flashinfer,
    all_: Annotated[bool, typer.Option("--all", help="Every config in the inputs, not only the failed / blocklisted ones.")] = False,
    op: Annotated[Optional[List[str]], typer.Option("--op", help="Only this op (repeatable), e.g. fp8_gemm.")] = None,
    tactic: Annotated[Optional[str], typer.Option("--tactic", help="Only these tactics: 3, 0-7 or 1,4,9-11.")] = None,
    shape: Annotated[Optional[List[str]], typer.Option("--shape", help="Try --op/--tactic at MxNxK or BxMxNxK (repeatable) instead of configs from inputs.")] = None,
    runner: Annotated[Optional[str], typer.Option("--runner", help="Runner class for --shape (default: the op's runner, listed above).")] = None,
    dtype_out: Annotated[str, typer.Option("--dtype-out", help="Output dtype for --shape (bfloat16 or float16).")] = "bfloat16",
    dtype: Annotated[Optional[str], typer.Option("--dtype", help="Input dtype of fused-MoE keys that do not record it (before FlashInfer 0.6.18rc2): bf16, fp16 or fp8.")] = None,
    top_k: Annotated[Optional[int], typer.Option("--top-k", help="top_k of fused-MoE keys that do not record it (before FlashInfer 0.6.18rc2).")] = None,
    changed_env: Annotated[bool, typer.Option("--changed-env", help="Only failures recorded under a different environment (GPU, driver, CUDA, library versions).")] = False,
    since_driver: Annotated[bool, typer.Option("--since-driver", help="Only failures recorded under a different driver.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Time limit per attempt in seconds (the child is killed with its process group).")] = 120.0,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel builds when preparing (CUTLASS engine compiles).")] = 1,
    allow_jit_build: Annotated[bool, typer.Option("--allow-jit-build", help="Build missing FlashInfer JIT modules once before the attempts (never done silently).")] = False,
    no_resume: Annotated[bool, typer.Option("--no-resume", help="Redo attempts the ledger already has for this environment.")] = False,
    blocklist: Annotated[Optional[Path], typer.Option("--blocklist", help="Write a FlashInfer tactics blocklist (new file) of what still fails.", readable=False)] = None,
    pin_cache: Annotated[Optional[Path], typer.Option("--pin-cache", help="Write a NEW cache: the input cache with each retried key pinned to its fastest passing tactic.", readable=False)] = None,
    reproducer: Annotated[Optional[Path], typer.Option("--reproducer", help="Write a CUTLASS reproducer folder (.cu, build.sh, run.sh) per target with a decoded tile.", readable=False)] = None,
    workspace_bytes: Annotated[Optional[int], typer.Option("--workspace-bytes", help="Run with this cuBLASLt workspace instead of FlashInfer's default (40 MiB in 0.7.2.post1; provokes workspace failures).")] = None,
    input_amplitude: Annotated[Optional[float], typer.Option("--input-amplitude", help="Scale inputs so dequantized values reach +-this (provokes output overflow).")] = None,
    iters: Annotated[int, typer.Option("--iters", help="Timed runs per passing attempt.")] = 20,
    no_run: Annotated[bool, typer.Option("--no-run", help="Attempt nothing; only write --blocklist / --pin-cache from the ledger (works without a GPU).")] = False,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply.")] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, markdown (for a ticket) or json (schema tiletune.retry/1).")] = OutputFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the summary here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=(
        "Exit 1 when such findings exist on this GPU: fatal (an attempt ended in an illegal instruction, illegal "
        "address or a crashed process: what would end a server) or failed (any attempt that did not pass, or a "
        "fatal one). Counted: this run's attempts and, for targets skipped as already done in this environment, "
        "their ledger attempts; failures in the inputs do not count (retry re-checks them). Unusable inputs "
        "still exit 2."))] = None,
) -> None:
    """Re-attempt failed (or any) configs on this GPU, each in a fresh process.

    Every attempt is diagnosed (passed with time and error, or why it
    failed) and appended to the ledger as soon as it ends. Exit status 0
    when the attempts ran (failures are findings; --fail-on makes them exit
    1), 2 for unusable inputs or
    when retry cannot run here: without a usable CUDA device it says so in
    one line before building anything (--reproducer, --no-run need no GPU).

    --runner defaults for --shape: fp8_gemm CublasFp8GemmRunner,
    bf16_gemm CublasltBf16GemmRunner, fp4_gemm CutlassFp4GemmRunner,
    mxfp8_gemm CutlassMxfp8GemmRunner.
    """

    def run() -> int:
        from tiletune.commands.retry import RetryOptions, retry

        ctx = _inspect_context(arch, flashinfer_version)
        opts = RetryOptions(
            paths=list(paths or []), ledger=ledger, engine=engine.value, all_statuses=all_, ops=list(op or []),
            tactic=tactic, shapes=list(shape or []), runner=runner, dtype_out=dtype_out, changed_env=changed_env,
            since_driver=since_driver, timeout_s=timeout, jobs=jobs, allow_jit_build=allow_jit_build,
            resume=not no_resume, blocklist=blocklist, pin_cache=pin_cache, reproducer=reproducer,
            workspace_bytes=workspace_bytes, input_amplitude=input_amplitude, iters=iters, arch=ctx.arch,
            flashinfer_version=ctx.flashinfer_version, as_json=format is OutputFormat.json, fmt=format.value, no_run=no_run,
            moe_dtype=dtype, top_k=top_k, output=output,
        )
        outcome = retry(opts)
        _emit(outcome.text, output)
        for p in outcome.problems:
            _say(f"tiletune: {p.message}")
        return _retry_gate(outcome, fail_on)

    code = _guard(run, [*(paths or ()), ledger])
    if code:
        raise typer.Exit(code=code)


def _retry_gate(outcome, fail_on: Optional[FailOn]) -> int:  # noqa: ANN001 - commands.retry.RetryOutcome
    """retry's exit status: 2 for lost input, else 1 when --fail-on findings exist on this GPU, else 0."""
    found = outcome.findings
    if outcome.exit_code == 0 and fail_on is not None and found is not None and found.fails_on(fail_on.value):
        _say(f"tiletune: --fail-on {fail_on.value}: "
             + (f"{len(found.fatal)} attempt(s) ended fatally" if found.fatal else f"{len(found.failed)} attempt(s) failed")
             + " on this GPU")
        return 1
    return int(outcome.exit_code)


class GpusFormat(str, enum.Enum):
    """`tiletune gpus` output formats."""

    table = "table"
    json = "json"


@app.command("model")
def model_command(
    *,
    dtype: Annotated[str, typer.Option("--dtype", help="nvfp4, mxfp4, mxfp8, fp8, bf16, fp16, fp32, int8, int4.")],
    m: Annotated[int, typer.Option("--m", help="Rows of A (tokens); for MoE the token count before top-k routing.")],
    n: Annotated[int, typer.Option("--n", help="Output features (rows of the weight).")],
    k: Annotated[int, typer.Option("--k", help="Reduction size, in elements.")],
    tile: Annotated[str, typer.Option("--tile", help="CTA tile MxNxK in elements, e.g. 128x128x256.")],
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU name (see `tiletune gpus`); nvidia-smi names work.")] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Arch (sm90, sm100, sm120...); without --gpu its default SKU is used.")] = None,
    cluster: Annotated[str, typer.Option("--cluster", help="Cluster shape XxYxZ.")] = "1x1x1",
    swap_ab: Annotated[bool, typer.Option("--swap-ab", help="The kernel computes the transposed product (its M runs over N).")] = False,
    stream_k: Annotated[bool, typer.Option("--stream-k", help="Stream-K scheduler.")] = False,
    split_k: Annotated[int, typer.Option("--split-k", help="Split-K factor.")] = 1,
    grouped: Annotated[bool, typer.Option("--grouped", help="Grouped (ptr-array / MoE) kernel.")] = False,
    experts: Annotated[Optional[int], typer.Option("--experts", help="MoE experts (implies --grouped).")] = None,
    top_k: Annotated[Optional[int], typer.Option("--top-k", help="MoE experts per token.")] = None,
    stage_policy: Annotated[Optional[str], typer.Option("--stage-policy", help="'auto' (StageCountAutoCarveout) or 'fixed:N' (StageCount<N>).")] = None,
    schedule: Annotated[Optional[str], typer.Option("--schedule", help="Kernel schedule: cooperative, pingpong, warpspecialized, single-warpgroup, 1sm, 2sm, sm80 or auto (SM90: ping-pong for 64-row tiles).")] = None,
    stages: Annotated[Optional[int], typer.Option("--stages", help="Explicit stage count (StageCount<N>; same as --stage-policy fixed:N).")] = None,
    fast_accum: Annotated[Optional[bool], typer.Option("--fast-accum/--no-fast-accum", help="SM90 fp8: fast accumulation (FlashInfer's choice, the default) or the fp32-promoted mainloop.")] = None,
    sm_clock: Annotated[Optional[float], typer.Option("--sm-clock", help="SM clock in MHz the GPU runs at (e.g. a power-capped sustained clock); default: the SKU's max clock.")] = None,
    l2: Annotated[Optional[str], typer.Option("--l2", help="L2 state of the timing to compare with: warm (an autotuner re-timing the same tensors) or cold (L2 flushed); default unknown: expected cold, band down to warm.")] = None,
    exact: Annotated[bool, typer.Option("--exact", help="Shared memory from a compiled CUTLASS kernel type (nvcc, no GPU) instead of the model.")] = False,
    gpu_file: Annotated[Optional[Path], typer.Option("--gpu-file", help="JSON file adding/overriding GPUs (env TILETUNE_GPU_FILE).", readable=False)] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = OutputFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """What-if for one problem and tile on one GPU: shared-memory fit, intensity, roofline, waves, expected time."""

    def run() -> None:
        from tiletune.commands.model import run_model

        _refuse_outputs_over_inputs([("--output", output)], _gpu_files(gpu_file))
        text = run_model(dtype=dtype, m=m, n=n, k=k, tile=tile, gpu=gpu, arch=arch, cluster=cluster, swap_ab=swap_ab,
                         stream_k=stream_k, split_k=split_k, grouped=grouped, experts=experts, top_k=top_k,
                         stage_policy=stage_policy, exact=exact, gpu_file=str(gpu_file) if gpu_file else None,
                         fmt=format.value, schedule=schedule, stages=stages, fast_accum=fast_accum, sm_clock=sm_clock, l2=l2)
        _emit(text, output)

    _guard(run, [gpu_file] if gpu_file else ())


def _gpu_files(gpu_file: Optional[Path]) -> List[Path]:
    """The GPU files a model / gpus run reads (an input like any other)."""
    named = gpu_file or os.environ.get("TILETUNE_GPU_FILE")
    return [Path(named)] if named else []


@app.command("gpus")
def gpus_command(
    *,
    format: Annotated[GpusFormat, typer.Option("--format", "-f", help="table or json (json carries every source).")] = GpusFormat.table,
    gpu_file: Annotated[Optional[Path], typer.Option("--gpu-file", help="JSON file adding/overriding GPUs (env TILETUNE_GPU_FILE).", readable=False)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """The GPU spec table: SMs, clock, bandwidth, L2, shared memory, dense (and quoted sparse) tensor peaks."""

    def run() -> None:
        from tiletune.commands.model import run_gpus

        _refuse_outputs_over_inputs([("--output", output)], _gpu_files(gpu_file))
        _emit(run_gpus(fmt=format.value, gpu_file=str(gpu_file) if gpu_file else None), output)

    _guard(run, [gpu_file] if gpu_file else ())


class DoctorFormat(str, enum.Enum):
    table = "table"
    json = "json"


@app.command("doctor")
def doctor_command(
    *,
    format: Annotated[DoctorFormat, typer.Option("--format", "-f", help="table or json.")] = DoctorFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """What tiletune can see here: GPUs, driver, CUDA, nvcc, FlashInfer/CUTLASS/torch versions, JIT workspaces, caches."""

    def run() -> None:
        from tiletune.commands import doctor
        from tiletune.formats import render

        _emit(render("doctor", doctor.collect(), format.value), output)

    _guard(run)


# Set by main(): objects a command's output was made from, kept until the process ends.
_KEEP_UNTIL_EXIT: Optional[list] = None


def _keep_until_exit(obj: object) -> None:
    """Hold `obj` until the process exits (only when run through `main`; tests call `app` directly)."""
    if _KEEP_UNTIL_EXIT is not None:
        _KEEP_UNTIL_EXIT.append(obj)


def main() -> None:
    """Console-script entry point.

    After a command that kept its result (inspect, report), exit with os._exit once stdout and
    stderr are flushed, as mypy does: freeing a 50,000-entry result object by object and then
    tearing the interpreter down took about 0.07 s and produces nothing. Every file tiletune
    writes is closed before (write_atomic); other commands exit normally.
    """
    global _KEEP_UNTIL_EXIT
    _KEEP_UNTIL_EXIT = []
    code: object = 0
    try:
        _app_for(sys.argv)()
    except SystemExit as e:
        code = e.code
        if not _KEEP_UNTIL_EXIT or not (code is None or isinstance(code, int)):
            raise
    if not _KEEP_UNTIL_EXIT:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # e.g. `tiletune inspect | head`: nothing left to tell the reader
        pass
    os._exit(code if isinstance(code, int) else 0)


def _app_for(argv: Sequence[str]) -> typer.Typer:
    """The app to run for this command line: when its first word names a command, a copy of `app`
    holding that command alone (and the root callback); otherwise `app` itself.

    Why: typer builds every command's click parameters at each start (about a hundred for the
    eight commands) and an inspect uses thirteen. The command's parsing, help, errors and exit
    statuses are the same (tests/test_cli_one_command.py compares them for every command); the
    root's own help, --version, shell completion and unknown commands go through `app`.
    """
    if len(argv) < 2:
        return app
    named = [c for c in app.registered_commands if c.name == argv[1]]
    if not named:
        return app
    one = typer.Typer(**_APP_SETTINGS)
    one.registered_callback = app.registered_callback
    one.registered_commands = named
    return one


if __name__ == "__main__":  # pragma: no cover
    main()
