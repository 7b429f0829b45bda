"""The bug-ticket report: golden Markdown and JSON (volatile fields masked), redaction, pictures.

The result comes from tests/formats/conftest.py's synthetic records with recorded model numbers.
Regenerate the goldens after an intended change with TILETUNE_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from synthetic import port, synthetic_entries  # the shared synthetic data (tests/synthetic.py)

from tiletune import __version__
from tiletune.analysis.pipeline import build, inspect
from tiletune.cli.commands import report as report_files
from tiletune.formats import report
from tiletune.formats.redact import redact
from tiletune.readers.interface import ReadContext

GOLDEN = Path(__file__).parent / "golden"


def _result():
    ents, sources = synthetic_entries()
    return build(ents, sources=sources, model=port())


def _mask(text: str) -> str:
    """Mask what changes between runs and releases: timestamps and the tiletune version."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<TIME>", text)
    return text.replace(f"tiletune {__version__}", "tiletune <VERSION>").replace(f'"{__version__}"', '"<VERSION>"')


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("TILETUNE_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}; TILETUNE_UPDATE_GOLDEN=1 to accept"


CTX = report.ReportContext(paths=("/data/alice/warmup",), generated_at="2026-11-30 12:00 UTC",
                           plots=(("sm120", "fp4_gemm", "report-roofline-sm120-fp4_gemm.png"),))


def test_markdown_golden():
    _golden("report.md", _mask(report.format_report(_result(), CTX)))


def test_json_golden():
    text = report.format_report_json(_result(), CTX)
    doc = json.loads(text)
    assert doc["schema"] == "tiletune.report/1" and doc["inspect"]["schema"] == "tiletune.inspect/1"
    _golden("report.json", _mask(text))


def test_report_sections_read_as_a_ticket():
    text = report.format_report(_result(), CTX)
    for heading in ("## Verdict", "## Environment", "## Chosen tiles", "## Failures", "## Reproduce", "## Roofline"):
        assert heading in text
    assert "**sm120 fp4_gemm**: winners 128x128x256 only" in text
    assert "not explained by shared memory" in text
    assert "![sm120 fp4_gemm roofline (model)](report-roofline-sm120-fp4_gemm.png)" in text
    # dense peak is what efficiency uses; the sparse figure is only an aside
    assert "dense peak nvfp4 1,870 TFLOP/s (efficiency is against this)" in text
    assert "2:4-sparse figure nvfp4 3,740 TFLOP/s, not used" in text
    assert "tiletune model --gpu 'RTX PRO 6000 Blackwell Server Edition' --dtype nvfp4 --m 16 --n 7168 --k 4608 --tile 256x128x128" in text
    assert "<details>" in text  # error texts fold


def test_redact_paths_hosts_users():
    text = "read /data/alice/cache/fp4.json and /data/alice/logs/a.log on gpu-node-7 as alice; see https://github.com/x/y/ and sm120/sm121."
    out = redact(text, host_names=["gpu-node-7"], user_names=["alice"], home="/home/alice")
    assert out == "read <dir1>/fp4.json and <dir2>/a.log on <host> as <user>; see https://github.com/x/y/ and sm120/sm121."
    assert redact("/home/alice/.cache/flashinfer/x.json", home="/home/alice") == "~/.cache/flashinfer/x.json"


def test_render_files_writes_pictures_beside_the_report(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sub" / "ticket.md"
    files = report_files.render_files(_result(), output=out, as_json=False, plot=True, redact_names=True,
                                paths=["/data/alice/warmup"], gpu=None, generated_at="T")
    pngs = [p for p in files if p is not None and p.suffix == ".png"]
    assert [p.name for p in pngs] == ["ticket-roofline-sm120-fp4_gemm.png", "ticket-tilemap.png"]
    assert files[pngs[0]][:8] == b"\x89PNG\r\n\x1a\n"
    text = files[out]
    assert "](ticket-roofline-sm120-fp4_gemm.png)" in text
    assert "/data/alice" not in text and "&lt;dir1&gt;/" in text  # redacted before escaping: the token is text, not a tag


def test_no_plot_and_stdout_say_why(tmp_path):
    files = report_files.render_files(_result(), output=None, as_json=False, plot=True, redact_names=False, paths=[], gpu=None)
    assert list(files) == [None] and "written only with -o FILE" in files[None]
    files = report_files.render_files(_result(), output=tmp_path / "r.md", as_json=False, plot=False, redact_names=False, paths=[], gpu=None)
    assert len(files) == 1 and "skipped (--no-plot)" in files[tmp_path / "r.md"]


def test_a_winner_seen_in_cache_and_log_is_one_row(sample):
    # the demo's cache and its warm-up log both record fp4_gemm tactic 8 for buckets 16 and 32
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats.report import chosen_sections
    from tiletune.readers.interface import ReadContext

    sections = {title: rows for title, _, rows, *_ in chosen_sections(inspect([sample("demo")], ReadContext()))}
    (fp4_rows,) = [rows for title, rows in sections.items() if "fp4_gemm" in title]
    assert [(r[0], r[3], r[4]) for r in fp4_rows] == [("9-16", "8", "128x64x128 swapAB"), ("17-32", "8", "128x64x128 swapAB")]


def test_a_ticket_keeps_the_rows_it_can_show_and_counts_the_rest(sample, tmp_path):
    # a ticket shows 40 rows a section at most: the rows past them are counted, not kept (a 200 MB
    # cache's rows were 350 MB); the kept ones, the count and the footnotes are the whole list's
    import shutil

    from tests.readers.big_caches import make_cache
    from tiletune.formats.report import chosen_sections

    make_cache(3000, tmp_path / "big.json")
    shutil.copytree(sample("demo"), tmp_path / "demo")  # (a cache and its log: winners seen twice)
    result = inspect([tmp_path / "big.json", tmp_path / "demo"], ReadContext())
    whole = chosen_sections(result)
    kept = chosen_sections(result, keep_rows=40)
    assert any(len(rows) > 40 for _, _, rows, *_ in whole)
    for (title, gpu, rows, notes, headers, count), (title2, gpu2, rows2, notes2, headers2, count2) in zip(whole, kept):
        assert (title, gpu, notes, headers, count) == (title2, gpu2, notes2, headers2, count2)
        assert rows2 == rows[:40] and count == len(rows)
        # the set that finds a row seen already holds one shape's rows: none is left twice
        assert len({tuple(r) for r in rows}) == len(rows)


def test_title_leads_with_what_ended_the_run(tmp_path):
    """A fatal event leads the verdicts, so it leads the title too (not the first failing op)."""
    log = tmp_path / "server.log"
    log.write_text(
        "INFO 09-06 12:00:01 [gpu_model_runner.py:1] Loading model\n"
        "(EngineCore_0 pid=1) RuntimeError: [FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120. Error: Error Internal\n",
        encoding="utf-8",
    )
    title = report._title(inspect([log], ReadContext(), env={}, home=tmp_path))
    assert title.startswith("tiletune report: run ended - "), title
    assert "fp4_gemm" in title and "failing tactics" not in title
    assert report._title(_result()) == "tiletune report: failing tactics - sm120 fp4_gemm"
