"""Choosing what to re-attempt: decoded entries (or an explicit shape) -> RetryTargets.

Default: every (op, runner, tactic, problem) whose evidence says it failed or was blocklisted, or
that an earlier retry could not start (a ledger's engine_error, status not_run).
`all_statuses` takes every entry with a concrete tactic. `ops` / `tactics` narrow the set.
`changed_env` keeps only failures recorded under a different environment than `current` (any
identity field known on both sides differs); `since_driver` only those recorded under another
driver. Entries the same target appears in are merged (their errors are kept as
`previous_error`, the first one wins).

Fused-MoE entries: the GEMMs' operand dtype (problem.dtype_a/b) comes from the catalog variants
the key leaves (`--dtype` narrows keys that record none), and an ambiguous tactic is pinned to a
tile when every remaining variant's list gives the same one, so the CUTLASS engine can build it.

Keys are human-readable and stable across runs: `op|runner|tactic|shape|dtype`, so a resumed
run recognises what it already did.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set

from msgspec import structs

from tiletune.core.errors import UsageError
from tiletune.core.records import Entry, Problem, Status, TuningRecord, to_jsonable
from tiletune.core.vocabulary import FUSED_MOE_OPS, short_dtype, torch_dtype_name
from tiletune.tuner.engine import RetryTarget
from tiletune.tuner.fingerprint import IDENTITY_FIELDS, same_value

# what a retry takes by default: failed, blocklisted, and what an earlier retry could not start
FAILED_STATUSES = (Status.FAILED, Status.BLOCKED, Status.NOT_RUN)


def target_key(op: str, runner: str, tactic: Any, problem: Optional[Problem], dtype: Optional[str]) -> str:
    """`fp8_gemm|CublasFp8GemmRunner|3|1x128x4096x4096|bfloat16` (shape is batch x M x N x K)."""
    shape = f"{problem.batch}x{problem.m}x{problem.n}x{problem.k}" if problem else "?"
    tac = _tactic_text(tactic)
    return f"{op}|{runner}|{tac}|{shape}|{dtype or '?'}"


def _tactic_text(tactic: Any) -> str:
    v = to_jsonable(tactic)
    return str(v).replace(" ", "") if isinstance(v, list) else str(v)


MAX_TACTICS = 100_000  # what --tactic may name in all: a range is expanded, so it is capped


def _shown(text: str) -> str:
    return text if len(text) <= 40 else text[:18] + "..." + text[-18:]


def parse_tactics(text: Optional[str]) -> Optional[List[Any]]:
    """'3' / '0-7' / '1,4,9-11' -> [ints]; None -> None. Non-integer tactics are matched as text."""
    if text is None:
        return None
    out: List[Any] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(-?\d+)-(\d+)", part)
        if m:
            if max(len(m.group(1)), len(m.group(2))) > 18:
                raise UsageError(f"--tactic: {_shown(part)} is not a tactic range tiletune can take (numbers over 18 digits)")
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise UsageError(f"--tactic: empty range {part!r}")
            if hi - lo + 1 + len(out) > MAX_TACTICS:
                raise UsageError(f"--tactic: {part} names {hi - lo + 1:,} tactics; at most {MAX_TACTICS:,} "
                                 "(catalogs hold a few hundred per runner)")
            out.extend(range(lo, hi + 1))
        elif re.fullmatch(r"-?\d+", part):
            if len(part) > 19:
                raise UsageError(f"--tactic: {_shown(part)} is not a tactic (over 18 digits)")
            out.append(int(part))
        else:
            out.append(part)
    if not out:
        raise UsageError("--tactic: no tactic given")
    return out


def _dtype_of(entry: Entry) -> Optional[str]:
    """Output dtype for the error bound: the problem's, else the last dtype in the key's extras."""
    p = entry.problem
    extras = entry.record.extras or ()
    dtypes = [str(x).replace("torch.", "") for x in extras if "float" in str(x) or "int" in str(x)]
    if dtypes:  # the key's own torch dtype is the most exact ("float8_e5m2" vs the short "fp8")
        return dtypes[-1]
    recorded = entry.record.detail_dict().get("dtype")  # ledger records carry the attempt's dtype
    if isinstance(recorded, str):
        return torch_dtype_name(recorded)
    if p is not None and p.dtype_out:
        return torch_dtype_name(p.dtype_out)
    return None


def _problem_with_dtypes(entry: Entry) -> Optional[Problem]:
    """Fill dtype_a/b/out from the key's extras when the decoder left them empty (fp8_gemm keys hold them)."""
    p = entry.problem
    if p is None:
        return None
    extras = [str(x).replace("torch.", "") for x in (entry.record.extras or ()) if isinstance(x, str)]
    if len(extras) == 3 and all("float" in x or "int" in x for x in extras):
        return structs.replace(
            p,
            dtype_a=p.dtype_a or extras[0],
            dtype_b=p.dtype_b or extras[1],
            dtype_out=p.dtype_out or extras[2],
        )
    return p


