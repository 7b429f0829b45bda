"""The formatter interface: every command's renderers exist, and a format a command lacks is a usage error."""

from __future__ import annotations

import pytest

from tiletune.core.errors import UsageError
from tiletune.formats import FORMATTERS, render


@pytest.mark.parametrize("command", sorted(FORMATTERS))
def test_every_renderer_named_exists(command):
    f = FORMATTERS[command]
    assert "table" in f.formats and "json" in f.formats
    for fmt in f.formats:
        assert callable(f.renderer(fmt))


def test_a_format_the_command_lacks_is_one_usage_error():
    # (catalog writes markdown since issue 8 item 12, doctor since issue 25 item 14; gpus writes table or json only)
    with pytest.raises(UsageError, match="--format markdown: tiletune gpus writes table or json"):
        render("gpus", {}, "markdown")


def test_render_goes_through_the_named_function():
    view = {"schema": "tiletune.catalog/1", "releases": [{"flashinfer_version": "0.7.2", "catalogs": [
        {"op": "fp4_gemm", "arch": "sm120", "runner": "CutlassFp4GemmRunner", "variant": None, "tactics": 7}]}]}
    text = render("catalog", view, "table", all_rows=True)  # every release's list sizes (issue 25 item 14)
    assert "0.7.2" in text and "sm120:7" in text
    assert "fp4_gemm  0.7.2" in render("catalog", view, "table")  # the default: one line per op
    assert render("catalog", view, "json").startswith("{")
