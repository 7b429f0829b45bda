"""Write the constructed samples in cache_samples/ (`python3 cache_samples/make_samples.py [--out DIR]`).

Each sample copies the byte layout of the code that writes the real thing (named per file in
cache_samples/README.md): FlashInfer v1 `save_configs` (`_metadata` first, entries sorted,
`json.dump(indent=2)`), the managed v2 store (`manifest.json` + `entries/<sha256(key)[:24]>.json`,
`json.dump(indent=2, sort_keys=True)`, directory `sha256(canonical manifest)[:16]`), SGLang's and
vLLM's cache paths, TensorRT-LLM's `_serialize_cache_to_json`.

Tactic values are plausible indices chosen by a seeded RNG within each runner's tactic count
as the research notes give it (e.g. 32 for SM120 CUTLASS FP4 since 0.6.11); they are NOT taken
from tiletune's catalogs and were not produced by a GPU. Shapes are real model shapes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

ROOT = Path(__file__).resolve().parent


# --- FlashInfer's bucket grid (get_hybrid_num_tokens_buckets): pow2 <= 256, +256 to 2048, +512 to 4096, x2 after
def buckets(max_m: int) -> list[int]:
    out, m = [], 1
    while m <= min(max_m, 256):
        out.append(m)
        m *= 2
    m = 512
    while m <= min(max_m, 2048):
        out.append(m)
        m += 256
    m = 2560
    while m <= min(max_m, 4096):
        out.append(m)
        m += 512
    m = 8192
    while m <= max_m:
        out.append(m)
        m *= 2
    return out


def key(op: str, runner: str, shapes: Iterable[tuple], extras: Optional[str]) -> str:
    """str() of the key tuple; extras given as the text Python would print (dtypes are not literals)."""
    body = f"({op!r}, {runner!r}, {tuple(shapes)!r}"
    return body + (")" if extras is None else f", {extras})")


def write_v1(path: Path, metadata: Optional[dict], entries: dict[str, list], extra_top: Optional[dict] = None) -> None:
    """FlashInfer save_configs layout: _metadata, (_records), sorted entries, (_generation)."""
    ordered: dict[str, Any] = {}
    if metadata is not None:
        ordered["_metadata"] = metadata
    if extra_top and "_records" in extra_top:
        ordered["_records"] = extra_top["_records"]
    for k in sorted(entries):
        ordered[k] = entries[k]
    if extra_top and "_generation" in extra_top:
        src = json.dumps(ordered, sort_keys=True, separators=(",", ":")).encode()
        ordered["_generation"] = hashlib.sha256(src).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(ordered, f, indent=2)


def meta(version: str, gpu: str, cuda: str = "13.0", frontend: bool = True, dsl: bool = False, **over: str) -> dict:
    m = {"flashinfer_version": version, "cuda_version": cuda, "cublas_version": "13.1.0.3", "cudnn_version": "91900"}
    if frontend:
        m["cudnn_frontend_version"] = "1.14.1"
    if dsl:
        m["cutlass_dsl_version"] = "unknown"
    m["gpu"] = gpu
    m.update(over)
    return m


def fp4_shapes(m: int, n: int, k: int) -> list[tuple]:
    """mm_fp4 inputs: a (M, K/2), b (K/2, N), a_descale, b_descale, alpha, out_dtype, out, block_size, use_nvfp4, workspace."""
    return [(m, k // 2), (k // 2, n), (-1, k // 16), (k // 16, n), (), (0,), (-1, n), (0,), (0,), (-1,)]


def mxfp8_shapes(m: int, n: int, k: int) -> list[tuple]:
    """mm_mxfp8 inputs: a (M, K), b (K, N), a_descale, b_descale, out_dtype, out, workspace."""
    return [(m, k), (k, n), (-1, k // 32), (k // 32, n), (0,), (-1, n), (-1,)]


def moe_shapes(t: int, hidden: int, fc1: tuple, fc2: tuple) -> list[tuple]:
    """cutlass_fused_moe inputs: input (T, H_act), fc1 weights, fc1 bias, fc2 weights, fc2 bias."""
    return [(t, hidden), fc1, (0,), fc2, (0,)]


def moe_extras(x: str, w: str, out: str, top_k: int, *, tp=(1, 0), ep=(1, 0), act: int = 3, packed=False, finalize=True) -> str:
    """MoERunner.get_cache_key_extras (v0.6.18rc2+), 20 fields, as str() prints them."""
    vals = [x, w, out, str(top_k), str(tp[0]), str(tp[1]), str(ep[0]), str(ep[1]), "1", "0",
            "False", "False", "False", "False", "False", "False", "True", str(act), str(packed), str(finalize)]
    return "(" + ", ".join(vals) + ")"


POLICY_GEMM = ["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]
POLICY_MOE = ["cuda_graph_profile_replays", None, "l2_cache_policy", "hot"]


def sm120_fp4_cache(rng: random.Random, version: str, n_tactics: int, four_part: bool,
                    shapes_nk: list[tuple[int, int]], max_m: int = 8192) -> dict[str, list]:
    out: dict[str, list] = {}
    for n, k in shapes_nk:
        for m in buckets(max_m):
            t = rng.randrange(n_tactics)
            out[key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, n, k), "()" if four_part else None)] = ["CutlassFp4GemmRunner", t]
    return out


def gen_v1(rng: random.Random) -> None:
    d = ROOT / "v1"
    # SM120 demo: RTX PRO 6000 Blackwell Server Edition, FlashInfer 0.6.14 (4-part keys, extras "()" for CUTLASS).
    # Llama-3.3-70B TP1 shapes: qkv N=10240 K=8192, down N=8192 K=28672. MoE: the SGLang #34629 key shape
    # (E=512, H=2560, I=640, FP4 packed 16 per int64).
    entries = sm120_fp4_cache(rng, "0.6.14", 32, True, [(10240, 8192), (8192, 28672)])
    for m in (1, 2, 4, 8):  # small-M buckets where cuDNN won (pre-0.6.16 integer plan indices)
        k_ = key("fp4_gemm", "CudnnFp4GemmRunner", fp4_shapes(m, 10240, 8192), "(torch.bfloat16, 16, True, True)")
        entries[k_] = ["CudnnFp4GemmRunner", rng.randrange(8)]
    for t in buckets(8192):
        fc1, fc2 = (512, 1280, 160), (512, 2560, 40)
        entries[key("trtllm::fused_moe::gemm1", "MoERunner", moe_shapes(t, 2560, fc1, fc2), "()")] = ["MoERunner", rng.randrange(20)]
        entries[key("trtllm::fused_moe::gemm2", "MoERunner", moe_shapes(t, 2560, fc1, fc2), "()")] = ["MoERunner", 20 + rng.randrange(40)]
    write_v1(d / "sm120-rtxpro6000-0.6.14-fp4-moe.json", meta("0.6.14", "NVIDIA RTX PRO 6000 Blackwell Server Edition"), entries)

    # SM120 FP4 at 0.6.8 (3-part keys, 6-tactic list of 0.6.4-0.6.10, no cudnn_frontend_version before 0.6.11)
    write_v1(d / "sm120-rtx5090-0.6.8-fp4-3part.json", meta("0.6.8", "NVIDIA GeForce RTX 5090", frontend=False),
             sm120_fp4_cache(rng, "0.6.8", 6, False, [(4096, 4096), (14336, 4096)], max_m=4096))
    # SM120 FP4 at 0.6.12 (3-part keys, 32-tactic list of 0.6.11+)
    write_v1(d / "sm120-rtxpro6000-0.6.12-fp4-3part.json", meta("0.6.12", "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"),
             sm120_fp4_cache(rng, "0.6.12", 32, False, [(7168, 2048)], max_m=2048))

    # SM100 B200, 0.6.15: CUTLASS FP4 (32 tactics), trtllm FP4 (int, extras (use_8x4_sf_layout,)), CUTLASS MXFP8,
    # and the trtllm-gen FP4 MoE with compound [tile_N, config] tactics.
    e: dict[str, list] = {}
    for m in buckets(4096):
        e[key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 7168, 2048), "()")] = ["CutlassFp4GemmRunner", rng.randrange(32)]
        e[key("fp4_gemm", "TrtllmGemmRunner", fp4_shapes(m, 2048, 7168), "(False,)")] = ["TrtllmGemmRunner", rng.randrange(40)]
        e[key("mxfp8_gemm", "CutlassMxfp8GemmRunner", mxfp8_shapes(m, 4096, 4096), "()")] = ["CutlassMxfp8GemmRunner", rng.randrange(32)]
        moe = [(m, 7168), (m, 256), (m, 8), (m, 8), (m, 3584), (m, 448), (0,), (0,)]
        e[key("flashinfer::trtllm_fp4_block_scale_moe", "MoERunner", [(m, 7168)] + moe[1:], "()")] = [
            "MoERunner", [rng.choice([8, 16, 32, 64, 128, 256]), rng.randrange(60)]]
    write_v1(d / "sm100-b200-0.6.15-fp4-mxfp8-trtllmgen.json", meta("0.6.15", "NVIDIA B200"), e)

    # SM90 H200, 0.6.18 (20-field MoE extras, _records/_generation; bf16 CUTLASS MoE, Qwen3-30B-A3B: E=128 H=2048 I=768)
    e = {}
    fc1, fc2 = (128, 1536, 2048), (128, 2048, 768)
    ex = moe_extras("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8)
    for t in buckets(8192):
        e[key("trtllm::fused_moe::gemm1", "MoERunner", moe_shapes(t, 2048, fc1, fc2), ex)] = ["MoERunner", rng.randrange(45)]
        e[key("trtllm::fused_moe::gemm2", "MoERunner", moe_shapes(t, 2048, fc1, fc2), ex)] = ["MoERunner", 45 + rng.randrange(81)]
    # cuDNN bf16 gemm with a post-0.6.16 compound tactic [engine, [[knob, value], ...]]
    e[key("bf16_gemm", "CudnnBf16GemmRunner", [(128, 2048), (2048, 4096), (0,), (0,), (-1, 4096), (-1,)], "(torch.bfloat16,)")] = [
        "CudnnBf16GemmRunner", [3, [[1, 2], [4, 0]]]]
    rk = json.dumps({"config_identity": "{}", "custom_op": "flashinfer::trtllm_fp4_block_scale_moe",
                     "input_identity": [[[64, 7168], "torch.bfloat16"], [[64, 256], "torch.float32"]],
                     "local_expert_offset": 0, "num_experts": 256, "num_local_experts": 256, "num_tokens": 64,
                     "routed_scaling_factor": 2.5, "routing_id_index": 2, "routing_input_mode": 0,
                     "routing_method_type": 2, "routing_weight_index": 3,
                     "runner_identity": json.dumps({"class": "MoERunner", "fields": {}}, separators=(",", ":")),
                     "top_k": 8}, sort_keys=True, separators=(",", ":"))
    records = {"trtllm_moe_da": {
        rk: {"schema": 1, "policy": "da", "eager_distribution": "uniform", "eager_body": {"tile_n": 16, "tactic": 7},
             "num_selector_exemplars": 1, "exemplar_spectra": [[1.0]], "exemplar_body_indices": [0],
             "bodies": [{"tile_n": 16, "tactic": 7}, {"tile_n": 32, "tactic": 12}]},
        rk.replace('"num_tokens":64', '"num_tokens":128'): {"schema": 1, "policy": "da_fallback", "fallback_reason": "single body",
                                                            "eager_distribution": None, "eager_body": None},
    }}
    write_v1(d / "sm90-h200-0.6.18-moe-bf16-records.json", meta("0.6.18", "NVIDIA H200"), e,
             {"_records": records, "_generation": True})

    # 0.6.7 (first JSON cache): 3-part keys, no cudnn_frontend_version; an H100 with a legacy int cuDNN fp8 tactic.
    e = {}
    for m in buckets(1024):
        e[key("fp8_gemm", "CublasFp8GemmRunner", [(1, m, 4096), (1, 4096, 4096), (), (), (1, -1, 4096), (-1,)], None)] = [
            "CublasFp8GemmRunner", rng.randrange(6)]
        e[key("fp8_gemm", "CudnnFp8GemmRunner", [(1, m, 8192), (1, 8192, 4096), (), (), (1, -1, 4096), (-1,)], None)] = [
            "CudnnFp8GemmRunner", rng.randrange(4)]
    write_v1(d / "sm90-h100-0.6.7-fp8-3part.json", meta("0.6.7", "NVIDIA H100 80GB HBM3", cuda="12.9", frontend=False), e)


def gen_layouts(rng: random.Random) -> None:
    base = ROOT / "layouts"
    # SGLang current: rank_tp{t}_pp{p}_dp{d}.json under <ver>/sm<MAJ><MIN>/<hash16>
    sg = base / "sglang" / "flashinfer" / "autotune"
    for tp in range(2):
        e = {}
        for m in buckets(2048):
            fc1, fc2 = (256, 1024, 160), (256, 2560, 20)  # TP2 halves the intermediate size
            e[key("trtllm::fused_moe::gemm1", "MoERunner", moe_shapes(m, 2560, fc1, fc2), "()")] = ["MoERunner", rng.randrange(20)]
            e[key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 5120, 2560), "()")] = ["CutlassFp4GemmRunner", rng.randrange(32)]
        write_v1(sg / "0.6.14" / "sm120" / "9c41d0e7a2b35f86" / f"rank_tp{tp}_pp0_dp0.json",
                 meta("0.6.14", "NVIDIA RTX PRO 6000 Blackwell Server Edition"), e)
    # SGLang first release: rank<N>.json; this writer's GPU name was not recorded ("unknown": arch from the path)
    for r in range(2):
        e = {key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 4096, 4096), None): ["CutlassFp4GemmRunner", rng.randrange(6)]
             for m in buckets(512)}
        write_v1(sg / "0.6.8" / "sm120" / "04be61f2c9d3a715" / f"rank{r}.json", meta("0.6.8", "unknown", frontend=False), e)
    # SGLang managed v2 per rank: managed/<hash16>/rank_tp{t}_pp0_dp0/v2/<env>/
    for tp in range(2):
        root = sg / "managed" / "5d2e8f0a6b1c9e37" / f"rank_tp{tp}_pp0_dp0"
        write_v2(root, meta("0.7.2.post1", "NVIDIA RTX PRO 6000 Blackwell Server Edition", dsl=True),
                 [(key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 5120, 2560), "()"), "CutlassFp4GemmRunner",
                   rng.randrange(32), ("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 5120, 2560), ()), POLICY_GEMM)
                  for m in buckets(256)])

    # vLLM: flashinfer_autotune_cache/<ver>/<arch>/<sha256>/autotune_configs.json (+ per-rank _dp{d}_rank{r})
    vl = base / "vllm" / "flashinfer_autotune_cache" / "0.6.11.post2" / "120a"
    h = hashlib.sha256(b"tiletune sample vllm config").hexdigest()
    e = {key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 2048, 7168), None): ["CutlassFp4GemmRunner", rng.randrange(32)]
         for m in buckets(8192)}
    write_v1(vl / h / "autotune_configs.json", meta("0.6.11.post2", "NVIDIA RTX PRO 6000 Blackwell Server Edition"), e)
    h2 = hashlib.sha256(b"tiletune sample vllm config tp2").hexdigest()
    for r in range(2):
        e = {key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(m, 1024, 7168), None): ["CutlassFp4GemmRunner", rng.randrange(32)]
             for m in buckets(1024)}
        # gpu "unknown" (torch could not name the device): the arch must come from the path's "120a"
        write_v1(vl / h2 / f"autotune_configs_dp0_rank{r}.json", meta("0.6.11.post2", "unknown"), e)


def write_v2(root: Path, manifest: dict, entries: list[tuple], schema: str = "v2") -> Path:
    """ManagedAutotuneCache layout: <root>/v2/<sha256(canonical manifest)[:16]>/{manifest.json, entries/}."""
    manifest = dict(manifest, cache_schema=schema)
    env_hash = hashlib.sha256(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    env_dir = root / "v2" / env_hash
    (env_dir / "entries").mkdir(parents=True, exist_ok=True)
    with open(env_dir / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    for file_key, runner, tactic, fields, policy in entries:
        entry: dict[str, Any] = {"key": file_key, "runner": runner, "tactic": tactic}
        if policy is not None:
            entry["profiling_policy"] = list(policy)
        if fields is not None:
            entry["key_fields"] = encode_fields(fields)
        name = hashlib.sha256(file_key.encode()).hexdigest()[:24] + ".json"
        with open(env_dir / "entries" / name, "w") as f:
            json.dump(entry, f, indent=2, sort_keys=True)
    return env_dir


def encode_fields(v: Any) -> Any:
    """_encode_key_fields: tuples -> {"__tuple__": [...]}, dtype strings 'torch.x' -> {"__dtype__": "x"}."""
    if isinstance(v, str) and v.startswith("torch."):
        return {"__dtype__": v[len("torch."):]}
    if isinstance(v, tuple):
        return {"__tuple__": [encode_fields(x) for x in v]}
    if isinstance(v, list):
        return {"__tuple__": [encode_fields(x) for x in v]}  # shapes lists stand for tuples here
    return v


def gen_v2(rng: random.Random) -> None:
    root = ROOT / "v2store"
    ents = []
    for m in buckets(1024):
        ents.append((key("mxfp8_gemm", "CutlassMxfp8GemmRunner", mxfp8_shapes(m, 4096, 4096), "()"), "CutlassMxfp8GemmRunner",
                     rng.randrange(6), ("mxfp8_gemm", "CutlassMxfp8GemmRunner", mxfp8_shapes(m, 4096, 4096), ()), POLICY_GEMM))
    ex = "(torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16)"
    ents.append((key("fp8_gemm", "CublasFp8GemmRunner", [(1, 64, 4096), (1, 4096, 4096), (), (), (1, -1, 4096), (-1,)], ex),
                  "CublasFp8GemmRunner", 2,
                  ("fp8_gemm", "CublasFp8GemmRunner", [(1, 64, 4096), (1, 4096, 4096), (), (), (1, -1, 4096), (-1,)],
                   ("torch.float8_e4m3fn", "torch.float8_e4m3fn", "torch.bfloat16")), None))
    write_v2(root, meta("0.7.2.post1", "NVIDIA RTX PRO 6000 Blackwell Server Edition", dsl=True, measure_execution_mode="cuda_graph"), ents)


# what NVIDIA/TensorRT-LLM@b35ac1b's own AutoTunerProfilingCache.save_cache wrote, per rank (tools/trtllm_writers)
TRTLLM_WRITTEN = (Path(__file__).resolve().parents[1] / "tests" / "data" / "trtllm_writers" / "b35ac1b64368"
                  / "TRTLLM_CACHE_DIR" / "autotuner")
# ... and what hyukn/TensorRT-LLM@5619fce's single-file writer wrote for two ranks (the same tool)
TRTLLM_SECTIONS = (Path(__file__).resolve().parents[1] / "tests" / "data" / "trtllm_writers" / "5619fce9f304"
                   / "TRTLLM_CACHE_DIR" / "autotuner")


def gen_trtllm(rng: random.Random) -> None:
    """Not constructed: the bytes TensorRT-LLM's own writers wrote (tools/trtllm_writers, tests/data/trtllm_writers)."""
    d = ROOT / "trtllm"
    # NVIDIA/TensorRT-LLM#7738 (_serialize_cache_to_json): one file per rank, <stem>.rank{N}.json (NVIDIA@b35ac1b)
    for r in range(2):
        shutil.copyfile(TRTLLM_WRITTEN / f"cache.rank{r}.json", d / f"autotuner_cache.rank{r}.json")
    # #10336 on (save_cache(file_path, rank)): one file for all ranks, `metadata` + `shared` + `rank_<r>` sections,
    # two ranks merging into the one file TensorRT-LLM's own _bootstrap.py names (hyukn/TensorRT-LLM@5619fce)
    shutil.copyfile(TRTLLM_SECTIONS / "cache.json", d / "autotuner_cache.json")


