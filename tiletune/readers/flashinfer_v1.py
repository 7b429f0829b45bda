"""FlashInfer's v1 JSON autotuner cache: one file, `{"_metadata": …, "<key>": [runner, tactic(, policy)], …}`.

Format, as `AutoTuner.save_configs` writes it (flashinfer/autotuner.py v0.6.7-v0.6.14,
flashinfer/autotuner/autotuner.py since v0.6.15, and the 0.7.x wheels):
- `_metadata`: the writer's environment (flashinfer_version, cuda_version, cublas_version,
  cudnn_version, gpu; cudnn_frontend_version since v0.6.11; cutlass_dsl_version in 0.7.2).
- every other key is `str((op, runner, profile))` (v0.6.7-0.6.12) or `str((op, runner, profile,
  extras))` (v0.6.13+), sorted; the value is `[runner, tactic]`, in 0.7.x
  `[runner, tactic, ["cuda_graph_profile_replays", n|null, "l2_cache_policy", "cold"|"hot"]]`, and
  in 0.7.4 `[runner, tactic, policy, {"time_ms", "runner_up_ms", "margin", "candidates"}]` (the
  selection record: read as measured, see readers/flashinfer_format.py). An entry whose runner and
  tactic are readable is always read; parts a newer writer adds are kept (detail.extras) and named
  in one note per input.
- `_records` (v0.6.18rc2+): namespaced records; `trtllm_moe_da` holds distribution-aware MoE plans
  whose `bodies`/`eager_body` carry `{"tile_n", "tactic"}` pairs.
- `_generation` (v0.6.18rc2+): a sha256 of the rest, used for write conflicts only; kept in the
  environment's metadata as `_generation` (shown with the other metadata).

Every cache entry is a CHOSEN record. What every JSON reader shares (the size guard, the path hints
the SGLang/vLLM layouts pass in) is readers/json_common.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import Environment, InputProblem, Status, TuningRecord, freeze
from tiletune.readers.flashinfer_format import RECORDED_BY, Unread, place, read_selection, unknown_metadata_keys
from tiletune.readers.interface import ReadContext
from tiletune.readers.json_common import UNKNOWN_VALUES, Item, PathHints, json_type_name, load_json_object, quoted_short
from tiletune.readers.keyparse import KeyParseError, KeyParser, parse_general

KIND = "flashinfer-v1"

_METADATA, _RECORDS, _GENERATION = "_metadata", "_records", "_generation"
_RESERVED = frozenset((_METADATA, _RECORDS, _GENERATION))

LEGACY_CUDNN_NOTE = (
    "integer cuDNN tactic (a plan index from before FlashInfer 0.6.16); FlashInfer >= 0.6.16 "
    "drops such entries on load and re-tunes them"
)

def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with `_metadata` or a tuple-shaped key, that is not a blocklist or TRT-LLM cache."""
    h = head.lstrip()
    if not h.startswith(b"{"):
        return False
    if b'"invalid_tactics"' in head or b'"cache_data"' in head:
        return False
    return b'"_metadata"' in head or b"\"('" in head


def read(path: Path, ctx: ReadContext) -> Iterator[Item]:
    """Read a v1 cache anywhere on disk (no layout hints)."""
    return read_with_hints(path, ctx, None)


def read_with_hints(path: Path, ctx: ReadContext, hints: Optional[PathHints]) -> Iterator[Item]:
    """Read a v1 cache; `hints` fill in version/arch/rank that `_metadata` lacks.

    (The file is read when this is called, and `read_object`'s iterator returned as it is: a
    generator around it would pass each of a cache's records through one more frame.)"""
    obj = load_json_object(path, _RESERVED)
    if isinstance(obj, InputProblem):
        return iter((obj,))
    return read_object(path, obj, ctx, hints)


