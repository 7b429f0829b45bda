"""`tiletune deploy`: a tuned table (a pinned cache from `retry --pin-cache`, or any FlashInfer v1 cache)
seeded into every rank of a vLLM or SGLang deployment, or written as FlashInfer 0.7.x's managed v2 store
(`seed_v2`), and the settings to paste.

Why per-rank copies of ONE table: vLLM 0.34.0 loads per-rank files only when every rank's file has the
same `(_metadata, entry count)` fingerprint, and SGLang 0.5.23 deletes every rank's file unless all
have the same content (analysis/check.py, docs/scale.md). The same bytes in every rank's file pass
both rules by construction; FlashInfer then loads each file if its `_metadata` matches the target
(`tiletune check` says whether it will: `deploy --env` runs it on what was written).

File names are the engines' own:
- vLLM: `autotune_configs_dp{dp}_rank{rank}.json`, rank = the rank in the engine's world group
  (0 .. tensor x pipeline parallel size - 1), in the directory vLLM logs as "Using FlashInfer
  autotune cache file: <dir>/autotune_configs.json" (its path holds a hash of vLLM's config, which
  only vLLM computes);
- SGLang: `rank_tp{t}_pp{p}_dp{d}.json`, in `$SGLANG_CACHE_DIR/flashinfer/autotune/<FlashInfer
  version>/sm<XY>/<hash16>/` (the hash of SGLang's model key, which only SGLang computes; its
  log line "Running FlashInfer autotune with cache: <path>" names the directory).

Keys that carry the tuning rank's own indices (FlashInfer 0.6.18rc2 .. 0.7.1 fused-MoE keys: tp_rank,
ep_rank, cluster_rank in `MoERunner.get_cache_key_extras`) hit only on that rank; they are copied as
they are and counted, so the summary says how many will miss elsewhere.

Skip-ops settings: FlashInfer's `skip_ops` makes an op use its fallback tactic without profiling AND
without the cache (flashinfer/autotuner/autotuner.py, `choose_one`), so an op belongs there only when
its fallback is good enough; the ops named with `--skip-op` are printed in each engine's syntax.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from msgspec import Struct

from tiletune.core.errors import TunerError, UsageError
from tiletune.core.fileio import write_atomic
from tiletune.core.moe_key_extras import by_name
from tiletune.readers.flashinfer_v2 import entry_name as v2_entry_name
from tiletune.readers.flashinfer_v2 import env_hash as v2_env_hash


class Seeded(Struct, frozen=True):
    """What `deploy` wrote and what to paste."""

    source: str
    layout: str  # "vllm", "sglang" or "trtllm" (used in place: nothing written)
    directory: str
    files: Tuple[str, ...]
    entries: int
    rank_bound_keys: int  # keys carrying the tuning rank's indices: they hit on that rank only
    flashinfer_version: Optional[str]
    gpu: Optional[str]
    skip_ops: Tuple[str, ...]  # named with --skip-op
    settings: Tuple[str, ...]  # lines to paste
    check_headline: Optional[str] = None  # `tiletune check`'s first sentence on what was written (--env)


def rank_files(layout: str, ranks: int, pp: int = 1, dp: int = 1) -> List[str]:
    """The engines' own per-rank file names. vLLM: `ranks` = tensor x pipeline size per engine, one
    set per data-parallel rank; SGLang: `ranks` = TP size, one set per (pp, dp)."""
    if ranks < 1 or pp < 1 or dp < 1:
        raise UsageError(f"--ranks {ranks}, --pp {pp}, --dp {dp}: each must be 1 or more")
    if layout == "vllm":
        if pp != 1:
            raise UsageError("--pp is SGLang's: for vLLM give --ranks as tensor x pipeline parallel size")
        return [f"autotune_configs_dp{d}_rank{r}.json" for d in range(dp) for r in range(ranks)]
    if layout == "sglang":
        return [f"rank_tp{t}_pp{p}_dp{d}.json" for d in range(dp) for p in range(pp) for t in range(ranks)]
    raise UsageError(f"--layout {layout!r}: vllm or sglang")


def _table(source: Path) -> Tuple[bytes, Dict[str, Any]]:
    from tiletune.core import bounded_input
    from tiletune.core.errors import ReaderError
    from tiletune.readers.json_common import max_json_bytes

    try:
        raw = bounded_input.read_input(source, limit=max_json_bytes(), what="JSON cache", override="TILETUNE_MAX_JSON_MB")
        data = bounded_input.loads(raw, str(source))
    except ReaderError as e:
        raise TunerError(str(e)) from None
    if not isinstance(data, dict) or not any(k.startswith("('") for k in data):
        raise TunerError(f"{source}: not a FlashInfer v1 cache (no \"('op', 'Runner', ...)\" keys)")
    return raw, data


def _rank_bound(data: Dict[str, Any]) -> int:
    from tiletune.readers.keyparse import parse_key

    n = 0
    for key in data:
        if not key.startswith("('"):
            continue
        try:
            parsed = parse_key(key)
        except Exception:  # a key tiletune cannot parse is copied like any other
            continue
        named = by_name(getattr(parsed, "extras", None))
        if named is not None and "tp_rank" in named:
            n += 1
    return n


def seed(source: Path, out_dir: Path, layout: str, ranks: int, *, pp: int = 1, dp: int = 1,
         skip_ops: Sequence[str] = ()) -> Seeded:
    """Write the same table under every rank's file name in `out_dir` (new files, atomically)."""
    raw, data = _table(source)
    names = rank_files(layout, ranks, pp, dp)
    out_dir.mkdir(parents=True, exist_ok=True)
    existing = [n for n in names if (out_dir / n).exists()]
    if existing:
        raise TunerError(f"{out_dir}: already holds {', '.join(existing[:3])}{' ...' if len(existing) > 3 else ''}: "
                         "deploy writes new files only (move them away or pick another directory)")
    for n in names:
        write_atomic(out_dir / n, raw.decode("utf-8"))
    got = data.get("_metadata")
    meta: Dict[str, Any] = got if isinstance(got, dict) else {}
    version, gpu = meta.get("flashinfer_version"), meta.get("gpu")
    settings: List[str] = []
    if layout == "vllm":
        settings.append(f"# vLLM: put {names[0]} .. {names[-1]} in the directory vLLM logs as "
                        "'Using FlashInfer autotune cache file: <dir>/autotune_configs.json' "
                        "(VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR=<root> makes it <root>/<config hash>/)")
        if skip_ops:
            settings.append(f"VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS={','.join(skip_ops)}")
    else:
        settings.append(f"# SGLang: put {names[0]} .. {names[-1]} in $SGLANG_CACHE_DIR/flashinfer/autotune/"
                        f"{version or '<flashinfer version>'}/sm<XY>/<hash16>/ (the directory SGLang logs as "
                        "'Running FlashInfer autotune with cache: <path>')")
        if skip_ops:
            settings.append(f"--flashinfer-autotune-skip-ops {' '.join(skip_ops)}")
    if skip_ops:
        settings.append("# a skipped op runs its fallback tactic: FlashInfer neither profiles it nor reads it from this table")
    return Seeded(str(source), layout, str(out_dir), tuple(names), sum(1 for k in data if k.startswith("('")),
                  _rank_bound(data), version, gpu, tuple(skip_ops), tuple(settings))