def gen_bad(rng: random.Random) -> None:
    d = ROOT / "bad"
    good = meta("0.6.14", "NVIDIA RTX PRO 6000 Blackwell Server Edition")
    e = sm120_fp4_cache(rng, "0.6.14", 32, True, [(4096, 4096)], max_m=64)
    write_v1(d / "truncated.json", good, e)
    text = (d / "truncated.json").read_text()
    (d / "truncated.json").write_text(text[: len(text) * 2 // 3])  # a writer killed mid-write (pre-atomic tools)
    bad = dict(e)
    bad["('fp4_gemm', 'CutlassFp4GemmRunner', ((8, 2048), (2048, 4096)"] = ["CutlassFp4GemmRunner", 3]  # cut-off key
    bad["not a key at all"] = ["CutlassFp4GemmRunner", 1]
    write_v1(d / "bad-key.json", good, bad)
    (d / "wrong-type.json").write_text(json.dumps([["CutlassFp4GemmRunner", 3]], indent=2))
    write_v1(d / "no-metadata.json", None, e)
    odd = dict(good, flashinfer_version="unknown")
    write_v1(d / "odd-metadata.json", odd, e)
    with open(d / "metadata-not-object.json", "w") as f:
        json.dump({"_metadata": "0.6.14", **{k: v for k, v in sorted(e.items())}}, f, indent=2)
    badval = dict(e)
    badval[key("fp4_gemm", "CutlassFp4GemmRunner", fp4_shapes(4096, 4096, 4096), "()")] = {"runner": "CutlassFp4GemmRunner", "tactic": 3}
    write_v1(d / "bad-value.json", good, badval)
    unk = dict(e)
    unk[key("fp16_frobnicate", "FrobnicatorRunner", [(16, 64)], "()")] = ["FrobnicatorRunner", 2]
    write_v1(d / "unknown-op.json", good, unk)
    (d / "empty.json").write_text("")
    (d / "binary.json").write_bytes(bytes(range(256)) * 4)
    (d / "notes.txt").write_text("this is not a cache\n")
    # a managed store with one corrupt entry and one whose embedded key is not a key
    env_dir = write_v2(d / "v2-corrupt", meta("0.7.2.post1", "NVIDIA B200", dsl=True),
                       [(key("mxfp8_gemm", "CutlassMxfp8GemmRunner", mxfp8_shapes(m, 4096, 4096), "()"), "CutlassMxfp8GemmRunner",
                         rng.randrange(32), None, POLICY_GEMM) for m in (1, 2, 4)])
    (env_dir / "entries" / ("0" * 24 + ".json")).write_text('{"key": "(\'mxfp8_gemm\', ')
    (env_dir / "entries" / ("1" * 24 + ".json")).write_text(json.dumps({"key": "garbage", "runner": "X", "tactic": 1}))


def main() -> None:
    global ROOT
    if len(sys.argv) == 3 and sys.argv[1] == "--out":  # write elsewhere (tests compare against the committed tree)
        ROOT = Path(sys.argv[2]).resolve()
    for sub in ("v1", "layouts", "v2store", "trtllm", "bad"):
        if (ROOT / sub).exists():
            shutil.rmtree(ROOT / sub)
        (ROOT / sub).mkdir(parents=True)
    rng = random.Random(20261130)
    gen_v1(rng)
    gen_layouts(rng)
    gen_v2(rng)
    # own RNGs from here on, so a change to one generator does not reshuffle the others' values
    gen_trtllm(random.Random("20261130-trtllm"))
    gen_bad(random.Random("20261130-bad"))
    real = Path(os.environ.get("TILETUNE_SHARED", ROOT.parent.parent / "shared")) / "samples" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
    if real.exists():
        (ROOT / "real").mkdir(exist_ok=True)
        shutil.copyfile(real, ROOT / "real" / real.name)


if __name__ == "__main__":
    main()
