"""ledgers.digest (streamed) gives what read_attempts + latest + exports.blocklist_metadata give (held)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tiletune.tuner import exports, ledgers

LEDGER = Path(__file__).resolve().parents[2] / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"


def _ledgers(tmp: Path, seed: int) -> list[Path]:
    rng = random.Random(seed)
    base = [json.loads(x) for x in LEDGER.read_text().splitlines()]
    paths = []
    for n in range(3):
        lines = []
        for a in rng.sample(base, k=len(base)) * 2:
            a = dict(a, started_at=f"2026-12-0{rng.randrange(1, 4)}T00:00:0{rng.randrange(0, 3)}Z",
                     env_id=rng.choice(["e1", "e2"]), env=dict(a.get("env") or {}))
            roll = rng.random()
            if roll < 0.2:
                a["env"]["flashinfer_metadata"] = {"flashinfer_version": rng.choice(["0.7.2", "0.7.3"]), "gpu": "G", "x": "1"}
            elif roll < 0.5:
                a["env"]["gpu"] = rng.choice(["A", "B"])
                a["env"]["cuda_runtime"] = rng.choice(["12.8", "13.0"])
            lines.append(json.dumps(a))
        p = tmp / f"l{n}.jsonl"
        p.write_text("\n".join(lines + lines[:5]) + "\n")  # some lines repeated
        paths.append(p)
    return paths + [paths[0]]  # one named twice


@pytest.mark.parametrize("seed", range(12))
def test_digest_matches_the_held_reading(tmp_path: Path, seed: int) -> None:
    paths = _ledgers(tmp_path, seed)
    held, read = ledgers.read_attempts(paths)
    d = ledgers.digest(paths, exports.METADATA_FIELDS)
    assert d.read == read
    want = ledgers.latest(held)
    assert {k: json.dumps(v, sort_keys=True) for k, v in d.latest.items()} == {k: json.dumps(v, sort_keys=True) for k, v in want.items()}
    assert d.metadata == exports.blocklist_metadata(held)