def trtllm(cache: Path) -> Seeded:
    """TensorRT-LLM's own autotuner cache is used in place: nothing is copied, the setting names it.

    TLLM_AUTOTUNER_CACHE_PATH is the file of all ranks (`rank_{N}` sections, NVIDIA/TensorRT-LLM#10336 on);
    the per-rank files of #7738 are `<stem>.rank{N}.json` beside the path the variable names.
    """
    import re

    from tiletune.core import bounded_input
    from tiletune.core.errors import ReaderError
    from tiletune.readers import trtllm as trtllm_reader

    try:
        with bounded_input.open_input(cache) as f:
            head = f.read(4096)
    except (OSError, ReaderError) as e:
        raise TunerError(f"{cache}: cannot read it ({e})") from None
    if not trtllm_reader.sniff(cache, head):
        raise TunerError(f"{cache}: not a TensorRT-LLM autotuner cache (no metadata with cache_data or rank_N sections)")
    path = cache.resolve()
    m = re.match(r"^(.*)\.rank\d+\.json$", path.name)
    named = path.with_name(m.group(1) + ".json") if m else path
    what = ("per-rank files <stem>.rank{N}.json (TensorRT-LLM#7738): the variable names the stem's .json"
            if m else "one file holding every rank's section (TensorRT-LLM#10336 on)")
    return Seeded(str(cache), "trtllm", str(named.parent), (), 0, 0, None, None, (),
                  (f"# TensorRT-LLM reads its own autotuner cache, {what}", f"TLLM_AUTOTUNER_CACHE_PATH={named}"))


# ----- FlashInfer's managed v2 store (0.7.x `autotune_v2`), written from a v1 table -----------------------------
V2_POLICY_FIELDS = ("execution_mode", "cold_l2", "timer", "graph_timing")  # MeasurementPolicy.manifest_fields()




