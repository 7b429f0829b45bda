"""The one error tree. Only the CLI (cli.output.failure_status) turns these into exit codes and one-line messages.

Every message starts with the thing it is about (a file, a file and key, a GPU name) and says
what is wrong, so the CLI can print it as is.
"""

from __future__ import annotations


class TiletuneError(Exception):
    """Base of every error tiletune raises on purpose. Exit status 2 unless a subclass says else."""

    exit_code = 2


class ReaderError(TiletuneError):
    """An input (cache, log, blocklist, directory) could not be read or parsed."""


class CatalogError(TiletuneError):
    """A tactic catalog is missing, malformed, or does not cover the asked version/arch."""


class ModelError(TiletuneError):
    """A model question that cannot be answered: unknown GPU, impossible tile, bad sizes, dtype the arch lacks."""


class TunerError(TiletuneError):
    """The retry machinery could not run (not an attempt's failure: those are data)."""


class OutputError(TiletuneError):
    """An output could not be written (read-only directory, full disk), or would overwrite an input."""


class UsageError(TiletuneError):
    """Bad command-line use that typer itself cannot catch."""


def unexpected(e: BaseException) -> str:
    """An exception tiletune did not expect, as one short line (for the last-resort handlers that keep
    one bad input from stopping the rest, and the CLI's)."""
    text = " ".join(str(e).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"unexpected {type(e).__name__}" + (f" ({text})" if text else "") + "; a tiletune bug, please report it"
