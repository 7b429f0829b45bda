"""SM103 FP4 K768 tactics (FlashInfer 0.6.16 on) run a 128x128x256 kernel when the output is not
32-byte aligned: read by hand in fp4_gemm_cutlass_template_sm103.h of the 0.6.16 and 0.7.4 wheels
(PyPI), line 258: `if (D != nullptr && !isStore256OutputAligned(D, n)) { switch
(gemmConfig.tile_config_sm100) { case CtaShape128x128x768B: case CtaShape128x192x768B: case
CtaShape128x256x768B: return dispatchNVFP4xNVFP4GemmClusterShapeSm100<T, 128, 128, 256>(...) } }`,
isStore256OutputAligned checking D's address and n * sizeof(T) against 32 bytes. No cache or log
records the alignment, so the decode stays the K768 tile and carries a labelled note, shown by
every human view and the JSON."""

from __future__ import annotations

import json

import pytest

from tiletune import catalogs, decode
from tiletune.analysis.pipeline import build
from tiletune.core.records import Decoded, Environment, Status, TuningRecord
from tiletune.formats import json_out, markdown, report, table
from tiletune.readers.keyparse import parse_key

SOURCE = "include/flashinfer/gemm/fp4_gemm_cutlass_template_sm103.h:258"
NOTE = "runs 128x128x256 when the output is not 32-byte aligned"


def _cat(version):
    (cat,) = catalogs.lookup(version, "sm103", "fp4_gemm", "CutlassFp4GemmRunner")
    return cat


@pytest.mark.parametrize("version", ["0.6.16", "0.7.4"])
def test_k768_tactics_carry_the_note(version):
    cat = _cat(version)
    with_note = [i for i in range(len(cat.configs)) if isinstance(catalogs.resolve(cat, i), Decoded)
                 and catalogs.resolve(cat, i).runs_if is not None]
    assert with_note == list(range(36, 63))  # the 27 K768 configs
    d = catalogs.resolve(cat, 40)
    assert d.config.tile == (128, 128, 768) and d.runs_if.config.tile == (128, 128, 256)
    assert d.runs_if.config.cluster == d.config.cluster and d.runs_if.source == SOURCE
    assert d.runs_if.short().startswith("runs 128x128x256") and "32-byte aligned" in d.runs_if.short()


def test_before_0_6_16_no_note():
    cat = _cat("0.6.15.post1")
    assert not any(catalogs.resolve(cat, i).runs_if for i in range(len(cat.configs)))


def _result():
    pk = parse_key("('fp4_gemm', 'CutlassFp4GemmRunner', ((16, 2048), (2048, 14336), (-1, 256), (256, 14336), (), (0,), "
                   "(-1, 14336), (0,), (0,), (-1,)))")
    rec = TuningRecord(source="cache.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=36,
                       status=Status.CHOSEN, env=Environment(flashinfer_version="0.7.4", arch="sm103"), shapes=pk.shapes)
    return build(decode.decode_all([rec]))


def test_every_view_shows_it():
    result = _result()
    doc = json.loads(json_out.format_inspect(result))
    runs_if = doc["entries"][0]["decode"]["runs_if"]
    assert runs_if["tile"] == [128, 128, 256] and runs_if["source"] == SOURCE and NOTE.split(" when")[0] in runs_if["note"]
    assert doc["entries"][0]["config"]["tile"] == [128, 128, 768]  # the decode itself is the profiled K768 tile
    texts = {
        "verdicts (JSON)": " ".join(v["text"] for v in doc["verdicts"]),
        "table": table.format_inspect(result),
        "table --all": table.format_inspect(result, all_rows=True),
        "markdown": markdown.format_inspect(result),
        "report": report.format_report(result, report.ReportContext()),
    }
    for view, text in texts.items():
        assert NOTE in " ".join(text.split()), view
    assert SOURCE in " ".join(texts["table --all"].split())  # the footnote names the guard's file and line
