"""decode(): tactics -> configs through the catalogs, and every reason a tactic stays undecoded.
Expected tiles are the hand-read lists of tests/catalogs/test_dense_catalogs.py."""

from __future__ import annotations

import pytest

from tiletune.catalogs import nearest_releases
from tiletune.core.records import Decoded, Environment, Status, TuningRecord, Undecoded
from tiletune.decode import catalog_for, decode

FP4_SHAPES = ((128, 3584), (3584, 4608), (-1, 224), (224, 4608), (), (0,), (-1, 4608), (0,), (0,), (-1,))


def rec(tactic, version="0.6.14", arch="sm120", op="fp4_gemm", runner="CutlassFp4GemmRunner", shapes=FP4_SHAPES,
        extras=()):
    return TuningRecord(source="t", source_kind="test", op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                        env=Environment(flashinfer_version=version, arch=arch), shapes=shapes, extras=extras)


@pytest.mark.parametrize("version, tactic, tile, swap, sk", [
    ("0.6.14", 21, (128, 128, 256), False, False),   # 128x128x128B = K 256 since v0.6.11
    ("0.6.14", -1, (128, 128, 256), False, False),   # fallback = index 21
    ("0.6.14", 0, (128, 32, 128), True, False),
    ("0.6.14", 31, (128, 256, 128), False, True),
    ("0.6.7", 1, (128, 128, 128), False, True),      # 6-tactic era, K in elements
    ("0.6.7", 2, (128, 128, 256), False, False),
    ("0.6.3", -1, (128, 128, 128), False, False),
])
def test_sm120_fp4(version, tactic, tile, swap, sk):
    e = decode(rec(tactic, version))
    assert isinstance(e.decode, Decoded), e.decode
    c = e.config
    assert (c.tile, c.swap_ab, c.stream_k) == (tile, swap, sk)
    assert e.problem.k == 7168


def test_sm121_and_local_versions_use_sm120_lists():
    e = decode(rec(21, version="0.6.14+cu130", arch="sm121"))
    assert isinstance(e.decode, Decoded) and e.config.tile == (128, 128, 256)
    assert e.decode.catalog.arch == "sm120"


def test_same_tactic_means_different_tiles_on_sm100():
    e = decode(rec(0, arch="sm100"))
    assert (e.config.tile, e.config.cluster, e.config.mma_tile) == ((128, 128, 256), (2, 4, 1), (256, 128, 256))


@pytest.mark.parametrize("kw, needle", [
    (dict(version=None), "--flashinfer-version"),
    (dict(arch=None), "--arch"),
    (dict(version="0.5.2"), "nearest releases covered: 0.6.3, 0.6.4"),
    (dict(tactic=40), "32 configs (indices 0..31); index 40 out of range"),
    (dict(arch="sm90"), "no fp4_gemm/CutlassFp4GemmRunner catalog for sm90"),
    (dict(tactic=(1, 2)), "not an integer index"),
])
def test_undecoded_reasons(kw, needle):
    args = dict(tactic=3)
    args.update(kw)
    tactic = args.pop("tactic")
    d = decode(rec(tactic, **args)).decode
    assert isinstance(d, Undecoded) and needle in d.reason and not d.not_a_cutlass_tactic


@pytest.mark.parametrize("op, runner, tactic, needle", [
    ("fp8_gemm", "CublasFp8GemmRunner", 4, "cuBLASLt algorithm index"),
    ("fp4_gemm", "CudnnFp4GemmRunner", (3, ((1, 2),)), "cuDNN"),
    ("fp4_gemm", "TrtllmGemmRunner", 7, "trtllm-gen"),
    ("fp4_gemm", "CuteDSLFp4GemmRunner", ((128, 128), (1, 1), False, True, "sm100", None), "CuTe DSL"),
    ("flashinfer::trtllm_fp4_block_scale_moe", "MoERunner", (8, 12), "trtllm-gen MoE"),
    ("some_op", "SomeRunner", 1, "no tactic catalog"),
])
def test_not_cutlass(op, runner, tactic, needle):
    d = decode(rec(tactic, op=op, runner=runner, shapes=((1, 2),))).decode
    assert isinstance(d, Undecoded) and d.not_a_cutlass_tactic and needle in d.reason


