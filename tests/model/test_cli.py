"""`tiletune model` and `tiletune gpus` through the real CLI: JSON contract, units in the table, one-line errors."""

import json

import pytest
from typer.testing import CliRunner

from tiletune.cli.typer_app import app

runner = CliRunner()
BASE = ["model", "--dtype", "nvfp4", "--m", "16", "--n", "7168", "--k", "4608", "--tile", "128x128x256"]


def test_model_json_contract():
    r = runner.invoke(app, BASE + ["--gpu", "RTX PRO 6000 Blackwell Server Edition", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["kind"] == "model" and d["smem"]["kind"] == "model"
    assert {k: d["smem"][k] for k in ("stages", "bytes", "limit", "fits")} == {"stages": 2, "bytes": 83_968, "limit": 101_376, "fits": True}
    assert d["intensity"]["problem"] == pytest.approx(56.0, abs=0.1) and d["intensity"]["tile"] == pytest.approx(227.6, abs=0.1)
    assert d["bound"] == "memory"
    t = d["time_us"]
    assert t["floor"] == pytest.approx(11.82, abs=0.01) and t["low"] <= t["expected"] <= t["high"]
    assert set(d["efficiency"]) >= {"compute", "roofline"}
    assert d["peak_tflops"]["dense"] == 1871.0 and d["peak_tflops"]["sparse"] == 3742.0
    assert (d["ctas"], d["sms"]) == (56, 188)
    assert any("sparse" in n for n in d["notes"])


def test_model_sparse_is_null_where_none_quoted():
    r = runner.invoke(app, ["model", "--gpu", "H200", "--dtype", "bf16", "--m", "4096", "--n", "4096", "--k", "4096",
                            "--tile", "128x256x64", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["peak_tflops"]["dense"] == 989.4 and d["bound"] == "compute" and "h200" in d["calibration"]
    r = runner.invoke(app, ["model", "--gpu", "A100", "--dtype", "int4", "--m", "16", "--n", "64", "--k", "64", "--tile", "128x128x64"])
    assert r.exit_code == 2


def test_model_table_has_units_and_markers():
    r = runner.invoke(app, BASE + ["--gpu", "RTX 5090", "--grouped", "--experts", "64", "--top-k", "4"])
    assert r.exit_code == 0, r.output
    for unit in ("KiB", " us", "TFLOP/s", "FLOP/B", "GB/s"):
        assert unit in r.stdout
    assert "model" in r.stdout and "computed, not measured" in r.stdout
    md = runner.invoke(app, BASE + ["--arch", "sm120", "--format", "markdown"])
    assert md.exit_code == 0 and md.stdout.startswith("### tiletune model") and "| quantity" in md.stdout
    assert "default SKU for sm120" in md.stdout


@pytest.mark.parametrize("args,needle", [
    (["--gpu", "RTX PRO 6000"], "close entries"),
    (["--gpu", "H200"], "no fp4"),
    (["--gpu", "RTX 5090", "--tile", "128x128"], "three positive integers"),
    (["--gpu", "RTX 5090", "--tile", "256x128x256", "--stage-policy", "nonsense"], "stage policy"),
    (["--gpu", "RTX 5090", "--m", "0"], "> 0"),
    (["--gpu", "RTX 5090", "--m", "-3"], "> 0"),
    (["--gpu", "RTX 5090", "--cluster", "2x1x1"], "1x1x1"),
    ([], "--gpu"),
])
def test_model_bad_input_one_line_exit_2(args, needle):
    argv = list(BASE)
    for i in range(0, len(args), 2):  # later options override BASE's
        if args[i] in argv:
            argv[argv.index(args[i]) + 1] = args[i + 1]
        else:
            argv += args[i:i + 2]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in r.output


def test_model_tile_that_does_not_build_is_a_finding_not_an_error():
    r = runner.invoke(app, BASE[:-1] + ["256x128x256", "--gpu", "RTX 5090", "--format", "json"])
    assert r.exit_code == 0
    s = json.loads(r.stdout)["smem"]
    assert s["verdict"] == "does_not_build" and s["fits"] is False and s["stages"] == 1


def test_gpus_table_and_json(tmp_path):
    r = runner.invoke(app, ["gpus"])
    assert r.exit_code == 0 and "rtx-pro-6000-server" in r.stdout and "DENSE" in r.stdout
    j = json.loads(runner.invoke(app, ["gpus", "--format", "json"]).stdout)
    srv = next(g for g in j["gpus"] if g["key"] == "rtx-pro-6000-server")
    assert srv["peaks_tflops"]["fp4"]["dense"] == 1871 and srv["peaks_tflops"]["fp4"]["quoted"] == "sparse"
    bad = tmp_path / "g.json"
    bad.write_text("[1,")
    r = runner.invoke(app, ["gpus", "--gpu-file", str(bad)])
    assert r.exit_code == 2 and str(bad) in r.stderr


@pytest.mark.nvcc
def test_model_exact_agrees_with_the_model_for_one_sm120_tile():
    """--exact compiles the CUTLASS kernel type (no GPU; ~20-90 s once, then cached) and must agree with the model."""
    r = runner.invoke(app, BASE[:-1] + ["256x128x128", "--gpu", "RTX 5090", "--exact", "--format", "json"])
    if r.exit_code == 2 and ("CUTLASS" in r.stderr or "nvcc" in r.stderr or "not available" in r.stderr):
        pytest.skip(f"no CUTLASS headers / query engine here: {r.stderr.strip()}")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)["smem"]
    assert s["kind"] == "compiled" and s["compiled"]["source"] == "compiled"
    assert (s["stages"], s["bytes"]) == (s["model"]["stages"], s["model"]["bytes"]) == (3, 93_184)


def test_model_power_limit_sets_the_clock_in_every_view_and_a_bad_one_is_one_line():
    args = ["model", "--gpu", "B200", "--dtype", "bf16", "--m", "8192", "--n", "8192", "--k", "8192",
            "--tile", "128x256x64", "--cluster", "2x1x1"]
    free = json.loads(runner.invoke(app, args + ["--format", "json"]).stdout)
    r = runner.invoke(app, args + ["--power-limit", "750", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["clock"]["power_limit_w"] == 750 and d["clock"]["sm_mhz"] < free["clock"]["sm_mhz"]
    assert d["time_us"]["expected"] > free["time_us"]["expected"] and "750 W cap" in d["clock"]["basis"]
    text = runner.invoke(app, args + ["--power-limit", "750"], env={"COLUMNS": "400"}).stdout
    assert "750 W cap" in text and "power limit 750 W" in text
    bad = runner.invoke(app, args + ["--power-limit", "100"])
    assert bad.exit_code == 2 and "idle power" in bad.output and "Traceback" not in bad.output
