"""The ledger survives a killed parent and a torn last line, and a rerun resumes where it stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tuner_fakes import FAKE_ENV, FakeEngine, make_target

from tiletune.core.records import Status
from tiletune.readers import ledger as ledger_reader
from tiletune.readers.interface import ReadContext
from tiletune.tuner.engine import Diagnosis
from tiletune.tuner.ledger import Ledger
from tiletune.tuner.orchestrator import run_retry

HERE = Path(__file__).parent


def test_killed_parent_loses_at_most_the_attempt_in_flight_and_rerun_resumes(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        from tuner_fakes import FAKE_ENV, FakeEngine, make_target
        from tiletune.tuner.orchestrator import run_retry
        targets = [make_target("slowpass", m=i + 1) for i in range(6)]
        run_retry(targets, FakeEngine(extra_env=(("FAKE_SLEEP", "0.4"),)), Path({str(ledger)!r}),
                  timeout_s=20, progress=None, env=dict(FAKE_ENV), workers=1, gpus=[])
    """)
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 600  # a bound on waiting, not a speed requirement
    while time.time() < deadline:
        if ledger.exists() and len(ledger.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    done_before = [json.loads(x)["key"] for x in ledger.read_text().splitlines()]
    assert 2 <= len(done_before) < 6

    targets = [make_target("slowpass", m=i + 1) for i in range(6)]
    run = run_retry(targets, FakeEngine(extra_env=(("FAKE_SLEEP", "0.01"),)), ledger, timeout_s=20,
                    progress=None, env=dict(FAKE_ENV), workers=1, gpus=[])
    assert {t.key for t in run.skipped} == set(done_before)
    keys = [json.loads(x)["key"] for x in ledger.read_text().splitlines()]
    assert sorted(keys) == sorted(t.key for t in targets)  # every target once, none repeated

    # another environment does not count as finished
    other = dict(FAKE_ENV, driver="590.0")
    run2 = run_retry(targets[:1], FakeEngine(), ledger, timeout_s=20, progress=None, env=other, workers=1, gpus=[])
    assert len(run2.attempts) == 1 and not run2.skipped


def test_torn_last_line_is_reported_and_the_next_record_starts_clean(tmp_path):
    path = tmp_path / "ledger.jsonl"
    run_retry([make_target("pass")], FakeEngine(), path, progress=None, env=dict(FAKE_ENV), workers=1, gpus=[])
    with open(path, "ab") as f:
        f.write(b'{"schema": "tiletune.ledger/1", "key": "x", "op"')  # a write cut short by a crash
    contents = Ledger(path).load()
    assert len(contents.attempts) == 1 and "torn last line" in contents.problems[0]
    run_retry([make_target("exit3")], FakeEngine(), path, progress=None, env=dict(FAKE_ENV), workers=1, gpus=[])
    contents = Ledger(path).load()
    assert [a["tactic"] for a in contents.attempts] == ["pass", "exit3"]
    assert len(contents.problems) == 1 and ":2:" in contents.problems[0]


def test_ledger_reader_turns_attempts_into_passed_and_failed_records(tmp_path):
    path = tmp_path / "ledger.jsonl"
    run_retry([make_target("pass"), make_target("smem")], FakeEngine(), path, progress=None,
              env=dict(FAKE_ENV), workers=1, gpus=[])
    with open(path, "a") as f:
        f.write("not json\n")
    head = path.read_bytes()[:4096]
    assert ledger_reader.sniff(path, head)
    assert not ledger_reader.sniff(path, b'{"_metadata": {}}')
    items = list(ledger_reader.read(path, ReadContext()))
    recs = [r for r in items if hasattr(r, "status")]
    probs = [r for r in items if not hasattr(r, "status")]
    assert [r.status for r in recs] == [Status.PASSED, Status.FAILED]
    assert recs[0].time_ms == 1.5e-5 * 1e3 and recs[0].source_kind == "ledger"
    assert recs[1].error.startswith("smem_over_limit:")
    assert recs[0].env.gpu == "Fake GPU" and recs[0].env.flashinfer_version == "0.7.2.post1"
    assert recs[1].detail_dict()["smem_bytes"] == 111616
    assert len(probs) == 1 and not probs[0].fatal and ":3:" in probs[0].message


def test_unreadable_ledger_is_one_fatal_problem(tmp_path):
    items = list(ledger_reader.read(tmp_path / "missing.jsonl", ReadContext()))
    assert len(items) == 1 and items[0].fatal and "missing.jsonl" in items[0].message


def test_diagnosis_values_are_stable_strings():
    assert Diagnosis("smem_over_limit") is Diagnosis.SMEM_OVER_LIMIT


def test_a_refused_attempt_is_not_run_not_failed(tmp_path):
    """A child that refuses the way the worker does (an engine_error result): the retry summary
    counts it apart, and the ledger it wrote reads back as not_run (a tactic never run)."""
    from tiletune.formats.retry import RetrySummary, render_table

    led = tmp_path / "ledger.jsonl"
    run = run_retry([make_target("pass"), make_target("refuse"), make_target("exit3")], FakeEngine(), led,
                    progress=None, env=dict(FAKE_ENV), workers=1, gpus=[])
    assert [a.diagnosis.value for a in run.attempts] == ["passed", "engine_error", "initialize_failed"]
    assert "1 passed, 1 failed, 1 not run" in render_table(RetrySummary(run, []))
    recs = [r for r in ledger_reader.read(led, ReadContext()) if hasattr(r, "status")]
    assert [r.status for r in recs] == [Status.PASSED, Status.NOT_RUN, Status.FAILED]
    assert "not attempted" in recs[1].error
