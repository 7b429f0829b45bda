"""retry's exit status counts a skipped ledger line as a loss (exit 2), as inspect does; the rest
of the ledger is still used (3d96422 and later exited 0: only a whole unusable file gave 2)."""

from __future__ import annotations

import json
from pathlib import Path

LEDGER = Path(__file__).resolve().parents[2] / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"


def test_a_skipped_ledger_line_is_exit_2_and_the_rest_still_exports(run, tmp_path):
    ledger = tmp_path / "l.jsonl"
    lines = LEDGER.read_text().splitlines()
    ledger.write_text("\n".join([*lines, '{"schema": "tiletune.ledger/1", "problem": {"m": 1}, "tactic": [[[[1]]]]}']) + "\n")
    r = run("retry", ledger, "--no-run", "--blocklist", tmp_path / "b.json")
    assert r.exit_code == 2, r.output
    assert "l.jsonl" in r.stderr
    blocked = json.loads((tmp_path / "b.json").read_text())
    assert blocked["invalid_tactics"] == {"fp8_gemm::CublasFp8GemmRunner": [99, 150]}  # the good lines still export


def test_a_clean_ledger_is_exit_0(run, tmp_path):
    r = run("retry", LEDGER, "--no-run", "--blocklist", tmp_path / "b.json")
    assert r.exit_code == 0, r.output
