"""The CLI's output routing, one-line errors and exit statuses, shared by every command.

Nothing here imports click except to print to stderr (`_echo_err`: click.echo, which typer.echo
is), so a plain inspect that says nothing never loads it."""

import enum
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Sequence, Union

from tiletune.cli.process import gc_paused
from tiletune.core.errors import TiletuneError

if TYPE_CHECKING:  # (types only: a plain inspect imports the analysis when it runs it)
    from tiletune.analysis.baseline import Baseline
    from tiletune.analysis.results import InspectResult


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


def emit(text: Union[str, Iterable[str], Iterable[bytes]], output: Optional[Path], *, json: bool = False,
         colour: bool = False) -> None:
    """Print `text` (or text chunks, written as they come; the JSON writer's chunks are UTF-8 bytes)
    to stdout, or write it atomically to `output`; a newline is added when the text does not end
    with one. Terminal escapes and control characters from the inputs are removed from every chunk
    (a sequence cut between two chunks loses its ESC, which leaves harmless text)."""
    from tiletune.formats.safe_text import json_safe, json_safe_bytes, terminal_safe

    def safe(chunk: Union[str, bytes]) -> Union[str, bytes]:
        if isinstance(chunk, (bytes, bytearray)):
            return json_safe_bytes(chunk)
        return json_safe(chunk) if json else terminal_safe(chunk, keep_colours=colour)

    chunks = map(safe, _newline_ended([text] if isinstance(text, str) else text))
    if output is None:
        write_stdout(chunks)
        return
    from tiletune.core.fileio import write_atomic

    write_atomic(output, chunks)


def write_stdout(chunks: Iterable[Union[str, bytes]]) -> None:
    """Write to stdout (text, or UTF-8 bytes straight to its buffer); a failed write (`> /dev/full`)
    is one line and exit 2, not a traceback. A closed pipe (`| head`) is the reader's choice and not
    reported."""
    try:
        for chunk in chunks:
            if isinstance(chunk, (bytes, bytearray)):
                sys.stdout.flush()  # (what text went before it, first)
                sys.stdout.buffer.write(chunk)
            else:
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


def refuse_outputs_over_inputs(outputs: Iterable[tuple], named: Iterable[Path], result: Optional["InspectResult"] = None) -> None:
    """No output option may name an input: the named ones, and the files a result was read from."""
    from tiletune.core import fileio

    read = [path for path, _ in result.sources] if result is not None else []
    fileio.refuse_outputs_over_inputs(outputs, [*named, *read])


def _newline_ended(chunks: Iterable[Union[str, bytes]]) -> Iterator[Union[str, bytes]]:
    last: Union[str, bytes] = ""
    for chunk in chunks:
        yield chunk
        last = chunk or last
    if isinstance(last, (bytes, bytearray)):
        if not last.endswith(b"\n"):
            yield b"\n"
    elif not last.endswith("\n"):
        yield "\n"


def report_problems(result: "InspectResult", to_stderr: bool = True) -> None:
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


def gate(result: "InspectResult", fail_on: Optional[FailOn], side: str = "",
         baseline: Optional["Baseline"] = None) -> int:
    """The exit status: 2 for unusable inputs, else 1 when --fail-on findings exist, else 0.
    `baseline` (--baseline: analysis.baseline.Baseline) accepts known failures: only failures it
    does not accept, or a fatal event, make --fail-on failed exit 1."""
    code = result.exit_code
    if code != 0 or fail_on is None:
        return code
    if baseline is not None and fail_on.value == "failed" and not result.run_ended:
        new = baseline.new_failures(result.failures)
        accepted = len(result.failures) - len(new)
        if not new:
            if accepted:
                _echo_err(f"tiletune: --fail-on failed: {side}{accepted} failure(s), every one accepted by "
                          f"--baseline {baseline.source} ({baseline.kind}): no new failure")
            return 0
        shown = ", ".join(f"{f.arch or '?'} {f.op} tactic {f.tactic}" for f in new[:6]) + (" ..." if len(new) > 6 else "")
        _echo_err(f"tiletune: --fail-on failed: {side}{len(new)} new failure(s) not in --baseline {baseline.source}"
                  f" ({accepted} accepted): {shown}")
        return 1
    if result.fails_on(fail_on.value):
        _echo_err(f"tiletune: --fail-on {fail_on.value}: {side}"
                  + (f"{len(result.fatal_events)} fatal event(s)" if result.fatal_events else f"{len(result.failures)} failure(s)")
                  + " found")
        return 1
    return code


def load_baseline(path: Optional[Path]) -> Optional["Baseline"]:
    """--baseline FILE read (bounded, like an input) and parsed; None without one. A file that is not
    a baseline is one line, exit 2 (UsageError / ReaderError)."""
    if path is None:
        return None
    from tiletune.analysis.baseline import parse
    from tiletune.core.bounded_input import decode_text, read_input

    data = read_input(path, limit=64 << 20, what="baseline", override="TILETUNE_MAX_JSON_MB")
    return parse(decode_text(data, str(path)), str(path))


def stdin_once(inputs: Sequence[object]) -> None:
    """Refuse `-` named more than once among a command's inputs (`diff - -`, `--old - NEW -`): stdin
    can be read once, so the second would silently be empty."""
    from tiletune.core.errors import UsageError

    n = sum(1 for i in inputs if str(i) == "-")
    if n > 1:
        raise UsageError(f"stdin (-) is named {n} times; it can be read once: save it to a file and name the files")


def batch_status(run: Callable[[], int], inputs: Sequence[object],
                 passthrough: tuple[type[BaseException], ...] = ()) -> int:
    """An inspecting command's body run with the collector paused: its exit status, or its failure's.

    `passthrough`: the exceptions that are not failures but the CLI framework's own ways out,
    re-raised for it to say and exit as it does (typer's path passes click's Exit, Abort and
    ClickException; the plain launch path passes none, so this module never imports click)."""
    with gc_paused():
        try:
            stdin_once(inputs)
            return run()
        except passthrough:
            raise
        except Exception as e:  # noqa: BLE001 - never a traceback for what an input did
            return failure_status(e, inputs)
