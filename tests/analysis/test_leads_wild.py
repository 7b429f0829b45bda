"""The first sentence a person reads, and that the header, tables and verdicts never contradict it
(issue 23), on real artifacts of cache_samples/wild's working side (each artifact.json names its
public source and date). Every view a person reads is checked: the table, Markdown and the report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tiletune.analysis.pipeline import inspect
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "cache_samples" / "wild"


def _artifact(slug: str) -> Path:
    from tests.wild_split import is_held_out

    (path,) = [p for p in (WILD / slug).iterdir() if p.name != "artifact.json"]
    assert not is_held_out(path)  # a held-out artifact is never run by a test
    return path


def _views(slug: str) -> dict[str, str]:
    from tiletune.formats import render_text
    from tiletune.formats.report import ReportContext, format_report

    r = inspect([_artifact(slug)], ReadContext())
    text = render_text("inspect", r, "table", width=120)
    return {"result": r, "table": text, "markdown": render_text("inspect", r, "markdown"),
            "report": format_report(r, ReportContext())}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _lead(table: str) -> str:
    """The first verdict of the table view, its wrapped lines joined (without its evidence lines)."""
    body = table.split("\nVerdicts\n", 1)[1]
    first = []
    for ln in body.splitlines():
        if first and (ln.startswith("  ") and not ln.startswith("   ") or ln.strip().startswith("evidence ")):
            break
        first.append(ln.strip())
    return " ".join(first)


def test_no_valid_gemm_config_is_a_tuning_failure_per_shape_everywhere():
    # NVIDIA/TensorRT-LLM#1739: nine '[TensorRT-LLM][WARNING] Have not found any valid GEMM config for shape
    # (m=.., n=6144, k=4096). Will try to use default or fail at runtime' lines and nothing else. Its
    # GemmPluginProfiler logs that after every tactic failed profiling for the shape: a tuning failure per
    # shape (issue 22), so the header's "9 failed", the Failures table and the lead say the same.
    v = _views("trtllm-1739-no-valid-gemm-config-m1-to-256-warnings")
    lead = _lead(v["table"])
    assert lead.startswith("no tactic passed TensorRT-LLM's GEMM profiling for 9 shapes (n=6144, k=4096: m = 1, 2, 4, "
                           "8, 16, 32, 64, 128 and 256)")
    assert "9 warnings 'Have not found any valid GEMM config for shape'" in lead
    assert "'will try to use default or fail at runtime'" in lead and "the text does not show the run ending" in lead
    assert "warning lines only" in lead
    for name in ("table", "markdown", "report"):
        assert "not failures" not in _flat(v[name]) and "no failure in the text" not in _flat(v[name])
    assert v["table"].splitlines()[0] == "tiletune inspect: 1 input, 9 entries (9 failed)"
    assert "\nFailures (per op" in v["table"] and "9 failed attempts" in v["report"]


def test_info_skips_are_skips_in_the_header_the_tables_and_the_lead():
    # a real vLLM INFO log (sparkrun#175): 'Skipped 4 unsupported tactic(s) for trtllm::fused_moe::gemm1' in three
    # profiles. The lead calls them skips, not failures: the header and the tables must not count them as failed.
    v = _views("sparkrun-175-vllm-fp4-moe-autotune-info")
    assert "(skips, not failures)" in _lead(v["table"])
    assert v["table"].splitlines()[0] == "tiletune inspect: 1 input, 1 entries (1 INFO skip count(s))"
    assert "failed" not in v["table"].splitlines()[0]
    table = v["table"]
    assert "\nFailures (per op" not in table
    skipped = table.split("\nSkipped as unsupported", 1)[1]
    assert re.search(r"trtllm::fused_moe::gemm1\s+12\s+4 in 3 profiles", skipped)
    assert "## Skipped as unsupported" in v["markdown"] and "## Failures" not in v["markdown"]
    assert "| ? trtllm::fused_moe::gemm1 | 12 | 4 in 3 profiles |" in v["markdown"]
    assert "12 tactic skip(s) as unsupported (INFO counts, not failures)" in v["report"]
    title, _, summary = v["report"].splitlines()[:3]
    assert "failing tactics" not in title and "failed attempts" not in summary
    # the JSON keeps the record as the reader read it (the output contract)
    assert [f.count for f in v["result"].failures] == [12]


@pytest.mark.parametrize("slug", ["dspark-gx10-gb10-vllm-moe-autotune-glued-tqdm-saved-60"])
def test_a_clean_start_up_with_skips_reads_no_failure_anywhere(slug):
    v = _views(slug)
    assert _lead(v["table"]).startswith("no failure in the text")
    assert "failed" not in v["table"].splitlines()[0] and "\nFailures (per op" not in v["table"]
