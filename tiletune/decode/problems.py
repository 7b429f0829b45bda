"""Op semantics: what GEMM a cache key stands for, from its profile shapes and extras.

`problem_for(record)` reads the key shapes of each autotuned op the way FlashInfer built them
(input order of the `choose_one` call; checked against `flashinfer/gemm/gemm_base.py` and
`flashinfer/fused_moe/core.py` at the release tags) and returns a `Problem` in ELEMENTS, or None
plus the reason. M is the tuning bucket; `buckets.py` gives the runtime-M range it stands for.

Shapes as keyed (FP4 packs two values per byte, so the K a key holds is K/2):
- fp4_gemm     [a (M, K/2), b (K/2, N), a_descale, b_descale, alpha, out_dtype, out (-1, N), ...]
- mxfp8_gemm   [a (M, K), b (K, N), a_descale, b_descale, out_dtype, out (-1, N), workspace]
- fp8_gemm     [A (b, M, K), B (b, K, N), A_scale, B_scale, out (b, -1, N), workspace]
- bf16_gemm    [a (M, K), b (K, N), bias, pdl, out (-1, N), workspace] (3-D for bmm_bf16)
- trtllm::fused_moe::gemm1/gemm2  [input (T, H/pack_a), fc1_w (E, 2I|I, H/pack), fc1_b, fc2_w (E, H, I/pack), fc2_b]
  with 20 extras since 0.6.18rc2, 17 in 0.7.2.post1 (x/weight/output dtype, top_k, tp, ep, ... flags).
- flashinfer::trtllm_*_moe (trtllm-gen)  [output (T, H), routing_logits (T, E), topk_ids (T, top_k),
  expert_weights (T, top_k), hidden_states, hidden_states_scale, ...]; the intermediate size is a
  kwarg, not in the key.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence, Union

from tiletune.core import moe_key_extras
from tiletune.core.records import Problem, TuningRecord, element_types
from tiletune.core.vocabulary import FUSED_MOE_OPS, PACKED_CONTAINERS, dtype_from_torch, is_torch_dtype, strip_torch
from tiletune.decode.buckets import CUSTOM_BUCKETS_NOTE, bucket_range

ProblemOrReason = tuple[Optional[Problem], Optional[str]]



def is_trtllm_gen_moe(op: str) -> bool:
    return op.startswith("flashinfer::trtllm_") and op.endswith("_moe")


def torch_dtype(value: Any) -> Optional[str]:
    """'torch.bfloat16' / 'bfloat16' -> 'bfloat16'; None for anything that is not a dtype name."""
    return strip_torch(value) if is_torch_dtype(value) else None


canonical_dtype = dtype_from_torch  # 'torch.bfloat16' -> 'bf16'


def problem_for(record: TuningRecord) -> ProblemOrReason:
    """The problem a record's key stands for, or (None, reason). Never raises on odd shapes.

    Not memoised as a whole: nearly every key of a cache has its own shapes, so hashing them cost
    more than it saved; the parts keys share (bucket ranges, notes, MoE extras) are memoised below.
    """
    shapes = record.shapes
    if shapes is None:
        return None, _NO_SHAPES
    op = record.op
    try:
        dense = _DENSE.get(op)
        if dense is not None:
            return dense(op, record.runner, shapes, record.extras, record.env.flashinfer_version)
        if op in FUSED_MOE_OPS:
            return _cutlass_moe(op, shapes, record.extras, record.env.flashinfer_version)
        if is_trtllm_gen_moe(op):
            return _trtllm_gen_moe(op, shapes, record.env.flashinfer_version)
    except _BAD_SHAPES as e:
        return None, _bad_layout(op, shapes, e)
    return None, f"unknown op {op!r}: tiletune does not know how its key shapes map to a GEMM (raw shapes {_short(shapes)})"


_NO_SHAPES = "the source holds no key shapes for this entry"
_BAD_SHAPES = (TypeError, IndexError, ValueError, ZeroDivisionError)  # what odd shapes raise in a builder


def _bad_layout(op: str, shapes: Any, e: Exception) -> str:
    return f"{op}: key shapes {_short(shapes)} do not have the layout tiletune expects ({e})"


def problem_builder(op: str, runner: str, extras: Any, version: Optional[str]) -> Optional[Callable[[Any], ProblemOrReason]]:
    """`problem_for` for the records of one (op, runner, extras, release), with what those four
    decide worked out once: `problem_builder(op, runner, extras, version)(record.shapes)` equals
    `problem_for(record)`. None for an op without one (then call `problem_for`).

    Why: every key of a GEMM shares these four, and only the shapes differ; decode.decode_all keeps
    one builder per group of records, so a key costs its shape checks, one memo lookup per bucket
    and the Problem itself. tests/test_ops.py pins each builder to `problem_for`, odd shapes and
    extras included."""
    if op == "fp4_gemm":
        return _fp4_builder(runner, extras, version)
    if op in FUSED_MOE_OPS:
        return _moe_builder(op, extras, version)
    return None


# --- dense GEMMs -----------------------------------------------------------------------------


def _dims(shape: Any, n: Union[int, Sequence[int]], what: str) -> tuple[int, ...]:
    ns = (n,) if isinstance(n, int) else tuple(n)
    if type(shape) is tuple and len(shape) in ns:
        for v in shape:
            if type(v) is not int:
                break
        else:
            return shape
    raise ValueError(f"{what} shape {shape!r} is not a {' or '.join(map(str, ns))}-D tensor shape")


def _positive(**dims: int) -> None:
    for name, v in dims.items():
        if v <= 0:
            raise ValueError(f"{name}={v} is not a size (constrained or missing dimension)")


def _m(bucket: int, version: Optional[str], moe: bool) -> tuple[Optional[tuple[int, int]], list[str]]:
    rng, notes = _m_cached(bucket, version, moe)
    return rng, list(notes)


@functools.lru_cache(maxsize=8192)
def _m_cached(bucket: int, version: Optional[str], moe: bool) -> tuple[Optional[tuple[int, int]], tuple[str, ...]]:
    r = bucket_range(bucket, moe=moe, version=version)
    notes = [f"m is the tuning bucket {bucket} ({r.mapping} mapping"
             + (f": runtime M {r.lo}..{r.hi})" if r.range else ")")]
    if r.note:
        notes.append(r.note)
    notes.append(CUSTOM_BUCKETS_NOTE)
    return r.range, tuple(notes)


_FP4_K_NOTE = "k = 2 x the key's packed byte count (two FP4 values per byte)"


def _fp4_mkn(shapes: Any) -> tuple[int, int, int]:
    """(M, K/2, N) of an fp4_gemm key's shapes; raises ValueError naming what does not fit.

    The commonest op in big caches, so the shape checks are `_dims`'s, inline: `_dims` runs only
    to raise its message (tests/test_ops.py pins the builders to the plain computation)."""
    a = shapes[0]
    if not (a.__class__ is tuple and len(a) == 2 and a[0].__class__ is int and a[1].__class__ is int):
        a = _dims(a, 2, "a")
    b = shapes[1]
    if not (b.__class__ is tuple and len(b) == 2 and b[0].__class__ is int and b[1].__class__ is int):
        b = _dims(b, 2, "b")
    m, k_half, n = a[0], a[1], b[1]
    if b[0] != k_half:
        raise ValueError(f"a is (M, {k_half}) but b is ({b[0]}, N): K/2 differs")
    if m <= 0 or k_half <= 0 or n <= 0:
        _positive(M=m, K=k_half, N=n)
    return m, k_half, n


def _fp4_dtypes(runner: str, extras: Any) -> tuple[Optional[str], Optional[str]]:
    """(input dtype, output dtype) an fp4_gemm key's runner and extras say."""
    if runner.startswith("Cutlass"):
        dtype: Optional[str] = "nvfp4"  # the CUTLASS FP4 runner is instantiated for W4A4_NVFP4_NVFP4 only
    elif extras and len(extras) >= 3 and isinstance(extras[2], bool):
        dtype = "nvfp4" if extras[2] else "mxfp4"  # cuDNN extras: (out_dtype, block_size, use_nvfp4, has_alpha)
    else:
        dtype = None
    return dtype, canonical_dtype(extras[0]) if extras else None


