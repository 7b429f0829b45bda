"""The CLI's typer-free half: output routing, one-line errors and exit statuses, the collector
policy, and the inspect command's body.

cli.py (typer) runs every command through these; launch.py runs a plain `tiletune inspect
PATH... [--format F]` through the same body without importing typer or click at all (about a
seventh of a 2,000-entry inspect's instructions). Nothing here imports click except to print to
stderr (`_echo_err`: click.echo, which typer.echo is), so an inspect that says nothing never loads it.
"""

import enum
import gc
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, NoReturn, Optional, Sequence, Union

from tiletune.core.errors import TiletuneError


class OutputFormat(str, enum.Enum):
    """Output formats shared by inspect / model / report."""

    table = "table"
    json = "json"
    markdown = "markdown"


class FailOn(str, enum.Enum):
    """Findings that make an inspecting command exit 1 (for deployment gates)."""

    fatal = "fatal"
    failed = "failed"


def failure_status(e: Exception, inputs: Sequence[object] = ()) -> int:
    """An exception out of a command's body as one line on stderr (never a traceback) and its exit
    status: a TiletuneError's own message and status; anything else (a bug an input provoked) one
    line naming the inputs, status 2. Readers already turn one input's surprise into a problem of
    that input, so by then everything else has been read; this is what is left."""
    if isinstance(e, TiletuneError):
        say(f"tiletune: {e}")
        return e.exit_code
    from tiletune.core.errors import unexpected

    named = ", ".join(str(i) for i in inputs) or "the default inputs"
    say(f"tiletune: {_clip(named)}: {unexpected(e)}")
    return 2


def _echo_err(text: str) -> None:
    """click.echo to stderr (typer.echo is click.echo), click imported only when something is said."""
    import click

    click.echo(text, err=True)


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def say(message: str) -> None:
    """One line to stderr, without the terminal escapes an input may have put in it."""
    from tiletune.formats.safe_text import terminal_safe

    _echo_err(terminal_safe(message))


def emit(text: Union[str, Iterable[str]], output: Optional[Path], *, json: bool = False, colour: bool = False) -> None:
    """Print `text` (or text chunks, written as they come) to stdout, or write it atomically to
    `output`; a newline is added when the text does not end with one. Terminal escapes and control
    characters from the inputs are removed from every chunk (a sequence cut between two chunks
    loses its ESC, which leaves harmless text)."""
    from tiletune.formats.safe_text import json_safe, terminal_safe

    def safe(chunk: str) -> str:
        return json_safe(chunk) if json else terminal_safe(chunk, keep_colours=colour)

    chunks = map(safe, _newline_ended([text] if isinstance(text, str) else text))
    if output is None:
        write_stdout(chunks)
        return
    from tiletune.core.fileio import write_atomic

    write_atomic(output, chunks)


def write_stdout(chunks: Iterable[str]) -> None:
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
        from tiletune.core.errors import OutputError

        raise OutputError(f"stdout: cannot write it ({e.strerror or e})") from None


def _detach_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def refuse_outputs_over_inputs(outputs: Iterable[tuple], named: Iterable[Path], result=None) -> None:  # noqa: ANN001
    """No output option may name an input: the named ones, and the files a result was read from."""
    from tiletune.core import fileio

    read = [path for path, _ in result.sources] if result is not None else []
    fileio.refuse_outputs_over_inputs(outputs, [*named, *read])


def _newline_ended(chunks: Iterable[str]) -> Iterator[str]:
    last = ""
    for chunk in chunks:
        yield chunk
        last = chunk or last
    if not last.endswith("\n"):
        yield "\n"


@contextmanager
def gc_paused() -> Iterator[None]:
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


def inspected(paths: Optional[List[Path]], arch: Optional[str], flashinfer_version: Optional[str], gpu: Optional[str],
               select: Optional[Callable[..., bool]] = None):
    """The inspect result for these inputs (what inspect and report start from), kept until the
    process exits (see `main`)."""
    from tiletune.analysis.pipeline import inspect

    result = inspect(list(paths or []), inspect_context(arch, flashinfer_version), gpu=gpu, select=select)
    _keep_until_exit(result)
    return result


_KEEP_UNTIL_EXIT: Optional[list] = None


def _keep_until_exit(obj: object) -> None:
    """Hold `obj` until the process exits (only when run through a `main`; tests call `app` directly)."""
    if _KEEP_UNTIL_EXIT is not None:
        _KEEP_UNTIL_EXIT.append(obj)


def keep_results() -> None:
    """From now on, results are kept until the process exits (`exit_kept`)."""
    global _KEEP_UNTIL_EXIT
    _KEEP_UNTIL_EXIT = []


