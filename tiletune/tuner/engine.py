"""The seam between the retry orchestrator and the things that actually run a kernel.

An `Engine` turns one `RetryTarget` into a child-process command (`ChildSpec`) and the finished
child (`ChildResult`) into an `Attempt`. The orchestrator owns scratch dirs, time limits, the
ledger and progress; engines own what runs and how its output is read. Tests inject a fake
engine whose children really crash, hang or print garbage.

Engines:
- flashinfer_engine.py: runs FlashInfer's own runner for the op with the tactic forced
  (python child: `python -m tiletune.tuner.worker ...`).
- cutlass_engine.py: builds a kernels/ reproducer for the config with nvcc and runs the binary,
  which prints one JSON line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Protocol, Sequence, Tuple

from msgspec import Struct, field

from tiletune.core.ledger_format import Diagnosis  # the vocabulary attempts end with (ledger lines store it)
from tiletune.core.records import Problem, Tactic, TileConfig


class RetryTarget(Struct, frozen=True, gc=False):
    """One config to re-attempt: an (op, runner, tactic) at one problem, on the current GPU.

    `key` is a stable, readable name for the ledger; resume skips a target only when an attempt
    of the same key with the same engine and options finished in the same environment
    (tiletune.tuner.resume lists every field that counts). `config` is the decoded tile when
    known (the CUTLASS engine needs it).
    """

    key: str
    op: str
    runner: str
    tactic: Tactic
    arch: Optional[str]
    flashinfer_version: Optional[str]
    problem: Optional[Problem]
    config: Optional[TileConfig]
    dtype: Optional[str]
    source: str = ""
    previous_error: Optional[str] = None
    raw_key: Optional[str] = None  # the cache key string the target came from (pinned-cache export matches on it)
    shapes: Optional[Tuple[Any, ...]] = None  # the key's profile shapes, kept so ledger records decode like cache records
    # command-line options that change what this target runs beyond its key (fused MoE: --dtype,
    # --top-k), as sorted (name, value) pairs of the options given; part of its resume identity
    options: Tuple[Tuple[str, Any], ...] = ()


class ChildSpec(Struct, frozen=True, gc=False):
    """How to start the child for one attempt. The child writes its JSON result to `result_file`
    (or prints one JSON line on stdout when `result_file` is None)."""

    argv: Tuple[str, ...]
    env: Tuple[Tuple[str, str], ...] = ()  # added to the parent's environment
    cwd: Optional[Path] = None
    result_file: Optional[Path] = None


class ChildResult(Struct, frozen=True, gc=False):
    """What happened to the child process. Never an exception: timeouts and OSErrors are data."""

    argv: Tuple[str, ...]
    exit_code: Optional[int]  # None if killed by timeout before it exited
    signal: Optional[int]  # terminating signal number, if any
    timed_out: bool
    duration_s: float
    stdout_tail: str
    stderr_tail: str
    result: Optional[Mapping[str, Any]] = None  # parsed JSON result, None if absent or unparsable
    result_error: Optional[str] = None  # why `result` is None when a result was expected


class Attempt(Struct, frozen=True, gc=False):
    """One finished attempt: the outcome, its diagnosis, the measurement and the environment."""

    target: RetryTarget
    engine: str
    diagnosis: Diagnosis
    message: str  # one line: the first error line, or a pass summary
    started_at: str  # UTC ISO-8601
    duration_s: float
    time_s: Optional[float] = None  # median kernel time (measured)
    times_s: Tuple[float, ...] = ()  # every timed sample
    tflops: Optional[float] = None
    rel_error: Optional[float] = None
    error_bound: Optional[float] = None  # the relative-error bound the dtype is held to
    smem_bytes: Optional[int] = None
    smem_limit: Optional[int] = None
    stderr_tail: str = ""
    env: Tuple[Tuple[str, Any], ...] = field(default_factory=tuple)  # environment fingerprint, sorted pairs

    @property
    def passed(self) -> bool:
        return self.diagnosis is Diagnosis.PASSED


class Engine(Protocol):
    """What the orchestrator needs from an engine."""

    name: str

    def unavailable_reason(self) -> Optional[str]:
        """None if this engine can run here; else one line saying what is missing (e.g. 'install tiletune[gpu]')."""
        ...

    def prepare(self, targets: Sequence[RetryTarget], *, jobs: int) -> None:
        """Work done once before attempts (e.g. compile reproducers in parallel). Must not raise for one bad target."""
        ...

    def child_spec(self, target: RetryTarget, scratch: Path) -> ChildSpec:
        """The command that makes one attempt in a fresh process."""
        ...

    def interpret(self, target: RetryTarget, child: ChildResult) -> Attempt:
        """Turn the finished child into an Attempt (classification lives in classify.py)."""
        ...
