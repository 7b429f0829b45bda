"""Resume skips only what already ran with the same options: --dtype / --top-k, engine, the input
dtype (and, for the CUTLASS engine, the tile and arch) are part of an attempt's identity; old
ledgers (no run_options) still resume.

Targets come from real caches and a real H200 ledger; the children are real processes (the fake
engine of tuner_fakes.py, every child passing), so each "ran again" is a real new ledger line.
"""

from __future__ import annotations

import json
from pathlib import Path

from msgspec import structs
from tuner_fakes import FAKE_ENV, FakeEngine

from tiletune.cli.commands.retry import RetryOptions, collect_targets, retry
from tiletune.core.records import TileConfig
from tiletune.tuner import resume
from tiletune.tuner.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
# fused-MoE keys written by SGLang with FlashInfer 0.6.14: no key extras, so neither dtype nor top_k
SM120_MOE = ROOT / "cache_samples" / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"
H200_LEDGER = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
GEMM1 = "trtllm::fused_moe::gemm1"


def _moe(tmp_path, engine=None, **kw):
    opts = RetryOptions(paths=[SM120_MOE], ledger=tmp_path / "ledger.jsonl", all_statuses=True, ops=[GEMM1],
                        tactic="0-1", **kw)
    return retry(opts, progress=None, env=dict(FAKE_ENV), engine=engine or FakeEngine(mode="pass")).run


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_moe_dtype_and_top_k_are_part_of_the_resume_key(tmp_path):
    first = _moe(tmp_path, moe_dtype="bf16", top_k=8)
    n = len(first.attempts)
    assert n >= 2 and not first.skipped
    assert all(a["run_options"] == {"dtype": "bf16", "top_k": 8} for a in _lines(tmp_path / "ledger.jsonl"))

    same = _moe(tmp_path, moe_dtype="bf16", top_k=8)
    assert not same.attempts and len(same.skipped) == n

    fp8 = _moe(tmp_path, moe_dtype="fp8", top_k=8)  # --dtype changed: every target runs again
    assert len(fp8.attempts) == n and not fp8.skipped
    top4 = _moe(tmp_path, moe_dtype="bf16", top_k=4)  # --top-k changed
    assert len(top4.attempts) == n
    none = _moe(tmp_path)  # neither given: another run too (the engine would refuse these keys)
    assert len(none.attempts) == n
    assert len(_moe(tmp_path, moe_dtype="fp8", top_k=8).skipped) == n  # and each is remembered
    other_engine = _moe(tmp_path, FakeEngine(mode="pass", name="other"), moe_dtype="bf16", top_k=8)
    assert len(other_engine.attempts) == n
    assert len(_lines(tmp_path / "ledger.jsonl")) == 5 * n


def test_old_moe_lines_without_run_options_run_again_once(tmp_path):
    """A fused-MoE line written before run_options existed does not say which --dtype/--top-k it ran
    with: it never matches, the target runs again and the new line matches from then on."""
    _moe(tmp_path, moe_dtype="bf16", top_k=8)
    led = tmp_path / "ledger.jsonl"
    old = []
    for a in _lines(led):
        del a["run_options"]
        old.append(json.dumps(a))
    led.write_text("\n".join(old) + "\n")
    again = _moe(tmp_path, moe_dtype="bf16", top_k=8)
    assert again.attempts and not again.skipped
    assert not _moe(tmp_path, moe_dtype="bf16", top_k=8).attempts


