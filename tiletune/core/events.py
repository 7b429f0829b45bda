"""Events: what a log or pasted text says about a run that is not one tuning entry.

A server log holds more than per-tactic facts: the fatal error that ended the server (a CUTLASS
runner that failed to initialize, a CUDA abort, a rejected TMA descriptor, a grouped GEMM over
the shared-memory limit), OOM fallbacks, INFO summaries of skipped tactics, cache loads and
saves, version banners, tuning progress. Each becomes one `Event`; identical events (the same
line printed by every rank, a log appended to by several runs) are counted, not repeated.

Every fact an event carries says how it is known and where from (`Fact`):
- `decoded`: read exactly from the text by a fixed grammar (a kernel file name's `sm120_M128_BS`,
  the `on sm120` of an error, a cache path's `/0.6.12/sm103/`);
- `inferred`: concluded, not stated (an op from a runner's label words, a FlashInfer version from
  the one a server release pins, which tactics an INFO count stands for);
- `measured`: a number the running program measured or reported (a time, a device limit).

The kinds and which are fatal are the shared vocabulary of the corpus (`EVENT_KINDS`). Records
layer: no I/O, no parsing.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

from msgspec import Struct

# kind -> fatal (a fatal event ended, or would end, the server)
EVENT_KINDS: Mapping[str, bool] = {
    "runner_init_failed": True,
    "cuda_error": True,
    "tma_descriptor_failed": True,
    "smem_exceeded": True,
    "exception": True,  # any other raised exception from the kernels' code (type, text, runner, tactic)
    "oom_fallback": False,
    "tactics_skipped": False,
    "tactic_failed": False,
    "tactic_profiled": False,
    "config_cache_hit": False,
    "configs_saved": False,
    "configs_loaded": False,
    "autotune_cache_path": False,
    "tuning_progress": False,
    "version_banner": False,
    "cache_fragment": False,
}

HOW = ("decoded", "inferred", "measured")


class Fact(Struct, frozen=True, gc=False):
    """One fact with how it is known (`HOW`) and where it came from (a phrase naming the text)."""

    value: Any
    how: str
    source: str

    def to_jsonable(self) -> dict[str, Any]:
        v = self.value
        if isinstance(v, tuple):
            v = list(v)
        return {"value": v, "how": self.how, "from": self.source}


class Event(Struct, frozen=True, gc=False):
    """One event in one input (aggregated: `count` identical occurrences, first at `line`).

    `facts` holds named facts (op, runner, arch, tile, cta_m, block_scaled, smem_need_bytes,
    smem_limit_bytes, box_dim, cutlass_status, error_class, flashinfer_version, rank, path, ...).
    `summary` is one plain sentence for people; `text` the first line as written (trimmed).
    """

    kind: str
    source: str
    summary: str
    text: str = ""
    line: Optional[int] = None
    count: int = 1
    lines: Tuple[int, ...] = ()
    facts: Tuple[Tuple[str, Fact], ...] = ()
    fatal: Optional[bool] = None  # None: the kind's default (EVENT_KINDS)

    @property
    def is_fatal(self) -> bool:
        return EVENT_KINDS.get(self.kind, False) if self.fatal is None else self.fatal

    def fact(self, name: str) -> Any:
        for k, f in self.facts:
            if k == name:
                return f.value
        return None

    def facts_dict(self) -> dict[str, Fact]:
        return dict(self.facts)

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fatal": self.is_fatal,
            "source": self.source,
            "line": self.line,
            "count": self.count,
            "lines": list(self.lines),
            "summary": self.summary,
            "text": self.text,
            "facts": {k: f.to_jsonable() for k, f in self.facts},
        }


class InputFacts(Struct, frozen=True, gc=False):
    """What one text input says about its run as a whole: arch, GPU, FlashInfer version, servers.

    Each is a `Fact` (how known, from where) or None when the text does not say; `conflicts`
    lists clues that disagree (then nothing is chosen and the user is asked)."""

    source: str
    arch: Optional[Fact] = None
    gpu: Optional[Fact] = None
    flashinfer_version: Optional[Fact] = None
    servers: Tuple[Tuple[str, Fact], ...] = ()  # (server, version fact)
    conflicts: Tuple[str, ...] = ()
    ended: Optional[Fact] = None  # the text shows a process ending (a traceback, "hit an exception")

    def to_jsonable(self) -> dict[str, Any]:
        f = lambda x: x.to_jsonable() if x is not None else None  # noqa: E731
        return {"source": self.source, "arch": f(self.arch), "gpu": f(self.gpu),
                "flashinfer_version": f(self.flashinfer_version),
                "servers": [{"server": s, **v.to_jsonable()} for s, v in self.servers],
                "conflicts": list(self.conflicts), "ended": f(self.ended)}


__all__ = ["EVENT_KINDS", "Event", "Fact", "HOW", "InputFacts"]
