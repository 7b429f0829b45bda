"""`tiletune catalog`: the releases overview, one release's table (text and JSON), and the
one-line exit-2 errors for unknown versions / archs / ops."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tiletune.cli.typer_app import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["catalog", *args])


def test_overview_lists_releases():
    r = invoke("--all")  # every release's list sizes (the default view is one line per op)
    assert r.exit_code == 0
    assert "0.6.4" in r.stdout and "0.7.2.post1" in r.stdout and "sm120:32" in r.stdout


def test_table_for_a_release_shows_elements_and_enum():
    r = invoke("--flashinfer-version", "0.6.14", "--arch", "sm121", "--op", "fp4_gemm")
    assert r.exit_code == 0
    assert "32 tactics, -1 = index 21" in r.stdout
    row21 = next(line for line in r.stdout.splitlines() if line.strip().startswith("21 "))
    assert "CtaShape128x128x128B" in row21 and "128x128x256" in row21


def test_json_for_a_release():
    r = invoke("--flashinfer-version", "0.7.2.post1", "--arch", "sm120", "--op", "mxfp8_gemm", "--format", "json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    (t,) = doc["tables"]
    assert t["tactics"] == 6 and [c["tile"] for c in t["configs"]][::2] == [[128, 32, 128], [128, 64, 128], [128, 128, 128]]


@pytest.mark.parametrize("args, needle", [
    (("--flashinfer-version", "0.5.0"), "no catalogs for FlashInfer 0.5.0; nearest: 0.6.3, 0.6.4"),
    (("--flashinfer-version", "0.6.14", "--arch", "sm75"), "unknown arch 'sm75'"),
    (("--flashinfer-version", "0.6.14", "--op", "nope_gemm"), "no catalogs for op 'nope_gemm'"),
    (("--flashinfer-version", "0.6.14", "--arch", "sm90", "--op", "fp4_gemm"), "has no catalog for fp4_gemm on sm90"),
])
def test_errors_are_one_line_exit_2(args, needle):
    r = invoke(*args)
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tiletune: ") and needle in lines[0]
