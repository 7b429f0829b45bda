"""`tiletune retry` end to end on CPU: inputs -> targets -> fake engine (real child processes) ->
ledger -> blocklist / pinned cache / summary, plus target selection and CLI errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from msgspec import structs
from tuner_fakes import FAKE_ENV, FakeEngine
from typer.testing import CliRunner

from tiletune.cli.commands.retry import RetryOptions, retry
from tiletune.cli.typer_app import app
from tiletune.core.errors import UsageError
from tiletune.core.records import Entry, Environment, Problem, Status, TuningRecord, Undecoded
from tiletune.tuner import exports
from tiletune.tuner.ledger import Ledger
from tiletune.tuner.targets import parse_shape, parse_tactics, targets_from_entries

ROOT = Path(__file__).resolve().parents[2]
H200_CACHE = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"


def _entry(tactic, status, *, m=128, error=None, driver=None, op="fp8_gemm"):
    rec = TuningRecord(source="x.json", source_kind="flashinfer-v1", op=op, runner="CublasFp8GemmRunner",
                       tactic=tactic, status=status, env=Environment(flashinfer_version="0.7.2.post1", driver=driver),
                       error=error)
    return Entry(record=rec, problem=Problem(m=m, n=4096, k=4096, dtype_out="bf16"),
                 decode=Undecoded(reason="cuBLAS", not_a_cutlass_tactic=True))


def test_target_selection():
    entries = [_entry(1, Status.FAILED, error="boom"), _entry(1, Status.FAILED, error="again"),
               _entry(2, Status.CHOSEN), _entry(3, Status.BLOCKED), _entry(4, Status.FAILED, op="bf16_gemm")]
    t = targets_from_entries(entries)
    assert [x.tactic for x in t] == [1, 3, 4]  # failed + blocklisted, deduplicated
    assert t[0].previous_error == "boom" and t[0].dtype == "bfloat16"
    assert [x.tactic for x in targets_from_entries(entries, all_statuses=True)] == [1, 2, 3, 4]
    assert [x.tactic for x in targets_from_entries(entries, ops=["bf16_gemm"])] == [4]
    assert [x.tactic for x in targets_from_entries(entries, tactics=[3])] == [3]
    drv = [_entry(1, Status.FAILED, driver="570.1"), _entry(5, Status.FAILED, driver="580.1"), _entry(6, Status.FAILED)]
    got = targets_from_entries(drv, since_driver=True, current_env={"driver": "580.1"})
    assert [x.tactic for x in got] == [1]  # only the failure under another (known) driver
    assert parse_tactics("1,4,9-11") == [1, 4, 9, 10, 11]
    assert parse_shape("128x4096x7168") == Problem(m=128, n=4096, k=7168, batch=1)
    with pytest.raises(UsageError):
        parse_shape("128x0x7")


def test_retry_from_a_real_cache_writes_ledger_blocklist_and_a_new_pinned_cache(tmp_path):
    cache = tmp_path / "server_cache.json"
    shutil.copy(H200_CACHE, cache)
    before = cache.read_bytes()
    ledger = tmp_path / "ledger.jsonl"
    # --all: every cache entry becomes a target; the fake engine runs the tactic as a mode, so
    # the real integer tactics are mapped onto real child behaviours by a wrapper engine.
    modes = {0: "pass", 1: "exit3", 2: "pass", 3: "segv", 4: "pass", 5: "pass", 6: "pass", 7: "pass"}

    class ByTactic(FakeEngine):
        def child_spec(self, target, scratch):
            return super().child_spec(structs.replace(target, tactic=modes[target.tactic]), scratch)

    opts = RetryOptions(paths=[cache], ledger=ledger, all_statuses=True, blocklist=tmp_path / "block.json",
                        pin_cache=tmp_path / "pinned.json")
    out = retry(opts, progress=None, env=dict(FAKE_ENV), engine=ByTactic())
    assert out.exit_code == 0 and cache.read_bytes() == before  # the server's cache is untouched
    attempts = Ledger(ledger).load().attempts
    src = json.loads(before)
    n_entries = len([k for k in src if not k.startswith("_")])
    assert len(attempts) == n_entries
    block = json.loads((tmp_path / "block.json").read_text())
    failing = sorted({a["tactic"] for a in attempts if not a["passed"]})
    assert block["invalid_tactics"].get("fp8_gemm::CublasFp8GemmRunner", []) == failing
    assert block["_metadata"]["flashinfer_version"] == "0.7.2.post1" and block["_metadata"]["cublas_version"] == "*"
    pinned = json.loads((tmp_path / "pinned.json").read_text())
    for k, v in pinned.items():  # each key was tried only with its own tactic: nothing faster to pin
        if not k.startswith("_"):
            assert v == src[k]
    assert pinned["_generation"] == exports._generation({k: v for k, v in pinned.items() if k != "_generation"})
    assert "passed" in out.text and "bfloat16 0.016" in out.text

    # rerun: everything finished in this environment -> nothing attempted
    again = retry(RetryOptions(paths=[cache], ledger=ledger, all_statuses=True), progress=None,
                  env=dict(FAKE_ENV), engine=ByTactic())
    assert again.run.attempts == [] and len(again.run.skipped) == n_entries

    # the ledger itself is an input: its failures are the default targets
    from_ledger = retry(RetryOptions(paths=[ledger], ledger=tmp_path / "l2.jsonl"), progress=None,
                        env=dict(FAKE_ENV), engine=ByTactic())
    assert sorted(a.target.tactic for a in from_ledger.run.attempts) == sorted(
        a["tactic"] for a in attempts if not a["passed"])


def test_pinned_cache_takes_the_fastest_passing_tactic_per_key(tmp_path):
    src = json.loads(H200_CACHE.read_text())
    key = next(k for k in src if not k.startswith("_") and "(1, 128, 4096)" in k)
    ident = ("fp8_gemm", "CublasFp8GemmRunner", (1, 128, 4096, 4096))
    prob = {"batch": 1, "m": 128, "n": 4096, "k": 4096}
    att = [
        {"key": "a", "op": "fp8_gemm", "runner": "CublasFp8GemmRunner", "tactic": 6, "passed": True, "time_s": 9e-6, "problem": prob},
        {"key": "b", "op": "fp8_gemm", "runner": "CublasFp8GemmRunner", "tactic": 2, "passed": True, "time_s": 7e-6, "problem": prob},
        {"key": "c", "op": "fp8_gemm", "runner": "CublasFp8GemmRunner", "tactic": 3, "passed": False, "time_s": None, "problem": prob},
    ]
    out = tmp_path / "pinned.json"
    changed = exports.write_pinned_cache(H200_CACHE, att, out, key_problems={key: ident})
    pinned = json.loads(out.read_text())
    assert pinned[key][1] == 2 and pinned[key][0] == src[key][0] and pinned[key][2:] == src[key][2:]
    assert [c[0] for c in changed] == ([key] if src[key][1] != 2 else [])
    assert all(pinned[k] == v for k, v in src.items() if k not in (key, "_generation"))


def test_pin_cache_refuses_to_overwrite_its_source(tmp_path):
    cache = tmp_path / "c.json"
    shutil.copy(H200_CACHE, cache)
    from tiletune.core.errors import TunerError
    with pytest.raises(TunerError, match="refusing to overwrite"):
        exports.write_pinned_cache(cache, [], cache, key_problems={})


def test_cli_errors_are_one_line_exit_2(tmp_path):
    r = CliRunner().invoke(app, ["retry", "--shape", "128x4096x4096", "--ledger", str(tmp_path / "l")])
    assert r.exit_code == 2 and "needs exactly one --op" in r.output
    r = CliRunner().invoke(app, ["retry", "--op", "fp8_gemm", "--tactic", "0", "--shape", "12xx4"])
    assert r.exit_code == 2 and "--shape" in r.output and "Traceback" not in r.output


def test_real_h200_ledger_reads_back_and_exports_flashinfer_blocklist(tmp_path):
    """The real ledger: records flow back as passed/failed with measured times, and the blocklist
    carries exactly FlashInfer's own metadata (as the H200 child read it) and the two tactics that
    failed at every shape (99 and 150: beyond the 8 algorithms cuBLASLt returned)."""
    from tiletune.readers import ledger as reader
    from tiletune.readers.interface import ReadContext

    path = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    recs = [r for r in reader.read(path, ReadContext()) if hasattr(r, "status")]
    assert len(recs) == 23 and all(r.env.arch == "sm90" and r.env.gpu == "NVIDIA H200" for r in recs)
    passed = [r for r in recs if r.status is Status.PASSED]
    assert len(passed) == 14 and all(5e-6 < r.time_ms / 1e3 < 1e-3 for r in passed)
    attempts = Ledger(path).load().attempts
    block, mixed = exports.write_blocklist(attempts, tmp_path / "b.json")
    assert block == {"fp8_gemm::CublasFp8GemmRunner": [99, 150]}
    assert mixed == {"fp8_gemm::CublasFp8GemmRunner": [0, 1, 2, 3]}
    meta = json.loads((tmp_path / "b.json").read_text())["_metadata"]
    assert meta["gpu"] == "NVIDIA H200" and meta["cublas_version"] == "13.1.0" and meta["flashinfer_version"] == "0.7.2.post1"


def test_reproducer_delegates_to_the_cutlass_writer(tmp_path):
    from tiletune.cli.commands.retry import write_reproducers
    from tiletune.core.records import TileConfig
    from tiletune.tuner.engine import RetryTarget

    decoded = RetryTarget(key="bf16_gemm|X|3|1x128x4096x4096|bf16", op="bf16_gemm", runner="X", tactic=3, arch="sm90",
                          flashinfer_version="0.7.2.post1", problem=Problem(m=128, n=4096, k=4096, dtype_a="bf16"),
                          config=TileConfig(tile=(128, 128, 64)), dtype="bf16")
    cublas = RetryTarget(key="fp8_gemm|Cublas|3|?|?", op="fp8_gemm", runner="Cublas", tactic=3, arch="sm90",
                         flashinfer_version=None, problem=None, config=None, dtype=None)
    notes = write_reproducers([decoded, cublas], tmp_path)
    assert "no decoded CUTLASS tile" in notes[1]
    written = list(tmp_path.glob("*/build.sh"))
    if written:  # CUTLASS headers found here: the folder is complete
        assert "nvcc" in written[0].read_text() and (written[0].parent / "run.sh").exists()
        assert notes[0].startswith("--reproducer: wrote")
    else:  # no CUTLASS headers on this machine: the writer's reason is reported, nothing half-written
        assert decoded.key in notes[0]


def test_cli_no_run_exports_from_the_real_ledger_without_a_gpu(tmp_path):
    led = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    before = led.read_bytes()
    r = CliRunner().invoke(app, ["retry", str(led), "--ledger", str(led), "--no-run", "--blocklist", str(tmp_path / "b.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "b.json").read_text())["invalid_tactics"] == {"fp8_gemm::CublasFp8GemmRunner": [99, 150]}
    assert "none attempted" in r.output and led.read_bytes() == before


def test_a_ledger_given_as_input_feeds_the_exports(tmp_path, monkeypatch):
    """`retry LEDGER --no-run --blocklist b.json` reads LEDGER (3d96422 read only ./tiletune-ledger.jsonl:
    "0 tactic(s)"); the default --ledger, absent here, adds nothing; --no-run with --ledger alone works."""
    led = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["retry", str(led), "--no-run", "--blocklist", "b.json"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "b.json").read_text())["invalid_tactics"] == {"fp8_gemm::CublasFp8GemmRunner": [99, 150]}
    assert "wrote b.json: 2 tactic(s)" in r.output and not (tmp_path / "tiletune-ledger.jsonl").exists()
    r = CliRunner().invoke(app, ["retry", "--ledger", str(led), "--no-run", "--blocklist", "b2.json"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "b2.json").read_text())["invalid_tactics"] == {"fp8_gemm::CublasFp8GemmRunner": [99, 150]}


def test_changed_env_on_the_real_ledger():
    """--changed-env keeps failures recorded under another environment (fingerprint from the ledger)."""
    from tiletune.decode import decode
    from tiletune.readers import ledger as reader
    from tiletune.readers.interface import ReadContext

    led = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    entries = [decode(r) for r in reader.read(led, ReadContext()) if hasattr(r, "status")]
    recorded = dict(Ledger(led).load().attempts[0]["env"])
    same = targets_from_entries(entries, changed_env=True, current_env=recorded)
    assert same == []  # nothing changed: nothing to re-test
    newer_nvcc = targets_from_entries(entries, changed_env=True, current_env=dict(recorded, nvcc="13.2.10"))
    assert len(newer_nvcc) == len(targets_from_entries(entries)) > 0
    assert targets_from_entries(entries, since_driver=True, current_env=dict(recorded, nvcc="13.2.10")) == []
    assert targets_from_entries(entries, since_driver=True, current_env=dict(recorded, driver="590.1"))


def test_fail_on_counts_attempts_on_this_gpu_and_resumed_ones(tmp_path):
    from tiletune.cli.commands.retry import retry_gate as _retry_gate
    from tiletune.cli.output import FailOn

    modes = {0: "pass", 1: "smem", 2: "segv"}

    class ByTactic(FakeEngine):
        def child_spec(self, target, scratch):
            return super().child_spec(structs.replace(target, tactic=modes[target.tactic]), scratch)

    def run(tactics, ledger):
        opts = RetryOptions(ops=["fp8_gemm"], tactic=tactics, shapes=["128x4096x4096"], ledger=ledger)
        return retry(opts, progress=None, env=dict(FAKE_ENV), engine=ByTactic())

    ok = run("0", tmp_path / "a.jsonl")  # passes: no finding either way
    assert ok.findings.failed == [] and ok.findings.fatal == []
    assert _retry_gate(ok, FailOn.failed) == 0 and _retry_gate(ok, FailOn.fatal) == 0
    smem = run("0-1", tmp_path / "b.jsonl")  # a shared-memory refusal fails, but would not end a server
    assert len(smem.findings.failed) == 1 and smem.findings.fatal == []
    assert _retry_gate(smem, FailOn.failed) == 1 and _retry_gate(smem, FailOn.fatal) == 0 and _retry_gate(smem, None) == 0
    crash = run("0-2", tmp_path / "c.jsonl")  # a child killed by SIGSEGV: fatal
    assert len(crash.findings.fatal) == 1 and _retry_gate(crash, FailOn.fatal) == 1
    # rerun: every target already finished in this environment; the ledger's outcomes still gate
    again = run("0-2", tmp_path / "c.jsonl")
    assert again.run.attempts == [] and len(again.run.skipped) == 3
    assert (len(again.findings.failed), len(again.findings.fatal)) == (1, 1) and _retry_gate(again, FailOn.fatal) == 1


def test_fail_on_in_retry_help_and_bad_values(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["retry", "--help"], env={"COLUMNS": "200"})
    assert "--fail-on" in r.output and "failures in the inputs do not count" in " ".join(r.output.split())
    bad = runner.invoke(app, ["retry", str(H200_CACHE), "--no-run", "--ledger", str(tmp_path / "l.jsonl"),
                              "--fail-on", "sometimes"])
    assert bad.exit_code == 2
    # --no-run attempts nothing: no findings, exit 0
    ok = runner.invoke(app, ["retry", str(H200_CACHE), "--no-run", "--ledger", str(tmp_path / "l.jsonl"),
                             "--fail-on", "failed"])
    assert ok.exit_code == 0, ok.output
