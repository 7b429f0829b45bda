"""cli/__init__.py: a plain `tiletune inspect PATH... [--format F]` runs without typer. Pinned to the typer
path (the plain reference): `plain_inspect` reads a command line only where click reads the same
paths and format with every other option at its default, and a whole run prints the same stdout
and stderr and exits with the same status; the plain run imports neither typer nor click."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer

import tiletune.cli.typer_app as cli
from tiletune.cli import plain_inspect
from tiletune.cli.output import OutputFormat

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
LOG = ROOT / "cache_samples" / "logs" / "sm120_0.6.17_warmup_debug.log"


def _click_params(args: list[str]) -> dict | None:
    """What click (through typer's inspect command) makes of `inspect ARGS`; None when it refuses them."""
    group = typer.main.get_command(cli._app_for(["tiletune", "inspect"]))
    assert isinstance(group, click.Group)
    command = group.get_command(click.Context(group, info_name="tiletune"), "inspect")
    assert command is not None
    try:
        ctx = command.make_context("inspect", list(args))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return ctx.params


# every other option at its default, as click holds it (the repeatable ones empty: the body reads None and () alike)
_DEFAULTS = {"arch": None, "flashinfer_version": None, "gpu": None, "output": None, "fail_on": None, "all_rows": False,
             "only_op": (), "only_arch": (), "only_rank": (), "only_status": (), "runtime_m": (), "uncalibrated": False,
             "baseline": None, "summary": False, "verbose": False,
             "moe_dtype": None, "fleet": False}

_WORDS = ["a.json", "b", "dir/c.log", "inspect", "json", "table", "markdown", "JSON", "xml", "--format", "-f",
          "--format=json", "--format=table", "--format=", "--format=Json", "-fjson", "-f=json", "--", "-", "",
          "--all", "-o", "out.txt", "--gpu", "H200", "-h", "--help", "--formats", "--form", " ", "é.json", "-x"]


def _cases() -> list[list[str]]:
    rng = random.Random(12)
    cases = [["a.json"], ["a.json", "--format", "json"], ["-f", "markdown", "a.json", "b"], ["--format=json", "a.json"],
             ["a.json", "-f"], ["a.json", "--format"], ["a.json", "-f", "json", "-f", "table"], ["--", "a.json"],
             ["a.json", "-f", "-f"], ["a.json", "-f", "--all"], ["-"], [], ["--format", "json"], ["a.json", ""]]
    cases += [[rng.choice(_WORDS) for _ in range(rng.randint(0, 6))] for _ in range(1500)]
    return cases


def test_a_plain_command_line_is_read_as_click_reads_it() -> None:
    taken = 0
    for args in _cases():
        plain = plain_inspect(["inspect", *args], {})
        if plain is None:
            continue
        taken += 1
        params = _click_params(args)
        assert params is not None, args
        paths, fmt = plain
        # click's values before typer's conversion: the path words and the format's value
        assert [Path(p) for p in params["paths"]] == paths and OutputFormat(params["format"]).value == fmt, args
        assert {k: v for k, v in params.items() if k not in ("paths", "format")} == _DEFAULTS, args
    assert taken > 100  # the generator does reach the plain forms


def test_other_command_lines_go_to_typer() -> None:
    assert plain_inspect(["inspect", "a.json"], {"_TILETUNE_COMPLETE": "bash_complete"}) is None  # shell completion
    for argv in (["report", "a.json"], ["inspectt", "a.json"], ["--version"], [], ["inspect"], ["inspect", "-o", "x", "a"]):
        assert plain_inspect(argv, {}) is None, argv


def _run(entry: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
    r = subprocess.run([sys.executable, "-c", f"from tiletune.{entry} import main; main()", *args], capture_output=True,
                       text=True, env=env, cwd=cwd, timeout=600)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args", [
    [str(CACHE), "--format", "json"], [str(CACHE)], ["-f", "markdown", str(CACHE)], [str(LOG), "--format=json"],
    [str(LOG)], [str(CACHE), str(LOG), "-f", "json"], ["missing.json"], ["bad/truncated.json", "-f", "json"],
    ["bad/binary.json"], ["bad"], [str(ROOT / "cache_samples" / "jit"), "-f", "json"],
])
def test_the_plain_run_prints_and_exits_as_typer_does(args: list[str]) -> None:
    assert plain_inspect(["inspect", *args], {}) is not None
    where = ROOT / "cache_samples"
    fast, typer_path = _run("cli", ["inspect", *args], where), _run("cli.typer_app", ["inspect", *args], where)
    assert fast == typer_path
    assert fast[1] or fast[2]


_CHILD = """
import sys
from tiletune.cli import process
from tiletune import cli
exit_kept = process.exit_kept
def report(code):
    sys.stdout.flush()
    sys.stderr.write("\\nLOADED " + str(sorted(m for m in ("typer", "click", "tiletune.cli.typer_app") if m in sys.modules)) + "\\n")
    exit_kept(code)
process.exit_kept = report
cli.main()
"""


def test_the_plain_run_imports_neither_typer_nor_click() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", _CHILD, "inspect", str(CACHE), "--format", "json"], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=600)
    assert r.returncode == 0 and json.loads(r.stdout)["entries"]
    assert r.stderr.rsplit("\nLOADED ", 1)[1].strip() == "[]"