def kept_any() -> bool:
    return bool(_KEEP_UNTIL_EXIT)


def exit_kept(code: int) -> NoReturn:
    """After a command that kept its result (inspect, report): exit with os._exit once stdout and
    stderr are flushed, as mypy does. Freeing a 50,000-entry result object by object and then
    tearing the interpreter down took about 0.07 s and produces nothing; every file tiletune
    writes is closed before (write_atomic)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # e.g. `tiletune inspect | head`: nothing left to tell the reader
        pass
    os._exit(code)


def inspect_context(arch: Optional[str], flashinfer_version: Optional[str]):  # -> ReadContext
    """--arch / --flashinfer-version checked and normalised (bad values: one line, exit 2)."""
    from tiletune.core.archs import KNOWN_ARCHS, normalize_arch
    from tiletune.core.errors import UsageError
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


def report_problems(result, to_stderr: bool = True) -> None:  # noqa: ANN001 - InspectResult
    """Problems go to stderr, so `> out.txt` still shows them; skipped only when stdout (which
    already shows them in the table) is the very terminal stderr is."""
    if to_stderr and not _stdout_is_the_stderr_terminal():
        from tiletune.analysis.results import loses_data

        for p in result.problems:
            say(f"tiletune: {'' if loses_data(p) else 'note: '}{p.message}")


def _stdout_is_the_stderr_terminal() -> bool:
    try:
        return sys.stdout.isatty() and os.path.samestat(os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno()))
    except (OSError, ValueError, AttributeError):  # a replaced stream without a file descriptor
        return False


def gate(result, fail_on: Optional[FailOn], side: str = "") -> int:  # noqa: ANN001 - InspectResult
    """The exit status: 2 for unusable inputs, else 1 when --fail-on findings exist, else 0."""
    code = result.exit_code
    if code == 0 and fail_on is not None and result.fails_on(fail_on.value):
        _echo_err(f"tiletune: --fail-on {fail_on.value}: {side}"
                  + (f"{len(result.fatal_events)} fatal event(s)" if result.fatal_events else f"{len(result.failures)} failure(s)")
                  + " found")
        return 1
    return code


def _entry_filter(ops, archs, ranks, statuses):  # -> Optional[Callable[[Entry], bool]]
    """inspect's --op / --only-arch / --rank / --status as one predicate (None: keep everything)."""
    from tiletune.core.archs import normalize_arch
    from tiletune.core.errors import UsageError
    from tiletune.core.records import Status

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
    from tiletune.core.errors import UsageError

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


def inspect_status(paths: Optional[List[Path]], *, format: OutputFormat = OutputFormat.table, arch: Optional[str] = None,
                    flashinfer_version: Optional[str] = None, gpu: Optional[str] = None, output: Optional[Path] = None,
                    fail_on: Optional[FailOn] = None, all_rows: bool = False, only_op: Optional[List[str]] = None,
                    only_arch: Optional[List[str]] = None, only_rank: Optional[List[str]] = None,
                    only_status: Optional[List[str]] = None, runtime_m: Optional[str] = None) -> int:
    """`tiletune inspect`'s body (cli.inspect_command holds its options' help): print the result,
    report the problems, return the exit status."""
    refuse_outputs_over_inputs([("--output", output)], paths or [])
    select = _entry_filter(only_op, only_arch, only_rank, only_status)
    ms = _runtime_ms(runtime_m)
    result = inspected(paths, arch, flashinfer_version, gpu, select)
    refuse_outputs_over_inputs([("--output", output)], [], result)
    from tiletune.formats import render

    colour = _colour(output)
    view = {"all_rows": all_rows, "runtime_m": ms, "width": _terminal_width(output), "colour": colour}
    emit(render("inspect", result, format.value, **view), output,  # JSON comes in chunks, written as made
          json=format is OutputFormat.json, colour=colour)
    report_problems(result)
    return gate(result, fail_on)


def batch_status(run: Callable[[], int], inputs: Sequence[object],
                 passthrough: tuple[type[BaseException], ...] = ()) -> int:
    """An inspecting command's body run with the collector paused: its exit status, or its failure's.

    `passthrough`: the exceptions that are not failures but the CLI framework's own ways out,
    re-raised for it to say and exit as it does (typer's path passes click's Exit, Abort and
    ClickException; the plain launch path passes none, so this module never imports click)."""
    with gc_paused():
        try:
            return run()
        except passthrough:
            raise
        except Exception as e:  # noqa: BLE001 - never a traceback for what an input did
            return failure_status(e, inputs)
