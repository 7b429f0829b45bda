"""TensorRT-LLM's own autotuner cache (`tensorrt_llm/_torch/autotuner.py`, `AutoTunerProfilingCache`).

Format (`_serialize_cache_to_json`, NVIDIA/TensorRT-LLM#7738 onwards; `json.dump(..., indent=2, default=str)`):

    {"metadata": {"lib_version": "<tensorrt_llm.__version__>", "creation_timestamp": <unix s>,
                  "device_name": "<torch.cuda.get_device_name()>", "device_capability": [maj, min]},
     "cache_data": {"<str((custom_op, runner_class, runner hash / unique_id, nearest_profile))>":
                      {"runner_id": <index into that call's runners list>, "tactic": <any>,
                       "min_time": <ms, the winner's average; Infinity for the fallback>}}}

Files and ranks: #7738 wrote one file per rank, `<cache path stem>.rank{N}.json`; #10336 merged all
ranks into the one `TLLM_AUTOTUNER_CACHE_PATH` file (with a sibling `.lock`), keeping the shared
entries in `cache_data` and per-rank (INDEPENDENT-strategy) entries in `rank_{N}` sections that
#14441/#15626 merge with `setdefault(f"rank_{rank}", {}).update(...)`. The reader accepts a
`rank_{N}` section either at the top level or inside `cache_data`, holding entries directly or
under its own `cache_data`, so both spellings of that nesting are read.

Not FlashInfer: no flashinfer_version; the arch comes from `device_capability`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Optional

from tiletune.archs import normalize_arch
from tiletune.readers.flashinfer_v1 import Item, _json_type, _short, finite_or_none, load_json
from tiletune.readers.interface import ReadContext
from tiletune.readers.keyparse import KeyParseError, parse_literal
from tiletune.records import Environment, InputProblem, Status, TuningRecord, freeze

KIND = "trtllm"

_RANK_SECTION = re.compile(r"^rank_(\d+)$")
_RANK_FILE = re.compile(r"\.rank(\d+)\.json$")


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with TRT-LLM's `cache_data` / `metadata.lib_version`."""
    if not head.lstrip().startswith(b"{"):
        return False
    return b'"cache_data"' in head or (b'"metadata"' in head and b'"lib_version"' in head)


def _environment(path: Path, meta: Any, ctx: ReadContext, problems: list[InputProblem]) -> Environment:
    if not isinstance(meta, dict):
        problems.append(InputProblem(str(path), f"{path}: no metadata object; GPU unknown", fatal=False))
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
        yield InputProblem(src, f"{path}: top level is a JSON {_json_type(obj)}, expected an object")
        return
    problems: list[InputProblem] = []
    env = _environment(path, obj.get("metadata"), ctx, problems)
    yield from problems
    m = _RANK_FILE.search(path.name)
    file_rank = f"rank{m.group(1)}" if m else None
    sections: list[tuple[Optional[str], Any]] = []
    if "cache_data" in obj:
        sections.append((file_rank, obj["cache_data"]))
    for k, v in obj.items():
        if (rm := _RANK_SECTION.match(k)) is not None:
            sections.append((f"rank{rm.group(1)}", v))
    if not sections:
        yield InputProblem(src, f"{path}: no cache_data section", fatal=True)
        return
    n = 0
    while sections:
        rank, section = sections.pop(0)
        if not isinstance(section, dict):
            yield InputProblem(src, f"{path}: section for {rank or 'shared entries'} is a JSON {_json_type(section)}, expected an object", fatal=False)
            continue
        for key, value in section.items():
            sm = _RANK_SECTION.match(key)
            if sm and isinstance(value, dict):
                inner = value.get("cache_data", value) if isinstance(value.get("cache_data"), dict) else value
                sections.append((f"rank{sm.group(1)}", inner))
                continue
            n += 1
            yield from _entry(path, key, value, env, rank)
    if n == 0:
        yield InputProblem(src, f"{path}: no cache entries", fatal=False)


def _entry(path: Path, key: str, value: Any, env: Environment, rank: Optional[str]) -> Iterator[Item]:
    src = str(path)
    try:
        parsed = parse_literal(key)
    except KeyParseError as e:
        yield InputProblem(src, f"{path}: key {_short(key)}: cannot parse it ({e}); entry skipped", fatal=False)
        return
    if not (isinstance(parsed, tuple) and len(parsed) == 4 and isinstance(parsed[0], str) and isinstance(parsed[1], str)):
        yield InputProblem(src, f"{path}: key {_short(key)}: expected (op, runner, runner id, shapes); entry skipped", fatal=False)
        return
    if not (isinstance(value, dict) and "tactic" in value):
        yield InputProblem(src, f"{path}: key {_short(key)}: value is not {{runner_id, tactic, min_time}}; entry skipped", fatal=False)
        return
    op, runner, runner_hash, shapes = parsed
    tactic = value["tactic"]
    tactic = freeze(tactic) if isinstance(tactic, (list, dict)) else tactic
    detail: list[tuple[str, Any]] = [("runner_hash", str(runner_hash))]
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
