"""Reader for FlashInfer tactics blocklists (the file FLASHINFER_TACTICS_BLOCKLIST points to).

Owns the format written by `TacticsBlocklist.save` (flashinfer/tactics_blocklist.py, v0.6.15rc1+,
unchanged in the 0.7.x wheels) and `flashinfer generate-tactics-blocklist`:

    {"_metadata": {<the cache's metadata fields>, "generated_at": "<UTC ISO-8601>", "generator_version": "1.0"},
     "invalid_tactics": {"<custom_op>::<RunnerClass>": [<tactic>, ...], ...}}

Each listed tactic becomes a BLOCKED record (the autotuner filters it out before profiling, so
it is never tried). The op is split from the runner on the LAST "::" because ops themselves
contain "::" (`trtllm::fused_moe::gemm1::MoERunner`). Tactics are ints or nested lists
(trtllm-gen `[tile_N, config]`), kept as tuples. Metadata values may be "*" (matches anything).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator, Union

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import InputProblem, Status, TuningRecord, freeze
from tiletune.readers.interface import ReadContext

KIND = "blocklist"

MAX_BYTES = 64 << 20  # real blocklists are KBs; refuse to json.load something enormous

# "invalid_tactics" as a top-level key, within the first 4 KiB (it follows a short _metadata)
_SNIFF = re.compile(rb'"invalid_tactics"\s*:\s*\{')


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with a top-level-looking `"invalid_tactics": {` key. Caches never have that key."""
    if path.is_dir():
        return False
    stripped = head.lstrip()
    if not stripped.startswith(b"{"):
        return False
    return _SNIFF.search(head) is not None


def _problem(source: str, message: str, fatal: bool = True) -> InputProblem:
    # every blocklist problem drops something the file holds (the file, a key, a tactic, its _metadata)
    return InputProblem(source, f"{source}: {message}", fatal=fatal, loses_data=True)


def read(path: Path, ctx: ReadContext) -> Iterator[Union[TuningRecord, InputProblem]]:
    """BLOCKED records for every tactic in the file; one-line problems for anything malformed."""
    source = str(path)
    try:
        data = bounded_input.load_file(path, limit=MAX_BYTES, what="blocklist", why=" (real blocklists are KBs)")
    except ReaderError as e:
        yield InputProblem(source, str(e), fatal=True, loses_data=True)
        return
    if not isinstance(data, dict):
        yield _problem(source, f"top level is a JSON {type(data).__name__}, expected an object with \"invalid_tactics\"")
        return
    invalid = data.get("invalid_tactics")
    if not isinstance(invalid, dict):
        what = "missing" if invalid is None else f"a JSON {type(invalid).__name__}"
        yield _problem(source, f"\"invalid_tactics\" is {what}, expected an object of \"<op>::<Runner>\": [tactics]")
        return

    meta_raw = data.get("_metadata")
    meta: dict[str, Any] = meta_raw if isinstance(meta_raw, dict) else {}
    if meta_raw is not None and not isinstance(meta_raw, dict):
        yield _problem(source, "\"_metadata\" is not an object; environment unknown", fatal=False)
    def known(k: str) -> Any:
        v = meta.get(k)
        return v if isinstance(v, str) and v not in ("*", "", "unknown") else None  # "*" matches any value

    env = ctx.environment(
        flashinfer_version=known("flashinfer_version"),
        version_source="metadata.flashinfer_version",
        gpu=known("gpu"),
        arch_source="metadata.gpu",
        cuda_version=known("cuda_version"),
        metadata=tuple(sorted((str(k), str(v)) for k, v in meta.items())),
    )
    wildcard = sorted(k for k, v in meta.items() if v == "*")
    common: dict[str, Any] = {}
    for k in ("generated_at", "generator_version"):
        if isinstance(meta.get(k), str):
            common[k] = meta[k]
    if wildcard:
        common["metadata_wildcards"] = wildcard

    for key, tactics in invalid.items():
        op, sep, runner = key.rpartition("::")
        if not sep or not op or not runner:
            yield _problem(source, f"key {key!r}: expected \"<op>::<RunnerClass>\"", fatal=False)
            continue
        if not isinstance(tactics, list):
            yield _problem(source, f"key {key!r}: expected a list of tactics, got a JSON {type(tactics).__name__}", fatal=False)
            continue
        seen: dict[Any, int] = {}
        for t in tactics:
            if isinstance(t, (dict, float, bool)) or t is None:
                yield _problem(source, f"key {key!r}: tactic {json.dumps(t)[:60]} is not an int, string or list", fatal=False)
                continue
            ft = freeze(t)
            seen[ft] = seen.get(ft, 0) + 1
        for tactic, n in seen.items():
            yield TuningRecord(
                source=source,
                source_kind=KIND,
                op=op,
                runner=runner,
                tactic=tactic,
                status=Status.BLOCKED,
                env=env,
                raw_key=key,
                error="listed in a tactics blocklist: the autotuner skips it without trying",
                count=n,
                detail=freeze(common),
            )
