"""`retry --format markdown` is Markdown (issue 8 item 12): 3d96422 printed the plain-text table."""

from __future__ import annotations

import re

from tuner_fakes import FAKE_ENV, FakeEngine

from tiletune.cli.commands.retry import RetryOptions, retry


def test_retry_markdown_is_markdown(tmp_path):
    # two real attempts (fake children that exit with an error: their mode is the tactic number)
    opts = RetryOptions(ops=["fp8_gemm"], tactic="0-1", shapes=["16x64x64"], runner="FakeRunner",
                        ledger=tmp_path / "l.jsonl", fmt="markdown")
    out = retry(opts, progress=None, env=dict(FAKE_ENV), engine=FakeEngine()).text
    lines = out.splitlines()
    assert lines[0] == "## tiletune retry"
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| op | runner |"))
    assert re.fullmatch(r"\|(---\|)+", lines[header + 1])
    rows = lines[header + 2: header + 4]
    assert [r.split(" | ")[:3] for r in rows] == [["| fp8_gemm", "FakeRunner", "0"], ["| fp8_gemm", "FakeRunner", "1"]]
    assert not any(re.match(r"^-{3,}  ", ln) for ln in lines)  # no plain-text table rule
    assert any(ln.startswith("- Relative error") for ln in lines)
