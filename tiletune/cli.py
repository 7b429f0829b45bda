"""The typer CLI: argument parsing, output routing and exit codes only.

Every command delegates to a library function the tests can call directly. `TiletuneError`s
are caught here alone and printed as one line ("tiletune: <message>") with exit status 2;
anything else is a bug and may show a traceback.
Reports go to stdout (or `--output`, written atomically); progress and summaries to stderr.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Callable, List, Optional, TypeVar

import typer
from typing_extensions import Annotated

from tiletune import __version__
from tiletune.errors import TiletuneError

app = typer.Typer(
    name="tiletune",
    help="See which CUTLASS tiles FlashInfer's autotuner picked, which failed and why; model them; re-try them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)

T = TypeVar("T")


class OutputFormat(str, enum.Enum):
    """Output formats shared by inspect / model / report."""

    table = "table"
    json = "json"
    markdown = "markdown"


def _guard(fn: Callable[[], T]) -> T:
    """Run `fn`; turn a TiletuneError into its one-line message and exit code, no traceback."""
    try:
        return fn()
    except TiletuneError as e:
        typer.echo(f"tiletune: {e}", err=True)
        raise typer.Exit(code=e.exit_code) from None


def _emit(text: str, output: Optional[Path]) -> None:
    """Print `text` to stdout, or write it atomically to `output`."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from tiletune.fileio import write_atomic

    write_atomic(output, text if text.endswith("\n") else text + "\n")


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


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
