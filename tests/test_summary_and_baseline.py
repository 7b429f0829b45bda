"""A short view, a verbose one, and a baseline of accepted failures (issue 25, item 12).

Before, `--fail-on failed` could never pass on SM120 MXFP8 0.6.x (tactics 6-9 always fail there),
and there was no short view. `--baseline FILE` (a previous inspect JSON, a FlashInfer blocklist,
or 'OP TACTICS' lines) makes it fail on new failures only.
"""

from __future__ import annotations

import json

import pytest

DEMO = "demo"


def test_summary_is_verdicts_and_counts(run, sample):
    full = run("inspect", sample(DEMO)).output
    short = run("inspect", sample(DEMO), "-q")
    assert short.exit_code == 0
    assert "Verdicts" in short.output and "Counts: 4 failure row(s) (8 failed attempt(s))" in " ".join(short.output.split())
    assert "Failures" not in short.output and "== sm120" not in short.output
    assert len(short.output) < len(full) / 3
    assert "Counts:" in run("inspect", sample(DEMO), "--summary", "-f", "markdown").output


def test_verbose_lists_every_tactic_and_never_tried_tile(run, sample):
    layout = sample("layouts/sglang/flashinfer/autotune/0.6.14")
    default = run("inspect", layout).output
    verbose = run("inspect", layout, "-v").output
    assert "+3 more" in default and "more" not in verbose[verbose.index("Never tried"):].split("\n")[1]
    assert "status" in verbose  # --all's per-tactic table
    assert run("inspect", layout, "-q", "-v").exit_code == 2


def test_fail_on_failed_fails_without_a_baseline(run, sample):
    res = run("inspect", sample(DEMO), "--fail-on", "failed")
    assert res.exit_code == 1


def test_a_previous_inspect_json_accepts_its_failures(run, sample, tmp_path):
    base = tmp_path / "accepted.json"
    base.write_text(run("inspect", sample(DEMO), "-f", "json").stdout)
    res = run("inspect", sample(DEMO), "--fail-on", "failed", "--baseline", base)
    assert res.exit_code == 0 and "every one accepted" in res.output


@pytest.mark.parametrize("lines, code", [("mxfp8_gemm 6-9\n", 0), ("# known on SM120\nmxfp8_gemm 6,7\n", 1)])
def test_a_list_of_accepted_failures(run, sample, tmp_path, lines, code):
    base = tmp_path / "accepted.txt"
    base.write_text(lines)
    res = run("inspect", sample(DEMO), "--fail-on", "failed", "--baseline", base)
    assert res.exit_code == code, res.output
    if code:
        assert "2 new failure(s)" in res.output and "tactic 8" in res.output and "tactic 9" in res.output


def test_a_flashinfer_blocklist_is_a_baseline(run, sample, tmp_path):
    base = tmp_path / "tactics_x.json"
    base.write_text(json.dumps({"_metadata": {}, "invalid_tactics": {"mxfp8_gemm::CutlassMxfp8GemmRunner": [6, 7, 8, 9]}}))
    assert run("inspect", sample(DEMO), "--fail-on", "failed", "--baseline", base).exit_code == 0


def test_a_file_that_is_no_baseline_is_one_line_exit_2(run, sample, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a list\n")
    res = run("inspect", sample(DEMO), "--fail-on", "failed", "--baseline", bad)
    assert res.exit_code == 2 and "--baseline" in res.output and len(res.output.strip().splitlines()) == 1