def _fp4(op, runner, shapes, extras, version) -> ProblemOrReason:
    m, k_half, n = _fp4_mkn(shapes)
    # (a bucket it cannot map raises here, before the extras are looked at)
    rng, notes_known, notes_unknown = _fp4_bucket(m, version)
    dtype, out = _fp4_dtypes(runner, extras)
    # positional, in Problem's field order (m, n, k, batch, m_range, experts, top_k, dtype_a, dtype_b,
    # dtype_out, notes): one per fp4 key
    return Problem(m, n, 2 * k_half, 1, rng, None, None, dtype, dtype, out,
                   notes_unknown if dtype is None else notes_known), None


def _fp4_builder(runner: str, extras: Any, version: Optional[str]) -> Optional[Callable[[Any], ProblemOrReason]]:
    """`_fp4` for one group (see problem_builder): the dtypes decided once, the bucket's range and notes
    looked up by M in this group's own memo."""
    try:
        dtype, out = _fp4_dtypes(runner, extras)
    except Exception:  # noqa: BLE001 - odd extras: `_fp4` says what, key by key, in its own order
        return None
    known = dtype is not None  # which notes: those that say the dtype, or those that say it is unknown
    buckets: dict[int, tuple[Optional[tuple[int, int]], tuple[str, ...]]] = {}  # (M is an exact int here)

    def build(shapes: Any) -> ProblemOrReason:
        if shapes is None:
            return None, _NO_SHAPES
        try:
            m, k_half, n = _fp4_mkn(shapes)
            hit = buckets.get(m)
            if hit is None:
                rng, notes_known, notes_unknown = _fp4_bucket(m, version)
                hit = buckets[m] = (rng, notes_known if known else notes_unknown)
            return Problem(m, n, 2 * k_half, 1, hit[0], None, None, dtype, dtype, out, hit[1]), None
        except _BAD_SHAPES as e:
            return None, _bad_layout("fp4_gemm", shapes, e)

    return build


