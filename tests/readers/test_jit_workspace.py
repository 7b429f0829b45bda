"""The JIT workspace reader on the bundled 0.6.14/120f workspace and on edge cases."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tiletune.core.records import InputProblem, Status, TuningRecord
from tiletune.readers import jit_workspace as jw
from tiletune.readers.interface import ReadContext

WS = "jit/flashinfer/0.6.14/120f"


def read_all(path, ctx=None):
    ctx = ReadContext() if ctx is None else ctx
    items = list(jw.read(Path(path), ctx))
    return [i for i in items if isinstance(i, TuningRecord)], [i for i in items if isinstance(i, InputProblem)]


@pytest.mark.parametrize("parts,version,arch", [
    (("0.6.14", "120f"), "0.6.14", "sm120"), (("0.7.2.post1", "90a"), "0.7.2.post1", "sm90"),
    (("0.6.18rc7", "100a"), "0.6.18rc7", "sm100"), (("0.7.0", "121a"), "0.7.0", "sm121"),
    (("0.7.2.post1", "90a_120f"), "0.7.2.post1", None),
])
def test_workspace_identity(parts, version, arch):
    ident = jw.workspace_identity(Path("/home/u/.cache/flashinfer").joinpath(*parts))
    assert ident is not None and ident.version == version and ident.arch == arch


def test_workspace_identity_rejects_other_paths():
    assert jw.workspace_identity(Path("/tmp/foo/bar")) is None
    assert jw.workspace_identity(Path("/x/flashinfer/cubins/abc")) is None


def test_sample_workspace(sample):
    recs, probs = read_all(sample(WS))
    assert probs == []
    ws = [r for r in recs if r.source_kind == "jit-workspace"]
    assert all(r.env.flashinfer_version == "0.6.14" and r.env.arch == "sm120" and r.env.arch_source == "jit-path" for r in ws)
    assert all(r.tactic is None for r in ws)

    fp4 = [r for r in ws if r.detail_dict()["module"] == "fp4_gemm_cutlass_sm120"]
    assert {(r.op, r.runner, r.status) for r in fp4} == {("fp4_gemm", "CutlassFp4GemmRunner", Status.COMPILED)}
    tiles = Counter(tuple(r.detail_dict()["tile"]) for r in fp4)
    # 8 CTA shapes (gen_gemm_sm120_module_cutlass_fp4, v0.6.11+) x {bf16, fp16}
    assert tiles == Counter({t: 2 for t in [(128, 32, 128), (128, 32, 256), (128, 64, 128), (128, 64, 256),
                                            (128, 128, 128), (128, 128, 256), (256, 128, 128), (128, 256, 128)]})
    assert all(r.detail_dict()["compile_ms"] > 0 for r in fp4)

    moe = [r for r in ws if r.detail_dict()["module"] == "fused_moe_120"]
    assert all(r.op == "trtllm::fused_moe" and r.runner == "MoERunner" for r in moe)
    assert moe[0].detail_dict()["ops"] == ("trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2")
    compiled = {tuple(r.detail_dict()["tile"]) for r in moe if r.status is Status.COMPILED}
    missing = {tuple(r.detail_dict()["tile"]) for r in moe if r.status is Status.NOT_BUILT and "tile" in r.detail_dict()}
    assert compiled == {(128, 32, 128), (128, 32, 256)}  # group0 object exists
    assert missing == {(128, 128, 128), (128, 128, 256), (256, 128, 128)}  # group2 and M256 never compiled
    t = next(r for r in moe if r.status is Status.COMPILED)
    d = t.detail_dict()
    assert d["tile_from"] == "generated .cu" and d["cluster"] == (1, 1, 1) and d["block_scaled"] and d["tile_m"] == 128

    (mod,) = [r for r in moe if r.status is Status.NOT_BUILT and "tile" not in r.detail_dict()]
    md = mod.detail_dict()
    assert mod.error.startswith("module fused_moe_120 never finished building: fused_moe_120.so is missing")
    assert md["missing"][0] == "fused_moe_120.so" and md["objects_built"] == 4 and md["objects_expected"] == 6
    assert any("M256_BS_group0" in m for m in md["missing"])

    logrecs = [r for r in recs if r.source_kind == "log"]  # flashinfer_jit.log, delegated to logs.py
    assert {r.status for r in logrecs} == {Status.PROFILED, Status.CHOSEN}
    assert all(r.env.flashinfer_version == "0.6.14" and r.env.arch == "sm120" for r in logrecs)


def test_sniff(sample, tmp_path):
    ws = sample(WS)
    assert jw.sniff(ws, b"")
    assert not jw.sniff(ws.parent, b"")  # the registry walks down to it; the cache root is not claimed whole
    assert not jw.sniff(ws / "flashinfer_jit.log", b"")
    assert not jw.sniff(tmp_path, b"")


def test_read_finds_workspaces_below_a_cache_dir(sample):
    recs, probs = read_all(sample("jit"))
    assert probs == [] and {r.env.flashinfer_version for r in recs} == {"0.6.14"}


def test_objects_without_build_ninja_and_unknown_modules(tmp_path):
    ws = tmp_path / "flashinfer" / "0.7.2.post1" / "100a"
    m = ws / "cached_ops" / "fp8_gemm_cutlass"
    m.mkdir(parents=True)
    (m / "gen_gemm_sm100_cutlass_fp8_fp8_gemm_cutlass___nv_bfloat16_128_256_128.cuda.o").write_bytes(b"")
    (m / "fp8_gemm_cutlass.so").write_bytes(b"")
    u = ws / "cached_ops" / "some_new_module"
    u.mkdir()
    g = ws / "cached_ops" / "gemm"  # bmm_fp8's cuBLAS module: built, no tile TUs
    g.mkdir()
    (g / "gemm.so").write_bytes(b"")
    (g / "csrc_bmm_fp8.cuda.o").write_bytes(b"")
    recs, probs = read_all(ws)
    assert probs == []
    (cub,) = [r for r in recs if r.detail_dict().get("module") == "gemm"]
    assert (cub.op, cub.runner, cub.status, cub.detail_dict()["module_only"]) == ("fp8_gemm", "CublasFp8GemmRunner", Status.COMPILED, True)
    fp8 = [r for r in recs if r.op == "fp8_gemm" and r.detail_dict()["module"] == "fp8_gemm_cutlass"]
    assert len(fp8) == 1 and fp8[0].status is Status.COMPILED and fp8[0].detail_dict()["tile"] == (128, 256, 128)
    assert fp8[0].runner == "CutlassFp8GemmRunner" and fp8[0].env.arch == "sm100"
    (unk,) = [r for r in recs if r.detail_dict().get("module") == "some_new_module"]
    assert unk.status is Status.NOT_BUILT and unk.op == "" and unk.detail_dict()["module_op"] == "unknown"
    assert "no build.ninja" in unk.detail_dict()["note"]


def test_moe_tile_m_only_when_generated_source_is_gone(tmp_path, sample):
    ws = tmp_path / "flashinfer" / "0.6.14" / "120f"
    shutil.copytree(sample(WS), ws)
    shutil.rmtree(ws / "generated")
    recs, _ = read_all(ws)
    moe = [r for r in recs if r.detail_dict().get("module") == "fused_moe_120" and "tile_m" in r.detail_dict()]
    assert {r.detail_dict()["tile_m"] for r in moe} == {128, 256}
    assert all("tile" not in r.detail_dict() and "only tile M" in r.detail_dict()["note"] for r in moe)


def test_not_a_directory_and_empty_directory(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("hi")
    for p in (f, tmp_path):
        recs, probs = read_all(p)
        assert recs == [] and len(probs) == 1 and probs[0].fatal and probs[0].message.startswith(str(p) + ": ")


def test_workspace_is_not_modified(sample):
    ws = sample(WS)

    def snapshot():
        return sorted((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in ws.rglob("*"))

    before = snapshot()
    read_all(ws)
    assert snapshot() == before
