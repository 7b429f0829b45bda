"""`tiletune model` and `tiletune gpus`: between the CLI and the model: parse and check the arguments,
pick the GPU, run `analyze`, optionally ask the compiled CUTLASS query (`--exact`), render.

Every bad input becomes a one-line ModelError / UsageError (exit 2 through cli/output.py); nothing here prints.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

from msgspec import structs

from tiletune.core.errors import ModelError, UsageError
from tiletune.core.records import Problem, TileConfig
from tiletune.formats import render_text
from tiletune.formats.model_view import ModelAnswer
from tiletune.model import gpus as gpu_table
from tiletune.model.kernel import normalize_schedule
from tiletune.model.l2 import L2Fact
from tiletune.model.perf import DTYPE_BITS, analyze
from tiletune.model.smem import parse_stage_policy
from tiletune.model.timers import TIMERS


def parse_triple(text: str, what: str) -> Tuple[int, int, int]:
    """'128x128x256' -> (128, 128, 256); every part a positive integer."""
    parts = re.split(r"[x,*]", text.strip().lower())
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise UsageError(f"--{what} {text!r}: expected three positive integers like 128x128x256")
    vals = tuple(int(p) for p in parts)
    if min(vals) <= 0:
        raise ModelError(f"--{what} {text!r}: every dimension must be > 0")
    return vals  # type: ignore[return-value]


def run_model(*, dtype: str, m: int, n: int, k: int, tile: str, gpu: Optional[str], arch: Optional[str],
              cluster: str, swap_ab: bool, stream_k: bool, split_k: int, grouped: bool, experts: Optional[int],
              top_k: Optional[int], stage_policy: Optional[str], exact: bool, gpu_file: Optional[str], fmt: str,
              schedule: Optional[str] = None, stages: Optional[int] = None, fast_accum: Optional[bool] = None,
              sm_clock: Optional[float] = None, l2: Optional[str] = None, width: Optional[int] = None,
              power_limit: Optional[float] = None, timer: Optional[str] = None) -> str:
    d = dtype.strip().lower()
    if d not in DTYPE_BITS:
        raise UsageError(f"--dtype {dtype!r}: choose one of {', '.join(DTYPE_BITS)}")
    for name, v in (("m", m), ("n", n), ("k", k)):
        if v <= 0:
            raise ModelError(f"--{name} {v}: problem sizes must be > 0")
    if experts is not None and experts <= 0:
        raise ModelError(f"--experts {experts}: must be > 0")
    if top_k is not None and (top_k <= 0 or (experts is not None and top_k > experts)):
        raise ModelError(f"--top-k {top_k}: must be between 1 and the number of experts")
    if top_k is not None and experts is None:
        raise UsageError("--top-k needs --experts")
    if stages is not None:
        if stages < 1:
            raise ModelError(f"--stages {stages}: must be >= 1")
        if stage_policy and stage_policy.strip().lower() not in (f"fixed:{stages}",):
            raise UsageError("--stages and --stage-policy disagree; give one")
        stage_policy = f"fixed:{stages}"
    if sm_clock is not None and not (0 < sm_clock < 10_000):
        raise ModelError(f"--sm-clock {sm_clock:g}: expected MHz between 0 and 10000")
    if power_limit is not None and not (0 < power_limit < 100_000):
        raise ModelError(f"--power-limit {power_limit:g}: expected watts between 0 and 100000")
    if l2 is not None and l2 not in ("warm", "cold"):
        raise UsageError(f"--l2 {l2!r}: choose warm or cold")
    if timer is not None and timer.strip().lower() not in TIMERS:
        raise UsageError(f"--timer {timer!r}: choose one of {', '.join(TIMERS)}")
    if schedule is not None:
        normalize_schedule(schedule)  # a bad name is one clear line, before any modelling
    cfg = TileConfig(tile=parse_triple(tile, "tile"), cluster=parse_triple(cluster, "cluster"), swap_ab=swap_ab,
                     stream_k=stream_k, stages=stages)
    if gpu:
        spec = gpu_table.find(gpu, gpu_file)
        note = None
    elif arch:
        spec = gpu_table.default_for_arch(arch, gpu_file)
        note = f"no --gpu: assumed {spec.name}, the default SKU for {arch}"
    else:
        raise UsageError("say which GPU: --gpu NAME (see `tiletune gpus`) or --arch ARCH for its default SKU")
    problem = Problem(m=m, n=n, k=k, experts=experts, top_k=top_k, dtype_a=d, dtype_b=d)
    res = analyze(problem, cfg, spec, dtype=d, arch=arch, stage_policy=stage_policy, split_k=split_k,
                  grouped=grouped or bool(experts), alternatives=True, schedule=schedule, fast_accum=fast_accum,
                  sm_clock_hz=None if sm_clock is None else sm_clock * 1e6, l2=l2, power_limit_w=power_limit,
                  timer=timer)
    if note:
        res = structs.replace(res, note_facts=structs.replace(res.note_facts, lead=(note,)))
    if l2 is not None:
        res = structs.replace(res, l2=L2Fact(l2, "given", f"--l2 {l2}"))
    compiled = _exact(cfg, res.arch, d, grouped or bool(experts), stage_policy) if exact else None
    return render_text("model", ModelAnswer(res, compiled), fmt, **({"width": width} if width and fmt == "table" else {}))


def _exact(cfg: TileConfig, arch: str, dtype: str, grouped: bool, stage_policy: Optional[str]) -> Dict[str, Any]:
    """Shared storage of the compiled kernel type, from the retry engine's CUTLASS query."""
    from tiletune.tuner.cutlass_build import query_smem

    stages = parse_stage_policy(stage_policy, cfg)
    return query_smem(cfg, arch, dtype, grouped=grouped, stages=stages)


def run_gpus(*, fmt: str, gpu_file: Optional[str], width: Optional[int] = None) -> str:
    """The GPU table; `width`: the terminal columns the table view fits (None: as wide as it is)."""
    return render_text("gpus", gpu_table.table(gpu_file), fmt, **({"width": width} if width else {}))
