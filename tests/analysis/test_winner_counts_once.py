"""Winner counts are not doubled when a log and a cache record the same choice (issue 25, item 5).

The demo holds one warm-up twice: its DEBUG log ("profiling chosen runner" lines) and the cache
that run saved. Each op has two buckets; before, each verdict said its winner won 4.
"""

from __future__ import annotations

import json


def _verdicts(run, *paths):
    res = run("inspect", *paths, "-f", "json")
    return {v["op"]: v for v in json.loads(res.output)["verdicts"] if v["op"]}


def test_a_log_and_its_cache_count_each_bucket_once(run, sample):
    both = _verdicts(run, sample("demo"))
    log_only = _verdicts(run, sample("demo/flashinfer/0.6.17/120f/flashinfer_jit.log"))
    for op in ("fp4_gemm", "mxfp8_gemm"):
        assert both[op]["winners"] == log_only[op]["winners"]
        assert sum(w["buckets"] for w in both[op]["winners"]) == 2


def test_two_ranks_choosing_are_two_choices(run, sample):
    """Ranks are separate tuners: the same tile chosen by two ranks for one bucket counts twice
    (16 buckets x 2 ranks = 32 chosen tiles per op), as before."""
    v = _verdicts(run, sample("layouts/sglang/flashinfer/autotune/0.6.14"))
    assert sum(w["buckets"] for w in v["fp4_gemm"]["winners"]) == 32
