"""`tiletune catalog`: every tactic of a table prints differently (the columns that vary within a
table are added: epilogue schedule / fusion, kernel SM, dynamic and fallback cluster, CUDA-kernel
flag), and -f/--format takes table, json and markdown like the other commands."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tiletune.catalogs import listing
from tiletune.cli.typer_app import app
from tiletune.formats import catalog as catalog_fmt


@pytest.mark.parametrize("version", ["0.6.3", "0.6.14", "0.6.18rc7", "0.7.4"])
def test_no_two_tactics_of_a_table_print_the_same(version):
    view = listing.catalog_view(version)
    assert view["tables"]
    for t in view["tables"]:
        cols = catalog_fmt.columns(t["configs"])
        printed = [tuple(f(c) for h, f in cols if h != "tactic") for c in t["configs"]]
        # two tactics may be the very same config in the C++: on SM89 the SM80-style list comes from
        # getTmaWarpSpecializedConfigs and again from getAmpereConfigs. Distinct configs never print alike.
        distinct = {json.dumps({k: v for k, v in c.items() if k != "index"}, sort_keys=True) for c in t["configs"]}
        assert len(set(printed)) == len(distinct), (version, t["op"], t["arch"], t["variant"])


def test_finalize_copies_show_their_epilogue_fusion():
    view = listing.catalog_view("0.6.14", "sm90", "trtllm::fused_moe::gemm2")
    (t,) = [t for t in view["tables"] if t["variant"] == {"act": "bf16", "weight": "bf16", "finalize": True}]
    headers = [h for h, _ in catalog_fmt.columns(t["configs"])]
    assert "epilogue fusion" in headers
    assert {c["epilogue_fusion"] for c in t["configs"]} >= {"NONE", "FINALIZE"}
    text = catalog_fmt.render_table(view)
    assert "FINALIZE" in text and "epilogue fusion" in text


def _cli(*args):
    r = CliRunner().invoke(app, ["catalog", *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_format_short_flag_and_markdown():
    out = _cli("-f", "markdown", "--flashinfer-version", "0.6.5", "--arch", "sm120", "--op", "fp4_gemm")
    assert out.startswith("# FlashInfer 0.6.5 tactic catalogs")
    lines = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert lines[0].startswith("| tactic | enum | CTA tile (elem)")
    assert len(lines) == 1 + 6  # header + the 6 SM120 FP4 tactics of 0.6.4..0.6.6 (test_dense_catalogs)
    assert "<details>" not in out  # 6 rows: not folded
    overview = _cli("-f", "markdown", "--all")  # every release's row (the default is one row per op)
    assert "| release | op | archs |" in overview and "| 0.7.4 |" in overview
    assert "| op | releases | archs |" in _cli("-f", "markdown")
    data = json.loads(_cli("-f", "json", "--flashinfer-version", "0.6.14", "--arch", "sm90", "--op",
                           "trtllm::fused_moe::gemm2"))
    row = data["tables"][0]["configs"][0]
    assert {"epilogue_schedule", "epilogue_fusion"} <= row.keys()


def test_unknown_format_is_a_usage_error():
    r = CliRunner().invoke(app, ["catalog", "-f", "yaml"])
    assert r.exit_code == 2
