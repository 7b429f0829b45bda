"""Issue 8 item 12: footnotes and sources have distinct markers, --runner's help is whole at 80
columns, retry --format markdown is Markdown (tests/tuner/test_retry_markdown.py), the Markdown legend is one flat list, and shell
completion is offered."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tiletune.cli.commands.retry import DEFAULT_RUNNERS
from tiletune.cli.typer_app import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"
H200 = SAMPLES / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"


def test_footnotes_and_sources_never_share_a_marker(run):
    out = run("inspect", H200, SAMPLES / "demo", "--all").stdout
    sources = set(re.findall(r"^  (\[\d+\]) ", out, re.M))  # the source legend: [1] path (kind)
    footnotes = set(re.findall(r"^(\[[a-z]+\]) ", out, re.M))  # each section's notes
    in_rows = set(re.findall(r"\[[0-9a-z]+\]", out))
    assert sources and footnotes and sources.isdisjoint(footnotes)
    assert {"[1]", "[2]"} <= sources and "[a]" in footnotes
    assert in_rows <= sources | footnotes | set(re.findall(r"\[\d+\]", out))  # nothing else looks like a marker


def test_runner_help_is_whole_at_80_columns():
    env = dict(os.environ, COLUMNS="80", PYTHONPATH=str(ROOT))
    text = subprocess.run([sys.executable, "-m", "tiletune", "retry", "--help"], capture_output=True, text=True,
                          env=env, timeout=600).stdout
    assert "…" not in text
    flat = " ".join(text.replace("│", " ").split())
    for op, runner in DEFAULT_RUNNERS.items():
        assert f"{op} {runner}" in flat


def test_markdown_legend_is_a_flat_list(run, sample):
    out = run("inspect", sample("demo"), "--format", "markdown").stdout
    legend = out.split("## Legend", 1)[1].strip().splitlines()
    assert legend and all(ln.startswith("- ") for ln in legend)
    assert not any(re.match(r"- [*+-] ", ln) for ln in legend)  # a nested bullet
    assert legend[0].startswith(r"- \* model values")


@pytest.mark.parametrize("flag", ["--show-completion", "--install-completion"])
def test_shell_completion_is_offered(flag, tmp_path):
    r = CliRunner().invoke(app, ["--help"])
    assert flag in r.output
    if flag == "--show-completion":  # prints the script; --install-completion would edit a shell rc file
        env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path), SHELL="/bin/bash")
        p = subprocess.run([sys.executable, "-m", "tiletune", flag, "bash"], capture_output=True, text=True,
                           env=env, timeout=600)
        assert p.returncode == 0 and "complete" in p.stdout and "COMP_WORDS" in p.stdout
    else:  # accepted: it installs into a throwaway HOME
        env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path), SHELL="/bin/bash")
        p = subprocess.run([sys.executable, "-m", "tiletune", flag, "bash"], capture_output=True, text=True,
                           env=env, timeout=600)
        assert p.returncode == 0, p.stderr
        assert "completion" in (tmp_path / ".bashrc").read_text()
