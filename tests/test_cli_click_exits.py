"""A command body that leaves through click (typer.Exit, click's Exit, Abort, ClickException and its
UsageError) exits as click says, with click's message, on both of the CLI's ways of running a
body: `_guard` (most commands) and `_run_batch` (the inspecting commands, through
cli.output.batch_status, which turns every other exception into one line and exit 2). Run through
typer and click themselves (CliRunner), with the CLI's own app settings."""

from __future__ import annotations

import click
import pytest
import typer
from typer.testing import CliRunner

from tiletune.cli import typer_app as cli

RAISES = {
    "typer-exit": lambda: typer.Exit(code=3),
    "click-exit": lambda: click.exceptions.Exit(4),
    "abort": lambda: typer.Abort(),
    "click-error": lambda: click.ClickException("the body said no"),
    "usage-error": lambda: click.UsageError("a usage problem the body found"),
    "bug": lambda: ValueError("an input provoked this"),
}


def _app(way: str, what: str) -> typer.Typer:
    app = typer.Typer(**cli._APP_SETTINGS)

    def body() -> int:
        raise RAISES[what]()

    @app.command("probe")
    def probe() -> None:
        if way == "batch":
            cli._run_batch(body, ["in.json"])
        else:
            cli._guard(body, ["in.json"])

    @app.command("other")  # (two commands: `probe` is then a subcommand, as the CLI's are)
    def other() -> None:
        pass

    return app


def _run(way: str, what: str):
    return CliRunner().invoke(_app(way, what), ["probe"])


@pytest.mark.parametrize("way", ["batch", "guard"])
@pytest.mark.parametrize("what, code, says", [
    ("typer-exit", 3, ""),
    ("click-exit", 4, ""),
    ("abort", 1, "Aborted!"),
    ("click-error", 1, "Error: the body said no"),
    ("usage-error", 2, "Error: a usage problem the body found"),
    ("bug", 2, "tiletune: in.json:"),
])
def test_click_exits_out_of_a_body_exit_as_click_says(way, what, code, says):
    r = _run(way, what)
    assert r.exit_code == code, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)  # no traceback escaped
    if says:
        assert says in r.stderr
    else:
        assert r.stderr == ""
    if what == "usage-error":
        assert "Usage: " in r.stderr and "probe" in r.stderr  # click's usage line for the command
    if what != "bug":
        assert "tiletune:" not in r.stderr  # not reported as a failure of the inputs


@pytest.mark.parametrize("what", RAISES)
def test_both_ways_of_running_a_body_say_the_same(what):
    batch, guard = _run("batch", what), _run("guard", what)
    assert (batch.exit_code, batch.stdout, batch.stderr) == (guard.exit_code, guard.stdout, guard.stderr)
