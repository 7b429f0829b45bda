"""A real INFO log of a restart that reused a saved cache (FlashInfer 0.7.2.post1 on an H200,
tests/data/h200_warmups/README.md): the cache load, the cache hit and the fallback become data,
and the verdict says the run was served from the cache."""

from __future__ import annotations

import json
from pathlib import Path

LOG = Path(__file__).resolve().parents[1] / "data" / "h200_warmups" / "restart_info.log"


def test_cache_hit_loaded_configs_and_fallback_from_a_real_restart(run):
    r = run("inspect", LOG, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    by = {e["kind"]: e for e in doc["events"]}
    hit = by["config_cache_hit"]["facts"]
    assert (hit["op"]["value"], hit["runner"]["value"], hit["cache_source"]["value"]) == (
        "fp8_gemm", "CublasFp8GemmRunner", "config file")
    assert by["configs_loaded"]["facts"]["configs"]["value"] == 27
    [fb] = [e for e in doc["entries"] if e["status"] == "fallback"]
    assert fb["problem"]["m"] == 1027 and fb["tactic"] == -1
    assert not any(v.get("fatal") for v in doc["verdicts"])
    text = " ".join(v["text"] for v in doc["verdicts"])
    assert "1 op(s) used tuned configs from a cache (fp8_gemm), 27 config(s) loaded" in text
