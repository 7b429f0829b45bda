"""Retry orchestration against children that really crash, hang, exit non-zero and print garbage.

Proves: every failure mode ends that child only, each gets the right diagnosis, every attempt is
in the ledger, a hung child's whole process group is killed, and progress reaches stderr.
"""

from __future__ import annotations

import io
import json
import os
import time

import pytest
from tuner_fakes import FAKE_ENV, FakeEngine, make_target

from tiletune.tuner.engine import Diagnosis
from tiletune.tuner.orchestrator import run_retry


def _run(tmp_path, modes, **kw):
    ledger = tmp_path / "ledger.jsonl"
    err = io.StringIO()
    run = run_retry([make_target(m) for m in modes], FakeEngine(), ledger, timeout_s=kw.pop("timeout_s", 3.0),
                    progress=err, env=dict(FAKE_ENV), workers=kw.pop("workers", 1), gpus=[], **kw)
    return run, ledger, err.getvalue()


def test_every_failure_mode_gets_its_diagnosis(tmp_path):
    modes = ["pass", "abort", "segv", "hang", "exit3", "smem", "garbage", "torn", "nan", "inaccurate", "oom"]
    run, ledger, err = _run(tmp_path, modes, timeout_s=2.0)
    got = {a.target.tactic: a for a in run.attempts}
    assert got["pass"].diagnosis is Diagnosis.PASSED and got["pass"].time_s == pytest.approx(1.5e-5)
    assert got["abort"].diagnosis is Diagnosis.CRASHED and "SIGABRT" in got["abort"].message
    assert got["segv"].diagnosis is Diagnosis.CRASHED and "SIGSEGV" in got["segv"].message
    assert got["hang"].diagnosis is Diagnosis.TIMEOUT and "2 s time limit" in got["hang"].message
    assert got["hang"].duration_s < 10
    assert got["exit3"].diagnosis is Diagnosis.INITIALIZE_FAILED and "Error Internal" in got["exit3"].message
    assert got["smem"].diagnosis is Diagnosis.SMEM_OVER_LIMIT
    assert (got["smem"].smem_bytes, got["smem"].smem_limit) == (111616, 101376)
    assert got["garbage"].diagnosis is Diagnosis.CRASHED and "no result file" in got["garbage"].message
    assert got["torn"].diagnosis is Diagnosis.CRASHED and "not valid JSON" in got["torn"].message
    assert got["nan"].diagnosis is Diagnosis.WRONG_RESULTS and "7 NaN/Inf" in got["nan"].message
    assert got["inaccurate"].diagnosis is Diagnosis.WRONG_RESULTS and "bound" in got["inaccurate"].message
    assert got["oom"].diagnosis is Diagnosis.OUT_OF_MEMORY
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [x["tactic"] for x in lines] == modes  # one line per attempt, in order
    assert all(x["env"]["gpu"] == "Fake GPU" and x["env_id"] == run.env_id for x in lines)
    assert f"[{len(modes)}/{len(modes)}]" in err and "ETA" in err


def test_timeout_kills_the_whole_process_group(tmp_path):
    run, _, _ = _run(tmp_path, ["hang_grandchild"], timeout_s=1.5, scratch_root=tmp_path / "s", keep_scratch=True)
    assert run.attempts[0].diagnosis is Diagnosis.TIMEOUT
    pidfile = next((tmp_path / "s").rglob("result.json.grandchild"))
    pid = int(pidfile.read_text().split()[0])
    deadline = time.time() + 120  # a bound on waiting for the kill, not a speed requirement
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        # a zombie reparented to init may linger briefly; check its state
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {pid} survived the timeout kill")


def test_parallel_workers_record_every_attempt_once(tmp_path):
    modes = ["pass"] * 1 + ["slowpass", "abort", "exit3", "segv", "nan"]
    targets = [make_target(m, m=i + 1) for i, m in enumerate(modes)]
    ledger = tmp_path / "l.jsonl"
    run = run_retry(targets, FakeEngine(), ledger, timeout_s=5, progress=None, env=dict(FAKE_ENV),
                    workers=3, gpus=["0", "1", "2"])
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert sorted(x["key"] for x in lines) == sorted(t.key for t in targets)
    assert {x["env"]["cuda_visible_devices"] for x in lines} <= {"0", "1", "2"}
    assert len(run.attempts) == len(targets)


def test_a_child_that_cannot_start_is_data_not_an_exception(tmp_path):
    from tiletune.tuner.engine import ChildSpec
    from tiletune.tuner.isolation import run_child

    r = run_child(ChildSpec(argv=(str(tmp_path / "no-such-binary"),), result_file=tmp_path / "r.json"),
                  timeout_s=5, scratch=tmp_path / "s")
    assert r.exit_code is None and not r.timed_out and "did not start" in r.result_error


def test_visible_gpus_follow_cuda_visible_devices():
    from tiletune.tuner.orchestrator import visible_gpus

    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []


def test_fingerprint_identity_ignores_clocks_and_local_version_tags():
    from tiletune.tuner import fingerprint as fpm

    a = dict(FAKE_ENV, clock_sm_mhz=345, torch="2.11.0")
    b = dict(FAKE_ENV, clock_sm_mhz=1980, torch="2.11.0")
    assert fpm.env_id(a) == fpm.env_id(b)
    assert fpm.changed_fields(a, dict(b, torch="2.11.0+cu130")) == {}
    assert fpm.changed_fields(a, dict(b, driver="590.1")) == {"driver": ("580.1", "590.1")}
    fp = fpm.collect()  # on any machine: never imports torch, never raises
    assert set(fpm.IDENTITY_FIELDS) <= set(fp)
