"""The L2 state a timing was taken with (warm or cold), per record: decoded, inferred or unknown.

Why: the same tactic times several times faster from a warm L2 than from a cold one when its
operands fit in L2 (tiletune/model/l2.py), so the model must evaluate each entry in the state its
evidence was measured in, and say which and why.

Where it comes from, in this order:
- decoded: the input says it. A FlashInfer DEBUG log's `use_cold_l2_cache=True, ...` line (record
  detail `l2` / `l2_source`, logs/parser.py); a FlashInfer cache entry's profiling policy
  (`l2_cache_policy` "cold" | "hot").
- inferred: the input does not say, but its producer fixes it. FlashInfer: the op's TuningConfig in
  that release (tiletune/core/data/flashinfer_l2_policy.json, read from the sources by
  `python3 -m tools.l2_policy`); tiletune's own retry engines time with a warm L2 (the FlashInfer
  engine re-runs one set of inputs, tiletune/tuner/worker.py; the CUTLASS reproducers' `--l2`
  defaults to warm and the engine does not pass it, kernels/tt_common.hpp).
- unknown: the release (or the op's policy in it) is unknown. The model then assumes cold and
  widens its band down to the warm time (tiletune/model/perf.py).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from importlib import resources
from typing import Any, Optional, Sequence

from packaging.version import Version

from tiletune.core.records import TuningRecord
from tiletune.core.versions import parse_version
from tiletune.model.l2 import L2Fact

_POLICY_FILE = "flashinfer_l2_policy.json"
_POLICY_WORD = {"cold": "cold", "hot": "warm"}  # FlashInfer's cache policy words -> ours
_ENGINES = {
    "flashinfer": "tiletune's FlashInfer retry engine times every sample on the same inputs "
                  "(tiletune/tuner/worker.py)",
    "cutlass": "tiletune's CUTLASS retry engine runs the reproducers with their default --l2=warm "
               "(kernels/tt_common.hpp; the engine passes no --l2)",
}


UNKNOWN_NO_OP = L2Fact(None, "unknown", "the input does not say and no op is known")


@lru_cache(maxsize=1)
def policy() -> dict[str, Any]:
    """tiletune/core/data/flashinfer_l2_policy.json (generated; see its generated_by)."""
    text = resources.files("tiletune.core.data").joinpath(_POLICY_FILE).read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@lru_cache(maxsize=512)
def _version(text: Optional[str]) -> Optional[Version]:
    return parse_version(text) if text else None


@lru_cache(maxsize=4096)
def inferred_flashinfer(op: str, version_text: Optional[str]) -> L2Fact:
    """What FlashInfer `version_text` times `op` with, from the release table, or unknown and why."""
    v = _version(version_text)
    if v is None:
        why = "the FlashInfer release is unknown" if not version_text else f"FlashInfer version {version_text!r} is not a release number"
        return L2Fact(None, "unknown", f"{why}: which L2 state the autotuner timed {op or 'this op'} with depends on the release")
    doc = policy()
    releases = [_version(r) for r in doc["generated_by"]["releases"]]
    known = [r for r in releases if r is not None]
    option = _version(doc.get("option_from"))
    base = v.release[:3]
    if option is not None and Version(".".join(map(str, base))) < option:
        return L2Fact("warm", "inferred", f"inferred: FlashInfer {version_text}'s autotuner has no cold-L2 option "
                                          f"(use_cold_l2_cache arrived in {doc['option_from']}, PR #2663): warm L2")
    if known and v > known[-1]:
        return L2Fact(None, "unknown", f"FlashInfer {version_text} is newer than the last release the L2 table was "
                                       f"read from ({known[-1]}; tiletune/core/data/{_POLICY_FILE})")
    for rule in doc["rules"]:
        if rule["op"] != op:
            continue
        lo, hi = _version(rule["from"]), _version(rule["to"])
        if lo is None or hi is None or not (lo <= v <= hi):
            continue
        state = rule["state"]
        prs = ", ".join(f"#{n}" for n in rule.get("changed_by") or ())
        since = f" (PR {prs}, from {rule['from']})" if prs else f" (releases {rule['from']}-{rule['to']})"
        if state in ("warm", "cold"):
            return L2Fact(state, "inferred", f"inferred: FlashInfer {version_text} profiles {op} with a {state} L2{since}")
        if state == "mixed":
            return L2Fact(None, "unknown", f"FlashInfer {version_text} profiles {op} warm or cold depending on the "
                                           f"backends asked for{since}: the input does not say which")
        return L2Fact(None, "unknown", f"FlashInfer {version_text}: the L2 policy of {op} could not be read from its sources")
    return L2Fact(None, "unknown", f"{op or 'this op'} is not in the L2 table for FlashInfer {version_text} "
                                   f"(tiletune/core/data/{_POLICY_FILE})")


def _decoded(detail: tuple, metadata: tuple = ()) -> Optional[L2Fact]:
    for k, v in detail:
        if k == "l2" and v in ("warm", "cold"):
            src = next((s for kk, s in detail if kk == "l2_source"), "the input")
            return L2Fact(v, "decoded", f"decoded: {src} says the autotuner timed with a {v} L2")
        if k == "profiling_policy" and isinstance(v, tuple):
            for pair in v:
                if isinstance(pair, tuple) and len(pair) == 2 and pair[0] == "l2_cache_policy" and pair[1] in _POLICY_WORD:
                    return L2Fact(_POLICY_WORD[pair[1]], "decoded",
                                  f"decoded: the cache entry's profiling policy says l2_cache_policy={pair[1]}")
    for k, v in metadata:  # a 0.7.x managed store's manifest: a MeasurementPolicy forced it for every op
        if k == "measure_cold_l2" and v in ("True", "False"):
            return L2Fact("cold" if v == "True" else "warm", "decoded",
                          f"decoded: the store's manifest says measure_cold_l2={v} (forced for every op)")
    return None


class L2Reader:
    """The L2 fact of each record, memoised per distinct (source kind, op, version, detail)."""

    def __init__(self) -> None:
        self._memo: dict[tuple, tuple[L2Fact, tuple]] = {}

    def fact(self, record: TuningRecord) -> L2Fact:
        detail = record.detail
        key = (record.source_kind, record.op, record.env.flashinfer_version, id(detail))
        hit = self._memo.get(key)
        if hit is not None:
            return hit[0]
        f = self._fact(record)
        self._memo[key] = (f, detail)  # keeps `detail` alive: its id is not reused while memoised
        return f

    def _fact(self, record: TuningRecord) -> L2Fact:
        decoded = _decoded(record.detail, record.env.metadata)
        if decoded is not None:
            return decoded
        if record.source_kind == "ledger":
            engine = dict(record.detail).get("engine")
            if engine in _ENGINES:
                return L2Fact("warm", "inferred", f"inferred: {_ENGINES[engine]}")
            return L2Fact(None, "unknown", f"retry engine {engine!r}: its L2 state is not known")
        if record.source_kind == "trtllm":
            return L2Fact(None, "unknown", "a TensorRT-LLM cache does not say how it was timed: its autotuner times "
                                           "warm unless the op's TuningConfig sets use_cold_l2_cache (default False), "
                                           "and which ops do is not in the table")
        if not record.op:
            return UNKNOWN_NO_OP
        return inferred_flashinfer(record.op, record.env.flashinfer_version)


def l2_notes(analyzed: Sequence[Any]) -> tuple[str, ...]:
    """One line per (op, arch) with modelled entries: which L2 state their modelled times assume,
    how many entries each, and why (decoded lines are summarised, not listed). The wording per
    fact runs once per distinct one."""
    counts = _count_per_fact(analyzed)
    groups: dict[tuple, Counter] = {}
    for (op, arch, f), n in counts.items():
        why = f.basis
        if f.how == "decoded":
            why = "decoded from the input's use_cold_l2_cache lines" if "log line" in f.basis else f.basis
        groups.setdefault((op, arch), Counter())[(f.state, why)] += n
    out = []
    for (op, arch), c in groups.items():
        parts = [f"{n} {state or 'unknown (modelled cold, band down to warm)'}: {why}"
                 for (state, why), n in sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))]
        out.append(f"{op} ({arch or 'arch unknown'}): modelled times assume each entry's L2 state: " + "; ".join(parts))
    return tuple(out)


def _count_per_fact(analyzed: Sequence[Any]) -> dict[tuple, int]:
    """{(op, arch, fact): modelled entries}, keys in order of first appearance. Facts are shared
    objects (one per distinct reason), and a big cache's entries come in long runs sharing one
    fact, op and env: a run is counted by identity and its key built once (a key per entry cost
    ~25 ms per 50,000 entries). tests/model/test_l2_state.py pins it to a plain per-entry count."""
    counts: dict[tuple, int] = {}
    last_f: Any = None
    last_op: Any = None
    last_env: Any = None
    run = 0
    for ae in analyzed:
        a = ae.analysis
        if a is None:
            continue
        f = a.l2
        if f is None:
            continue
        record = ae.entry.record
        op, env = record.op, record.env
        if f is last_f and op is last_op and env is last_env:
            run += 1
            continue
        if run:
            key = (last_op, last_env.arch, last_f)
            counts[key] = counts.get(key, 0) + run
        last_f, last_op, last_env, run = f, op, env, 1
    if run:
        key = (last_op, last_env.arch, last_f)
        counts[key] = counts.get(key, 0) + run
    return counts


def model_state(fact: Optional[L2Fact]) -> Optional[str]:
    """The state the model evaluates with (None: unknown, modelled cold with a band down to warm)."""
    return None if fact is None else fact.state


__all__ = ["L2Fact", "L2Reader", "inferred_flashinfer", "l2_notes", "model_state", "policy"]
