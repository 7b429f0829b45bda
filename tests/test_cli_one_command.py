"""cli._app_for: a command line that names a command first runs a copy of the app holding that
command alone (typer then builds its parameters only). Pinned to the full app (the plain
reference) for every command: the same click command, help, errors, output and exit status."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

import tiletune.cli.typer_app as cli

ROOT = Path(__file__).resolve().parents[1]
NAMES = [c.name for c in cli.app.registered_commands]
CACHE = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"


def _info(app: typer.Typer, name: str) -> tuple[dict, dict]:
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    ctx = click.Context(group, info_name="tiletune")
    command = group.get_command(ctx, name)
    assert command is not None
    root = {k: v for k, v in group.to_info_dict(ctx).items() if k != "commands"}
    return root, command.to_info_dict(click.Context(command, info_name=name, parent=ctx))


def test_every_command_is_covered() -> None:
    assert set(NAMES) >= {"inspect", "report", "diff", "retry", "model", "gpus", "doctor", "catalog"}


@pytest.mark.parametrize("name", NAMES)
def test_the_one_command_app_builds_the_same_command(name: str) -> None:
    one = cli._app_for(["tiletune", name])
    assert one is not cli.app and [c.name for c in one.registered_commands] == [name]
    assert _info(one, name) == _info(cli.app, name)


@pytest.mark.parametrize("argv", [
    ["inspect", "--help"], ["inspect", "--bogus"], ["inspect", str(CACHE), "--format", "json"], ["inspect", str(CACHE)],
    ["retry", "-h"], ["model", "--dtype", "fp8"], ["gpus", "--format", "json"], ["catalog", "--arch", "sm1000"],
    ["diff", str(CACHE)], ["report", "--help"], ["doctor", "--format", "xml"],
])
def test_same_output_and_exit_status(argv: list[str]) -> None:
    runner = CliRunner()
    ours = runner.invoke(cli._app_for(["tiletune", *argv]), argv)
    plain = runner.invoke(cli.app, argv)
    assert (ours.exit_code, ours.stdout, ours.stderr) == (plain.exit_code, plain.stdout, plain.stderr)
    assert ours.stdout or ours.stderr


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["--show-completion", "bash"], ["inspectt"], ["-h", "inspect"]])
def test_the_root_and_unknown_words_use_the_full_app(argv: list[str]) -> None:
    assert cli._app_for(["tiletune", *argv]) is cli.app