@functools.lru_cache(maxsize=8192)  # per bucket: one shared notes tuple instead of a new list per key
def _fp4_bucket(bucket: int, version: Optional[str]) -> tuple[Optional[tuple[int, int]], tuple[str, ...], tuple[str, ...]]:
    """(runtime M range, notes when the key says the dtype, notes when it does not) of an fp4 bucket."""
    rng, notes = _m_cached(bucket, version, False)
    notes = (_FP4_K_NOTE,) + notes
    return rng, notes, notes + ("nvfp4 or mxfp4: this runner's key does not record which",)


def _two_d_or_batched(op, shapes) -> tuple[int, int, int, int]:
    a = _dims(shapes[0], (2, 3), "a")
    b = _dims(shapes[1], (2, 3), "b")
    if len(a) == 3:
        if len(b) != 3:
            raise ValueError("a is batched but b is not")
        return a[0], a[1], a[2], b[2]
    return 1, a[0], a[1], b[1]


def _plain(dtype: str) -> Any:
    def build(op, runner, shapes, extras, version) -> ProblemOrReason:
        batch, m, k, n = _two_d_or_batched(op, shapes)
        if min(m, k, n, batch) <= 0:
            _positive(M=m, K=k, N=n, batch=batch)
        rng, notes = _m(m, version, moe=False)
        da, db, out = dtype, dtype, None
        if extras and len(extras) >= 3 and all(torch_dtype(x) for x in extras[:3]):
            # e.g. cuBLAS fp8 extras (a dtype, b dtype, out dtype)
            da, db, out = canonical_dtype(extras[0]) or da, canonical_dtype(extras[1]) or db, canonical_dtype(extras[2])
        elif extras:
            out = next((canonical_dtype(x) for x in extras if canonical_dtype(x)), None)
        return Problem(m=m, n=n, k=k, batch=batch, m_range=rng, dtype_a=da, dtype_b=db, dtype_out=out,
                       notes=tuple(notes)), None

    return build


