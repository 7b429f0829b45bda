"""FlashInfer 0.6.3 .. 0.6.14 fused-MoE pitfall: the binding's setRunnerProfiles() reads a stored
GEMM2 tactic t below the GEMM2 list length as relative to the GEMM2 list (it runs mAllProfiles[G1 + t])
while runGemmProfile() profiled mAllProfiles[t], the absolute entry. Fixed in 0.6.15 (both absolute).

Read in the binding of every wheel 0.6.3 .. 0.7.4 (tools/catalogs/moe.py checks it per release and
records `gemm2_id_read_as_relative`). SM90 bf16 x bf16 with finalize: GEMM1 has 45 tactics, GEMM2 81
(global 45..125), so GEMM2 tactics 45..80 are affected: t = 60 profiled GEMM2 entry 15, runs entry 60."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from schema_paths import schema_node

from tiletune import catalogs
from tiletune.core.records import Decoded
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER
from tiletune.formats.json_out import decode_dict

G1, G2 = FUSED_MOE_OPS
BF16 = {"act": "bf16", "weight": "bf16", "finalize": True}
AFFECTED = ["0.6.7", "0.6.7.post3", "0.6.10.post1", "0.6.13", "0.6.14"]
FIXED = ["0.6.15", "0.6.16", "0.6.18rc1", "0.7.2.post1"]


def gemm2(version):
    (cat,) = catalogs.lookup(version, "sm90", G2, MOE_RUNNER, BF16)
    assert (cat.index_offset, len(cat.configs)) == (45, 81)
    return cat


@pytest.mark.parametrize("version", AFFECTED)
def test_affected_release_reports_profiled_and_run_config(version):
    cat = gemm2(version)
    d = catalogs.resolve(cat, 60)
    assert isinstance(d, Decoded) and d.index == 15 and d.config == cat.configs[15]
    assert d.runs is not None and d.runs.index == 60 and d.runs.config == cat.configs[60]
    assert d.runs.config != d.config
    assert "profiled as GEMM2 entry 15" in d.runs.reason and "runs GEMM2 entry 60" in d.runs.reason
    assert "setRunnerProfiles" in d.runs.reason and "0.6.15" in d.runs.reason


@pytest.mark.parametrize("version", AFFECTED)
def test_ids_at_or_past_the_gemm2_length_are_read_as_absolute(version):
    cat = gemm2(version)
    for t in (81, 100, 125):
        d = catalogs.resolve(cat, t)
        assert isinstance(d, Decoded) and d.index == t - 45 and d.runs is None
    assert catalogs.resolve(cat, -1).runs is None  # -1: the GEMM2 default, no id to misread


@pytest.mark.parametrize("version", FIXED)
def test_fixed_release_runs_what_it_profiled(version):
    d = catalogs.resolve(gemm2(version), 60)
    assert isinstance(d, Decoded) and d.index == 15 and d.runs is None


def test_gemm1_is_never_affected():
    (cat,) = catalogs.lookup("0.6.14", "sm90", G1, MOE_RUNNER, BF16)
    assert cat.gemm2_relative_ids is None and catalogs.resolve(cat, 30).runs is None


def test_json_carries_both_configs_and_the_reason_per_the_schema():
    d = catalogs.resolve(gemm2("0.6.14"), 60)
    out = decode_dict(d)
    assert out["decoded"] is True and out["runs"]["index"] == 60
    assert out["runs"]["tile"] == list(d.runs.config.tile) and "relative" in out["runs"]["reason"]
    schema = json.loads(resources.files("tiletune.schemas").joinpath("inspect.schema.json").read_text())
    jsonschema.validate(out, {**schema_node(schema, "entries", "decode"), "$defs": schema["$defs"]})
    assert "runs" not in decode_dict(catalogs.resolve(gemm2("0.6.15"), 60))


def test_ambiguous_pre_rc2_key_names_what_runs_too():
    # sm120 nvfp4 MoE key of the bundled 0.6.14 sample (shapes only: nvfp4 x nvfp4 or fp8 x mxfp4);
    # GEMM1 has 20 tactics, GEMM2 40, so GEMM2 tactic 24 is read as relative
    from tiletune import decode
    from tiletune.core.records import Environment, Status, TuningRecord, Undecoded
    from tiletune.readers.keyparse import parse_key

    key = parse_key(f"('{G2}', 'MoERunner', ((1, 2560), (512, 1280, 160), (0,), (512, 2560, 40), (0,)), ())")
    r = TuningRecord(source="t", source_kind="test", op=G2, runner="MoERunner", tactic=24, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.6.14", arch="sm120"), shapes=key.shapes, extras=())
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and "ambiguous" in d.reason and "profiled, runs" in d.reason


def test_inspect_shows_both_in_table_markdown_and_json(tmp_path):
    # an sm120 NVFP4 MoE key (activations packed: x's last dim is half the hidden size, so the
    # variant is nvfp4 x nvfp4 for sure): GEMM1 20 tactics, GEMM2 40, GEMM2 tactic 24 misread
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps({
        "_metadata": {"flashinfer_version": "0.6.14", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
        f"('{G2}', 'MoERunner', ((1, 1280), (512, 1280, 160), (0,), (512, 2560, 40), (0,)), ())": ["MoERunner", 24],
    }))
    (cat,) = catalogs.lookup("0.6.14", "sm120", G2, MOE_RUNNER, {"act": "nvfp4", "weight": "nvfp4", "finalize": True})
    profiled, runs = cat.configs[4].label(), cat.configs[24].label()
    for fmt in ("table", "markdown"):
        r = CliRunner().invoke(app, ["inspect", str(cache), "-f", fmt])  # the per-bucket view
        assert r.exit_code == 0, r.output
        assert f"{profiled} profiled, runs {runs}" in r.output
        r = CliRunner().invoke(app, ["inspect", str(cache), "-f", fmt, "--all"])  # every tactic, with the reason
        assert r.exit_code == 0, r.output
        assert f"{profiled} profiled, runs {runs}" in r.output and "profiled as GEMM2 entry 4" in r.output
    r = CliRunner().invoke(app, ["inspect", str(cache), "-f", "json"])
    entry = json.loads(r.output)["entries"][0]
    assert entry["decode"]["runs"]["index"] == 24 and entry["decode"]["runs"]["label"] == runs
    assert entry["config"]["label"] == profiled


def _gemm2_result(key: str, tactic: int, arch: str):
    from tiletune import decode
    from tiletune.analysis.pipeline import build
    from tiletune.core.records import Environment, Status, TuningRecord
    from tiletune.readers.keyparse import parse_key

    pk = parse_key(key)
    r = TuningRecord(source="cache.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=tactic,
                     status=Status.CHOSEN, env=Environment(flashinfer_version="0.6.14", arch=arch), shapes=pk.shapes,
                     extras=pk.extras)
    return build(decode.decode_all([r]))


def test_a_verdict_line_says_it_first_with_the_full_kernel_that_runs():
    # SM90 bf16 x bf16 (20 extras name it, finalize on): GEMM2 tactic 60 profiled entry 15 and runs
    # entry 60, which is a FINALIZE copy: the line names the fusion the tile label leaves out
    key = (f"('{G2}', 'MoERunner', ((64, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), "
           "(torch.bfloat16, torch.bfloat16, torch.bfloat16, 2, 1, 0, 1, 0, 1, 0, False, False, False, "
           "False, False, False, True, 3, False, True))")
    cat = gemm2("0.6.14")
    measured, runs = cat.configs[15], cat.configs[60]
    assert (measured.epilogue_fusion, runs.epilogue_fusion) == ("NONE", "FINALIZE")
    result = _gemm2_result(key, 60, "sm90")
    (line,) = [v.text for v in result.verdicts if "is not the one FlashInfer 0.6.14 measured" in v.text]
    assert line.startswith(f"sm90 {G2}: the kernel that serves 1 chosen tactic(s) is not the one")
    assert f"tactic 60: measured {measured.label()}, runs {runs.label()}, epilogue fusion FINALIZE (measured: NONE)" in line
    assert "setRunnerProfiles()" in line and "fixed in FlashInfer 0.6.15" in line
    # it comes before the per-op line, and every human view shows it
    texts = [v.text for v in result.verdicts]
    assert texts.index(line) < next(i for i, t in enumerate(texts) if "winners" in t)
    from tiletune.formats import markdown, report, table

    for text in (table.format_inspect(result), markdown.format_inspect(result),
                 report.format_report(result, report.ReportContext())):
        assert "is not the one FlashInfer 0.6.14 measured: tactic 60" in " ".join(text.split())


def test_an_ambiguous_key_gets_the_line_too_per_candidate():
    # pre-0.6.18rc2 SM90 key, weights one or two bytes wide: bf16, fp16 and fp8 lists disagree at
    # GEMM2 tactic 60; each catalogued candidate is named with what it measured and what it runs
    key = f"('{G2}', 'MoERunner', ((64, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), ())"
    result = _gemm2_result(key, 60, "sm90")
    (line,) = [v.text for v in result.verdicts if "measured" in v.text]
    assert "may not be the one FlashInfer 0.6.14 measured" in line  # the key leaves it open
    bf16 = gemm2("0.6.14")
    assert (f"if the key is bf16 x bf16 or fp16 x fp16: measured {bf16.configs[15].label()}, runs "
            f"{bf16.configs[60].label()}, epilogue fusion FINALIZE (measured: NONE)") in line
    assert "if the key is fp8 x fp8: measured" in line