def _metadata_env(
    path: Path, meta: Any, ctx: ReadContext, hints: Optional[PathHints], problems: list[InputProblem],
    generation: Any = None,
) -> Environment:
    """Environment from `_metadata`, falling back on the path; notes what is missing."""
    src = str(path)
    if meta is None:
        meta = {}
        if not (hints and hints.flashinfer_version):
            problems.append(InputProblem(src, f"{path}: no _metadata: FlashInfer version and GPU are unknown "
                                              "(pass --flashinfer-version and --arch to decode tactics)",
                                         fatal=False, loses_data=False))  # nothing was there to lose
    elif not isinstance(meta, dict):
        # what the file put there is thrown away (unlike a missing _metadata): a loss
        problems.append(InputProblem(src, f"{path}: _metadata is a {type(meta).__name__}, not an object; ignored",
                                     fatal=False, loses_data=True))
        meta = {}
    raw_version = meta.get("flashinfer_version")
    version: Optional[str] = raw_version if isinstance(raw_version, str) else None
    version_source: Optional[str] = "metadata.flashinfer_version"
    if version in UNKNOWN_VALUES:
        if meta and not (hints and hints.flashinfer_version):
            problems.append(InputProblem(src, f"{path}: _metadata.flashinfer_version is {raw_version!r}; version unknown",
                                         fatal=False, loses_data=False))  # the file itself says it does not know
        version, version_source = (hints.flashinfer_version, "path") if hints and hints.flashinfer_version else (None, None)
    gpu = meta.get("gpu")
    gpu = gpu if isinstance(gpu, str) and gpu not in UNKNOWN_VALUES else None
    cuda = meta.get("cuda_version")
    arch, arch_source = (hints.arch, "path") if hints and hints.arch else (None, None)
    return ctx.environment(
        flashinfer_version=version,
        gpu=gpu,
        arch=arch,
        arch_source=arch_source,
        version_source=version_source,
        cuda_version=cuda if isinstance(cuda, str) and cuda not in UNKNOWN_VALUES else None,
        metadata=tuple(sorted([(str(k), str(v)) for k, v in meta.items()]
                              + ([(_GENERATION, str(generation))] if generation is not None else []))),
    )


def policy_detail(policy: Any) -> Any:
    """`["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]` -> sorted name/value pairs."""
    if isinstance(policy, list) and len(policy) % 2 == 0 and all(isinstance(k, str) for k in policy[::2]):
        return tuple(sorted(zip(policy[::2], (freeze(v) for v in policy[1::2]))))
    return freeze(policy)


_NO_POLICY = object()  # a 2-element value: no profiling policy stored


