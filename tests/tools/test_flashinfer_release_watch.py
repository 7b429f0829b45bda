"""The release watch (tools/flashinfer_writers): tiletune reads every entry shape, metadata key and
autotuner line FlashInfer's releases write, checked on the bytes each release's own writers wrote
(tests/data/flashinfer_writers/<release>/) and on every message the newest release's source can
print; and the watch fails when a writer adds something tiletune does not read.

The newest release on PyPI is watched by `python3 -m tools.release_watch`, a step of .ci/run (it needs
PyPI and minutes): here, that it fails on what it must fail on, and says in one line when PyPI is out
of reach."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.flashinfer_writers.check import check_source, check_written

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "flashinfer_writers"
RELEASES = sorted(p for p in DATA.iterdir() if (p / "PROVENANCE.json").exists())


def test_the_fixtures_cover_0_6_3_to_0_7_4_and_say_which_write_no_cache():
    from tools.catalogs.sources import PYPI_RELEASES

    assert {p.name for p in RELEASES} == set(PYPI_RELEASES)
    no_cache = sorted(p.name for p in RELEASES if not (p / "cache.json").exists())
    assert no_cache == ["0.6.3", "0.6.4", "0.6.5", "0.6.6"]  # no JSON cache before 0.6.7 (autotune() has no cache=)
    for p in RELEASES:
        prov = json.loads((p / "PROVENANCE.json").read_text())
        assert prov["release"] == p.name and (p / "flashinfer_jit.log").exists()
        if p.name in no_cache:
            assert "no JSON cache" in prov["scenarios"]["tune"]["cache"]


def test_every_fixture_was_written_through_the_drive_py_in_the_tree():
    # a fixture made by an older drive.py is not what the committed tool makes (0.6.14-0.6.16.post4 were,
    # before the group scenario's barrier: a rank left behind could be cut before printing its error)
    from tools.flashinfer_writers.__main__ import drive_sha256

    stale = [p.name for p in RELEASES if json.loads((p / "PROVENANCE.json").read_text()).get("drive_sha256") != drive_sha256()]
    assert stale == [], f"re-derive with python3 -m tools.flashinfer_writers --out tests/data/flashinfer_writers {' '.join(stale)}"


@pytest.mark.parametrize("release", RELEASES, ids=lambda p: p.name)
def test_every_release_s_bytes_are_read(release):
    assert check_written(release) == []


def _copy(tmp_path: Path, release: str = "0.7.4") -> Path:
    dest = tmp_path / release
    shutil.copytree(DATA / release, dest)
    return dest


def test_the_watch_fails_on_an_unknown_entry_shape(tmp_path):
    # 0.7.4's own cache with one entry given a fifth element, as a later writer might (by program, said so)
    d = _copy(tmp_path)
    raw = json.loads((d / "cache.json").read_text())
    key = next(k for k in raw if not k.startswith("_"))
    raw[key].append({"new_field": 1})
    (d / "cache.json").write_text(json.dumps(raw, indent=2))
    findings = check_written(d)
    assert len(findings) == 1 and "value[4]" in findings[0] and "cache.json" in findings[0]


def test_the_watch_fails_on_an_unknown_metadata_key_and_log_line(tmp_path):
    d = _copy(tmp_path)
    raw = json.loads((d / "cache.json").read_text())
    raw["_metadata"]["nccl_version"] = "2.28.3"
    (d / "cache.json").write_text(json.dumps(raw, indent=2))
    with (d / "flashinfer_jit.log").open("a") as f:
        f.write("2026-12-05 08:00:00,000 - INFO - autotuner.py:9999 - flashinfer.jit: "
                "[Autotuner]: Tuned 3 ops with a brand-new strategy\n")
    findings = check_written(d)
    assert any("'nccl_version'" in x for x in findings)
    assert any("does not read: 'Tuned 3 ops with" in x for x in findings)


def test_the_source_check_fails_on_a_message_tiletune_does_not_read(tmp_path):
    import zipfile

    wheel = tmp_path / "flashinfer_python-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("flashinfer/autotuner/autotuner.py", 'def f(n):\n'
                   '    logger.info(f"[Autotuner]: Saved {n} configs to x (1 new, 0 from previous config)")\n'
                   '    logger.info(f"[Autotuner]: Warmed {n} shapes with a new pass")\n')
    findings = check_source(wheel)
    assert len(findings) == 1 and ":3:" in findings[0] and "Warmed" in findings[0]


def test_the_check_command_exits_1_naming_the_entry(tmp_path):
    # the command-line check the CI watch runs, on 0.7.4's own cache with a fifth element in one entry
    d = _copy(tmp_path)
    raw = json.loads((d / "cache.json").read_text())
    key = next(k for k in raw if not k.startswith("_"))
    raw[key].append([1, 2])
    (d / "cache.json").write_text(json.dumps(raw, indent=2))
    r = subprocess.run([sys.executable, "-m", "tools.flashinfer_writers.check", str(d)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "value[4]" in r.stdout and r.stdout.rstrip().endswith("1 finding(s) in 1 release dir(s) and 0 wheel(s)")
    r = subprocess.run([sys.executable, "-m", "tools.flashinfer_writers.check", str(DATA / "0.7.4")], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "0 finding(s) in 1 release dir(s) and 0 wheel(s)"


def test_the_watch_without_pypi_says_so_in_one_line_and_exits_75(tmp_path):
    # PyPI really unreachable (every HTTPS request sent to a closed local port), not a stubbed check
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "PIP_RETRIES": "0", "PIP_TIMEOUT": "5", "NO_PROXY": "", "no_proxy": ""}
    r = subprocess.run([sys.executable, "-m", "tools.release_watch", "--cache", str(tmp_path / "cache")], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=300)
    lines = r.stdout.splitlines()
    assert r.returncode == 75 and len(lines) == 1, r.stdout + r.stderr
    assert lines[0].startswith("WARNING: release watch NOT run: PyPI cannot be reached (")
    assert not (tmp_path / "cache").exists()  # nothing was derived, nothing claimed


def test_ci_runs_the_watch_and_fails_when_it_finds_or_cannot_reach_pypi():
    ci = (ROOT / ".ci" / "run").read_text()
    step = ci[ci.index("python3 -m tools.release_watch"):]
    assert '"$watch_rc" -eq 75 ]; then' in step and step.count("exit 1") == 2  # offline and a finding both fail CI


def _pin_table():
    return json.loads((ROOT / "tiletune" / "core" / "data" / "server_flashinfer_pins.json").read_text())


def test_the_pin_watch_passes_on_the_shipped_table_and_fails_on_a_new_server_release():
    from tools.release_watch import pin_findings

    doc = _pin_table()
    for server in ("vllm", "sglang"):
        assert pin_findings(doc, server, list(doc["servers"][server]), None) == []
    # a vLLM release the table has not read yet (as PyPI would list the next one): a finding naming it
    listed = list(doc["servers"]["vllm"]) + ["0.35.0"]
    (f,) = [x for x in pin_findings(doc, "vllm", listed, None) if "not in the pin table" in x]
    assert "(0.35.0)" in f and "python3 -m tools.server_pins" in f
    # the newest release's requirement changed on PyPI since the table was built
    found = pin_findings(doc, "vllm", list(doc["servers"]["vllm"]), "Requires-Dist: flashinfer-python==0.7.4\n")
    assert found == ["vllm 0.34.0: PyPI's METADATA now requires 'flashinfer-python==0.7.4', the pin table says "
                     "'flashinfer-python==0.7.3': run python3 -m tools.server_pins"]


def test_the_pin_watch_wants_fixtures_of_the_release_the_newest_server_pins():
    from tools.release_watch import pin_findings

    doc = _pin_table()
    # SGLang 0.5.23 pins 0.7.2, which PyPI has and tests/data/flashinfer_writers holds; without it, a finding
    assert doc["servers"]["sglang"]["0.5.23"]["pin"] == "0.7.2" and (DATA / "0.7.2" / "PROVENANCE.json").exists()
    doc["servers"]["sglang"]["0.5.23"]["pin"] = "0.7.5"
    (f,) = [x for x in pin_findings(doc, "sglang", list(doc["servers"]["sglang"]), None) if "fixtures" in x]
    assert "pins FlashInfer 0.7.5, which has no committed writer fixtures" in f
    # vLLM 0.34.0 pins 0.7.3, which PyPI never had: nothing to derive, no finding
    assert doc["servers"]["vllm"]["0.34.0"]["pin_on_pypi"] is False
    assert pin_findings(doc, "vllm", list(doc["servers"]["vllm"]), None) == []


def test_the_pin_watch_says_whether_the_newest_servers_pins_are_catalogued():
    """Issue 22 item 6: vLLM 0.34.0's pin 0.7.3 (never on PyPI, no catalog) is said so with the nearest catalogued
    releases as an inference, not a finding; SGLang 0.5.23's 0.7.2 is catalogued; a pin PyPI has but tiletune has
    not catalogued is a finding naming the tool that builds catalogs."""
    from tools.release_watch import pin_catalog, pin_findings

    doc = _pin_table()
    said: list[str] = []
    assert pin_findings(doc, "vllm", list(doc["servers"]["vllm"]), None, said.append) == []
    assert ("release watch: vllm 0.34.0 pins FlashInfer 0.7.3, which PyPI never had and tiletune has no catalog of: its "
            "CUTLASS tactics are not decoded; nearest catalogued releases: 0.7.2.post1 and 0.7.4 (an inference, not a "
            "decode: whether 0.7.3's tactic lists equal theirs is not known)") in said
    said.clear()
    assert pin_findings(doc, "sglang", list(doc["servers"]["sglang"]), None, said.append) == []
    assert "release watch: sglang 0.5.23 pins FlashInfer 0.7.2: catalogued" in said
    line, finding = pin_catalog("sglang", "0.5.24", "0.7.5", True)
    assert "NOT catalogued; nearest catalogued releases: 0.7.4" in line
    assert finding == ("sglang 0.5.24 pins FlashInfer 0.7.5, which PyPI has and tiletune has no catalog of: run "
                       "python3 -m tools.catalogs (tools/catalogs/README.md)")


def test_the_watch_says_it_does_not_cover_tensorrt_llm_even_without_pypi():
    from tools.release_watch import tensorrt_llm_line

    env = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "PIP_RETRIES": "0",
           "PIP_TIMEOUT": "5", "NO_PROXY": "", "no_proxy": ""}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        line = tensorrt_llm_line(timeout=60)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert line.startswith("release watch: TensorRT-LLM NOT covered: no release's writer is derived from PyPI")
    assert "tools/trtllm_writers" in line and "PyPI lists" not in line  # no index answer, no version claimed


def test_a_release_that_cannot_be_driven_is_one_finding_before_any_venv(tmp_path):
    # flashinfer-python 0.0.1 has no wheel (PyPI has no such release): pip download really fails, and
    # the watch says so in one finding naming the command, before building the base venv (torch)
    from tools.release_watch import watch_flashinfer

    said: list[str] = []
    findings = watch_flashinfer("0.0.1", tmp_path / "cache", "torch==2.13.0", said.append)
    assert len(findings) == 1 and findings[0].startswith("FlashInfer 0.0.1 could not be driven"), findings
    assert "pip download flashinfer-python==0.0.1" in findings[0]
    assert not (tmp_path / "cache" / "base").exists() and said == []
