"""inspect's default view: one line per M bucket, filters, --m, the tile map, rank disagreements."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

RANKS = Path(__file__).parent / "data" / "h200_warmups" / "ranks"


def test_default_is_one_line_per_bucket_and_all_lists_every_tactic(run, sample):
    compact = run("inspect", sample("demo"))
    full = run("inspect", sample("demo"), "--all")
    assert compact.exit_code == full.exit_code == 0
    # the demo's fp4 section: 2 buckets won, 66 profiled tactic rows in --all
    assert "== sm120 fp4_gemm - CutlassFp4GemmRunner, N 7168, K 4608 (flashinfer 0.6.17) ==" in compact.stdout
    def fp4_rows(text: str) -> int:
        section = text.split("== sm120 fp4_gemm", 1)[1].split("\n\n", 1)[0].splitlines()[3:]  # title, header, rule
        return sum(1 for line in section if not line.startswith(("runtime M", " ")))
    assert fp4_rows(compact.stdout) == 3 and fp4_rows(full.stdout) > 60  # 2 buckets + 1 fallback M; every tactic
    lines = compact.stdout.splitlines()
    head = lines.index(next(x for x in lines if x.startswith("== sm120 fp4_gemm")))
    assert lines[head + 1].split()[:2] == ["M", "bucket"]
    row = lines[head + 3]
    assert row.startswith("9-16") and "128x64x128 swapAB" in row
    assert "Tile map" in compact.stdout and "!4" in compact.stdout  # 4 MXFP8 tactics failed at M 9-16


def test_failures_end_with_the_next_step(run, sample):
    out = run("inspect", sample("demo")).stdout
    # the command on a line of its own, the blocklist named as FlashInfer names it (issue 25 items 9, 14)
    assert "--op mxfp8_gemm --tactic 6,7,8,9 --blocklist tactics_NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition.json\n" in out
    assert "absent from 0.7.0 on" in out.replace("\n      ", " ")


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_runtime_m_answers_which_tile_runs(run, sample, fmt):
    out = run("inspect", sample("demo"), "--m", "12,37", "--format", fmt).stdout.replace("\n      ", " ").replace("&gt;", ">")
    assert "M 12 -> bucket 16: sm120 fp4_gemm N 7168 K 4608: 128x64x128 swapAB" in out
    assert "M 37 -> bucket 64: sm120 fp4_gemm N 7168 K 4608: no tuned bucket" in out


def test_bad_runtime_m_is_one_line_exit_2(run, sample):
    r = run("inspect", sample("demo"), "--m", "0,x")
    assert r.exit_code == 2 and "--m" in r.output and "Traceback" not in r.output


def test_filters_keep_verdicts_and_failures_consistent(run, sample):
    r = run("inspect", sample("demo"), "--op", "fp4_gemm", "--format", "json")
    doc = json.loads(r.stdout)
    assert {e["op"] for e in doc["entries"]} == {"fp4_gemm"}
    assert [v["op"] for v in doc["verdicts"]] == ["fp4_gemm"] and doc["failures"] == []
    r = run("inspect", sample("demo"), "--status", "failed", "--format", "json")
    assert {e["status"] for e in json.loads(r.stdout)["entries"]} == {"failed"}
    r = run("inspect", sample("demo"), "--only-arch", "sm90", "--format", "json")
    # an arch the inputs do not hold is a usage error listing theirs (issue 25 item 6)
    assert r.exit_code == 2 and "archs here: sm120" in r.output
    bad = run("inspect", sample("demo"), "--status", "won")
    assert bad.exit_code == 2 and "--status 'won'" in bad.output


def test_rank_filter_and_rank_disagreements_in_json(run):
    doc = json.loads(run("inspect", RANKS, "--format", "json").stdout)
    schema = json.loads(resources.files("tiletune.schemas").joinpath("inspect.schema.json").read_text())
    import jsonschema

    jsonschema.validate(doc, schema)
    [v] = doc["verdicts"]
    assert [d["problem"]["m"] for d in v["rank_disagreements"]] == [32, 256]
    assert [[c["rank"] for c in d["choices"]] for d in v["rank_disagreements"]] == [["tp0_pp0_dp0", "tp1_pp0_dp0"]] * 2
    assert v["disagreements"] == 0  # evidence-vs-model disagreements keep their meaning
    one = json.loads(run("inspect", RANKS, "--rank", "tp1_pp0_dp0", "--format", "json").stdout)
    assert {e["rank"] for e in one["entries"]} == {"tp1_pp0_dp0"}
    assert one["verdicts"][0]["rank_disagreements"] == []


def test_rank_disagreements_in_the_table(run):
    out = run("inspect", RANKS).stdout
    assert "Rank disagreements" in out and "ranks disagree in 2 bucket(s)" in out
    assert "disagree" in out.split("Tile map", 1)[1]


def test_compact_table_fits_the_width_it_is_given(sample):
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats.table import format_inspect
    from tiletune.readers.interface import ReadContext

    result = inspect([sample("demo")], ReadContext())
    for width in (80, 100, 120):
        text = format_inspect(result, width=width)
        section = text.split("Failures", 1)[0]  # failure rows are laid out for 120 columns separately
        assert max(len(line) for line in section.splitlines() if not line.startswith("op (N x K)") and "---" not in line) <= width


def test_tile_map_png_is_a_picture(sample):
    pytest.importorskip("matplotlib")
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats.glance import tile_map_png
    from tiletune.readers.interface import ReadContext

    png = tile_map_png((inspect([sample("demo")], ReadContext())).overview)
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000


def test_report_carries_the_tile_map_as_picture_and_folded_table(run, sample, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.md"
    r = run("report", sample("demo"), "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "## Tile map" in text and "![tile map: winning tile per bucket (decoded)](report-tilemap.png)" in text
    assert (tmp_path / "report-tilemap.png").read_bytes()[:4] == b"\x89PNG"
    assert "<summary>Tile map as a table (2 rows)</summary>" in text


def test_tile_map_colours_only_when_asked(sample):
    from tiletune.analysis.pipeline import inspect
    from tiletune.formats.table import format_inspect
    from tiletune.readers.interface import ReadContext

    result = inspect([sample("demo")], ReadContext())
    plain, coloured = format_inspect(result), format_inspect(result, colour=True)
    assert "\x1b[" not in plain
    tile_map = coloured.split("Tile map", 1)[1].split("\n\n", 1)[0]
    assert "\x1b[31m128x32x128 !4" in tile_map and "\x1b[32m128x64x128 swapAB ~" in tile_map
