"""FlashInfer v1 JSON caches: every key form, value form, metadata source and `_records`."""

from __future__ import annotations

import json
from collections import Counter

from tiletune.core.records import Status, TuningRecord
from tiletune.readers import read_inputs
from tiletune.readers.flashinfer_v1 import LEGACY_CUDNN_NOTE, sniff
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


def _read(path, ctx=CTX):
    out = read_inputs([path], ctx)
    return out.records, out.problems


def test_real_h200_cache(sample):
    path = sample("real/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json")
    recs, probs = _read(path)
    assert probs == ()
    assert len(recs) == sum(not k.startswith("_") for k in json.loads(path.read_text()))  # all but _metadata/_generation
    r = recs[0]
    assert (r.op, r.runner, r.status, r.source_kind) == ("fp8_gemm", "CublasFp8GemmRunner", Status.CHOSEN, "flashinfer-v1")
    assert r.env.flashinfer_version == "0.7.2.post1" and r.env.gpu == "NVIDIA H200"
    assert r.env.arch == "sm90" and r.env.arch_source == "gpu name"
    assert r.env.version_source == "metadata.flashinfer_version"
    assert r.shapes[0] == (1, 1, 4096) and r.extras[2] == "torch.bfloat16"
    # third value element: the profiling policy, as sorted name/value pairs
    assert dict(r.detail)["profiling_policy"] == (("cuda_graph_profile_replays", None), ("l2_cache_policy", "hot"))
    assert ("cudnn_version", "91900") in r.env.metadata


def test_sm120_demo_cache_fp4_and_moe(sample):
    recs, probs = _read(sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json"))
    assert probs == ()
    ops = Counter(r.op for r in recs)
    # 21 buckets up to 8192 (1..256 by x2, 512..2048 by 256, 2560..4096 by 512, 8192)
    assert ops["fp4_gemm"] == 2 * 21 + 4 and ops["trtllm::fused_moe::gemm1"] == 21 and ops["trtllm::fused_moe::gemm2"] == 21
    assert {r.env.arch for r in recs} == {"sm120"}
    assert all(r.extras is not None for r in recs)  # 0.6.13+: 4-part keys
    cutlass = [r for r in recs if r.runner == "CutlassFp4GemmRunner"]
    assert all(isinstance(r.tactic, int) and 0 <= r.tactic < 32 for r in cutlass)
    # M buckets 1..8192 for both (N, K) pairs
    ms = sorted({r.shapes[0][0] for r in cutlass})
    assert ms[0] == 1 and ms[-1] == 8192 and 768 in ms and 3072 in ms
    # pre-0.6.16 integer cuDNN tactics are kept, and flagged
    cudnn = [r for r in recs if r.runner == "CudnnFp4GemmRunner"]
    assert cudnn and all(dict(r.detail)["legacy_cudnn_tactic"] == LEGACY_CUDNN_NOTE for r in cudnn)
    assert not any("legacy_cudnn_tactic" in dict(r.detail) for r in cutlass)


def test_three_part_keys_at_0_6_8(sample):
    recs, probs = _read(sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json"))
    assert probs == () and recs
    assert all(r.extras is None for r in recs)
    assert {r.env.flashinfer_version for r in recs} == {"0.6.8"}
    assert {r.env.arch for r in recs} == {"sm120"}  # "NVIDIA GeForce RTX 5090"
    assert all(0 <= r.tactic < 6 for r in recs)


def test_compound_tactics_become_tuples(sample):
    recs, _ = _read(sample("v1/sm100-b200-0.6.15-fp4-mxfp8-trtllmgen.json"))
    moe = [r for r in recs if r.op == "flashinfer::trtllm_fp4_block_scale_moe"]
    assert moe and all(isinstance(r.tactic, tuple) and len(r.tactic) == 2 for r in moe)
    assert {r.env.arch for r in recs} == {"sm100"}
    recs, _ = _read(sample("v1/sm90-h200-0.6.18-moe-bf16-records.json"))
    cudnn = next(r for r in recs if r.runner == "CudnnBf16GemmRunner")
    assert cudnn.tactic == (3, ((1, 2), (4, 0)))
    hash(cudnn)  # records must be hashable


def test_records_namespace_and_20_field_moe_extras(sample):
    recs, probs = _read(sample("v1/sm90-h200-0.6.18-moe-bf16-records.json"))
    gemm1 = [r for r in recs if r.op == "trtllm::fused_moe::gemm1"]
    assert gemm1 and len(gemm1[0].extras) == 20 and gemm1[0].extras[3] == 8
    da = [r for r in recs if dict(r.detail).get("namespace") == "trtllm_moe_da"]
    # eager body (16, 7) == first body; (32, 12) is the second: deduplicated to two records
    assert sorted(r.tactic for r in da) == [(16, 7), (32, 12)]
    assert {r.op for r in da} == {"flashinfer::trtllm_fp4_block_scale_moe"} and {r.runner for r in da} == {"MoERunner"}
    assert dict(da[0].detail)["num_tokens"] == 64
    # the fallback record without a tactic is counted in a non-fatal note
    assert [p.fatal for p in probs] == [False] and "1 record(s) carry no tactic" in probs[0].message


def test_overrides_beat_metadata(sample):
    ctx = ReadContext(arch="sm121", flashinfer_version="0.6.13")
    recs, _ = _read(sample("v1/sm120-rtxpro6000-0.6.12-fp4-3part.json"), ctx)
    assert {(r.env.arch, r.env.arch_source) for r in recs} == {("sm121", "--arch")}
    assert {(r.env.flashinfer_version, r.env.version_source) for r in recs} == {("0.6.13", "--flashinfer-version")}


def test_value_runner_mismatch_kept_in_detail(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"_metadata": {"flashinfer_version": "0.6.14", "gpu": "NVIDIA B200"},
                             "('fp4_gemm', 'CutlassFp4GemmRunner', ((8, 64),), ())": ["OtherRunner", 3]}))
    recs, probs = _read(p)
    assert probs == () and dict(recs[0].detail)["value_runner"] == "OtherRunner"


