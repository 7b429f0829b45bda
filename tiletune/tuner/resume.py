"""Which finished attempts a rerun may skip: the resume identity of an attempt.

A rerun of `tiletune retry` skips a target only when the ledger holds a finished attempt (any
outcome) of the same thing in the same environment (`env_id`). "The same thing" is everything
that changes what is run, all of it as the ledger line records it:

- `key`: op, runner, tactic, batch x M x N x K, output dtype (plus the FlashInfer engine's
  non-default conditions, `|ws=...,amp=...`);
- `engine`: flashinfer or cutlass (one runs FlashInfer's runner, the other a CUTLASS reproducer);
- `problem`'s operand dtypes (`dtype_a`, `dtype_b`: the `--shape` input dtype, the fused-MoE GEMM
  dtype that `--dtype` selects), spelled as torch names so that a cache's `fp8` and the command
  line's `float8_e4m3fn` are one dtype (the sizes and the output dtype are in the key already);
- for engines that build the decoded tile themselves (the CUTLASS reproducer), `arch` (what nvcc
  compiles for) and `config` (tile, cluster, stages, schedules; `--flashinfer-version` / `--arch`
  overrides or newer catalogs can decode a tactic to another tile). The FlashInfer engine runs the
  tactic number, which the FlashInfer version in `env_id` already pins, so for it they do not count;
- `run_options`: the command-line options given that change what the target runs beyond the
  above (fused MoE: `--dtype`, `--top-k`), options not given left out.

Not part of it (they change how an attempt is measured or waited for, not what runs):
`--iters`, `--timeout`, `--jobs`, `--allow-jit-build`. Rerun with `--no-resume` to redo those.

Ledgers written before `run_options` existed: for a fused-MoE line the `--dtype` / `--top-k` it
ran with are unknown, so it never matches and the target runs again (once; the new line then
matches). Every other old line had no options that could apply to it, so it matches on the
fields it has, which every tiletune.ledger/1 line carries. A line lacking one of them (written by
hand) has an identity no target has: it is re-run, never a crash.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Mapping, Optional, Set, Tuple, Union

from tiletune.core.vocabulary import FUSED_MOE_OPS, torch_dtype_name
from tiletune.tuner.engine import RetryTarget
from tiletune.tuner.ledger import LedgerContents, target_to_json

Identity = Tuple[str, ...]
TILE_BUILDING_ENGINES = ("cutlass",)  # engines whose run depends on the decoded tile and arch


def _canon(value: Any) -> str:
    """One spelling per JSON value (key order and tuple/list do not matter)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _operand_dtypes(problem: Any) -> Any:
    if not isinstance(problem, Mapping):
        return problem  # null (no problem known), or whatever a hand-written line holds
    return [torch_dtype_name(v) if isinstance(v, str) else v for v in (problem.get("dtype_a"), problem.get("dtype_b"))]


def line_identity(obj: Mapping[str, Any]) -> Optional[Identity]:
    """The resume identity of one ledger line (or of a target in ledger form); None: never matches."""
    options = obj.get("run_options")
    if options is None:  # written before run_options existed
        if obj.get("op") in FUSED_MOE_OPS:
            return None  # the --dtype / --top-k it ran with are unknown
        options = {}
    builds_tile = obj.get("engine") in TILE_BUILDING_ENGINES
    return (
        _canon(obj.get("key")),
        _canon(obj.get("engine")),
        _canon(_operand_dtypes(obj.get("problem"))),
        _canon(options),
        _canon(obj.get("arch")) if builds_tile else "",
        _canon(obj.get("config")) if builds_tile else "",
    )


def target_identity(target: RetryTarget, engine: str) -> Identity:
    """The identity an attempt of `target` by `engine` will have once it is in the ledger."""
    ident = line_identity(target_to_json(target, engine=engine))
    assert ident is not None  # new lines always carry run_options
    return ident


def finished(attempts: Union[LedgerContents, Iterable[Dict[str, Any]]], env_id: str) -> Set[Identity]:
    """Identities with a finished attempt (any outcome) in environment `env_id` (the attempts may be
    streamed: `Ledger.iter_attempts`)."""
    out: Set[Identity] = set()
    for a in attempts.attempts if isinstance(attempts, LedgerContents) else attempts:
        if a.get("env_id") == env_id:
            ident = line_identity(a)
            if ident is not None:
                out.add(ident)
    return out


def options_for(target: RetryTarget, *, moe_dtype: Optional[str] = None, top_k: Optional[int] = None) -> Tuple[Tuple[str, Any], ...]:
    """The given options that change what `target` runs: --dtype and --top-k for fused-MoE targets only
    (dense GEMMs ignore both, so changing them does not redo dense attempts)."""
    if target.op not in FUSED_MOE_OPS:
        return ()
    return tuple((k, v) for k, v in (("dtype", moe_dtype), ("top_k", top_k)) if v is not None)
