"""TensorRT-LLM's own autotuner cache (`tensorrt_llm/_torch/autotuner.py`, `AutoTunerProfilingCache`).

Two generations, both `json.dump(..., indent=2, default=str)`:

- NVIDIA/TensorRT-LLM#7738 (`_serialize_cache_to_json`): one file per rank, `<stem>.rank{N}.json`:
      {"metadata": {"lib_version", "creation_timestamp", "device_name", "device_capability": [maj, min]},
       "cache_data": {"<str((op, runner_class, hash(runner), nearest_profile))>":
                        {"runner_id": <index into that call's runners>, "tactic": <json value>,
                         "min_time": <ms; Infinity for the never-timed fallback>}}}
- #10336 on (`save_cache(file_path, rank)` / `_serialize_cache_data`): all ranks in the one
  TLLM_AUTOTUNER_CACHE_PATH file, each rank's writer merging its section in under a lock:
      {"metadata": {...}, "shared": {<entries>}, "rank_0": {"<str((op, runner_class, str(runner.unique_id()), profile))>":
                                     {"runner_id", "tactic": repr(tactic) (a string), "min_time"}}, "rank_1": ...}
  As hyukn/TensorRT-LLM@5619fce's own writer wrote it (tests/data/trtllm_writers/5619fce9f304, two ranks):
  `shared` (`AutoTunerProfilingCache.SHARED_CACHE_KEY`, #14441/#15626) holds the ops tuned with a
  non-INDEPENDENT strategy (read with rank None and `detail["section"]`), always present, possibly
  empty; ops tuned with `exclude_from_cache` (#14458) are in no section; a sibling `<file>.lock`
  (empty) is left beside the file. Any other top-level object whose values are entries is read as
  shared too, and `rank_{N}` sections are also accepted nested in one.
A string tactic is parsed back like TRT-LLM's own `ast.literal_eval`, without eval; text that is not
a literal stays a string. Not FlashInfer: no flashinfer_version; the arch comes from `device_capability`.

Where: TLLM_AUTOTUNER_CACHE_PATH names the file. The unified cache root TRTLLM_CACHE_DIR
(NVIDIA/TensorRT-LLM#18897; tensorrt_llm/_bootstrap.py at NVIDIA/TensorRT-LLM@00832e8, lines 64-85,
`_unified_cache_defaults` / `_setup_unified_cache`, run by tools/trtllm_writers) sets it to
`<root>/autotuner/cache.json` (line 68) and FlashInfer's workspace base to `<root>/flashinfer`
(line 72): one file for all ranks, their sections inside it. The #7738 writer turns that path into
`<root>/autotuner/cache.rank<r>.json` (tests/data/trtllm_writers/b35ac1b64368). A per-rank directory
`<root>/autotuner/rank-<r>/` or `<root>/flashinfer/rank-<r>` is in none of the TensorRT-LLM sources
read (issue 22 names it; none of them creates it): should a launcher give each rank one, its
`rank-<r>` name is still taken as the rank of a file's entries, and discover.py still looks there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Optional

from tiletune.core.archs import normalize_arch
from tiletune.core.records import Environment, InputProblem, Status, TuningRecord, freeze
from tiletune.readers.interface import ReadContext
from tiletune.readers.json_common import Item, finite_or_none, json_type_name, load_json, quoted_short
from tiletune.readers.keyparse import KeyParseError, Name, parse_literal

KIND = "trtllm"

_RANK_SECTION = re.compile(r"^rank_(\d+)$")
_RANK_FILE = re.compile(r"\.rank(\d+)\.json$")
_RANK_DIR = re.compile(r"^rank-(\d+)$")  # a per-rank folder, should a launcher make one (see the docstring)


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with TRT-LLM's `cache_data` / `metadata.lib_version`."""
    if not head.lstrip().startswith(b"{"):
        return False
    if b'"cache_data"' in head:
        return True
    return b'"metadata"' in head and any(m in head for m in (b'"lib_version"', b'"device_capability"', b'"runner_id"'))


def _environment(path: Path, meta: Any, ctx: ReadContext, problems: list[InputProblem]) -> Environment:
    if meta is None:  # nothing was there to lose
        problems.append(InputProblem(str(path), f"{path}: no metadata object; GPU unknown", fatal=False, loses_data=False))
        meta = {}
    elif not isinstance(meta, dict):  # what the file put there is thrown away: a loss
        problems.append(InputProblem(str(path), f"{path}: metadata is a JSON {json_type_name(meta)}, not an object; "
                                     "ignored, GPU unknown", fatal=False, loses_data=True))
        meta = {}
    arch, arch_source = None, None
    cap = meta.get("device_capability")
    if isinstance(cap, list) and len(cap) == 2 and all(isinstance(x, int) for x in cap):
        arch = normalize_arch(f"{cap[0]}.{cap[1]}")
        arch_source = "metadata.device_capability" if arch else None
    gpu = meta.get("device_name") if isinstance(meta.get("device_name"), str) else None
    return ctx.environment(
        gpu=gpu,
        arch=arch,
        arch_source=arch_source,
        metadata=tuple(sorted((str(k), str(v)) for k, v in meta.items())),
    )


