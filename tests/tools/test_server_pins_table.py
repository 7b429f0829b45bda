"""The shipped server -> FlashInfer pin table (tiletune/core/data/server_flashinfer_pins.json), and what
`tiletune inspect` makes of a log whose only version clue is a server banner."""
import json
import subprocess
import sys
from importlib import resources

from packaging.version import Version

from tiletune.readers.logs.clues import pinned_flashinfer, server_pins


def _doc():
    return json.loads(resources.files("tiletune.core.data").joinpath("server_flashinfer_pins.json").read_text())


def test_schema_and_provenance():
    doc = _doc()
    assert doc["schema"] == "tiletune.server_pins/1"
    gen = doc["generated_by"]
    assert gen["command"].startswith("python3 -m tools.server_pins")
    assert gen["tool_revision"]["commit"] and "tools_server_pins_tree" in gen["tool_revision"]
    assert "/work/" not in json.dumps(doc) and "/root/" not in json.dumps(doc)  # no path of a machine
    scanned = {s["server"]: s for s in gen["sources"]}
    assert set(scanned) == set(doc["servers"]) == {"vllm", "sglang"}
    for server, rows in doc["servers"].items():
        s = scanned[server]
        assert s["releases_scanned"] == len(rows) and s["repository"].startswith("https://github.com/")
        # the ranges the brief asks for: vLLM 0.9 .. and SGLang 0.4 .. are inside what was scanned
        assert Version(s["first_scanned"]) <= Version({"vllm": "0.9.0", "sglang": "0.4.0"}[server])
        assert list(rows) == sorted(rows, key=Version)
        for ver, e in rows.items():
            assert set(e) >= {"pin", "spec", "source"}, (server, ver)
            assert isinstance(e["source"], str) and e["source"], (server, ver)
            if e["pin"] is not None:  # a pin is one exact "==" requirement, and the spec says it
                assert e["spec"].endswith("==" + e["pin"]), (server, ver, e)
            elif e["spec"] is None:
                assert "requires no FlashInfer" in e["note"], (server, ver)
            else:
                assert e.get("note"), (server, ver)
    assert server_pins() == doc  # the loader reads this very file


def test_a_built_wheel_carries_the_table():
    from pathlib import Path

    import pytest

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    conf = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "core/data/*.json" in conf["tool"]["setuptools"]["package-data"]["tiletune"]
    assert resources.files("tiletune.core.data").joinpath("__init__.py").is_file()  # a package, so setuptools finds it


def test_pins_read_by_hand():
    # Each expectation below was read by a person in the published file named (not by the tool):
    # - sglang 0.4.6: pyproject.toml of sglang-0.4.6.tar.gz (PyPI sdist; python/pyproject.toml at
    #   tag v0.4.6), line 50: "flashinfer_python==0.2.3" in the srt extra
    assert pinned_flashinfer("sglang", "0.4.6")["pin"] == "0.2.3"
    # - sglang 0.4.1: same file of sglang-0.4.1.tar.gz: srt = [..., "flashinfer==0.1.6", ...] (the old
    #   package name, from flashinfer.ai's index)
    e = pinned_flashinfer("sglang", "0.4.1")
    assert e["pin"] == "0.1.6" and e["spec"] == "flashinfer==0.1.6"
    # - vllm 0.11.0: METADATA of vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl (PyPI; built from
    #   requirements/cuda.txt at v0.11.0): Requires-Dist: flashinfer-python==0.3.1; extra == "flashinfer"
    e = pinned_flashinfer("vllm", "0.11.0")
    assert e["pin"] == "0.3.1" and e["extra"] == "flashinfer"
    # - vllm 0.9.2: no file of vllm-0.9.2.tar.gz (setup.py, requirements/*.txt) names flashinfer
    e = pinned_flashinfer("vllm", "0.9.2")
    assert e["pin"] is None and e["spec"] is None
    # a dev build of a release falls back to that release's row (logs/clues.py' own rule)
    assert pinned_flashinfer("vllm", "0.11.0rc2.dev5+g1234abc")["pin"] == "0.3.1"


def _inspect_json(tmp_path, text):
    log = tmp_path / "server.log"
    log.write_text(text)
    r = subprocess.run([sys.executable, "-m", "tiletune", "inspect", str(log), "--format", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_inspect_takes_the_version_from_a_banner_pin(tmp_path):
    # A vLLM start-up log in its real INFO form; the banner is the only version clue.
    out = _inspect_json(tmp_path, (
        "INFO 12-03 10:00:00 [api_server.py:1772] vLLM API server version 0.11.0\n"
        "2026-08-03 10:01:12,000 - INFO - autotuner.py:1 - flashinfer.jit: "
        "[Autotuner]: Skipped 3 unsupported tactic(s) for fp4_gemm (enable debug logs to see details)\n"))
    entry = json.loads(out)["entries"][0]
    # the version is the pin, labelled as an inference, with the banner, the requirement and its source
    assert entry["flashinfer_version"] == "0.3.1"
    src = entry["version_source"]
    assert src.startswith("inferred from server release pin"), src
    assert "vLLM API server version 0.11.0" in src and "flashinfer-python==0.3.1" in src and "vllm-0.11.0" in src, src


def test_inspect_banner_of_a_release_without_flashinfer(tmp_path):
    # vLLM 0.9.2 requires no FlashInfer package: no version is made up from its banner
    out = _inspect_json(tmp_path, (
        "INFO 07-08 10:00:00 [api_server.py:1395] vLLM API server version 0.9.2\n"
        "2026-08-03 10:01:12,000 - INFO - autotuner.py:1 - flashinfer.jit: "
        "[Autotuner]: Skipped 3 unsupported tactic(s) for fp4_gemm (enable debug logs to see details)\n"))
    entry = json.loads(out)["entries"][0]
    assert entry["flashinfer_version"] is None and entry["version_source"] is None