def test_a_real_ledger_without_run_options_still_resumes_its_own_runs():
    """The H200 ledger (written before run_options) against the targets of the commands that wrote it
    (bench/retry_h200/run_h200.sh): every one is recognised as finished in that environment, by the
    same engine only; --dtype / --top-k (fused-MoE only) do not redo these dense GEMMs."""
    contents = Ledger(H200_LEDGER).load()
    assert all("run_options" not in a for a in contents.attempts)
    (env_id,) = {a["env_id"] for a in contents.attempts}
    done = resume.finished(contents, env_id)
    cache = H200_LEDGER.with_name("h200-fp8_gemm-autotune-cache-0.7.2.post1.json")
    commands = [  # steps b, d and g of run_h200.sh (the others ran under non-default conditions)
        RetryOptions(ops=["fp8_gemm"], tactic="0-5,99,150", shapes=["128x4096x4096"], moe_dtype="fp8", top_k=4),
        RetryOptions(paths=[cache], all_statuses=True, moe_dtype="bf16"),
        RetryOptions(ops=["fp8_gemm"], tactic="0", shapes=["4194304x4096x65536"]),
        RetryOptions(paths=[H200_LEDGER], all_statuses=True),  # the ledger itself as the input
    ]
    recorded_keys = {a["key"] for a in contents.attempts}
    seen = 0
    for opts in commands:
        targets, *_ = collect_targets(opts, contents.attempts[0]["env"])
        assert targets
        for t in targets:
            t = structs.replace(t, options=resume.options_for(t, moe_dtype=opts.moe_dtype, top_k=opts.top_k))
            # a ledger line run under --input-amplitude / --workspace-bytes (key "...|amp=1000") read back
            # as a target is that problem without the condition: not finished
            assert (resume.target_identity(t, "flashinfer") in done) == (t.key in recorded_keys), t.key
            assert resume.target_identity(t, "cutlass") not in done
            seen += t.key in recorded_keys
    assert seen == 8 + 8 + 1 + 18
    assert not resume.finished(contents, "another-env")


def test_input_dtype_and_tile_are_part_of_the_identity(tmp_path):
    def shape_run(dtype_in):
        opts = RetryOptions(ledger=tmp_path / "l.jsonl", ops=["fp8_gemm"], tactic="0", shapes=["128x4096x4096"],
                            dtype_in=dtype_in)
        return retry(opts, progress=None, env=dict(FAKE_ENV), engine=FakeEngine(mode="pass")).run

    assert len(shape_run("float8_e4m3fn").attempts) == 1
    assert len(shape_run("float8_e4m3fn").skipped) == 1
    assert len(shape_run("float8_e5m2").attempts) == 1  # same key text, other operand dtype

    t = shape_run("float8_e4m3fn").skipped[0]
    tiled = structs.replace(t, config=TileConfig(tile=(128, 128, 64)))
    staged = structs.replace(t, config=TileConfig(tile=(128, 128, 64), stages=8))
    ids = {resume.target_identity(x, "cutlass") for x in (t, tiled, staged)}
    assert len(ids) == 3  # no tile, a tile, the same tile with a fixed stage count: other CUTLASS builds
    other_arch = structs.replace(tiled, arch="sm120")
    assert resume.target_identity(other_arch, "cutlass") != resume.target_identity(tiled, "cutlass")
    # the FlashInfer engine runs the tactic number (its tile is FlashInfer's, pinned by the env): same attempt
    assert len({resume.target_identity(x, "flashinfer") for x in (t, tiled, staged, other_arch)}) == 1


def test_hand_written_lines_missing_fields_do_not_crash_resume(tmp_path):
    led = tmp_path / "l.jsonl"
    led.write_text(json.dumps({"schema": "tiletune.ledger/1", "key": "fp8_gemm|R|0|1x1x1x1|bfloat16", "op": "fp8_gemm",
                               "diagnosis": "passed", "env_id": "x"}) + "\n")
    (a,) = Ledger(led).load().attempts
    assert resume.line_identity(a) is not None  # compared on what it has; matches nothing real
    opts = RetryOptions(ledger=led, ops=["fp8_gemm"], tactic="0", shapes=["1x1x1"])
    run = retry(opts, progress=None, env=dict(FAKE_ENV), engine=FakeEngine(mode="pass")).run
    assert len(run.attempts) == 1