def test_moe_goes_through_the_moe_helper_or_says_it_is_missing():
    shapes = ((128, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,))
    e = decode(rec(0, arch="sm90", op="trtllm::fused_moe::gemm1", runner="MoERunner", shapes=shapes, extras=None))
    assert e.problem is not None and e.problem.experts == 128
    if isinstance(e.decode, Undecoded):
        assert e.decode.reason  # "MoE catalogs not available" until tiletune.catalogs.moe lands, or ambiguity
        assert not e.decode.not_a_cutlass_tactic


def test_catalog_for_and_nearest():
    (cat,) = catalog_for("sm121", "0.7.2.post1", "mxfp8_gemm", "CutlassMxfp8GemmRunner")
    assert len(cat.configs) == 6
    assert catalog_for("sm120", "0.1.0", "fp4_gemm", "CutlassFp4GemmRunner") == []
    # 0.7.3 was never released: the nearest releases on either side are listed, nothing is guessed
    assert nearest_releases("0.7.3") == ["0.7.2", "0.7.2.post1", "0.7.4"]


def test_fifty_thousand_records_decode_consistently():
    # 50k records over 40 shape buckets x 32 tactics x 2 releases go through the memoised path;
    # speed is shown by bench/bench_inspect.py, this checks the memo never mixes releases up
    recs = [rec(i % 32, version=("0.6.14", "0.6.7")[i % 2] if i % 32 < 6 else "0.6.14",
                shapes=((1 + i % 40, 3584),) + FP4_SHAPES[1:]) for i in range(50_000)]
    entries = [decode(r) for r in recs]
    assert all(isinstance(e.decode, Decoded) for e in entries)
    # each record keeps its own release's list (6-tactic 0.6.7 vs 32-tactic 0.6.14), as in the table above
    by_release = {(e.record.env.flashinfer_version, e.record.tactic): e.config for e in entries}
    assert (by_release[("0.6.7", 1)].tile, by_release[("0.6.7", 1)].stream_k) == ((128, 128, 128), True)
    assert (by_release[("0.6.14", 0)].tile, by_release[("0.6.14", 0)].swap_ab) == ((128, 32, 128), True)


def test_moe_with_extras_memo_says_what_the_uncached_decode_says():
    # keys that name their dtypes in the extras are memoised per (op, runner, version, arch, extras,
    # tactic); each must decode exactly as the uncached path does, across tactics, archs and ops
    from tiletune.decode import _decode_uncached

    extras = ("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8, 1, 0, 1, 0, 1, 0, False, False, False,
              False, False, False, True, 3, False, True)
    shapes = ((64, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,))
    seen = 0
    for op in ("trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"):
        for arch in ("sm90", "sm120", "sm100"):
            for tactic in (0, 3, 17, 59, 400):
                r = rec(tactic, version="0.7.2.post1", arch=arch, op=op, runner="MoERunner", shapes=shapes, extras=extras)
                e = decode(r)
                assert e.decode == _decode_uncached(r, e.problem)
                seen += isinstance(e.decode, Decoded)
    assert seen  # some of them decode to a tile


# A real fused-MoE key from cache_samples/v1/sm90-h200-0.6.18-moe-bf16-records.json with its
# extras replaced by "()", as every release before 0.6.18rc2 writes it (no dtypes in the key).
REAL_MOE_SHAPES = ((1, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,))


def _moe_key_without_extras():
    import json
    from pathlib import Path

    from tiletune.readers.keyparse import parse_key

    path = Path(__file__).resolve().parents[1] / "cache_samples/v1/sm90-h200-0.6.18-moe-bf16-records.json"
    key = next(k for k in json.loads(path.read_text()) if k.startswith("('trtllm::fused_moe::gemm1'"))
    pk = parse_key(key[: key.rindex(", (torch.")] + ", ())")
    assert pk.extras == () and pk.shapes == REAL_MOE_SHAPES
    return pk


def test_moe_candidates_without_a_list_make_the_entry_ambiguous_even_when_the_others_agree():
    # 0.6.14 on SM120: bf16/fp16 MoE get only the SM80-style list (get_candidate_tiles default:
    # 32x128x64, 64x128x64, 128x128x64 x stages 2..4) and fp8 the SM89-style grouped list, which
    # also starts with 32x128x64 at 2 stages (cutlass_heuristic.cpp get_candidate_tiles, v0.6.14);
    # bf16 x fp8 weights start with the weight-only 16x128 tile (K 64 for 16-bit activations). And
    # DeepSeek FP8 block scaling (the same bf16 x fp8 runner) ignores the tactic: no list, no single tile.
    pk = _moe_key_without_extras()
    r = rec(0, version="0.6.14", arch="sm120", op=pk.op, runner=pk.runner, shapes=pk.shapes, extras=pk.extras)
    d = decode(r).decode
    assert isinstance(d, Undecoded), d
    assert "ambiguous" in d.reason and "bf16 x fp8 (deepseek-block)" in d.reason
    assert {(c.tile, c.stages) for c in d.candidates} == {((32, 128, 64), 2), ((16, 128, 64), 2)}


