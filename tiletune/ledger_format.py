"""The retry ledger's line format, shared by the tuner that writes it and the reader that reads it.

Owns the schema tag, the diagnosis vocabulary an attempt ends with, and a tolerant line reader
(a torn or foreign line is reported, never fatal). The full field list is in
`tiletune/tuner/ledger.py`, which writes the lines; `tiletune/readers/ledger.py` turns them into
records. Kept below both so that neither imports the other.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

from tiletune.errors import TunerError

SCHEMA = "tiletune.ledger/1"


class Diagnosis(str, enum.Enum):
    """Why an attempt ended the way it did. One value per distinguishable failure class."""

    PASSED = "passed"
    COMPILE_ERROR = "compile_error"  # nvcc / JIT build failed (first error line in message)
    NOT_INSTANTIATED = "not_instantiated"  # no kernel for this tile/tactic in the build (unsupported tile)
    SMEM_OVER_LIMIT = "smem_over_limit"  # kernel needs more shared memory than the device allows per block
    CAN_IMPLEMENT = "can_implement"  # CUTLASS can_implement() rejected the problem (alignment, sizes)
    INITIALIZE_FAILED = "initialize_failed"  # initialize() failed (Error Internal) for another reason
    NO_KERNEL_IMAGE = "no_kernel_image"  # built for another arch (e.g. sm_120a binary on sm90)
    LAUNCH_FAILURE = "launch_failure"  # launch failed for another reason
    ILLEGAL_INSTRUCTION = "illegal_instruction"
    ILLEGAL_ADDRESS = "illegal_address"
    TIMEOUT = "timeout"  # the child ran past its time limit and was killed
    OUT_OF_MEMORY = "out_of_memory"
    WRONG_RESULTS = "wrong_results"  # NaN/Inf, or relative error above the dtype's bound
    CRASHED = "crashed"  # child died (signal / non-zero exit) with nothing more specific to say
    ENGINE_ERROR = "engine_error"  # the engine could not even set up (missing package, bad spec)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LedgerLine:
    """One parsed ledger line (or why it could not be used)."""

    line: int  # 1-based
    data: Optional[Dict[str, Any]]
    problem: Optional[str] = None  # one-line message when `data` is None


def iter_lines(path: Path) -> Iterator[LedgerLine]:
    """Stream a ledger line by line. A torn or foreign line is a LedgerLine with `problem` set."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise TunerError(f"{path}: cannot read ledger: {e.strerror or e}") from e
    with f:
        for n, raw in enumerate(f, start=1):
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            torn = not raw.endswith(b"\n")
            try:
                data = json.loads(text)
            except ValueError as e:
                what = "torn last line (a run was killed mid-write?)" if torn else f"not JSON ({e.msg})"
                yield LedgerLine(n, None, f"{path}:{n}: {what}; line skipped")
                continue
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                yield LedgerLine(n, None, f"{path}:{n}: not a {SCHEMA} record; line skipped")
                continue
            missing = [k for k in ("key", "op", "diagnosis") if k not in data]
            if missing:
                yield LedgerLine(n, None, f"{path}:{n}: record lacks {', '.join(missing)}; line skipped")
                continue
            yield LedgerLine(n, data)


__all__ = ["SCHEMA", "Diagnosis", "LedgerLine", "iter_lines"]
