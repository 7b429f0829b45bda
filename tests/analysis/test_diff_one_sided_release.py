"""`diff` where the FlashInfer release is known on one side only (issue 25, item 2).

Two byte-identical logs, one under a JIT workspace path that names 0.6.17 and one that names no
release: before, "4 newly failing", exit 1. What cannot be compared is undetermined, with the
flag that settles it, never a change; with that flag the two sides are the same.
"""

from __future__ import annotations

import json

OLD = "logs/sm120_0.6.17_warmup_debug.log"
NEW = "demo/flashinfer/0.6.17/120f/flashinfer_jit.log"


def test_identical_logs_with_a_release_on_one_side_are_undetermined_not_changed(run, sample):
    assert sample(OLD).read_bytes() == sample(NEW).read_bytes()
    res = run("diff", sample(OLD), sample(NEW))
    assert res.exit_code == 0, res.output
    assert "newly failing" not in res.output and "recovered" not in res.output
    head = res.output.splitlines()[0]
    assert "undetermined" in head and "environment differs" not in head
    assert "--old-flashinfer-version" in res.output
    data = json.loads(run("diff", sample(OLD), sample(NEW), "-f", "json").output)
    assert data["changes"] == []
    failures = [u for u in data["undetermined"] if u["kind"] == "failure"]
    assert {u["after"]["tactic"] for u in failures} == {6, 7, 8, 9}
    assert all("--old-flashinfer-version settles it" in u["reason"] for u in data["undetermined"])


def test_the_named_flag_settles_it(run, sample):
    res = run("diff", sample(OLD), sample(NEW), "--old-flashinfer-version", "0.6.17")
    assert res.exit_code == 0 and "no entry differs" in res.output and "Undetermined" not in res.output


def test_a_release_missing_on_new_names_the_new_flag(run, sample):
    res = run("diff", sample(NEW), sample(OLD), "-f", "json")
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert data["changes"] == [] and data["undetermined"]
    assert all("--new-flashinfer-version" in u["reason"] for u in data["undetermined"])