def test_decode_all_matches_decode_record_by_record(tmp_path, big_caches):
    # decode_all groups records by their op, runner, extras and env objects and keeps one problem
    # builder and one decode per int tactic per group: the same entries as decode, one by one, over
    # every sample input and records whose groups interleave, share nothing, or are odd
    import random
    from pathlib import Path

    from tiletune.decode import decode_all
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    root = Path(__file__).resolve().parent.parent
    big = big_caches
    big.make_cache(800, tmp_path / "mixed.json")
    big.make_fp4_distinct(300, tmp_path / "fp4.json")
    records = list(read_inputs([root / "cache_samples", tmp_path / "mixed.json", tmp_path / "fp4.json"], ReadContext()).records)
    assert len({(r.op, r.source_kind) for r in records}) > 10

    rng = random.Random(3)
    moe_extras = ("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8, 1, 0, 1, 0, 1, 0, False, False, False,
                  False, False, False, True, 3, False, True)
    moe_shapes = ((64, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,))
    packed = [moe_shapes, ((64, 1024), (128, 1536, 1024), (0,), (128, 2048, 384), (0,)),  # weights packed 1, 2, 16:
              ((64, 128), (128, 1536, 128), (0,), (128, 2048, 48), (0,))]  # without extras the packing picks the lists
    envs = [Environment(flashinfer_version="0.7.2.post1", arch="sm120"), Environment(flashinfer_version="0.6.14", arch="sm100"),
            Environment(flashinfer_version=None, arch="sm120"), Environment(flashinfer_version="0.7.2.post1", arch=None),
            Environment()]
    odd = []
    for _ in range(1500):
        op, runner, shapes, extras = rng.choice([
            ("fp4_gemm", "CutlassFp4GemmRunner", FP4_SHAPES, ()),
            ("fp4_gemm", "CudnnFp4GemmRunner", FP4_SHAPES, ("torch.bfloat16", 16, rng.choice([True, 1, False]), True)),
            ("fp4_gemm", "CutlassFp4GemmRunner", rng.choice([None, ((0, 1), (1, 2)), ((1, 2),), "x"]), ()),
            ("trtllm::fused_moe::gemm1", "MoERunner", moe_shapes, rng.choice([moe_extras, None, moe_extras[:10] + (1,) + moe_extras[11:]])),
            ("trtllm::fused_moe::gemm2", "MoERunner", moe_shapes, rng.choice([moe_extras, None, moe_extras[:-1] + ([1],)])),
            ("trtllm::fused_moe::gemm1", "MoERunner", rng.choice(packed), None),
            ("bf16_gemm", "CutlassBf16GemmRunner", ((64, 4096), (4096, 1024), (0,), (0,), (-1, 1024), (0,)), ()),
            ("fp8_gemm", "CudnnFp8GemmRunner", ((1, 64, 4096), (1, 4096, 4096)), None),
            ("", "MoERunner", None, None),
            ("nope", "CutlassNopeRunner", ((1, 2),), None),
        ])
        extras = tuple(extras) if isinstance(extras, tuple) and rng.random() < 0.5 else extras  # equal, another object
        tactic = rng.choice([0, 1, 3, 21, 31, 40, -1, True, False, 1.0, None, (1, 2), [3, 4], "7", 2**70])
        odd.append(TuningRecord(source="t", source_kind=rng.choice(["test", "log", "flashinfer-v1"]), op=op,
                                runner=runner, tactic=tactic, status=Status.CHOSEN, env=rng.choice(envs),
                                shapes=shapes, extras=extras))
    for batch in (records, rng.sample(records + odd, len(records) + len(odd))):
        got, want = decode_all(batch), [decode(r) for r in batch]
        assert got == want
        assert [repr(e) for e in got] == [repr(e) for e in want]  # (repr tells 1 from True and 1.0)