def test_sniff_accepts_v1_and_rejects_others():
    assert sniff(None, b'{\n  "_metadata": {"flashinfer_version": "0.6.7"}')
    assert sniff(None, b'{"(\'fp4_gemm\', \'R\', ((1, 2),))": ["R", 1]}')
    assert not sniff(None, b'{"_metadata": {}, "invalid_tactics": {}}')  # a tactics blocklist
    assert not sniff(None, b'{"metadata": {"lib_version": "1.0"}, "cache_data": {}}')  # TRT-LLM
    assert not sniff(None, b"[1, 2]") and not sniff(None, b"")


def test_input_file_is_never_written(sample, tmp_path):
    src = sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json")
    before = (src.stat().st_mtime_ns, src.read_bytes())
    _read(src)
    assert (src.stat().st_mtime_ns, src.read_bytes()) == before


def test_committed_samples_are_what_make_samples_writes(tmp_path):
    """The constructed samples are reproducible: regenerating them gives the committed bytes."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "cache_samples"
    subprocess.run([sys.executable, str(root / "make_samples.py"), "--out", str(tmp_path)], check=True)
    for sub in ("v1", "layouts", "v2store", "trtllm", "bad"):
        made = sorted(p.relative_to(tmp_path) for p in (tmp_path / sub).rglob("*") if p.is_file())
        committed = sorted(p.relative_to(root) for p in (root / sub).rglob("*") if p.is_file())
        assert made == committed, sub
        for rel in made:
            assert (tmp_path / rel).read_bytes() == (root / rel).read_bytes(), rel


def test_bench_cache_generators_are_read_whole(tmp_path):
    """The speed bench's two workloads (tests/readers/big_caches.py) read with no problem and no key lost."""
    from big_caches import make_cache, make_fp4_distinct

    make_cache(700, tmp_path / "c.json")
    recs, probs = _read(tmp_path / "c.json")
    assert probs == () and len(recs) == 700 and len({r.raw_key for r in recs}) == 700
    make_fp4_distinct(700, tmp_path / "d.json")
    recs, probs = _read(tmp_path / "d.json")
    assert probs == () and len(recs) == 700 and {r.op for r in recs} == {"fp4_gemm"}
    assert len({r.raw_key for r in recs}) == 700 and {r.tactic for r in recs} == set(range(32))


