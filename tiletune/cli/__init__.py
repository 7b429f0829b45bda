"""The console entry point (`tiletune`, `python -m tiletune`).

A plain `tiletune inspect PATH... [--format F]` runs without typer: importing typer and click
and building the command is about a seventh of a 2,000-entry inspect (~120 M of ~910 M
instructions), and this command line needs none of it. Every other command line, including
any option or spelling this does not recognise, goes to typer (`cli.main`) unchanged, so help,
errors and shell completion stay typer's. `plain_inspect` reads only the forms whose meaning
click gives unambiguously; tests/test_launch.py holds it to click's own parse of the same words
and the outputs, streams and exit statuses to the typer path's.
"""

import os
import sys
from pathlib import Path
from typing import Mapping, Optional, Sequence

from tiletune.cli.output import OutputFormat

_FORMATS = tuple(f.value for f in OutputFormat)  # the values click.Choice accepts (case-sensitive)


def plain_inspect(args: Sequence[str], environ: Mapping[str, str]) -> Optional[tuple[list[Path], str]]:
    """(paths, format) when `args` (argv without the program) is `inspect`, one or more paths and
    at most one `--format F` / `-f F` / `--format=F`; None for anything else (typer's to read).

    Declined: no path (discovery), any other word starting with '-' (options, `--`, `-`, help),
    an empty word, a second format, a format click would reject, and shell completion requests
    (click's `_<PROG>_COMPLETE` variable)."""
    if len(args) < 2 or args[0] != "inspect":
        return None
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in environ):
        return None
    paths: list[Path] = []
    fmt: Optional[str] = None
    words = iter(args[1:])
    for word in words:
        if word.startswith("-"):
            if word in ("--format", "-f"):
                value = next(words, None)
            elif word.startswith("--format="):
                value = word[len("--format="):]
            else:
                return None
            if fmt is not None or value not in _FORMATS:
                return None
            fmt = value
        elif word:
            paths.append(Path(word))
        else:
            return None
    if not paths:
        return None
    return paths, fmt or "table"


def main() -> None:
    """Run a plain inspect here, anything else through typer (cli.main)."""
    from tiletune.cli.process import exit_cleanly_on_signals

    exit_cleanly_on_signals()
    plain = plain_inspect(sys.argv[1:], os.environ)
    if plain is None:
        from tiletune.cli.typer_app import main as typer_main

        typer_main()
        return
    from tiletune.cli import output, process
    from tiletune.cli.commands.inspect import inspect_status

    paths, fmt = plain
    process.keep_results()
    try:
        code = output.batch_status(lambda: inspect_status(paths, format=output.OutputFormat(fmt)), paths)
    except KeyboardInterrupt:  # as click's standalone mode says it
        sys.stderr.write("\nAborted!\n")
        code = 1
    if not process.kept_any():  # the body stopped before it kept a result: exit as typer's path would
        sys.exit(code)
    process.exit_kept(code)
