"""The shipped server -> FlashInfer pin table (tiletune/core/data/server_flashinfer_pins.json), and what
`tiletune inspect` makes of a log whose only version clue is a server banner."""
import json
import os
import subprocess
import sys
from importlib import resources

import pytest
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


def test_vllm_0_34_pins_a_flashinfer_release_pypi_lacks():
    # Read by a person, not by the tool: the METADATA of vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl
    # (PyPI; read with HTTP range requests, PyPI serves no .metadata file beside it) says
    # "Requires-Dist: flashinfer-python==0.7.3", as does requirements/cuda.txt in vllm-0.34.0.tar.gz;
    # `pip index versions flashinfer-python` lists 0.7.2.post1 and 0.7.4 but no 0.7.3.
    e = pinned_flashinfer("vllm", "0.34.0")
    assert e["pin"] == "0.7.3" and e["spec"] == "flashinfer-python==0.7.3"
    assert e["pin_on_pypi"] is False
    assert pinned_flashinfer("vllm", "0.33.0")["pin_on_pypi"] is True  # 0.7.2.post1 is on PyPI
    gen = _doc()["generated_by"]
    assert gen["flashinfer_python_on_pypi"]["newest"] == "0.7.4"
    scanned = {s["server"]: s for s in gen["sources"]}
    assert scanned["vllm"]["last_scanned"] == "0.34.0" and scanned["sglang"]["last_scanned"] == "0.5.23"


# Read in a child process: the tool names PyPI through pip's internals, which load the standard
# library's distutils and would break setuptools' later import in this test process.
_REREAD = """
import json
from packaging.version import Version
from tools.server_pins import parse, sources
index_url = sources._pypi()[1].format(name="vllm")
files = json.loads(sources._get(index_url))["releases"]["0.34.0"]
wheel = sources._pick_wheel(files)
text = sources._wheel_metadata_by_range(sources._file_url(index_url, wheel), wheel["size"])
on_pypi = sources.pypi_versions("flashinfer-python")
print(json.dumps({"wheel": wheel["filename"], "pin": parse.summarize(parse.flashinfer_requirements(text or ""))["pin"],
                  "on_pypi": [str(v) for v in on_pypi]}))
"""


@pytest.mark.pypi
def test_vllm_0_34_pin_rereads_from_pypi():
    # The released bytes themselves: vLLM 0.34.0's wheel METADATA (a few range requests, not the
    # 239 MB wheel) names flashinfer-python==0.7.3, and PyPI's release list of flashinfer-python
    # holds no 0.7.3; the shipped table says both.
    from pathlib import Path

    r = subprocess.run([sys.executable, "-c", _REREAD], capture_output=True, text=True, timeout=300,
                       cwd=Path(__file__).resolve().parents[2])
    if r.returncode != 0:
        if os.environ.get("TILETUNE_REQUIRE_PYPI") == "1":
            pytest.fail(f"reading vLLM 0.34.0 from PyPI failed: {r.stderr.strip()[-500:]}")
        pytest.skip(f"PyPI cannot be reached: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else '?'}")
    got = json.loads(r.stdout)
    assert got["wheel"].startswith("vllm-0.34.0-")
    assert got["pin"] == pinned_flashinfer("vllm", "0.34.0")["pin"] == "0.7.3"
    assert "0.7.3" not in got["on_pypi"] and "0.7.2.post1" in got["on_pypi"] and "0.7.4" in got["on_pypi"]


def test_inspect_says_a_pinned_release_has_no_catalog(tmp_path, sample):
    # vLLM 0.34.0's banner is the only version clue: the pin (0.7.3) has no catalog, and the first
    # verdict says so, names the catalogued releases either side as an inference and says PyPI lacks it
    debug = sample("logs/sm120_0.6.17_warmup_debug.log").read_text().splitlines()
    body = [ln for ln in debug if ".cache/flashinfer" not in ln and "0.6.17" not in ln]
    log = tmp_path / "server.log"
    log.write_text("INFO 06-03 10:00:00 [api_server.py:1772] vLLM API server version 0.34.0\n" + "\n".join(body) + "\n")
    r = subprocess.run([sys.executable, "-m", "tiletune", "inspect", str(log), "--arch", "sm120", "--format", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {e["flashinfer_version"] for e in doc["entries"]} == {"0.7.3"}
    first = doc["verdicts"][0]["text"]
    assert first.startswith("FlashInfer 0.7.3 has no tiletune catalog"), first
    assert "Nearest catalogued releases: 0.7.2.post1 and 0.7.4 (an inference, not a decode" in first, first
    assert "--flashinfer-version 0.7.2.post1 or 0.7.4" in first and "PyPI has no flashinfer-python 0.7.3" in first
    assert "vLLM API server version 0.34.0" in first  # how the release is known
    for fmt in ("table", "markdown"):  # every human view leads with it
        out = subprocess.run([sys.executable, "-m", "tiletune", "inspect", str(log), "--arch", "sm120", "--format", fmt],
                             capture_output=True, text=True).stdout
        assert "FlashInfer 0.7.3 has no tiletune catalog" in out and "0.7.2.post1 and 0.7.4" in " ".join(out.split())
    # the catalogued release itself gets no such line
    log2 = tmp_path / "server033.log"
    log2.write_text(log.read_text().replace("version 0.34.0", "version 0.33.0"))
    r = subprocess.run([sys.executable, "-m", "tiletune", "inspect", str(log2), "--arch", "sm120", "--format", "json"],
                       capture_output=True, text=True)
    assert not any("no tiletune catalog" in v["text"] for v in json.loads(r.stdout)["verdicts"])