class _Dtype:
    """A torch dtype in a key (`torch.bfloat16`): its str is what the key prints."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def key_fields(key: str) -> Optional[Any]:
    """The structural form FlashInfer stores beside a v2 entry's key (`_encode_key_fields`: tuples as
    {"__tuple__": [...]}, torch dtypes as {"__dtype__": name}), parsed back from the key's text; None
    when the text does not parse or does not print back as itself (FlashInfer then serves the entry
    lazily by its key, as it does entries written before key_fields existed)."""
    import ast
    import io
    import tokenize

    try:
        toks = list(tokenize.generate_tokens(io.StringIO(key).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    dtypes: List[str] = []
    out: List[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if (t.type == tokenize.NAME and t.string == "torch" and i + 2 < len(toks) and toks[i + 1].string == "."
                and toks[i + 2].type == tokenize.NAME):
            dtypes.append(toks[i + 2].string)
            out.append(repr(f"\0dtype{len(dtypes) - 1}"))
            i += 3
            continue
        if t.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            i += 1
            continue
        out.append(t.string)
        i += 1
    try:
        value = ast.literal_eval("".join(out))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None

    def back(v: Any) -> Any:  # the key's own values, dtypes as _Dtype (to print the key again)
        if isinstance(v, str) and v.startswith("\0dtype"):
            return _Dtype(dtypes[int(v[len("\0dtype"):])])
        if isinstance(v, tuple):
            return tuple(back(x) for x in v)
        if isinstance(v, list):
            return [back(x) for x in v]
        return v

    def enc(v: Any) -> Any:
        if isinstance(v, _Dtype):
            return {"__dtype__": v.name}
        if isinstance(v, tuple):
            return {"__tuple__": [enc(x) for x in v]}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        raise TypeError(type(v).__name__)

    fields = back(value)
    if not isinstance(fields, tuple) or str(fields) != key:
        return None  # FlashInfer's preload() accepts an entry only when str(fields) == its key
    try:
        return enc(fields)
    except TypeError:  # a set, bytes, complex...: outside FlashInfer's encodable contract
        return None


def seed_v2(source: Path, root: Path, measure: Sequence[str] = (), skip_ops: Sequence[str] = ()) -> Seeded:
    """Write the table as FlashInfer 0.7.x's managed store under `root` (new files only): `root/v2/<env hash>/
    manifest.json` and one `entries/<hash>.json` per key, byte for byte as `ManagedAutotuneCache.publish`
    writes them (json.dump, indent 2, sorted keys). The manifest is the table's `_metadata` (what
    `_collect_metadata()` gave where it was tuned) + `cache_schema: v2` + the non-default measurement
    policy fields (`--measure execution_mode=eager` -> `measure_execution_mode`)."""
    import json

    _raw, data = _table(source)
    got = data.get("_metadata")
    if not isinstance(got, dict) or not got:
        raise TunerError(f"{source}: no _metadata: a v2 store is found by the hash of its environment's metadata, "
                         "which this table does not state")
    manifest: Dict[str, Any] = {str(k): v for k, v in got.items()}
    for item in measure:
        name, sep, value = item.partition("=")
        if not sep or name not in V2_POLICY_FIELDS or not value:
            raise UsageError(f"--measure {item!r}: NAME=VALUE with NAME one of {', '.join(V2_POLICY_FIELDS)} "
                             "(FlashInfer's MeasurementPolicy fields, as its manifest_fields() writes them)")
        manifest[f"measure_{name}"] = value
    manifest["cache_schema"] = "v2"
    env_hash = v2_env_hash(manifest)
    env_dir = root / "v2" / env_hash
    entries_dir = env_dir / "entries"
    if (env_dir / "manifest.json").exists() or (entries_dir.exists() and any(entries_dir.iterdir())):
        raise TunerError(f"{env_dir}: already a store for this environment: deploy writes new files only "
                         "(move it away or pick another root)")
    entries_dir.mkdir(parents=True, exist_ok=True)
    written, keyed = [], 0
    for key, value in data.items():
        if not key.startswith("('"):
            continue
        if not isinstance(value, list) or len(value) < 2 or not isinstance(value[0], str):
            raise TunerError(f"{source}: entry {key[:80]!r}: not [runner, tactic, ...]; nothing written for it")
        entry: Dict[str, Any] = {"key": key, "runner": value[0], "tactic": value[1]}
        if len(value) > 2 and isinstance(value[2], list):
            entry["profiling_policy"] = value[2]
        fields = key_fields(key)
        if fields is not None:
            entry["key_fields"] = fields
            keyed += 1
        name = v2_entry_name(key)
        write_atomic(entries_dir / name, json.dumps(entry, indent=2, sort_keys=True))
        written.append(f"v2/{env_hash}/entries/{name}")
    write_atomic(env_dir / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True))
    version, gpu = manifest.get("flashinfer_version"), manifest.get("gpu")
    settings = [f"FLASHINFER_AUTOTUNE_CACHE_DIR={root.resolve()}",
                "# FlashInfer 0.7.x: serve it with `with flashinfer.autotune_v2(mode=\"replay\"):` (mode=\"tune\" adds "
                "misses); the store is used only where _collect_metadata() and the measurement policy give this "
                f"manifest (directory {env_hash}: `tiletune check {env_dir}` says whether they do)",
                f"# {keyed} of {len(written)} entries carry key_fields (preloaded at attach); the rest are read "
                "on their first lookup"]
    if skip_ops:
        settings.append(f"# skip-ops: autotune_v2(skip_ops={{{', '.join(repr(o) for o in skip_ops)}}})")
    return Seeded(str(source), "flashinfer-v2", str(env_dir), tuple(["v2/" + env_hash + "/manifest.json", *written]),
                  len(written), _rank_bound(data), version, gpu, tuple(skip_ops), tuple(settings))


__all__ = ["Seeded", "key_fields", "rank_files", "seed", "seed_v2", "trtllm", "v2_entry_name", "v2_env_hash"]