def read_object(path: Path, obj: Any, ctx: ReadContext, hints: Optional[PathHints]) -> Iterator[Item]:
    """Turn a parsed v1 cache object (a dict, or `ObjectPieces`: its members in pieces) into records
    and problems."""
    src = str(path)
    members: Iterable[tuple[str, Any]]
    if isinstance(obj, bounded_input.ObjectPieces):
        reserved, members = obj.kept, obj.items()
    elif isinstance(obj, dict):
        reserved, members = {k: obj[k] for k in _RESERVED if k in obj}, obj.items()
    else:
        yield InputProblem(src, f"{path}: top level is a JSON {json_type_name(obj)}, expected an object of cache entries",
                           loses_data=True)
        return
    problems: list[InputProblem] = []
    meta = reserved.get(_METADATA)
    env = _metadata_env(path, meta, ctx, hints, problems, reserved.get(_GENERATION))
    yield from problems
    unread = Unread()  # what a newer writer put here that tiletune does not know (one note at the end)
    unread.add(f"_metadata.{k}" for k in unknown_metadata_keys(meta))
    rank = hints.rank if hints else None
    split = KeyParser().split
    shared_details: dict[Any, tuple[tuple[str, Any], ...]] = {}
    # The entry before's runner, value runner, policy and the policy's element types, and its detail:
    # consecutive entries mostly repeat all four, and comparing them costs a third of building and
    # hashing the memo's key (its strings are new objects per entry, their hashes not yet known).
    # The types keep 1, 1.0 and True apart; a policy holding a list or object, or a cuDNN runner
    # (whose detail depends on the tactic), is never reused this way (`last_types` None).
    last_runner: Any = _NO_POLICY
    last_value_runner: Any = _NO_POLICY
    last_policy: Any = _NO_POLICY
    last_types: Any = None
    last_detail: tuple[tuple[str, Any], ...] = ()
    n_entries = 0
    chosen, record = Status.CHOSEN, TuningRecord  # (one record per entry: see its why)
    for key, value in members:
        if key in _RESERVED:
            continue
        if key.startswith("_"):  # a section of a newer writer (every cache key is a tuple's text)
            unread.add((place("top-level", key),))
            continue
        n_entries += 1
        try:
            op, runner, shapes, extras = split(key) or parse_general(key)
        except KeyParseError as e:
            yield InputProblem(src, f"{path}: key {quoted_short(key)}: cannot parse it ({e}); entry skipped", fatal=False, loses_data=True)
            continue
        if not (isinstance(value, list) and len(value) >= 2 and isinstance(value[0], str)):
            yield InputProblem(src, f"{path}: key {quoted_short(key)}: value {quoted_short(json.dumps(value))} is not "
                                    "[runner, tactic, ...] (a runner name, then a tactic); entry skipped",
                               fatal=False, loses_data=True)
            continue
        tactic = value[1]
        if tactic.__class__ is list:
            tactic = freeze(tactic)
        policy = value[2] if len(value) >= 3 else _NO_POLICY
        if not (runner is last_runner and value[0] == last_value_runner and policy == last_policy
                and ([*map(type, policy)] if policy.__class__ is list else policy.__class__) == last_types):
            last_detail = _shared_detail(shared_details, runner, value[0], tactic, policy, hints)
            last_runner, last_value_runner, last_policy = runner, value[0], policy
            last_types = _reusable_types(policy) if not runner.startswith("Cudnn") else None
        detail, time_ms = (last_detail, None) if len(value) < 4 else _newer_parts(value, last_detail, unread)
        # positional, in TuningRecord's field order (source, source_kind, op, runner, tactic, status,
        # env, shapes, extras, raw_key, error, time_ms, count, rank, line, detail): one per cache entry
        yield record(src, KIND, op, runner, tactic, chosen, env, shapes, extras, key,
                     None, time_ms, 1, rank, None, detail)
    note = unread.note(src, str(path))
    if note is not None:
        yield note
    if _RECORDS in reserved:
        yield from _namespaced_records(path, reserved[_RECORDS], env, rank)
    elif n_entries == 0:
        yield InputProblem(src, f"{path}: no cache entries (only {', '.join(sorted(reserved)) or 'an empty object'})",
                           fatal=False, loses_data=False)  # an empty cache is read whole


def _newer_parts(value: list, shared: tuple[tuple[str, Any], ...], unread: Unread
                 ) -> tuple[tuple[tuple[str, Any], ...], Optional[float]]:
    """An entry's parts after the policy: 0.7.4's selection record (its time is the record's
    measured time), and anything a newer writer added (kept in detail.extras, counted in `unread`)."""
    facts, extras = read_selection(value[3])
    for i, part in enumerate(value[4:], 4):
        extras[f"value[{i}]"] = freeze(part)
    added: list[tuple[str, Any]] = []
    time_ms = None
    if facts is not None:
        added += [("selection", facts), ("time_source", RECORDED_BY)]
        time_ms = dict(facts).get("time_ms")
    if extras:
        added.append(("extras", tuple(sorted(extras.items()))))
        unread.add(extras)
    return tuple(sorted(shared + tuple(added))), time_ms


def _shared_detail(shared: dict[Any, tuple[tuple[str, Any], ...]], runner: str, value_runner: str, tactic: Any,
                   policy: Any, hints: Optional[PathHints]) -> tuple[tuple[str, Any], ...]:
    """An entry's detail (its policy, a value runner that differs from the key's, a legacy cuDNN
    tactic, the layout), one tuple shared per distinct (policy, runner mismatch, legacy cuDNN)."""
    cudnn = runner.startswith("Cudnn") and type(tactic) is int and tactic >= 0
    try:  # (with the policy's element types: 1, 1.0 and True are equal keys, but their details differ)
        dkey: Any = (tuple(policy), tuple(map(type, policy))) if type(policy) is list else (policy, type(policy))
        dkey = (dkey, value_runner == runner or value_runner, cudnn)
        frozen_detail = shared.get(dkey)
    except TypeError:  # an unhashable element in the policy: build it without the memo
        dkey, frozen_detail = None, None
    if frozen_detail is None:
        detail: list[tuple[str, Any]] = []
        if policy is not _NO_POLICY:
            detail.append(("profiling_policy", policy_detail(policy)))
        if value_runner != runner:
            detail.append(("value_runner", value_runner))
        if cudnn:
            detail.append(("legacy_cudnn_tactic", LEGACY_CUDNN_NOTE))
        if hints is not None:
            detail.append(("layout", hints.layout))
        detail.sort()
        frozen_detail = tuple(detail)
        if dkey is not None:
            shared[dkey] = frozen_detail
    return frozen_detail


