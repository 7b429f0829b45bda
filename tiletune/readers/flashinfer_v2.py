"""FlashInfer's managed v2 autotune store (0.7.x wheels, `flashinfer/autotune_cache.py`).

Layout, as `ManagedAutotuneCache` writes it:

    <root>/v2/<env hash: sha256(canonical manifest)[:16]>/
        manifest.json              the v1 `_metadata` fields + "cache_schema": "v2"
                                   (+ "measure_execution_mode" / "measure_cold_l2" / "measure_timer"
                                   when the measurement policy is not the default)
        entries/<sha256(file key)[:24]>.json
                                   {"key": <the v1 file key string>, "runner": <class>,
                                    "tactic": <json>, "profiling_policy"?: [...],
                                    "key_fields"?: <structured key: {"__tuple__": [...]},
                                                    {"__dtype__": "bfloat16"}>}

`<root>` is FLASHINFER_AUTOTUNE_CACHE_DIR or ~/.cache/flashinfer/autotune (FLASHINFER_WORKSPACE_BASE
moves ~); vLLM passes VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR and SGLang a per-rank directory (see
sglang.py). The reader claims an `<env hash>` directory; a single entry file is read too.
FlashInfer treats a malformed entry as a cache miss; tiletune reports it (non-fatal) and goes on.
A manifest or entry key this version does not know (readers/flashinfer_format.py) is kept (the
manifest in the environment's metadata, an entry's in detail.extras) and named in one note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Optional

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import Environment, InputProblem, Status, TuningRecord, freeze
from tiletune.readers import json_common, sglang
from tiletune.readers.flashinfer_format import MANIFEST_KEYS, V2_ENTRY_KEYS, Unread, place, unknown_metadata_keys
from tiletune.readers.flashinfer_v1 import policy_detail
from tiletune.readers.interface import ReadContext
from tiletune.readers.json_common import Item, PathHints, load_json, quoted_short
from tiletune.readers.keyparse import KeyParseError, KeyParser

KIND = "flashinfer-v2"


def env_hash(manifest: Any) -> str:
    """A store's directory name: sha256 of its canonical manifest JSON, 16 hex digits (ManagedAutotuneCache)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def entry_name(key: str) -> str:
    """An entry's file name: sha256 of its v1 key string, 24 hex digits (ManagedAutotuneCache._entry_path)."""
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()[:24] + ".json"
_ENTRY_LIMIT = 1 << 20  # one entry is a few hundred bytes; anything over 1 MiB is not an entry


def is_store(path: Path) -> bool:
    """An `<env hash>` directory: manifest.json beside an entries/ directory."""
    try:
        return (path / "manifest.json").is_file() and (path / "entries").is_dir()
    except OSError:  # cannot look inside (permissions)
        return False


def sniff(path: Path, head: bytes) -> bool:
    """A store directory, or one entry file (`{"key":…, "runner":…, "tactic":…}`)."""
    if not head:
        return path.is_dir() and is_store(path)
    return (
        head.lstrip().startswith(b"{")
        and b'"key"' in head
        and b'"runner"' in head
        and b'"tactic"' in head
        and path.parent.name == "entries"
    )


def _hints(path: Path) -> Optional[PathHints]:
    return sglang.hints(path)


def _environment(store: Path, ctx: ReadContext, problems: list[InputProblem]) -> Environment:
    manifest_path = store / "manifest.json"
    manifest = load_json(manifest_path) if manifest_path.exists() else None
    if isinstance(manifest, InputProblem):
        # a manifest that is there but cannot be used (unreadable, invalid, too large): a loss
        problems.append(InputProblem(manifest.source, manifest.message + "; environment unknown",
                                     fatal=False, loses_data=True))
        manifest = None
    if manifest is None:
        if not manifest_path.exists():
            problems.append(InputProblem(str(store), f"{store}: no manifest.json; FlashInfer version and GPU unknown",
                                         fatal=False, loses_data=False))  # nothing was there to lose
        manifest = {}
    if not isinstance(manifest, dict):
        problems.append(InputProblem(str(manifest_path), f"{manifest_path}: not a JSON object; ignored",
                                     fatal=False, loses_data=True))
        manifest = {}
    if manifest and manifest.get("cache_schema") not in (None, "v2"):
        problems.append(InputProblem(str(manifest_path), f"{manifest_path}: cache_schema {manifest.get('cache_schema')!r} "
                                     "(tiletune knows v2); read as v2", fatal=False, loses_data=False))  # every entry still read
    version = manifest.get("flashinfer_version")
    version = version if isinstance(version, str) and version not in json_common.UNKNOWN_VALUES else None
    gpu = manifest.get("gpu")
    gpu = gpu if isinstance(gpu, str) and gpu not in json_common.UNKNOWN_VALUES else None
    cuda = manifest.get("cuda_version")
    return ctx.environment(
        flashinfer_version=version,
        version_source="manifest.flashinfer_version" if version else None,
        gpu=gpu,
        cuda_version=cuda if isinstance(cuda, str) and cuda not in json_common.UNKNOWN_VALUES else None,
        metadata=tuple(sorted((str(k), str(v)) for k, v in manifest.items())),
    )