def read(path: Path, ctx: ReadContext) -> Iterator[Item]:
    """Read every entry, shared and per-rank; `rank` is the section or file rank."""
    obj = load_json(path)
    if isinstance(obj, InputProblem):
        yield obj
        return
    src = str(path)
    if not isinstance(obj, dict):
        yield InputProblem(src, f"{path}: top level is a JSON {json_type_name(obj)}, expected an object", loses_data=True)
        return
    problems: list[InputProblem] = []
    env = _environment(path, obj.get("metadata"), ctx, problems)
    yield from problems
    m = _RANK_FILE.search(path.name) or _RANK_DIR.match(path.parent.name)
    file_rank = f"rank{m.group(1)}" if m else None
    sections: list[tuple[Optional[str], str, Any]] = []  # (rank, section name, entries)
    for k, v in obj.items():
        if k == "metadata":
            continue
        if (rm := _RANK_SECTION.match(k)) is not None:
            sections.append((f"rank{rm.group(1)}", k, v))
        elif isinstance(v, dict) and (k == "cache_data" or _holds_entries(v)):
            sections.append((file_rank, k, v))
    if not sections:
        yield InputProblem(src, f"{path}: no cache_data or rank_N section", fatal=True, loses_data=True)
        return
    n = 0
    while sections:
        rank, name, section = sections.pop(0)
        if not isinstance(section, dict):
            yield InputProblem(src, f"{path}: section {name!r} is a JSON {json_type_name(section)}, expected an object",
                               fatal=False, loses_data=True)
            continue
        for key, value in section.items():
            sm = _RANK_SECTION.match(key)
            if sm and isinstance(value, dict):
                inner = value["cache_data"] if isinstance(value.get("cache_data"), dict) else value
                sections.append((f"rank{sm.group(1)}", key, inner))
                continue
            n += 1
            yield from _entry(path, key, value, env, rank, name)
    if n == 0:
        yield InputProblem(src, f"{path}: no cache entries", fatal=False, loses_data=False)  # an empty cache is read whole


def _holds_entries(section: dict) -> bool:
    return any(isinstance(v, dict) and "tactic" in v for v in section.values())


def _entry(path: Path, key: str, value: Any, env: Environment, rank: Optional[str], section: str) -> Iterator[Item]:
    src = str(path)
    try:
        parsed = parse_literal(key)
    except KeyParseError as e:
        yield InputProblem(src, f"{path}: key {quoted_short(key)}: cannot parse it ({e}); entry skipped", fatal=False, loses_data=True)
        return
    if not (isinstance(parsed, tuple) and len(parsed) == 4 and isinstance(parsed[0], str) and isinstance(parsed[1], str)):
        yield InputProblem(src, f"{path}: key {quoted_short(key)}: expected (op, runner, runner id, shapes); entry skipped",
                           fatal=False, loses_data=True)
        return
    if not (isinstance(value, dict) and "tactic" in value):
        yield InputProblem(src, f"{path}: key {quoted_short(key)}: value is not {{runner_id, tactic, min_time}}; entry skipped",
                           fatal=False, loses_data=True)
        return
    op, runner, runner_hash, shapes = parsed
    tactic = value["tactic"]
    detail: list[tuple[str, Any]] = [("runner_hash", str(runner_hash))]
    if isinstance(tactic, str):  # #10336 on: repr(tactic)
        try:
            literal = parse_literal(tactic)
            if not isinstance(literal, Name):
                tactic = literal
        except KeyParseError:
            pass
    tactic = freeze(tactic) if isinstance(tactic, (list, dict)) else tactic
    if section not in ("cache_data",) and not _RANK_SECTION.match(section):
        detail.append(("section", section))
    if "runner_id" in value:
        detail.append(("runner_id", value["runner_id"]))
    min_time = value.get("min_time")
    if min_time is not None and finite_or_none(min_time) is None:
        detail.append(("min_time", str(min_time)))  # inf: the fallback entry, never timed
    yield TuningRecord(
        source=src, source_kind=KIND, op=op, runner=runner, tactic=tactic, status=Status.CHOSEN, env=env,
        shapes=shapes if isinstance(shapes, tuple) else None, raw_key=key, time_ms=finite_or_none(min_time),
        rank=rank, detail=tuple(sorted(detail)),
    )
