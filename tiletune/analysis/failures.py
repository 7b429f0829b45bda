"""Failures: every failed attempt of one (arch, version, op, runner, tactic) and diagnosis class,
across all inputs, becomes one `results.Failure` with its error texts counted, the shape buckets it failed for, the
model's view of it, and the reason `explain_failure` gives.

`explain_failure` weighs the evidence (error text, catalog known failures, JIT modules that
never built) against the shared-memory model. The evidence always wins: when a tactic failed
but the model says its tile fits, the reason says the cause is not explained by shared memory
instead of blaming it.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import msgspec

from tiletune import catalogs
from tiletune.analysis.model_port import ModelPort
from tiletune.analysis.results import AnalyzedEntry, Failure, FailureReason
from tiletune.core.records import Decoded, Entry, Problem, Status, TileConfig, Undecoded
from tiletune.model.perf import ModelResult

_FailKey = tuple  # (arch, version, op, runner, tactic, source group, kernel, diagnosis class)


# Texts that mean "there is no kernel for this tile", shared-memory numbers and the short form of
# an error all come from the one error-text vocabulary (tiletune.core.error_text), imported where a
# failure's text is read: a run without failures never compiles its patterns.
_SMEM_WORDS = ("shared memory", "smem")
# Failure classes worth naming in a runtime reason.
_KIND_PREFIX = {
    "can_implement": "can_implement rejected the problem: ",
    "illegal_access": "illegal memory access (sticky CUDA error): ",
    "illegal_instruction": "illegal instruction (sticky CUDA error): ",
    "out_of_memory": "out of memory: ",
    "cuda_error": "CUDA error: ",
    "launch_failure": "launch failure: ",
    "initialize": "initialize failed: ",
    "tma_descriptor": "TMA descriptor rejected: ",
    "no_kernel_image": "no kernel image for this arch: ",
    "wrong_results": "wrong results: ",
    "timeout": "timed out: ",
}


def is_info_skip(f: Failure) -> bool:
    """An INFO 'Skipped N unsupported tactic(s)' count (no tactic named): the autotuner skipped tactics that
    cannot run here and went on. Views show these as skips, never as failures, so that the header, the
    tables and the verdicts say the same (the JSON keeps the record as it was read)."""
    from tiletune.readers.logs.grammar import UNNAMED_FAILURES

    return f.tactic is None and f.error == UNNAMED_FAILURES


def is_skip_record(r: Any) -> bool:
    """A record that holds such a count (see `is_info_skip`)."""
    return r.status is Status.FAILED and r.tactic is None and r.detail_dict().get("skipped_per_profile") is not None


def _fmt_bytes(n: int) -> str:
    return f"{n:,} B"


def explain_failure(
    *,
    errors: Sequence[str],
    analysis: Optional[ModelResult],
    known_failure: Optional[str] = None,
    jit_not_built: Optional[str] = None,
    detail: Optional[Mapping[str, Any]] = None,
    diagnosis: Optional[str] = None,
) -> "FailureReason":
    """The reason behind a failure: error text first, then catalog / JIT facts, then the model.

    `errors` are the distinct error texts, most frequent first; `detail` is the record's detail
    (a log reader may have parsed `smem_need`/`smem_limit` out of the text already); `diagnosis`
    the failure's class (`diagnosis_class`), named in a runtime reason.
    """
    from tiletune.core import error_text

    text = errors[0] if errors else ""
    detail = detail or {}
    model_fits = analysis.smem.fits if analysis is not None else None

    need_limit = None
    # the log reader parses "(kernel needs N bytes ..., limit is M bytes)" into these keys
    dn, dl = detail.get("smem_needed_bytes"), detail.get("smem_limit_bytes")
    if isinstance(dn, int) and isinstance(dl, int):
        need_limit = (dn, dl)
    for t in errors:
        if need_limit is None:
            need_limit = error_text.smem_need_limit(t)
    if need_limit is not None:
        need, limit = need_limit
        summary = f"shared memory: needs {_fmt_bytes(need)}, per-block limit {_fmt_bytes(limit)} (from the error text)"
        disagrees = model_fits is True and need > limit
        if analysis is not None and analysis.smem.shared_storage_bytes is not None:
            summary += f"; model estimated {_fmt_bytes(analysis.smem.shared_storage_bytes)}"
            if disagrees:
                summary += " and says it fits: the model underestimates this kernel, the error text wins"
        return FailureReason(kind="smem", summary=summary, basis="error text", need_bytes=need, limit_bytes=limit,
                             model_disagrees=disagrees)

    if known_failure:
        return FailureReason(kind="not_instantiated", summary=f"never instantiated: {known_failure}", basis="catalog")
    low = text.lower()
    kind_from_log = detail.get("failure_kind")  # the log reader's coarse class of the same text
    # the retry ledger prefixes its diagnosis class ("not_instantiated: tactic 99 out of range ...")
    kind_from_text = error_text.classify(text)[0] if text else None
    if kind_from_log is None and kind_from_text is not None:
        kind_from_log = kind_from_text.value
    if (kind_from_log == "not_instantiated" or low.startswith("not_instantiated")
            or kind_from_text in (error_text.ErrorClass.NOT_INSTANTIATED, error_text.ErrorClass.NO_KERNEL_IMAGE)):
        return FailureReason(kind="not_instantiated", summary=f"no kernel for this tile: {error_text.short_error(text, 240)}", basis="error text")
    if jit_not_built:
        return FailureReason(
            kind="not_instantiated",
            summary=f"JIT module {jit_not_built} never finished building; {error_text.short_error(text)}",
            basis="jit workspace",
        )

    if analysis is not None and analysis.smem.verdict in ("does_not_build", "overflows_at_initialize"):
        smem_need, smem_limit = analysis.smem.shared_storage_bytes, analysis.smem.limit_bytes
        what = "does not build (fewer than 2 stages)" if analysis.smem.verdict == "does_not_build" else "overflows at initialize"
        nums = f": needs {_fmt_bytes(smem_need)} > limit {_fmt_bytes(smem_limit)}" if smem_need is not None and smem_limit is not None else ""
        err = f"; error text: {error_text.short_error(text)}" if text else ""
        return FailureReason(
            kind="smem",
            summary=f"shared memory: tile {what}{nums} (model){err}",
            basis="model",
            need_bytes=smem_need,
            limit_bytes=smem_limit,
        )
    if model_fits is True:
        assert analysis is not None
        fits = ""
        if analysis.smem.shared_storage_bytes is not None and analysis.smem.limit_bytes is not None:
            fits = f": {_fmt_bytes(analysis.smem.shared_storage_bytes)} fits in {_fmt_bytes(analysis.smem.limit_bytes)}"
        said = f"{error_text.short_error(text)}; " if text else ""
        mentions_smem = any(w in low for w in _SMEM_WORDS)
        return FailureReason(
            kind="runtime",
            summary=f"{said}not explained by shared memory (model says the tile fits{fits})"
            + ("; the error text mentions shared memory" if mentions_smem else ""),
            basis="error text" if text else "model",
            need_bytes=analysis.smem.shared_storage_bytes,
            limit_bytes=analysis.smem.limit_bytes,
            model_disagrees=True,
        )
    if text:
        prefix = _KIND_PREFIX.get(str(kind_from_log), "") or _KIND_PREFIX.get(str(diagnosis), "")
        return FailureReason(kind="runtime", summary=prefix + error_text.short_error(text, 240), basis="error text")
    return FailureReason(kind="unknown", summary="no error text recorded and no model verdict", basis="none")


# --- verdicts ----------------------------------------------------------------------------------


def not_built_ops(entries: Iterable[Entry]) -> dict[tuple[Optional[str], str], str]:
    """(arch, op) -> module name for JIT modules that never finished building."""
    out: dict[tuple[Optional[str], str], str] = {}
    not_built = Status.NOT_BUILT  # (a local: this loop runs once per entry)
    for e in entries:
        r = e.record
        if r.status is not_built:
            module = r.detail_dict().get("module") or Path(r.source).name
            out.setdefault((r.env.arch, r.op), str(module))
    return out


def diagnosis_class(error: Optional[str], detail: Mapping[str, Any], memo: dict) -> Optional[str]:
    """The kind of one failed attempt, so that kinds are never merged into one row: what the error
    text says (tiletune.core.error_text's class, the same one for a text everywhere), else what the
    source said (a retry ledger's diagnosis: wrong_results, timeout, ...; a log reader's
    failure_kind), else None. `memo` holds each distinct text's class (a log repeats its texts)."""
    text = (error or "").strip()
    if text:
        cls = memo.get(text, memo)
        if cls is memo:
            from tiletune.core import error_text

            found = error_text.classify(text)[0]
            cls = memo[text] = None if found is None else found.value
        if cls is not None:
            return str(cls)
    stated = detail.get("diagnosis") or detail.get("failure_kind")
    return str(stated) if stated else None


def aggregate_failures(
    analyzed: Sequence[AnalyzedEntry], port: ModelPort, jit_not_built: Mapping[tuple[Optional[str], str], str],
    group_of: Optional[Mapping[str, str]] = None,
) -> Iterable[Failure]:
    """One Failure per (arch, version, op, runner, tactic), source group (`group_of`: input ->
    group name; inputs of two servers are never merged into one row) and diagnosis class (a wrong
    result, an out-of-memory and a timeout of one tactic are three rows: `diagnosis_class`)."""
    group_of = group_of or {}
    groups: "OrderedDict[_FailKey, list[AnalyzedEntry]]" = OrderedDict()
    passed: set[_FailKey] = set()
    classes: dict = {}
    failed, passed_ = Status.FAILED, Status.PASSED  # (locals: this loop runs once per entry)
    for a in analyzed:
        r = a.entry.record  # (not the `record` property: this loop runs once per entry)
        status = r.status
        if status is failed or status is passed_:
            key: _FailKey = (r.env.arch, r.env.flashinfer_version, r.op, r.runner, r.tactic, group_of.get(r.source),
                             None if r.tactic is not None else _untacticked_kernel(r))
            if status is failed:
                groups.setdefault(key + (diagnosis_class(r.error, r.detail_dict(), classes),), []).append(a)
            else:
                passed.add(key)
    for key, items in groups.items():
        arch, version, op, runner, tactic, group, _kernel, diagnosis = key
        errors: Counter[str] = Counter()
        sources: list[str] = []
        problems: list[Problem] = []
        count = 0
        for a in items:
            r = a.record
            count += r.count
            errors[(r.error or "").strip()] += r.count
            if r.source not in sources:
                sources.append(r.source)
            if a.entry.problem is not None and a.entry.problem not in problems:
                problems.append(a.entry.problem)
        first = items[0]
        config = first.config or recorded_config(first.record)
        analysis = next((a.analysis for a in items if a.analysis is not None), None)
        if analysis is None and config is not None and problems:
            analysis, _ = port.analyze(problems[0], config, arch, first.record.env.gpu, port.l2_of(first.entry))
        decode_note = None
        known = None
        if isinstance(first.entry.decode, Undecoded):
            decode_note = first.entry.decode.reason
        elif isinstance(first.entry.decode, Decoded):
            known = _known_failure(first.entry.decode)
        ordered = tuple(sorted(((t, n) for t, n in errors.items() if t), key=lambda x: (-x[1], x[0])))
        reason = explain_failure(
            errors=[t for t, _ in ordered],
            analysis=analysis,
            known_failure=known,
            jit_not_built=_module_for(jit_not_built, arch, op),
            detail=first.record.detail_dict(),
            diagnosis=diagnosis,
        )
        yield Failure(
            op=op,
            runner=runner,
            tactic=tactic,
            arch=arch,
            flashinfer_version=version,
            config=config,
            decode_note=decode_note,
            count=count,
            errors=ordered,
            sources=tuple(sources),
            reason=reason,
            analysis=analysis,
            passed_later=key[:7] in passed,
            problems=tuple(problems),
            not_cutlass=isinstance(first.entry.decode, Undecoded) and first.entry.decode.not_a_cutlass_tactic and config is None,
            group=group,
            diagnosis=diagnosis,
            autotuner="TensorRT-LLM" if all(_timed_by_trtllm(a.record) for a in items) else None,
        )


def _untacticked_kernel(r: Any) -> Any:
    """Which kernel a record with no tactic tried: a retry ledger's attempt of a tile that no
    autotuner numbered (a CUTLASS grid target) records the config it built and its own key. Two
    such attempts of one op and runner are different kernels: one passing says nothing of the other."""
    detail = r.detail_dict()
    return detail.get("config") or detail.get("key")


def recorded_config(r: Any) -> Optional[TileConfig]:
    """The config a retry ledger's attempt with no tactic records as built (no catalog decodes a
    tactic it does not have); None for anything else or a config this version cannot read."""
    if r.source_kind != "ledger" or r.tactic is not None:
        return None
    raw = r.detail_dict().get("config")
    if not isinstance(raw, tuple):
        return None
    try:
        return msgspec.convert(dict(raw), TileConfig)  # (a frozen dict: its (key, value) pairs)
    except (msgspec.ValidationError, TypeError, ValueError):
        return None


def _timed_by_trtllm(r: Any) -> bool:
    """A record of TensorRT-LLM's own torch autotuner: its cache (readers/trtllm.py) or its log lines
    (readers/logs/trtllm_text.py, whose records say `time_source` "TensorRT-LLM autotuner ...")."""
    return r.source_kind == "trtllm" or str(r.detail_dict().get("time_source", "")).startswith("TensorRT-LLM autotuner")


def _module_for(not_built: Mapping[tuple[Optional[str], str], str], arch: Optional[str], op: str) -> Optional[str]:
    """The unbuilt JIT module serving `op` on `arch`; a module's op may be the family
    ("trtllm::fused_moe") of the tuned op ("trtllm::fused_moe::gemm1")."""
    hit = not_built.get((arch, op))
    if hit is not None:
        return hit
    for (a, o), module in not_built.items():
        if a == arch and op.startswith(o + "::"):
            return module
    return None


def _known_failure(decoded: Decoded) -> Optional[str]:
    try:
        return catalogs.known_failure(decoded)
    except Exception:  # noqa: BLE001 - a catalog hiccup must not hide the failure itself
        return None



__all__ = ["aggregate_failures", "diagnosis_class", "not_built_ops"]