_DENSE = {
    "fp4_gemm": _fp4,
    "mxfp8_gemm": _plain("mxfp8"),
    "fp8_gemm": _plain("fp8"),
    "bf16_gemm": _plain("bf16"),
}


# --- fused MoE -------------------------------------------------------------------------------

def _moe_sizes(gemm1: bool, shapes: Any) -> tuple[int, int, int, int, int]:
    """(tokens, experts, weight packing, n, k) of a CUTLASS fused-MoE key's shapes; raises
    ValueError naming what does not fit. `_dims`'s checks inline, as in `_fp4_mkn`."""
    x = shapes[0]
    if not (x.__class__ is tuple and len(x) == 2 and x[0].__class__ is int and x[1].__class__ is int):
        x = _dims(x, 2, "input")
    w1 = shapes[1]
    if not (w1.__class__ is tuple and len(w1) == 3 and w1[0].__class__ is int and w1[1].__class__ is int
            and w1[2].__class__ is int):
        w1 = _dims(w1, 3, "fc1_expert_weights")
    w2 = shapes[3]
    if not (w2.__class__ is tuple and len(w2) == 3 and w2[0].__class__ is int and w2[1].__class__ is int
            and w2[2].__class__ is int):
        w2 = _dims(w2, 3, "fc2_expert_weights")
    t, experts = x[0], w1[0]
    hidden = w2[1]
    if t <= 0 or hidden <= 0 or experts <= 0:
        _positive(tokens=t, hidden=hidden, experts=experts)
    if w1[2] <= 0 or hidden % w1[2]:
        raise ValueError(f"hidden {hidden} is not a multiple of fc1's last dim {w1[2]}")
    pack = hidden // w1[2]  # 1 for bf16/fp8 weights, 2 for uint8-packed 4-bit, 16 for int64-packed
    if gemm1:
        return t, experts, pack, w1[1], hidden
    return t, experts, pack, hidden, w2[2] * pack


def _cutlass_moe(op, shapes, extras, version) -> ProblemOrReason:
    gemm1 = op.endswith("gemm1")
    t, experts, pack, n, k = _moe_sizes(gemm1, shapes)
    rng, notes = _moe_notes(t, version, gemm1, pack)
    try:
        top_k, da, db, out, more = _moe_key_facts(extras, element_types(extras), experts)
    except TypeError:  # an unhashable extra
        top_k, da, db, out, more = _moe_key_facts.__wrapped__(extras, (), experts)
    return Problem(m=t, n=n, k=k, m_range=rng, experts=experts, top_k=top_k, dtype_a=da, dtype_b=db,
                   dtype_out=out, notes=notes + more if more else notes), None


