"""cli/typer_app.py's annotations are evaluated once, at import (no `from __future__ import annotations`):
typer then reads real objects instead of compiling and evaluating every option's annotation string
twice per command at each start. The command line must be exactly the one the deferred-annotation
module builds (the plain reference): same commands, parameters, types, defaults and help."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import click
import typer

import tiletune.cli.typer_app as cli

SOURCE = Path(cli.__file__).read_text(encoding="utf-8")


def _deferred_twin() -> types.ModuleType:
    """cli/typer_app.py compiled with `from __future__ import annotations` (every annotation a string)."""
    assert not isinstance(cli.inspect_command.__annotations__["format"], str)  # the change this file pins
    mod = types.ModuleType("tiletune_cli_deferred_twin")
    mod.__file__ = cli.__file__
    sys.modules[mod.__name__] = mod  # typer resolves the string annotations in the module's globals
    try:
        exec(compile("from __future__ import annotations\n" + SOURCE, cli.__file__, "exec"), mod.__dict__)  # noqa: S102
    finally:
        del sys.modules[mod.__name__]
    assert isinstance(mod.inspect_command.__annotations__["format"], str)
    return mod


def _shape(value: object) -> object:
    """A click info dict with enum members (one class per module copy) replaced by their values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shape(v) for v in value]
    return getattr(value, "value", value)


def _commands(app: typer.Typer) -> dict[str, object]:
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    ctx = click.Context(group, info_name="tiletune")
    out: dict[str, object] = {"": _shape(group.to_info_dict(ctx))}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        out[name] = _shape(command.to_info_dict(click.Context(command, info_name=name, parent=ctx)))
    return out


def test_the_command_line_is_the_deferred_annotation_one() -> None:
    ours, plain = _commands(cli.app), _commands(_deferred_twin().app)
    assert set(ours) >= {"", "inspect", "report", "diff", "retry", "model", "gpus", "doctor", "catalog"}
    for name in ours:
        assert ours[name] == plain[name], name


def test_every_parameter_is_compared() -> None:
    """The comparison above sees each option's help and default, not an empty summary."""
    inspect_info = _commands(cli.app)["inspect"]
    assert isinstance(inspect_info, dict)
    params = {p["name"]: p for p in inspect_info["params"]}
    assert params["format"]["default"] == "table" and "schema tiletune.inspect/1" in params["format"]["help"]
    assert params["paths"]["param_type_name"] == "argument" and params["paths"]["nargs"] == -1
    assert params["fail_on"]["type"]["choices"] == ["fatal", "failed"]
