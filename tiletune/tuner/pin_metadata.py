"""Will FlashInfer load a pinned cache? Its `_metadata` against the environment that loads it.

FlashInfer's rule (`_classify_metadata_mismatches`, flashinfer/autotuner/autotuner.py:373 in the
0.7.4 wheel; the same since v0.6.16, hard-only in v0.6.7-0.6.15): for every key the running
environment's `_collect_metadata()` tracks, a saved value equal to the running one or "*" passes;
otherwise a saved None / "unknown" / "None", or a missing key, is a *soft* mismatch (the whole file
is ignored on load and replaced by the next tuned save), and any other difference is *hard* (ignored,
and never overwritten). One mismatching field ignores every entry. An indeterminate value is no
mismatch where the loading environment reports the same value: on the H200 (bench/h200_074),
FlashInfer 0.7.4 kept all 8 entries of a pinned cache whose cudnn_frontend_version was "unknown",
because its own environment said "unknown" too (no cuDNN frontend installed).

The keys a release tracks (`_collect_metadata`, read from each wheel with
`python3 -m tools.flashinfer_writers`' fixtures): flashinfer_version, cuda_version, cublas_version,
cudnn_version, gpu from 0.6.7; cudnn_frontend_version from 0.6.11; cutlass_dsl_version from 0.7.0,
which from 0.7.4 is an environment fingerprint (Python cache tag and SOABI, then torch,
apache-tvm-ffi and nvidia-cutlass-dsl* each as `name==version:sha256(RECORD, direct_url.json)`,
flashinfer/jit/cute_dsl_core.py `_get_cute_dsl_version`): only the very same install matches it.

`--env FILE` names the loading environment: a cache FlashInfer wrote there (its `_metadata`), a v2
store manifest, or a JSON object printed there by
`python -c "import json; from flashinfer.autotuner import _collect_metadata; print(json.dumps(_collect_metadata()))"`.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from packaging.version import Version

from tiletune.core.errors import TunerError
from tiletune.core.versions import parse_version

INDETERMINATE = (None, "unknown", "None")
ENV_COMMAND = ('python -c "import json; from flashinfer.autotuner import _collect_metadata; '
               'print(json.dumps(_collect_metadata()))" > env.json')
_TRACKED = (
    ("0.6.7", ("flashinfer_version", "cuda_version", "cublas_version", "cudnn_version", "gpu")),
    ("0.6.11", ("cudnn_frontend_version",)),
    ("0.7.0", ("cutlass_dsl_version",)),
)


def tracked_keys(version: Optional[str]) -> Optional[tuple[str, ...]]:
    """The `_metadata` keys release `version` compares on load (None: unknown or before 0.6.7)."""
    v = parse_version(version) if version else None  # (bounded: a 5,000-digit version is no version)
    if v is None or v < Version("0.6.7"):
        return None
    keys: tuple[str, ...] = ()
    for first, added in _TRACKED:
        if v >= Version(first):
            keys += added
    return keys


def classify(saved: Mapping[str, Any], current: Mapping[str, Any]) -> tuple[dict[str, tuple[Any, Any]], dict[str, tuple[Any, Any]]]:
    """(hard, soft) mismatches, each key -> (saved, current): FlashInfer's own rule (module docstring)."""
    hard: dict[str, tuple[Any, Any]] = {}
    soft: dict[str, tuple[Any, Any]] = {}
    for key, cur in current.items():
        s = saved.get(key)
        if s in (cur, "*"):
            continue
        (soft if s in INDETERMINATE else hard)[key] = (s, cur)
    return hard, soft


def load_env(path: Any) -> dict[str, str]:
    """The loading environment's metadata from --env FILE (see the module docstring)."""
    from tiletune.core import bounded_input
    from tiletune.core.errors import ReaderError

    try:
        obj = bounded_input.load_file(path, limit=64 << 20, what="--env file")
    except ReaderError as e:
        raise TunerError(f"{e} (--env)") from None
    if isinstance(obj, dict) and isinstance(obj.get("_metadata"), dict):
        obj = obj["_metadata"]
    if not (isinstance(obj, dict) and obj and all(isinstance(v, str) for v in obj.values())):
        raise TunerError(f"{path}: --env needs a FlashInfer cache, a v2 manifest or the JSON object "
                         f"_collect_metadata() returns (print it with: {ENV_COMMAND})")
    obj.pop("cache_schema", None)  # a manifest's own key, not the environment's
    return {str(k): str(v) for k, v in obj.items() if not str(k).startswith("measure_")}


def _short(v: Any) -> str:
    text = "missing" if v is None else str(v)
    return text if len(text) <= 60 else text[:40] + "…" + text[-12:]


def verdict(metadata: Mapping[str, Any], env: Optional[Mapping[str, Any]]) -> list[str]:
    """What the written `_metadata` means for loading it: with `env`, whether FlashInfer there will
    load it (and each field that differs); without, what it depends on."""
    if env is not None:
        hard, soft = classify(metadata, env)
        if not hard and not soft:
            return [f"FlashInfer {env.get('flashinfer_version', '?')} in the --env environment will load it: every "
                    f"_metadata field it compares matches ({', '.join(sorted(env))})"]
        fields = "; ".join(f"{k}: written {_short(a)} vs running {_short(b)}" for k, (a, b) in {**hard, **soft}.items())
        return [f"FlashInfer in the --env environment would IGNORE it (every entry): {fields}"
                + (" (soft: FlashInfer would also replace the file on its next tuned save)" if soft and not hard else "")]
    version = metadata.get("flashinfer_version")
    keys = tracked_keys(version if isinstance(version, str) else None)
    out = []
    if keys is None:
        out.append("its _metadata names no FlashInfer release tiletune knows the compared fields of; FlashInfer "
                   "loads it only where every field it tracks equals the running environment's")
    else:
        missing = [k for k in keys if k not in metadata]
        vague = [k for k in keys if k in metadata and metadata[k] in INDETERMINATE]
        out.append(f"FlashInfer loads it only where {', '.join(keys)} all equal the running environment's "
                   f"(the fields FlashInfer {version} compares); pass --env FILE from the server to check and "
                   f"stamp them ({ENV_COMMAND})")
        if missing:
            out.append("as written it is ignored by every FlashInfer that tracks " + ", ".join(missing)
                       + " (missing from the file), and replaced on its next tuned save")
        if vague:
            # FlashInfer compares the saved value with its own first: "unknown" == "unknown" loads
            out.append("where the loading environment reports " + ", ".join(vague) + " as anything but "
                       + " / ".join(sorted({repr(metadata[k]) if metadata[k] is not None else "null" for k in vague}))
                       + " (as written: indeterminate), FlashInfer ignores it and replaces it on its next tuned save")
    fp = metadata.get("cutlass_dsl_version")
    if isinstance(fp, str) and fp.startswith("cpython-") or (isinstance(fp, str) and "torch==" in fp):
        out.append("its cutlass_dsl_version is FlashInfer 0.7.4's environment fingerprint (Python ABI, "
                   "apache-tvm-ffi, torch and nvidia-cutlass-dsl with their RECORD hashes): only that same install matches it")
    return out