def _moe_builder(op: str, extras: Any, version: Optional[str]) -> Optional[Callable[[Any], ProblemOrReason]]:
    """`_cutlass_moe` for one group (see problem_builder): what a (bucket, packing, experts) implies,
    the notes joined included, looked up in this group's own memo."""
    gemm1 = op.endswith("gemm1")
    try:
        types = element_types(extras)
        hash((extras, types))
    except TypeError:  # an unhashable extra: `_cutlass_moe`, key by key
        return None
    facts: dict[tuple[int, int, int], tuple[Any, ...]] = {}
    problem = Problem  # Problem(...) with every field in order, one per key

    def build(shapes: Any) -> ProblemOrReason:
        if shapes is None:
            return None, _NO_SHAPES
        try:
            t, experts, pack, n, k = _moe_sizes(gemm1, shapes)
            hit = facts.get((t, pack, experts))
            if hit is None:
                rng, notes = _moe_notes(t, version, gemm1, pack)
                top_k, da, db, out, more = _moe_key_facts(extras, types, experts)
                hit = facts[t, pack, experts] = (rng, top_k, da, db, out, notes + more if more else notes)
            return problem(t, n, k, 1, hit[0], experts, hit[1], hit[2], hit[3], hit[4], hit[5]), None
        except _BAD_SHAPES as e:
            return None, _bad_layout(op, shapes, e)

    return build


@functools.lru_cache(maxsize=8192)  # per bucket and layer kind: one shared notes tuple instead of a new list per key
def _moe_notes(bucket: int, version: Optional[str], gemm1: bool, pack: int) -> tuple[Optional[tuple[int, int]], tuple[str, ...]]:
    """(runtime M range, notes) of a CUTLASS fused-MoE key's token bucket."""
    rng, notes = _m_cached(bucket, version, True)
    return rng, (f"m is the token bucket; each expert's GEMM{1 if gemm1 else 2} sees about m x top_k / experts rows",
                 f"weights packed {pack} per element" if pack > 1 else "weights unpacked") + notes


@functools.lru_cache(maxsize=4096)  # every bucket of an MoE op repeats the same extras (their element types: records.element_types)
def _moe_key_facts(extras: Any, extras_types: Any, experts: int) -> tuple[Optional[int], Optional[str], Optional[str], Optional[str], tuple[str, ...]]:
    """(top_k, dtype_a, dtype_b, dtype_out, notes) that a fused-MoE key's extras say."""
    ex = moe_key_extras.by_name(extras)  # 20 fields, 17 in 0.7.2.post1
    notes = []
    top_k = da = db = out = None
    if ex:
        top_k = ex["top_k"] if isinstance(ex["top_k"], int) else None
        da, db, out = canonical_dtype(ex["x_dtype"]), canonical_dtype(ex["weight_dtype"]), canonical_dtype(ex["output_dtype"])
        if torch_dtype(ex["weight_dtype"]) in PACKED_CONTAINERS:
            db = "mxfp4" if ex["use_mxfp8_act_scaling"] or ex["use_wfp4afp8_humming"] else None
            if db is None:
                notes.append("weights are packed 4-bit (nvfp4, mxfp4 or int4): the key does not say which")
        if ex["use_mxfp8_act_scaling"] is True:
            da = "mxfp8"
        if isinstance(ex["ep_size"], int) and ex["ep_size"] > 1:
            notes.append(f"experts = {experts} local experts per rank (ep_size {ex['ep_size']}: {experts * ex['ep_size']} in all)")
    else:
        notes.append("this key has no extras (written before 0.6.18rc2): dtypes and top_k are not recorded")
    return top_k, da, db, out, tuple(notes)


def _trtllm_gen_moe(op, shapes, version) -> ProblemOrReason:
    out = _dims(shapes[0], 2, "output")
    t, hidden = out
    experts = shapes[1][1] if isinstance(shapes[1], tuple) and len(shapes[1]) == 2 else None
    topk_src = next((s for s in (shapes[2], shapes[3]) if isinstance(s, tuple) and len(s) == 2), None)
    top_k = topk_src[1] if topk_src else None
    facts = f"token bucket {t}, hidden {hidden}" + (f", {experts} experts" if experts else "") + (
        f", top_k {top_k}" if top_k else "")
    return None, (f"{op} (trtllm-gen): {facts}; the intermediate size is a kwarg, not part of the key, "
                  "so the per-expert GEMM N/K cannot be recovered")


def _short(shapes: Any) -> str:
    s = repr(shapes)
    return s if len(s) <= 120 else s[:117] + "..."