def _env_changed(record: TuningRecord, current: Mapping[str, Any], *, driver_only: bool) -> bool:
    """Does the record's environment differ (on a field known on both sides) from `current`?"""
    env = record.env
    detail = record.detail_dict()
    raw_env = detail.get("env")  # ledger records: the fingerprint, frozen into sorted pairs
    recorded: Dict[str, Any] = {}
    if isinstance(raw_env, dict):
        recorded = dict(raw_env)
    elif isinstance(raw_env, tuple) and all(isinstance(x, tuple) and len(x) == 2 for x in raw_env):
        recorded = {str(k): v for k, v in raw_env}
    recorded.setdefault("driver", env.driver)
    recorded.setdefault("gpu", env.gpu)
    recorded.setdefault("flashinfer", env.flashinfer_version)
    recorded.setdefault("cuda_runtime", env.cuda_version)
    fields = ("driver",) if driver_only else IDENTITY_FIELDS  # clocks etc. do not make another environment
    for k in fields:
        a, b = recorded.get(k), current.get(k)
        if a is not None and b is not None and not same_value(a, b):
            return True
    return False


def _moe_kernel_types(entry: Entry, moe_dtype: Optional[str]) -> tuple:
    """(GEMM dtype, config) for a fused-MoE entry: the (act, weight) pair its catalog variants leave
    (narrowed by --dtype when the key does not say), and the tile when every remaining variant's
    list gives the same one. (None, entry.config) when nothing narrows it.

    The GEMM dtype is the CUTLASS kernel's, not the layer input's: an NVFP4 layer fed bf16
    activations quantizes them before GEMM1, so its GEMMs are nvfp4 x nvfp4.
    """
    from tiletune import catalogs
    from tiletune.catalogs import moe as moe_catalog

    rec = entry.record
    variants = moe_catalog.variants_for(rec, entry.problem)
    if moe_dtype:
        want = short_dtype(moe_dtype.lower()) or moe_dtype.lower()
        variants = [v for v in variants if want in (v.get("act"), v.get("weight"))]
    pairs = {(v.get("act"), v.get("weight")) for v in variants}
    if len(pairs) != 1:
        return None, entry.config
    act, weight = next(iter(pairs))
    config = entry.config
    version, arch = rec.env.flashinfer_version, rec.env.arch
    if config is None and version and arch:
        found = set()
        for v in variants:
            for cat in catalogs.lookup(version, arch, rec.op, rec.runner, v):
                if v and not set(v).issuperset(cat.variant):
                    continue  # exactly this variant (as decode matches it): plain fp8 x mxfp4 is not the humming list
                d = catalogs.resolve(cat, rec.tactic)
                found.add(getattr(d, "config", None))
        if len(found) == 1:
            config = next(iter(found))  # None when no list resolves it
    return (weight if act == weight else f"{act}x{weight}"), config


def targets_from_entries(
    entries: Iterable[Entry],
    *,
    all_statuses: bool = False,
    ops: Optional[Sequence[str]] = None,
    tactics: Optional[Sequence[Any]] = None,
    changed_env: bool = False,
    since_driver: bool = False,
    current_env: Optional[Mapping[str, Any]] = None,
    moe_dtype: Optional[str] = None,
) -> List[RetryTarget]:
    """Pick and deduplicate what to re-attempt from decoded entries (order of first appearance)."""
    if (changed_env or since_driver) and current_env is None:
        raise UsageError("--changed-env / --since-driver need this machine's fingerprint")
    wanted_tactics: Optional[Set[str]] = {_tactic_text(t) for t in tactics} if tactics is not None else None
    by_key: Dict[str, RetryTarget] = {}
    for entry in entries:
        rec = entry.record
        if rec.tactic is None:
            continue
        if not all_statuses and rec.status not in FAILED_STATUSES:
            continue
        if ops and rec.op not in ops:
            continue
        if wanted_tactics is not None and _tactic_text(rec.tactic) not in wanted_tactics:
            continue
        if (changed_env or since_driver) and not _env_changed(rec, current_env or {}, driver_only=since_driver):
            continue
        problem = _problem_with_dtypes(entry)
        dtype = _dtype_of(entry)
        config = entry.config
        if rec.op in FUSED_MOE_OPS and problem is not None:
            gemm_dtype, config = _moe_kernel_types(entry, moe_dtype)
            if gemm_dtype:  # the GEMMs' operand dtype, for the CUTLASS reproducer
                problem = structs.replace(problem, dtype_a=gemm_dtype, dtype_b=gemm_dtype)
        key = target_key(rec.op, rec.runner, rec.tactic, problem, dtype)
        if key in by_key:
            if by_key[key].previous_error is None and rec.error:
                by_key[key] = structs.replace(by_key[key], previous_error=rec.error)
            continue
        by_key[key] = RetryTarget(
            key=key,
            op=rec.op,
            runner=rec.runner,
            tactic=rec.tactic,
            arch=rec.env.arch,
            flashinfer_version=rec.env.flashinfer_version,
            problem=problem,
            config=config,
            dtype=dtype,
            source=rec.source,
            previous_error=rec.error,
            raw_key=rec.raw_key,
            shapes=rec.shapes,
        )
    return list(by_key.values())