def read(path: Path, ctx: ReadContext) -> Iterator[Item]:
    """Read every entry of a store directory (or the one entry file given)."""
    if path.is_dir():
        store, files = path, sorted((path / "entries").glob("*.json"))
    else:
        store, files = path.parent.parent, [path]
    problems: list[InputProblem] = []
    env = _environment(store, ctx, problems)
    yield from problems
    hints = _hints(store)
    rank = hints.rank if hints else None
    parser = KeyParser()
    unread = Unread()
    unread.add(f"manifest.{k}" for k in unknown_metadata_keys(dict(env.metadata), MANIFEST_KEYS))
    for f in files:
        yield from _read_entry(f, store, env, rank, parser, unread)
    note = unread.note(str(store), str(store))
    if note is not None:
        yield note
    if not files:
        yield InputProblem(str(store), f"{store}: managed store has no entries", fatal=False, loses_data=False)


def _read_entry(f: Path, store: Path, env: Environment, rank: Optional[str], parser: KeyParser,
                unread: Optional[Unread] = None) -> Iterator[Item]:
    src = str(store)
    try:
        entry = bounded_input.load_file(f, limit=_ENTRY_LIMIT, what="store entry", why=" (one entry is a few hundred bytes)")
    except ReaderError as e:
        yield InputProblem(src, f"{e}; entry skipped", fatal=False, loses_data=True)
        return
    if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("runner"), str) and "tactic" in entry):
        yield InputProblem(src, f"{f}: not a store entry (needs string 'key', string 'runner' and 'tactic'); skipped",
                           fatal=False, loses_data=True)
        return
    key = entry["key"]
    try:
        pk = parser.parse(key)
    except KeyParseError as e:
        yield InputProblem(src, f"{f}: key {quoted_short(key)}: cannot parse it ({e}); entry skipped",
                           fatal=False, loses_data=True)
        return
    detail: list[tuple[str, Any]] = [("entry", f.name)]
    if "profiling_policy" in entry:
        detail.append(("profiling_policy", policy_detail(entry["profiling_policy"])))
    if "key_fields" in entry and not _key_fields_agree(entry["key_fields"], pk):
        detail.append(("key_fields_mismatch", "the structured key_fields differ from the key string"))
    if entry["runner"] != pk.runner:
        detail.append(("value_runner", entry["runner"]))
    extras = {place("entry", k): freeze(v) for k, v in entry.items() if k not in V2_ENTRY_KEYS}
    if extras:
        detail.append(("extras", tuple(sorted(extras.items()))))
        if unread is not None:
            unread.add(extras)
    tactic = entry["tactic"]
    tactic = freeze(tactic) if isinstance(tactic, list) else tactic
    yield TuningRecord(
        source=src, source_kind=KIND, op=pk.op, runner=pk.runner, tactic=tactic, status=Status.CHOSEN,
        env=env, shapes=pk.shapes, extras=pk.extras, raw_key=key, rank=rank, detail=tuple(sorted(detail)),
    )


def decode_key_fields(obj: Any) -> Any:
    """The structured key: {"__tuple__": [...]} -> tuple, {"__dtype__": "x"} -> "torch.x"."""
    if isinstance(obj, dict):
        if "__tuple__" in obj and isinstance(obj["__tuple__"], list):
            return tuple(decode_key_fields(v) for v in obj["__tuple__"])
        if "__dtype__" in obj:
            return f"torch.{obj['__dtype__']}"
        return None
    if isinstance(obj, list):
        return [decode_key_fields(v) for v in obj]
    return obj


def _key_fields_agree(key_fields: Any, pk: Any) -> bool:
    fields = decode_key_fields(key_fields)
    if not isinstance(fields, tuple) or len(fields) < 3:
        return False
    return fields[0] == pk.op and fields[1] == pk.runner and fields[2] == pk.shapes


