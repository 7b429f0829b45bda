"""The MoE layer behind a `trtllm::fused_moe::gemm1/gemm2` retry target, its routing and its reference.

What this module owns (torch-free: the parent, the CPU tests and the worker child all use it):
- `moe_problem(target, ...)`: the layer a cached MoE key stands for (tokens at the top of the M
  bucket, local experts E, hidden H, intermediate I, top_k, gated or not, activation, dtypes,
  finalize fusion), or `MoeRefusal` with one line saying why tiletune cannot re-run it;
- `uniform_routing(...)`: token -> experts assignment spread evenly over the experts (the retry
  assumes uniform routing; a real router is skewed, so per-expert M is an average);
- `reference_moe(...)`: the float32 reference MoE, written against numpy or torch (`xp`), so the
  same maths is unit-tested with numpy on CPU and run with torch on the GPU by the worker.

Key extras (MoERunner.get_cache_key_extras) come in two layouts: 20 fields from 0.6.18rc2 to
0.7.1, and 17 fields in 0.7.2.post1, which dropped tp_rank, ep_rank and cluster_rank (read from
the wheels' flashinfer/fused_moe/core.py). Keys without extras record neither dtypes nor top_k:
those come from the command line (`--dtype`, `--top-k`) or the target is refused.

Kernel facts the reference follows (FlashInfer 0.7.2.post1 csrc/fused_moe/cutlass_backend/
cutlass_fused_moe_kernels.cuh and its include/moe_kernels.h): fc1's rows [0, I) are the linear
half and [I, 2I) the gate of a gated activation (act(gate) * linear); GEMM1's output is stored in
the layer's output dtype (bf16) before the activation; the activation output is stored in GEMM2's
input dtype (bf16, or e4m3 after multiplying by the fc2 quant scale for FP8 per-tensor). The
reference rounds at those same two places so that only accumulation order separates it from the
kernel.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from msgspec import Struct, field, structs

# MoERunner.get_cache_key_extras layouts (20 fields; 17 in 0.7.2.post1) live in one place
from tiletune.core.moe_key_extras import FIELDS_17 as EXTRAS_17  # noqa: F401 (re-exported)
from tiletune.core.moe_key_extras import by_name as _by_name
from tiletune.core.vocabulary import FUSED_MOE_OPS, TORCH_NAME, strip_torch, torch_dtype_name

# ActivationType (csrc/nv_internal/.../cutlass_kernels/include/common.h)
ACTIVATIONS = {0: "Gelu", 1: "Relu", 2: "Silu", 3: "Swiglu", 4: "Geglu", 5: "SwigluBias", 6: "Relu2",
               7: "SwigluStep", 8: "GegluTanh", 9: "Identity", 10: "Situ", 12: "ClampedRelu2"}
GATED = {3, 4, 5, 7, 8, 10}  # isGatedActivation
MODELLED = {0, 1, 2, 3, 4, 6, 8, 9}  # activations the reference implements (no clamps or per-expert parameters)
SWIGLU = 3

# What the engine can run: x and weights of one type, in torch names -> kind (tiletune's name)
_KINDS = {TORCH_NAME[kind]: kind for kind in ("bf16", "fp16", "fp8")}


def _dtype_arg(dtype: str) -> Optional[str]:
    """A --dtype spelling ('bf16', 'bfloat16', ...) -> the torch name of x and the weights; 'nvfp4'
    (no torch dtype) is kept to be refused with its own message; None for anything else."""
    name = torch_dtype_name(dtype.lower())
    return name if name in _KINDS or name == "nvfp4" else None


class MoeRefusal(ValueError):
    """Why a fused-MoE target cannot be re-run by tiletune (one line, shown as the attempt's error)."""


class MoeProblem(Struct, frozen=True, gc=False):
    """One MoE layer at one token count, as a retry runs it (one rank, uniform routing)."""

    gemm: int  # 1 or 2: which GEMM the target's tactic is for
    tokens: int  # top of the key's M bucket
    bucket: int  # the key's M (tuning bucket)
    experts: int  # experts on this rank (fc1_w.shape[0])
    hidden: int
    inter: int
    top_k: int
    gated: bool
    activation: int
    x_dtype: str  # torch names
    weight_dtype: str
    out_dtype: str
    kind: str  # "bf16" | "fp16" | "fp8"
    fused_finalize: bool = True
    enable_pdl: Optional[bool] = None
    notes: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def fc1_rows(self) -> int:
        return 2 * self.inter if self.gated else self.inter

    def rows_per_expert(self) -> int:
        """Rows each expert's GEMM sees under uniform routing, rounded up: ceil(tokens x top_k / experts)."""
        return -(-self.tokens * self.top_k // self.experts)

    def gemm_nk(self) -> Tuple[int, int]:
        """(N, K) of the target's GEMM: gemm1 N = fc1 rows, K = H; gemm2 N = H, K = I."""
        return (self.fc1_rows, self.hidden) if self.gemm == 1 else (self.hidden, self.inter)

    def flops(self) -> float:
        """FLOPs of the target's GEMM over all experts (tokens x top_k rows in all)."""
        n, k = self.gemm_nk()
        return 2.0 * self.tokens * self.top_k * n * k

    def to_spec(self) -> Dict[str, Any]:
        d = structs.asdict(self)
        d["notes"] = list(self.notes)
        return d

    @classmethod
    def from_spec(cls, d: Mapping[str, Any]) -> "MoeProblem":
        d = dict(d)
        d["notes"] = tuple(d.get("notes") or ())
        return cls(**d)


_torch_name = strip_torch


def extras_by_name(extras: Any) -> Optional[Dict[str, Any]]:
    """The MoERunner extras by name (20- or 17-field layout), or None when the key has none."""
    return _by_name(extras)


def key_extras(raw_key: Optional[str]) -> Optional[Tuple[Any, ...]]:
    """The extras of a cache key string (re-parsed with tiletune's safe key parser), or None."""
    if not raw_key:
        return None
    from tiletune.readers.keyparse import parse_key

    try:
        return parse_key(raw_key).extras
    except ValueError:
        return None


def _layer_shapes(shapes: Any) -> Tuple[int, int, int, int, int, int]:
    """(bucket, experts, hidden, inter, fc1 rows, pack) from the key shapes (input, fc1_w, fc1_b, fc2_w, fc2_b);
    pack = weight elements per stored element (1 for bf16/fp8, 2 uint8-packed 4-bit, 16 int64-packed FP4)."""
    try:
        x, w1, w2 = shapes[0], shapes[1], shapes[3]
        bucket, experts, fc1_rows, fc1_last = int(x[0]), int(w1[0]), int(w1[1]), int(w1[2])
        hidden, fc2_last = int(w2[1]), int(w2[2])
    except (TypeError, IndexError, ValueError):
        raise MoeRefusal(f"key shapes {shapes!r} are not the fused-MoE layout (input, fc1_w, fc1_b, fc2_w, fc2_b)") from None
    if min(bucket, experts, fc1_rows, fc1_last, hidden, fc2_last) <= 0 or hidden % fc1_last:
        raise MoeRefusal(f"key shapes {shapes!r}: sizes are not a fused-MoE layer (H={hidden}, fc1 last dim {fc1_last})")
    pack = hidden // fc1_last
    return bucket, experts, hidden, fc2_last * pack, fc1_rows, pack


def moe_problem(
    *,
    op: str,
    shapes: Any,
    extras: Any,
    m_range: Optional[Tuple[int, int]] = None,
    dtype: Optional[str] = None,
    dtype_out: Optional[str] = None,
    top_k: Optional[int] = None,
) -> MoeProblem:
    """The MoE layer a fused-MoE key stands for, or MoeRefusal naming what is missing or unsupported.

    `dtype` / `dtype_out` / `top_k` (from the command line) fill what a key without extras does
    not record; where the key records them, they must agree (a mismatch is refused, not guessed).
    """
    if op not in FUSED_MOE_OPS:
        raise MoeRefusal(f"{op} is not a CUTLASS fused-MoE op ({', '.join(FUSED_MOE_OPS)})")
    gemm = 1 if op.endswith("gemm1") else 2
    bucket, experts, hidden, inter, fc1_rows, pack = _layer_shapes(shapes)
    notes = ["routing assumed uniform over the experts (each expert sees about tokens x top_k / experts rows)",
             "run as one rank: the key's local experts and shapes, tp_size = ep_size = 1"]
    ex = extras_by_name(extras)
    if ex is None and extras:
        raise MoeRefusal(f"key extras have {len(extras)} fields; tiletune knows the 20-field (0.6.18rc2-0.7.1) "
                         "and 17-field (0.7.2.post1) MoERunner layouts")
    if ex is not None:
        x_t, w_t, o_t = _torch_name(ex["x_dtype"]), _torch_name(ex["weight_dtype"]), _torch_name(ex["output_dtype"])
        for flag in ("min_latency_mode", "enable_alltoall", "use_deepseek_fp8_block_scale", "use_w4_group_scaling",
                     "use_mxfp8_act_scaling", "use_wfp4afp8_humming", "use_packed_weights"):
            if ex.get(flag) is True:
                raise MoeRefusal(f"the key sets {flag}=True: tiletune's MoE engine runs only plain bf16/fp16 and "
                                 "FP8 per-tensor layers")
        if dtype is not None and _dtype_arg(dtype) != x_t:
            raise MoeRefusal(f"--dtype {dtype} contradicts the key's x dtype {x_t}")
        k_key = ex["top_k"] if isinstance(ex["top_k"], int) else None
        if top_k is not None and k_key is not None and top_k != k_key:
            raise MoeRefusal(f"--top-k {top_k} contradicts the key's top_k {k_key}")
        top_k = k_key if k_key is not None else top_k
        act = ex["activation_type"]
        activation = int(act) if isinstance(act, int) and not isinstance(act, bool) else None
        if activation is None:
            raise MoeRefusal(f"the key's activation_type {act!r} is not an ActivationType number")
        fused_finalize = ex["use_fused_finalize"] if isinstance(ex["use_fused_finalize"], bool) else True
        enable_pdl = ex["enable_pdl"] if isinstance(ex["enable_pdl"], bool) else None
        if isinstance(ex["ep_size"], int) and ex["ep_size"] > 1:
            notes.append(f"ep_size {ex['ep_size']} in the key: {experts} local experts of {experts * ex['ep_size']}")
    else:
        if dtype is None:
            raise MoeRefusal("this key has no extras (written before FlashInfer 0.6.18rc2): the input dtype is not "
                             "recorded; pass --dtype (bf16, fp16 or fp8) to say what the server ran")
        x_t = w_t = _dtype_arg(dtype)
        if x_t is None:
            raise MoeRefusal(f"--dtype {dtype}: the MoE engine takes bf16, fp16, fp8 (or nvfp4, not implemented yet)")
        if pack != 1 and x_t != "nvfp4":
            raise MoeRefusal(f"--dtype {dtype}: the key's weights are packed {pack} values per element (4-bit "
                             "weights), not one-value-per-element bf16/fp16/fp8 ones")
        o_t = _torch_name(dtype_out) or "bfloat16"
        if top_k is None:
            raise MoeRefusal("this key has no extras (written before FlashInfer 0.6.18rc2): top_k is not recorded; "
                             "pass --top-k")
        if fc1_rows == 2 * inter:
            activation = SWIGLU
            notes.append("the key does not record the activation: Swiglu (cutlass_fused_moe's default) assumed "
                         "from fc1 having 2 x I rows")
        else:
            raise MoeRefusal(f"this key has no extras and fc1 has {fc1_rows} rows for I={inter} (not gated): "
                             "the activation is not recorded, so no reference can be computed")
        fused_finalize, enable_pdl = True, None
        notes.append("use_fused_finalize not recorded: True (cutlass_fused_moe's default) assumed")
    if x_t == "nvfp4" or w_t == "int64":
        raise MoeRefusal("nvfp4 fused MoE (int64-packed FP4 weights) is not implemented in tiletune's MoE engine yet "
                         "(only bf16/fp16 and FP8 per-tensor)")
    kind = _KINDS.get(x_t or "") if x_t == w_t else None
    if kind is None:
        raise MoeRefusal(f"x dtype {x_t}, weight dtype {w_t}: tiletune's MoE engine runs bf16 x bf16, fp16 x fp16 "
                         "and FP8 per-tensor (e4m3 x e4m3) layers only")
    if not isinstance(top_k, int) or not 1 <= top_k <= experts:
        raise MoeRefusal(f"top_k {top_k!r} is not between 1 and the {experts} experts")
    gated = activation in GATED
    if fc1_rows != (2 * inter if gated else inter):
        raise MoeRefusal(f"fc1 has {fc1_rows} rows but activation {ACTIVATIONS.get(activation, activation)} with "
                         f"I={inter} needs {2 * inter if gated else inter}")
    if activation not in MODELLED:
        raise MoeRefusal(f"activation {ACTIVATIONS.get(activation, activation)} is not modelled by tiletune's "
                         f"reference MoE (it models {', '.join(ACTIVATIONS[a] for a in sorted(MODELLED))})")
    tokens = int(m_range[1]) if m_range else bucket
    if m_range is None:
        notes.append(f"the bucket's range is unknown: {bucket} tokens used")
    return MoeProblem(gemm=gemm, tokens=tokens, bucket=bucket, experts=experts, hidden=hidden, inter=inter,
                      top_k=top_k, gated=gated, activation=activation, x_dtype=x_t or "", weight_dtype=w_t or "",
                      out_dtype=o_t or "bfloat16", kind=kind, fused_finalize=fused_finalize, enable_pdl=enable_pdl,
                      notes=tuple(notes))


def grouped_gemm_mnk(*, tokens: int, top_k: int, experts: int, n: int, k: int) -> Tuple[int, int, int]:
    """Per-expert (M, N, K) of one MoE GEMM under uniform routing: M = ceil(tokens x top_k / experts)."""
    if min(tokens, top_k, experts, n, k) <= 0:
        raise MoeRefusal(f"tokens {tokens}, top_k {top_k}, experts {experts}, N {n}, K {k}: all must be positive")
    return -(-tokens * top_k // experts), n, k


# ----------------------------------------------------------------------------- routing and reference


def uniform_routing(tokens: int, top_k: int, experts: int, xp: Any):
    """(tokens, top_k) expert ids: slot j of token t goes to expert (t x top_k + j) mod experts.

    Every expert gets floor or ceil of tokens x top_k / experts rows, and a token's top_k experts
    are distinct when top_k <= experts (as a real top-k router's are).
    """
    return (xp.arange(tokens * top_k) % experts).reshape(tokens, top_k)


def _erf(xp: Any, v):
    special = getattr(xp, "special", None)
    if special is not None and hasattr(special, "erf"):
        return special.erf(v)  # torch
    import numpy as np

    return np.vectorize(math.erf, otypes=[np.float64])(v).astype(v.dtype)


def _act(xp: Any, g, activation: int):
    if activation in (2, 3):  # Silu, Swiglu
        return g / (1 + xp.exp(-g))
    if activation in (0, 4):  # Gelu, Geglu: CUTLASS GELU (erf)
        return 0.5 * g * (1 + _erf(xp, g / math.sqrt(2.0)))
    if activation == 8:  # GegluTanh: CUTLASS GELU_taylor
        return 0.5 * g * (1 + xp.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g * g * g)))
    if activation == 1:
        return g * (g > 0)
    if activation == 6:  # Relu2
        r = g * (g > 0)
        return r * r
    if activation == 9:
        return g
    raise MoeRefusal(f"activation {ACTIVATIONS.get(activation, activation)} is not modelled")


def apply_activation(h, activation: int, inter: int, xp: Any):
    """GEMM1 output (rows, fc1 rows) -> (rows, inter): act(gate) * linear for gated activations
    (linear = columns [0, I), gate = [I, 2I)), act(h) otherwise."""
    if activation in GATED:
        return _act(xp, h[:, inter:], activation) * h[:, :inter]
    return _act(xp, h, activation)


def _scatter_add(xp: Any, out, idx, val) -> None:
    if hasattr(out, "index_add_"):
        out.index_add_(0, idx, val)  # torch
    else:
        xp.add.at(out, idx, val)


def reference_moe(
    x,
    w1,
    w2,
    expert_ids,
    weights,
    *,
    activation: int,
    xp: Any,
    round_fc1: Optional[Callable[[Any], Any]] = None,
    round_act: Optional[Callable[[Any], Any]] = None,
):
    """Float32 reference MoE: out[t] = sum_j weights[t, j] * (act(x[t] @ W1[e]^T) @ W2[e]^T), e = ids[t, j].

    x (T, H), w1 (E, fc1 rows, H), w2 (E, H, I), expert_ids and weights (T, top_k), all already
    dequantized to float32. `round_fc1` / `round_act` emulate where the kernel stores GEMM1's
    output and the activation (see the module docstring). Returns (out (T, H), max |activation|),
    the latter for choosing a static FP8 scale for GEMM2's input.
    """
    out = x * 0
    inter = w2.shape[2]
    amax = 0.0
    for e in range(w1.shape[0]):
        t_idx, slot = xp.where(expert_ids == e)
        if len(t_idx) == 0:
            continue
        h = x[t_idx] @ w1[e].T
        if round_fc1 is not None:
            h = round_fc1(h)
        a = apply_activation(h, activation, inter, xp)
        amax = max(amax, float(abs(a).max()))
        if round_act is not None:
            a = round_act(a)
        y = a @ w2[e].T
        _scatter_add(xp, out, t_idx, weights[t_idx, slot][:, None] * y)
    return out, amax


def round_bf16_numpy(a):
    """float32 -> nearest bfloat16 (ties to even), returned as float32 (finite inputs)."""
    import numpy as np

    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def round_e4m3_numpy(a):
    """float -> nearest float8_e4m3fn value (ties to even, subnormals, saturating at 448) as float32."""
    import numpy as np

    a = np.asarray(a, np.float64)
    mag = np.abs(a)
    exp = np.clip(np.floor(np.log2(np.maximum(mag, 2.0**-9))), -6, 8)
    step = 2.0 ** (exp - 3)  # 3 mantissa bits; below 2^-6 the subnormal step 2^-9
    q = np.minimum(np.round(mag / step) * step, 448.0)
    return (np.sign(a) * q).astype(np.float32)