def check_named(entries: Sequence[Entry], ops: Sequence[str], tactics: Optional[Sequence[Any]]) -> List[str]:
    """The --op values resolved against the inputs (exactly, or by a prefix only one op of the
    inputs starts with, as inspect's --op). --op / --tactic values that name nothing in the inputs
    (any status) are a usage error: one line listing what the inputs hold. A typo must not read as
    "nothing to retry"."""
    held_ops = sorted({e.record.op for e in entries})
    resolved = []
    for op in ops:
        starts = [o for o in held_ops if o.startswith(op)]
        if op in held_ops or len(starts) == 1:
            resolved.append(op if op in held_ops else starts[0])
        elif starts:
            raise UsageError(f"--op {op} is the start of several ops in these inputs: {', '.join(starts)}; name one")
        else:
            raise UsageError(f"--op {op} matches no op in these inputs; ops here: {', '.join(held_ops) or 'none'}")
    ops = resolved
    if tactics is None:
        return resolved
    mine = [e for e in entries if not ops or e.record.op in ops]
    held = {_tactic_text(e.record.tactic) for e in mine if e.record.tactic is not None}
    unknown = [_tactic_text(t) for t in tactics if _tactic_text(t) not in held]
    if len(unknown) == len(tactics):  # (a range may run past the catalog: only a value naming nothing at all is an error)
        failed = _tactic_list(e for e in mine if e.record.status in FAILED_STATUSES)
        raise UsageError(f"--tactic {','.join(unknown[:8])}{' ...' if len(unknown) > 8 else ''} matches no tactic of "
                         f"{'--op ' + ','.join(ops) if ops else 'these inputs'}; failed there: {failed or 'none'}"
                         f"; every tactic there: {_tactic_list(mine) or 'none'}")
    return resolved


def check_env_known(current: Mapping[str, Any], *, driver_only: bool) -> None:
    """--changed-env needs this machine's GPU and driver (--since-driver its driver): without them
    no recorded failure can be shown to come from another environment, and "nothing to retry"
    would be said without knowing it."""
    need = ("driver",) if driver_only else ("gpu", "driver")
    missing = [k for k in need if current.get(k) is None]
    if missing:
        flag = "--since-driver" if driver_only else "--changed-env"
        raise UsageError(f"{flag}: this machine's {' and '.join(missing)} cannot be read here (no NVIDIA driver or GPU "
                         f"visible), so no recorded failure can be shown to come from another environment; run it on "
                         f"the GPU machine, or drop {flag} to take every failure")


def nothing_to_retry(entries: Sequence[Entry], *, all_statuses: bool, ops: Sequence[str],
                     tactics: Optional[Sequence[Any]], changed_env: bool, since_driver: bool) -> str:
    """Why `targets_from_entries` selected nothing, said as what the inputs hold."""
    mine = [e for e in entries if e.record.tactic is not None and (not ops or e.record.op in ops)]
    if tactics is not None:
        wanted = {_tactic_text(t) for t in tactics}
        mine = [e for e in mine if _tactic_text(e.record.tactic) in wanted]
    where = " of " + " ".join(filter(None, (f"--op {','.join(ops)}" if ops else "",
                                            f"--tactic {','.join(_tactic_text(t) for t in tactics[:8])}" if tactics else "")))
    where = "" if where == " of " else where
    if not entries:
        return "nothing to retry: the inputs hold no tuning records"
    if not mine:
        return f"nothing to retry: no record{where} names a tactic (fallbacks and summaries cannot be retried)"
    failed = [e for e in mine if e.record.status in FAILED_STATUSES]
    if not all_statuses and not failed:
        return (f"nothing to retry: none of the {len(mine):,} record(s){where} failed, was blocklisted or could not be "
                f"run (each was chosen, profiled or passed); --all retries them anyway")
    if changed_env or since_driver:
        what = "driver" if since_driver else "environment (GPU, driver, CUDA, library versions)"
        return (f"nothing to retry: the {len(failed):,} failure(s){where} were all recorded under this machine's {what}; "
                f"drop {'--since-driver' if since_driver else '--changed-env'} to retry them anyway")
    return f"nothing to retry{where}"  # (not reached: a failed record with a tactic is a target)


