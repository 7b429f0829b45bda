"""`tiletune inspect` and `tiletune report` from the command line: formats, exit codes, bad input.

Exit 0 when every input was read (findings are not errors), 2 when any input was unusable (after
printing everything else), 2 with one line for bad options; inputs are never modified.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import jsonschema
import pytest

SM120 = "v1/sm120-rtxpro6000-0.6.14-fp4-moe.json"
H200 = "real/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """Every test here runs without the server cache variables (conftest.no_server_env)."""


def test_table_on_the_sm120_sample(run, sample):
    r = run("inspect", sample(SM120), "--all")
    assert r.exit_code == 0, r.output
    assert "== sm120 fp4_gemm - CutlassFp4GemmRunner (flashinfer 0.6.14) ==" in r.stdout
    assert "Verdicts" in r.stdout and "sm120 fp4_gemm: winners" in r.stdout
    assert "128x128x256" in r.stdout and "fits" in r.stdout


def test_json_matches_the_schema(run, sample):
    schema = json.loads(resources.files("tiletune").joinpath("schemas/inspect.schema.json").read_text())
    r = run("inspect", sample(SM120), sample(H200), "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema)
    kinds = {e["runner"] for e in doc["entries"]}
    assert {"CutlassFp4GemmRunner", "CublasFp8GemmRunner"} <= kinds
    cub = next(e for e in doc["entries"] if e["runner"] == "CublasFp8GemmRunner")
    assert cub["config"] is None and cub["decode"]["not_a_cutlass_tactic"] and cub["arch"] == "sm90"


def test_bad_input_prints_the_rest_then_exits_2(run, sample):
    before = hashlib.sha256(sample("bad/truncated.json").read_bytes()).hexdigest()
    r = run("inspect", sample("bad/truncated.json"), sample(H200), "--format", "json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["entries"] and doc["exit_status"] == 2
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "truncated.json" in lines[0]
    assert hashlib.sha256(sample("bad/truncated.json").read_bytes()).hexdigest() == before


def test_missing_path_exits_2(run, tmp_path):
    r = run("inspect", tmp_path / "nope.json")
    assert r.exit_code == 2 and "nope.json" in r.output


@pytest.mark.parametrize(
    "args, words",
    [
        (("--arch", "sm999"), ["--arch", "sm999"]),
        (("--flashinfer-version", "banana"), ["--flashinfer-version"]),
        (("--gpu", "Voodoo 5"), ["Voodoo 5"]),
    ],
)
def test_bad_options_one_line_exit_2(run, sample, args, words):
    r = run("inspect", sample(H200), *args)
    assert r.exit_code == 2
    err = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(err) == 1 and all(w in err[0] for w in words) and "Traceback" not in r.output


def test_overrides_decode_a_log_without_metadata(run, sample):
    log = sample("logs/sm120_0.6.17_warmup_debug.log")
    plain = run("inspect", log, "--format", "json")
    forced = run("inspect", log, "--format", "json", "--arch", "sm120", "--flashinfer-version", "0.6.17")
    assert plain.exit_code == forced.exit_code == 0
    decoded = lambda out: sum(1 for e in json.loads(out)["entries"] if e["config"])  # noqa: E731
    assert decoded(forced.stdout) > decoded(plain.stdout)


def test_nothing_found_exits_0_and_says_where_it_looked(run, tmp_path):
    r = run("inspect")
    assert r.exit_code == 0
    assert "no autotune caches" in r.stdout and str(tmp_path / "home") in r.stdout


def test_json_to_output_file_equals_stdout(run, sample, tmp_path):
    out = tmp_path / "inspect.json"
    r = run("inspect", sample(SM120), "--format", "json", "--output", out)
    assert r.exit_code == 0 and r.stdout == ""
    assert out.read_text() == run("inspect", sample(SM120), "--format", "json").stdout
    assert json.loads(out.read_text())["entries"]
    assert [p.name for p in tmp_path.iterdir()] == ["inspect.json"]  # no temp file left behind


def test_markdown_to_output_file(run, sample, tmp_path):
    out = tmp_path / "inspect.md"
    r = run("inspect", sample(SM120), "--format", "markdown", "--output", out)
    assert r.exit_code == 0 and r.stdout == ""
    assert out.read_text().startswith("# tiletune inspect")


def test_report_markdown_with_picture(run, sample, tmp_path):
    out = tmp_path / "ticket" / "report.md"
    out.parent.mkdir()  # -o creates no folders (issue 25 item 10)
    r = run("report", sample(SM120), sample("logs/sm120_0.6.17_warmup_debug.log"), "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("# tiletune report") and "## Environment" in text and "## Reproduce" in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "need matplotlib" in text
    else:
        pngs = sorted(p.name for p in out.parent.glob("*.png"))
        assert pngs and all(f"]({p})" in text for p in pngs)


def test_report_json_redacted(run, sample, tmp_path):
    src = tmp_path / "private-dir"
    src.mkdir()
    cache = src / "cache.json"
    cache.write_bytes(sample(SM120).read_bytes())
    out = tmp_path / "r.json"
    r = run("report", cache, "-o", out, "--format", "json", "--redact", "--no-plot")
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "tiletune.report/1" and doc["inspect"]["entries"]
    assert "private-dir" not in out.read_text() and doc["inspect"]["entries"][0]["source"].endswith("/cache.json")


@pytest.mark.parametrize("args", [("logs/sm120_0.6.17_warmup_debug.log", "--arch", "sm120", "--flashinfer-version", "0.6.17"),
                                  ("layouts",), ("v1",)])
def test_table_fits_120_columns_on_real_samples(run, sample, args):
    r = run("inspect", sample(args[0]), *args[1:])
    assert r.exit_code in (0, 2) and r.stdout
    # a suggested command is the one line never wrapped (pasted, it must run as shown)
    assert [line for line in r.stdout.splitlines() if len(line) > 120 and not line.startswith("      tiletune ")] == []


def test_json_and_report_paths_do_not_import_tabulate_matplotlib_torch_or_the_log_reader(sample):
    # routing imports reader modules one by one until one claims the file: a cache never loads the log grammar
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path\n"
        "from tiletune.analysis.pipeline import inspect\n"
        "from tiletune.readers.interface import ReadContext\n"
        "from tiletune.formats import json_out, report\n"
        f"r = inspect([Path({str(sample(SM120))!r})], ReadContext())\n"
        "json_out.format_inspect(r); report.format_report(r, report.ReportContext())\n"
        "print(sorted(m for m in ('tabulate', 'matplotlib', 'torch', 'tiletune.readers.logs') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_console_entry_exits_with_the_status_and_whole_output(sample, tmp_path):
    # main() leaves with os._exit after inspect (no teardown): output must be complete and the status kept
    import subprocess
    import sys

    ok = subprocess.run([sys.executable, "-m", "tiletune", "inspect", sample(SM120), "--format", "json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["entries"], ok.stderr
    bad = subprocess.run([sys.executable, "-m", "tiletune", "inspect", sample("bad/bad-key.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Verdicts" in bad.stdout and bad.stdout.endswith("\n")
    usage = subprocess.run([sys.executable, "-m", "tiletune", "inspect", "--format", "yaml"], capture_output=True, text=True)
    assert usage.returncode == 2 and "yaml" in usage.stderr
    out = tmp_path / "r.json"
    wrote = subprocess.run([sys.executable, "-m", "tiletune", "inspect", sample(SM120), "-f", "json", "-o", str(out)],
                           capture_output=True, text=True)
    assert wrote.returncode == 0 and json.loads(out.read_text())["entries"]
    piped = subprocess.run(f"{sys.executable} -m tiletune inspect {sample(SM120)} --format json | head -c 10",
                           shell=True, capture_output=True, text=True)
    assert piped.stdout == '{"schema":' and "Traceback" not in piped.stderr


def test_the_collector_is_paused_for_one_command_and_restored():
    # cli.process.gc_paused: the process policy behind a 50k-entry inspect's speed (no full-heap scans
    # while records pile up); it must give the collector back as it found it, exceptions included
    import gc

    from tiletune.cli.process import gc_paused

    assert gc.isenabled()
    try:
        with gc_paused():
            assert not gc.isenabled()
            raise KeyError("a command that fails")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()
        gc.unfreeze()