def test_shared_details_are_each_entrys_own(tmp_path):
    # read_object shares one detail tuple per distinct (runner mismatch, legacy cuDNN, policy with
    # its element types): every record's detail equals the one built for it alone, 1 / 1.0 / True apart
    import random

    from tiletune.readers.flashinfer_v1 import read_object

    rng = random.Random(7)
    scalars = [1, 1.0, True, 0, 0.0, False, None, "cold", "hot", -1, 2.5]
    cache: dict = {"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA H200"}}
    for i in range(3000):
        runner = rng.choice(["CutlassFp4GemmRunner", "CudnnFp4GemmRunner"])
        policy = rng.choice([
            ["cuda_graph_profile_replays", rng.choice(scalars), "l2_cache_policy", rng.choice(scalars)],
            ["cuda_graph_profile_replays", rng.choice(scalars)], [rng.choice(scalars)], [], rng.choice(scalars),
            ["a", [rng.choice(scalars)]], ["a", {"b": rng.choice(scalars)}], {"b": 1}, "x",
        ])
        value = [rng.choice([runner, runner, "OtherRunner"]), rng.choice([3, -1, True, 2.0, [1, 2]])]
        if rng.random() < 0.8:
            value.append(policy)
        cache[f"('fp4_gemm', '{runner}', (({i + 1}, 1024), (1024, 4096)), ())"] = value
    recs = [r for r in read_object(tmp_path / "c.json", cache, ReadContext(), None) if isinstance(r, TuningRecord)]
    assert len(recs) == 3000
    _assert_details_are_each_entrys_own(recs, cache)


def test_details_reused_from_the_entry_before_are_each_entrys_own(tmp_path):
    # read_object reuses the entry before's detail when runner, value runner and policy (with its
    # element types) repeat: runs of entries that repeat them, or change one thing (a 1 for a True or
    # 1.0, a nested value, a runner, a cuDNN tactic's sign), each get the detail built for them alone
    import random

    from tiletune.readers.flashinfer_v1 import read_object

    rng = random.Random(8)
    scalars = [1, 1.0, True, 0, 0.0, False, None, "cold", -1]
    base = ["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]
    cache: dict = {"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA H200"}}
    i = 0
    while i < 4000:
        runner = rng.choice(["CutlassFp4GemmRunner", "CudnnFp4GemmRunner", "CutlassFp4GemmRunner"])
        policy = list(base)
        pos = rng.randrange(4)
        policy[pos] = rng.choice(scalars + [[rng.choice(scalars)], {"a": rng.choice(scalars)}])
        policy = rng.choice([policy, base, policy[:2], rng.choice(scalars), {"b": rng.choice(scalars)}, None])
        value_runner = rng.choice([runner, runner, runner, "OtherRunner"])
        for _ in range(rng.randrange(1, 30)):  # a run of entries, each with a fresh copy of the value
            i += 1
            v = [value_runner, rng.choice([3, -1, 0, True, 2.0])]
            if policy is not None:
                v.append(json.loads(json.dumps(policy)))
                if isinstance(policy, list) and rng.random() < 0.2:  # this entry alone: 1 / 1.0 / True, 0 / 0.0 / False
                    v[2] = [rng.choice([x, True, 1.0, 1, False, 0.0, 0]) if x in (0, 1) else x for x in v[2]]
            cache[f"('fp4_gemm', '{runner}', (({i}, 1024), (1024, 4096)), ())"] = v
    recs = [r for r in read_object(tmp_path / "c.json", cache, ReadContext(), None) if isinstance(r, TuningRecord)]
    assert len(recs) == i
    _assert_details_are_each_entrys_own(recs, cache)


def _assert_details_are_each_entrys_own(recs, cache):
    from tiletune.readers.flashinfer_v1 import LEGACY_CUDNN_NOTE, policy_detail

    for r in recs:
        value = cache[r.raw_key]
        want = []
        if len(value) == 3:
            want.append(("profiling_policy", policy_detail(value[2])))
        if value[0] != r.runner:
            want.append(("value_runner", value[0]))
        if r.runner.startswith("Cudnn") and type(value[1]) is int and value[1] >= 0:
            want.append(("legacy_cudnn_tactic", LEGACY_CUDNN_NOTE))
        assert repr(r.detail) == repr(tuple(sorted(want))), value