def _tactic_list(entries: Iterable[Entry], limit: int = 16) -> str:
    seen = list(dict.fromkeys(_tactic_text(e.record.tactic) for e in entries if e.record.tactic is not None))
    return ", ".join(seen[:limit]) + (f" and {len(seen) - limit} more" if len(seen) > limit else "")


def parse_shape(text: str) -> Problem:
    """'128x4096x4096' (M x N x K) or '2x128x4096x4096' (batch x M x N x K) -> Problem."""
    parts = text.lower().split("x")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--shape {text!r}: expected MxNxK or BATCHxMxNxK with integers") from None
    if len(nums) == 3:
        nums = [1] + nums
    if len(nums) != 4 or any(v <= 0 for v in nums):
        raise UsageError(f"--shape {text!r}: expected MxNxK or BATCHxMxNxK, all positive")
    b, m, n, k = nums
    return Problem(m=m, n=n, k=k, batch=b)


def _key_shapes(op: str, p: Problem) -> Optional[tuple]:
    """The autotuner key shapes FlashInfer would write for this problem (so ledger records decode).

    fp8_gemm (bmm_fp8): (A (b, M, K), B (b, K, N), 0-d A_scale, 0-d B_scale, out (b, -1, N), workspace (-1,)).
    bf16_gemm (mm_bf16): (a (M, K), b (K, N), bias and pdl (0,) as non-tensors, out (-1, N), workspace (-1,)).
    fp4_gemm / mxfp8_gemm: laid out like the keys in cache_samples/ (a, b, scales, ..., out (-1, N), workspace).
    """
    if op == "fp8_gemm":
        return ((p.batch, p.m, p.k), (p.batch, p.k, p.n), (), (), (p.batch, -1, p.n), (-1,))
    if op == "bf16_gemm":
        return ((p.m, p.k), (p.k, p.n), (0,), (0,), (-1, p.n), (-1,))
    if op == "fp4_gemm":
        return ((p.m, p.k // 2), (p.k // 2, p.n), (-1, p.k // 16), (p.k // 16, p.n), (), (0,), (-1, p.n), (0,), (0,), (-1,))
    if op == "mxfp8_gemm":
        return ((p.m, p.k), (p.k, p.n), (-1, p.k // 32), (p.k // 32, p.n), (0,), (-1, p.n), (-1,))
    return None


def explicit_targets(
    *,
    op: str,
    runner: str,
    tactics: Sequence[Any],
    shapes: Sequence[Problem],
    dtype_in: str,
    dtype_out: str,
    arch: Optional[str] = None,
    flashinfer_version: Optional[str] = None,
) -> List[RetryTarget]:
    """Targets for configs named on the command line (no cache needed): every tactic x every shape.
    Each is decoded like a record of that release and arch (the key shapes FlashInfer would write),
    so its tile is known wherever the catalogs know it (the CUTLASS engine and --reproducer need it)."""
    out = []
    for shape in shapes:
        p = structs.replace(shape, dtype_a=dtype_in, dtype_b=dtype_in, dtype_out=dtype_out)
        for t in tactics:
            config = _decoded_config(op, runner, t, arch, flashinfer_version, _key_shapes(op, p))
            out.append(
                RetryTarget(
                    key=target_key(op, runner, t, p, dtype_out),
                    op=op,
                    runner=runner,
                    tactic=t,
                    arch=arch,
                    flashinfer_version=flashinfer_version,
                    problem=p,
                    config=config,
                    dtype=dtype_out,
                    source="command line",
                    shapes=_key_shapes(op, p),
                )
            )
    return out


def _decoded_config(op: str, runner: str, tactic: Any, arch: Optional[str], version: Optional[str],
                    shapes: Optional[tuple]) -> Any:
    """The tile a command-line tactic names in this release's catalog for this arch (None when
    either is unknown or the catalog does not decode it)."""
    if not arch or not version:
        return None
    from tiletune.core.records import Environment
    from tiletune.decode import decode

    record = TuningRecord(source="command line", source_kind="command-line", op=op, runner=runner, tactic=tactic,
                          status=Status.NOT_RUN, env=Environment(arch=arch, flashinfer_version=version), shapes=shapes)
    return decode(record).config