def _reusable_types(policy: Any) -> Any:
    """What `read_object` compares, beside the value, to reuse a policy's detail for the next entry:
    a list's element types, a scalar's type; None (never reused) for a policy that holds a list or
    an object, or is one (their nested 1 / 1.0 / True would need a deeper comparison)."""
    if policy.__class__ is list:
        types = [*map(type, policy)]
        return None if list in types or dict in types else types
    return None if policy.__class__ is dict else policy.__class__


def _namespaced_records(path: Path, records: Any, env: Environment, rank: Optional[str]) -> Iterator[Item]:
    """`_records.trtllm_moe_da`: one CHOSEN record per (tile_n, tactic) body a plan carries."""
    src = str(path)
    if not isinstance(records, dict):
        yield InputProblem(src, f"{path}: _records is a JSON {json_type_name(records)}, expected an object; ignored",
                           fatal=False, loses_data=True)
        return
    for namespace, table in records.items():
        if not isinstance(table, dict):
            yield InputProblem(src, f"{path}: _records.{namespace} is not an object; ignored", fatal=False, loses_data=True)
            continue
        without_tactic = 0
        for record_key, record in table.items():
            try:
                op_key = bounded_input.loads(record_key, f"{path}: _records key")
            except ReaderError:
                op_key = {}
            op_key = op_key if isinstance(op_key, dict) else {}
            custom_op = op_key.get("custom_op")
            op = custom_op if isinstance(custom_op, str) else str(namespace)
            runner = _runner_class(op_key.get("runner_identity"))
            bodies = []
            if isinstance(record, dict):
                for role, body in [("eager_body", record.get("eager_body"))] + [
                    ("body", b) for b in (record.get("bodies") or [] if isinstance(record.get("bodies"), list) else [])
                ]:
                    if isinstance(body, dict) and "tactic" in body:
                        bodies.append((role, body))
            if not bodies:
                without_tactic += 1
                continue
            shapes = freeze([s for s, _dtype in op_key.get("input_identity", [])]) if _is_identity(op_key.get("input_identity")) else None
            base = [("namespace", namespace), ("record_key", record_key)]
            for name in ("num_tokens", "num_experts", "num_local_experts", "local_expert_offset", "top_k"):
                if name in op_key:
                    base.append((name, op_key[name]))
            if isinstance(record, dict) and "policy" in record:
                base.append(("da_policy", freeze(record["policy"])))
            seen = set()
            for role, body in bodies:
                tactic = (freeze(body.get("tile_n")), freeze(body["tactic"]))
                if tactic in seen:
                    continue
                seen.add(tactic)
                yield TuningRecord(
                    source=src, source_kind=KIND, op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                    env=env, shapes=shapes, rank=rank, detail=tuple(sorted(base + [("da_body", role)])),
                )
        if without_tactic:
            yield InputProblem(src, f"{path}: _records.{namespace}: {without_tactic} record(s) carry no tactic "
                                    "(fallback plans); counted, not listed", fatal=False, loses_data=False)  # no tactic to list


def _is_identity(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, list) and len(x) == 2 for x in v)


def _runner_class(identity: Any) -> str:
    """`runner_identity` is compact JSON `{"class": ..., "fields": ...}`; the class name is the runner."""
    if isinstance(identity, str):
        try:
            cls = bounded_input.loads(identity, "runner_identity").get("class")
            if isinstance(cls, str):
                return cls.rsplit(".", 1)[-1]
        except (ReaderError, AttributeError):
            pass
    return "unknown"
