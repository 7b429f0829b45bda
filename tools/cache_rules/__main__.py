"""python3 -m tools.cache_rules: the rules by which FlashInfer, vLLM and SGLang use or drop a saved
autotune cache, read from each release's own source, into tiletune/analysis/data/cache_rules.json.

What `tiletune check` needs from each release, and where it is read:

FlashInfer (every flashinfer-python wheel from 0.6.7, the first with a JSON cache, to the newest
named): `flashinfer/autotuner[/autotuner].py`
  fields            the `_metadata` keys `_collect_metadata()` fills, in order (`meta["..."] = ...`),
                    each with the expression that computes it (what a target environment must match)
  wildcard          the value `load_configs` accepts for any field ("*")
  indeterminate     `_INDETERMINATE_META_VALUES` when the release splits mismatches into hard and soft
                    (both ignore the file on load; a soft one is overwritten by the next save)
  no_metadata       whether `load_configs` compares only `if saved_meta is not None` (a file without
                    `_metadata` is loaded as is)
  v2_schema         the managed store's schema directory (`flashinfer/autotune_cache.py` `_SCHEMA`),
                    where the release has `autotune_v2`; its manifest is `_collect_metadata()` plus
                    the measurement policy's fields, hashed into the store's directory name
vLLM (`vllm/model_executor/warmup/kernel_warmup.py`, `flashinfer_autotune_cache.py`,
`model_loader/weight_cache/warmup_cache.py`) and SGLang
(`sglang/srt/model_executor/runner/flashinfer_autotune.py`): the functions that decide, recorded
with the sha256 of each function's source so that a newer release whose rule changed is noticed
(`--check` fails then); what they decide is written here as data and pinned by
tests/test_check_engines.py against fixtures their own code produced (tools/engine_loaders).

    python3 -m tools.cache_rules --wheels DIR --vllm 0.34.0 --sglang 0.5.23 \
        --out tiletune/analysis/data/cache_rules.json
Wheels already in --wheels are used as they are (their sha256 is recorded); missing ones are
fetched with `pip download --no-deps`.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Optional

from packaging.version import Version

FIRST_JSON_CACHE = Version("0.6.7")  # flashinfer-ai/flashinfer#2554: no JSON cache before


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pip_download(spec: str, dest: Path, pattern: str) -> Path:
    found = sorted(dest.glob(pattern))
    if not found:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            spec, "-d", str(dest)], capture_output=True, text=True)
        found = sorted(dest.glob(pattern))
        if r.returncode or not found:
            raise SystemExit(f"pip download {spec}: {r.stderr.strip()[-500:]}")
    return found[-1]


def _member(z: zipfile.ZipFile, *names: str) -> Optional[tuple[str, str]]:
    have = set(z.namelist())
    for n in names:
        if n in have:
            return n, z.read(n).decode()
    return None


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    out: dict[str, ast.FunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, node)
    return out


def _constant_assign(tree: ast.Module, name: str) -> Any:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _metadata_fields(fn: ast.FunctionDef) -> list[dict[str, str]]:
    """`meta["k"] = expr` in source order; a key assigned again (its except branch) keeps the first."""
    fields: dict[str, str] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign):
            continue
        for t in node.targets:
            if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "meta"
                    and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                fields.setdefault(t.slice.value, ast.unparse(node.value))
    order = sorted(fields, key=lambda k: _first_line(fn, k))
    return [{"name": k, "value": fields[k]} for k in order]


def _first_line(fn: ast.FunctionDef, key: str) -> int:
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == key:
            return node.lineno
    return 1 << 30


def flashinfer_rules(wheel: Path) -> Optional[dict[str, Any]]:
    version = wheel.name.split("-")[1]
    with zipfile.ZipFile(wheel) as z:
        found = _member(z, "flashinfer/autotuner/autotuner.py", "flashinfer/autotuner.py")
        v2 = _member(z, "flashinfer/autotune_cache.py")
    if found is None:
        return None
    path, text = found
    tree = ast.parse(text)
    fns = _functions(tree)
    collect, load = fns.get("_collect_metadata"), fns.get("load_configs")
    if collect is None or load is None:
        return None
    load_text = ast.unparse(load)
    classify = fns.get("_classify_metadata_mismatches")
    compare_text = load_text + (ast.unparse(classify) if classify else "")
    rule: dict[str, Any] = {
        "fields": _metadata_fields(collect),
        "wildcard": "*" if "'*'" in compare_text else None,
        "indeterminate": list(_constant_assign(tree, "_INDETERMINATE_META_VALUES") or []) or None,
        "no_metadata": "loaded" if "saved_meta is not None" in load_text else "compared",
        "source": {"wheel": wheel.name, "sha256": sha256(wheel.read_bytes()), "file": path,
                   "functions": ["_collect_metadata", "load_configs"] + (["_classify_metadata_mismatches"] if classify else [])},
    }
    if v2 is not None:
        v2_tree = ast.parse(v2[1])
        schema = _constant_assign(v2_tree, "_SCHEMA")
        if schema and "autotune_v2" in _functions(v2_tree):
            rule["v2_schema"] = schema
            rule["source"]["v2_file"] = v2[0]
    return {"version": version, **rule}


def _function_hashes(wheel: Path, where: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with zipfile.ZipFile(wheel) as z:
        for path, names in where.items():
            tree = ast.parse(z.read(path).decode())
            fns = _functions(tree)
            missing = [n for n in names if n not in fns]
            if missing:
                raise SystemExit(f"{wheel.name}: {path} has no {', '.join(missing)}: the rule moved; read it again")
            out[path] = {n: sha256(ast.unparse(fns[n]).encode()) for n in names}
    return out


VLLM_FUNCTIONS = {
    "vllm/model_executor/warmup/kernel_warmup.py": ["_autotune_cache_fingerprint", "_all_ranks_have_matching_cache",
                                                    "_load_shared_autotune_cache", "flashinfer_autotune",
                                                    "_flashinfer_autotune_skip_ops"],
    "vllm/model_executor/warmup/flashinfer_autotune_cache.py": ["flashinfer_autotune_filename", "flashinfer_autotune_root",
                                                                "resolve_rank_flashinfer_autotune_file",
                                                                "use_flashinfer_autotune_v2"],
    "vllm/model_executor/model_loader/weight_cache/warmup_cache.py": ["validate_payload"],
}
SGLANG_FUNCTIONS = {
    "sglang/srt/model_executor/runner/flashinfer_autotune.py": ["flashinfer_autotune_cache_path", "_autotune_cache_digest",
                                                                 "_drop_diverged_autotune_cache", "flashinfer_autotune_context",
                                                                 "_autotune_tactic_sync_group"],
}

# What the functions above decide, as tiletune/analysis/check.py applies it (pinned by the fixtures).
VLLM_RULE = {
    "file_name": "autotune_configs_dp{dp}_rank{rank}.json",
    "group": "the ranks of one data-parallel engine (world group; with pipeline parallelism each stage's TP group)",
    "fingerprint": "(json.dumps(_metadata, sort_keys=True), number of top-level keys other than _metadata); "
                   "a missing, unreadable or non-object file has none",
    "keep": "every rank of the group has a file with the same fingerprint, and every rank's FlashInfer loads it",
    "otherwise": "every rank clears what it loaded and tunes from scratch; the files stay and are saved over",
    "seed": "`vllm preload` / a shared store: a rank's table is adopted only when FlashInfer's own metadata "
            "classifier finds no mismatch with the local environment (validate_payload)",
}
SGLANG_RULE = {
    "file_name": "rank_tp{tp}_pp{pp}_dp{dp}.json",
    "group": "the TP group (same pp and dp); only when it has more than one rank",
    "digest": "sha256(json.dumps({'file': the parsed file, 'env': FlashInfer's _collect_metadata()}, sort_keys=True)); "
              "'' for a missing, unreadable or non-object file",
    "keep": "every rank of the TP group has the same digest (so the same file content, key for key)",
    "otherwise": "every rank deletes its file (cache_path.unlink) and the group tunes from scratch",
}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.cache_rules")
    ap.add_argument("--wheels", type=Path, required=True, help="directory of flashinfer-python wheels (and vllm/sglang)")
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--sglang", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    flashinfer = {}
    for wheel in sorted(args.wheels.glob("flashinfer_python-*.whl"), key=lambda p: Version(p.name.split("-")[1])):
        if Version(wheel.name.split("-")[1]) < FIRST_JSON_CACHE:
            continue
        rule = flashinfer_rules(wheel)
        if rule is not None:
            flashinfer[rule.pop("version")] = rule
    vllm_wheel = pip_download(f"vllm=={args.vllm}", args.wheels, f"vllm-{args.vllm}-*.whl")
    sglang_wheel = pip_download(f"sglang=={args.sglang}", args.wheels, f"sglang-{args.sglang}-*.whl")
    data = {
        "schema": "tiletune.cache_rules/1",
        "command": "python3 -m tools.cache_rules --wheels WHEELS " + f"--vllm {args.vllm} --sglang {args.sglang} "
                   "--out tiletune/analysis/data/cache_rules.json",
        "flashinfer": flashinfer,
        "vllm": {args.vllm: {**VLLM_RULE, "source": {"wheel": vllm_wheel.name, "sha256": sha256(vllm_wheel.read_bytes()),
                                                     "functions": _function_hashes(vllm_wheel, VLLM_FUNCTIONS)}}},
        "sglang": {args.sglang: {**SGLANG_RULE, "source": {"wheel": sglang_wheel.name, "sha256": sha256(sglang_wheel.read_bytes()),
                                                           "functions": _function_hashes(sglang_wheel, SGLANG_FUNCTIONS)}}},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{args.out}: {len(flashinfer)} FlashInfer releases, vLLM {args.vllm}, SGLang {args.sglang}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
