"""What FlashInfer's cache writers put in a cache, as far as tiletune knows them, and what to do
with a part it does not know (a newer writer is not bad input).

Known, from the releases' own writers (tools/flashinfer_writers derives each release's bytes):
- `_metadata` keys: `_collect_metadata()` in flashinfer/autotuner.py (0.6.7-0.6.14) and
  flashinfer/autotuner/autotuner.py (0.6.15+): flashinfer_version, cuda_version, cublas_version,
  cudnn_version, gpu (0.6.7); cudnn_frontend_version (0.6.11); cutlass_dsl_version (0.7.0; from
  0.7.4 a fingerprint of the whole environment: Python cache tag and SOABI, then
  `name==version:sha256(RECORD, direct_url.json)` of torch, apache-tvm-ffi and every
  nvidia-cutlass-dsl* distribution, flashinfer/jit/cute_dsl_core.py `_get_cute_dsl_version`).
- v1 entry values: `[runner, tactic]`, `[runner, tactic, policy]` (0.7.0+), and 0.7.4's
  `[runner, tactic, policy, selection]` where `selection` is `AutoTuner._selection_record`:
  `{"time_ms", "runner_up_ms", "margin", "candidates"}` (winner time, fastest other candidate's
  time, `runner_up_ms / time_ms - 1`, candidates timed including the winner; from the first
  measurement, milliseconds rounded to 6 places; a negative margin: `tie_tolerance` kept an
  earlier-enumerated tactic over a faster one).
- v2 store (flashinfer/autotune_cache.py, 0.7.0+): manifest = the `_metadata` keys plus
  `cache_schema` and the `MeasurementPolicy.manifest_fields()` (`measure_execution_mode`,
  `measure_cold_l2`, `measure_timer`, `measure_graph_timing`); entry = `key`, `runner`, `tactic`,
  `profiling_policy`, `key_fields`.

A part outside these is kept verbatim in the entry's `detail["extras"]` (named by where it was:
`value[4]`, `selection.foo`, `entry.foo`) and named once per input in a note that loses nothing.
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

from tiletune.core.records import InputProblem, freeze

METADATA_KEYS = ("flashinfer_version", "cuda_version", "cublas_version", "cudnn_version",
                 "cudnn_frontend_version", "cutlass_dsl_version", "gpu")
MANIFEST_KEYS = METADATA_KEYS + ("cache_schema", "measure_execution_mode", "measure_cold_l2", "measure_timer",
                                 "measure_graph_timing")
SELECTION_KEYS = ("time_ms", "runner_up_ms", "margin", "candidates")
V2_ENTRY_KEYS = ("key", "runner", "tactic", "profiling_policy", "key_fields")

# how the view names these numbers: measured by FlashInfer, not by tiletune
RECORDED_BY = "recorded by FlashInfer's autotuner (the entry's selection record, save_configs)"


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        return float(v) if math.isfinite(v) else None
    except OverflowError:
        return None


def read_selection(value: Any) -> tuple[Optional[tuple[tuple[str, Any], ...]], dict[str, Any]]:
    """A v1 entry's fourth element -> (its known facts as sorted pairs, or None when it is not a
    selection record at all; the parts not understood, by name). A known key holding what its
    writer never writes there (a string time) is not understood: kept, not read."""
    if not isinstance(value, dict):
        return None, {"value[3]": freeze(value)}
    facts: list[tuple[str, Any]] = []
    extras: dict[str, Any] = {}
    for k, v in value.items():
        if k in ("time_ms", "runner_up_ms", "margin"):
            n = _number(v)
            if n is None and v is not None:
                extras[place("selection", k)] = freeze(v)
            else:
                facts.append((k, n))
        elif k == "candidates":
            if isinstance(v, int) and not isinstance(v, bool):
                facts.append((k, v))
            else:
                extras[place("selection", k)] = freeze(v)
        else:
            extras[place("selection", k)] = freeze(v)
    return tuple(sorted(facts)), extras


MAX_PLACES = 20  # distinct places a note names; past it they are counted only (a hostile file has millions)


def place(prefix: str, key: Any) -> str:
    """Where an unknown part was, for a one-line note: `prefix.key`, the key escaped and cut short
    unless it is a plain name (a key may hold newlines, escapes or megabytes)."""
    k = str(key)
    if not (k.isidentifier() and len(k) <= 60):
        k = json.dumps(k, ensure_ascii=True)
        k = k if len(k) <= 60 else k[:40] + "..." + k[-12:]
    return f"{prefix}.{k}" if prefix else k


class Unread:
    """What one input held that tiletune does not read: counted per place, named in one note."""

    def __init__(self) -> None:
        self.places: dict[str, int] = {}
        self.more = 0  # parts past MAX_PLACES distinct places

    def add(self, places: Any) -> None:
        for p in places:
            if p in self.places or len(self.places) < MAX_PLACES:
                self.places[p] = self.places.get(p, 0) + 1
            else:
                self.more += 1

    def note(self, source: str, what: str) -> Optional[InputProblem]:
        """One note for the input, or None when everything was understood. Loses nothing: every
        entry was read, and the parts named are kept verbatim (each entry's detail.extras, or the
        environment's metadata)."""
        if not self.places:
            return None
        parts = ", ".join(f"{p} ({n}x)" if n > 1 else p for p, n in sorted(self.places.items()))
        if self.more:
            parts += f" and {self.more} more part(s)"
        return InputProblem(source, f"{source}: {what} holds parts tiletune does not know (a newer FlashInfer "
                                    f"writer?): {parts}; every entry was read, and these are kept verbatim "
                                    "(entries: detail.extras; metadata: the environment's metadata)",
                            fatal=False, loses_data=False)


def unknown_metadata_keys(meta: Any, known: tuple[str, ...] = METADATA_KEYS) -> list[str]:
    """`_metadata` / manifest keys tiletune does not know (kept in Environment.metadata anyway), as
    note places (escaped, see `place`)."""
    if not isinstance(meta, dict):
        return []
    return sorted(place("", k) for k in meta if k not in known)
