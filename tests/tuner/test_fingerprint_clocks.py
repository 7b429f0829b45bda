"""The fingerprint every ledger line carries records clocks and the power limit (issue 10 item 6),
read from a real nvidia-smi executable on PATH (a script printing what the H200 printed)."""

import os
import stat

from tiletune.tuner import fingerprint


def _fake_smi(tmp_path, body):
    exe = tmp_path / "nvidia-smi"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_power_limit_and_clocks_recorded(tmp_path, monkeypatch):
    # with power.limit asked for: 8 fields (the H200's answer in bench/h200_clocks)
    path = _fake_smi(tmp_path, 'echo "NVIDIA H200, 9.0, 580.159.04, 1980, 3201, 345, 143771, 700.00"\n')
    monkeypatch.setenv("PATH", path + os.pathsep + os.environ["PATH"])
    fp = fingerprint._nvidia_smi(0)
    assert fp["power_limit_w"] == 700.0 and fp["clock_max_sm_mhz"] == 1980 and fp["clock_sm_mhz"] == 345
    assert "power_limit_w" not in fingerprint.IDENTITY_FIELDS  # a different cap is not a different environment


def test_old_smi_without_power_limit_still_gives_the_rest(tmp_path, monkeypatch):
    # an nvidia-smi that rejects the power.limit field: the query is retried without it
    body = ('case "$1" in *power.limit*) echo "Field power.limit is not a valid field" >&2; exit 2;; esac\n'
            'echo "NVIDIA H200, 9.0, 580.159.04, 1980, 3201, 345, 143771"\n')
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, body) + os.pathsep + os.environ["PATH"])
    fp = fingerprint._nvidia_smi(0)
    assert fp["gpu"] == "NVIDIA H200" and fp["power_limit_w"] is None and fp["clock_max_sm_mhz"] == 1980


def test_not_supported_power_reads_as_unknown(tmp_path, monkeypatch):
    path = _fake_smi(tmp_path, 'echo "NVIDIA GeForce RTX 5090, 12.0, 580.1, 3090, 14001, 210, 32607, [N/A]"\n')
    monkeypatch.setenv("PATH", path + os.pathsep + os.environ["PATH"])
    assert fingerprint._nvidia_smi(0)["power_limit_w"] is None
