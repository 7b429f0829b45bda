"""A fake engine whose children are real processes (tests/tuner/fake_child.py) that crash, hang,
exit non-zero, print garbage or leave torn results: the retry machinery is tested against real
process deaths, with no GPU and no mock of the child."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Sequence

from tiletune.core.records import Problem
from tiletune.tuner.engine import Attempt, ChildResult, ChildSpec, RetryTarget
from tiletune.tuner.flashinfer_engine import interpret_worker_result
from tiletune.tuner.targets import target_key

FAKE_CHILD = Path(__file__).with_name("fake_child.py")
FAKE_ENV = {"gpu": "Fake GPU", "compute_capability": "9.0", "driver": "580.1", "cuda_runtime": "13.0",
            "nvcc": None, "torch": None, "flashinfer": "0.7.2.post1", "cutlass": None}


class FakeEngine:
    """Engine whose child runs fake_child.py in the mode named by the target's tactic."""

    name = "fake"

    def __init__(self, extra_env=(), *, mode: Optional[str] = None, name: Optional[str] = None):
        self.prepared: List[int] = []
        self.extra_env = tuple(extra_env)
        self.mode = mode  # every child in this mode instead of the one its tactic names
        if name is not None:
            self.name = name

    def unavailable_reason(self) -> Optional[str]:
        return None

    def prepare(self, targets: Sequence[RetryTarget], *, jobs: int) -> None:
        self.prepared.append(len(targets))

    def child_spec(self, target: RetryTarget, scratch: Path) -> ChildSpec:
        scratch.mkdir(parents=True, exist_ok=True)
        result = scratch / "result.json"
        return ChildSpec(argv=(sys.executable, str(FAKE_CHILD), self.mode or str(target.tactic), str(result)),
                         env=self.extra_env, result_file=result)

    def interpret(self, target: RetryTarget, child: ChildResult) -> Attempt:
        return interpret_worker_result(self.name, target, child, timeout_s=None)


def make_target(mode: str, m: int = 128, dtype: str = "bfloat16", op: str = "fp8_gemm") -> RetryTarget:
    p = Problem(m=m, n=4096, k=4096, batch=1, dtype_out=dtype)
    return RetryTarget(key=target_key(op, "FakeRunner", mode, p, dtype), op=op, runner="FakeRunner",
                       tactic=mode, arch="sm90", flashinfer_version="0.7.2.post1", problem=p, config=None,
                       dtype=dtype, source="test")
