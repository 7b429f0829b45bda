"""retry: bad values are one line and exit 2; "nothing to retry" only when true, with why (issue 25, item 7).

Before: `retry cache_samples/demo --tactic abc` said "nothing to retry" (the demo has 4
failures); with --shape, "abc" became a target; `retry LEDGER --changed-env` on a machine with
no GPU said "nothing to retry" (the ledger holds 9 failures) and exited 0.
"""

from __future__ import annotations

import pytest

from tiletune.cli.commands.retry import RetryOptions, retry
from tiletune.core.errors import UsageError

LEDGER = "ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
NO_GPU = {"gpu": None, "driver": None, "compute_capability": None, "flashinfer": None}
H200 = {"gpu": "NVIDIA H200", "driver": "580.159.04", "compute_capability": "9.0", "cuda_runtime": "13.0",
        "flashinfer": "0.7.2.post1"}


def test_a_tactic_naming_nothing_in_the_inputs_is_one_line_exit_2(run, sample, tmp_path):
    res = run("retry", sample("demo"), "--tactic", "abc", "--ledger", tmp_path / "l.jsonl", "--no-run")
    assert res.exit_code == 2
    assert "abc" in res.output and "6, 7, 8, 9" in res.output and "nothing to retry" not in res.output


def test_with_shape_a_tactic_is_a_number(run, tmp_path):
    res = run("retry", "--op", "fp8_gemm", "--tactic", "abc", "--shape", "128x4096x4096", "--no-run",
              "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 2 and "whole number" in res.output


def test_an_op_naming_nothing_lists_the_ops(run, sample, tmp_path):
    res = run("retry", sample("demo"), "--op", "nonsense", "--no-run", "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 2 and "fp4_gemm" in res.output and "mxfp8_gemm" in res.output


def test_changed_env_without_this_machines_gpu_cannot_answer(sample, tmp_path):
    opts = RetryOptions(paths=[sample(LEDGER)], changed_env=True, ledger=tmp_path / "l.jsonl")
    with pytest.raises(UsageError, match="--changed-env: this machine's gpu and driver cannot be read"):
        retry(opts, env=NO_GPU, progress=None)


def test_changed_env_on_the_same_machine_says_why_nothing(sample, tmp_path):
    opts = RetryOptions(paths=[sample(LEDGER)], changed_env=True, ledger=tmp_path / "l.jsonl", no_run=True)
    out = retry(opts, env=H200, progress=None)
    assert out.exit_code == 0
    said = [n for n in out.notes if n.startswith("nothing to retry")]
    assert said and "9 failure(s)" in said[0] and "recorded under this machine's environment" in said[0]


def test_a_tactic_that_did_not_fail_is_nothing_to_retry_with_why(sample, tmp_path):
    opts = RetryOptions(paths=[sample("demo")], tactic="0", ledger=tmp_path / "l.jsonl", no_run=True)
    out = retry(opts, env=NO_GPU, progress=None)
    said = [n for n in out.notes if n.startswith("nothing to retry")]
    assert out.exit_code == 0 and said and "--all" in said[0] and "chosen, profiled or passed" in said[0]
