"""The retry ledger's line format, shared by the tuner that writes it and the reader that reads it.

Owns the schema tag, the diagnosis vocabulary an attempt ends with, and a tolerant line reader
(a torn or foreign line is reported, never fatal). The full field list is in
`tiletune/tuner/ledger.py`, which writes the lines; `tiletune/readers/ledger.py` turns them into
records. Kept below both so that neither imports the other.
"""

from __future__ import annotations

import enum
import io
import json
import re
from pathlib import Path
from typing import Any, BinaryIO, Dict, Iterator, Optional

from msgspec import Struct

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError, TunerError

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


class LedgerLine(Struct, frozen=True, gc=False):
    """One parsed ledger line (or why it could not be used)."""

    line: int  # 1-based
    data: Optional[Dict[str, Any]]
    problem: Optional[str] = None  # one-line message when `data` is None
    cut_key: Optional[str] = None  # a record cut while written (a crash): the attempt key its first bytes name


# The type every field must have where present (None is always allowed except for the three
# required ones); a line that breaks this is skipped with one line naming the field, so no consumer
# (the reader, resume, --blocklist, --pin-cache) meets a string where it expects an object.
_STR, _NUM, _INT = (str,), (int, float), (int,)
_FIELD_TYPES: Dict[str, tuple] = {
    "key": _STR, "op": _STR, "diagnosis": _STR, "engine": _STR, "runner": _STR, "tactic": (int, str, list),
    "arch": _STR, "flashinfer_version": _STR, "dtype": _STR, "source": _STR, "previous_error": _STR, "raw_key": _STR,
    "shapes": (list,), "extras": (list,), "problem": (dict,), "config": (dict,), "run_options": (dict,),
    "passed": (bool,), "message": _STR, "started_at": _STR, "duration_s": _NUM, "time_s": _NUM, "times_s": (list,),
    "tflops": _NUM, "rel_error": _NUM, "error_bound": _NUM, "smem_bytes": _INT, "smem_limit": _INT,
    "stderr_tail": _STR, "env": (dict,), "env_id": _STR,
}
_REQUIRED = ("key", "op", "diagnosis")
_PROBLEM_INTS = ("m", "n", "k")
_ENV_STRINGS = ("gpu", "flashinfer", "cuda_runtime")


def _type_name(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(v), type(v).__name__)


def _wrong_field(data: Dict[str, Any]) -> Optional[str]:
    """The first field whose type no consumer can use, described; None when the line is usable."""
    for name, types in _FIELD_TYPES.items():
        v = data.get(name)
        if v is None:
            continue
        if not isinstance(v, types):
            return f"field {name!r} is {_type_name(v)}"
    problem = data.get("problem")
    if problem is not None:
        for k in _PROBLEM_INTS:
            v = problem.get(k)
            if not isinstance(v, int) or isinstance(v, bool):
                return f"problem.{k} is {'missing' if v is None else _type_name(v)}, expected an integer"
        if not isinstance(problem.get("batch", 1), (int, type(None))):
            return f"problem.batch is {_type_name(problem['batch'])}"
    env = data.get("env")
    if env is not None:
        for k in _ENV_STRINGS:
            if env.get(k) is not None and not isinstance(env[k], str):
                return f"env.{k} is {_type_name(env[k])}, expected a string"
    times = data.get("times_s")
    if times is not None and not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in times):
        return "times_s holds something other than numbers"
    config = data.get("config")
    if config is not None:
        for k in ("tile", "cluster"):
            v = config.get(k)
            if v is not None and not (isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
                return f"config.{k} is not an array of integers"
    return None


# A line is one attempt of about 1-3 KB (its message and stderr tail are cut by the writer); a longer
# one is no line tiletune wrote, and holding it would cost its size several times over (a 1 GB line
# took 4.2 GB): it is skipped without being held, as the log reader cuts its lines.
MAX_LINE_BYTES = 4 << 20
# The start of a record as the writer writes it (compact JSON, schema then key): what a cut line shows.
_CUT_KEY = re.compile(r'^\{"schema":\s*"tiletune\.ledger/1",\s*"key":\s*"((?:[^"\\]|\\.)*)"')


def _raw_lines(f: BinaryIO) -> Iterator[tuple[int, Optional[str], bool, Optional[str]]]:
    """(line number, text or None, whether the line ended with a newline, why it is unusable) per line,
    each line at most MAX_LINE_BYTES; the encoding is the file's (UTF-8, with or without a BOM, or UTF-16
    as Windows tools re-save text: `bounded_input.text_encoding`)."""
    head = f.read(64)
    f.seek(0)
    encoding, bom = bounded_input.text_encoding(head)
    if encoding != "utf-8":  # UTF-16: decoded as a stream; its lines counted in characters
        text = io.TextIOWrapper(f, encoding=encoding, errors="strict", newline="")
        if bom:
            text.read(1)
        n = 0
        while True:
            n += 1
            try:
                line = text.readline(MAX_LINE_BYTES)
            except UnicodeDecodeError:
                yield n, None, True, f"not {encoding.upper()} text past this line; the rest skipped"
                return
            if not line:
                return
            if len(line) >= MAX_LINE_BYTES and not line.endswith("\n"):
                while line and not line.endswith("\n"):
                    line = text.readline(MAX_LINE_BYTES)
                yield n, None, True, f"a line over {MAX_LINE_BYTES >> 20} MiB (no line tiletune writes); skipped"
                continue
            yield n, line, line.endswith("\n"), None
    f.read(bom)
    n = 0
    while True:
        raw = f.readline(MAX_LINE_BYTES)
        if not raw:
            return
        n += 1
        if len(raw) >= MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # the rest of the line, never held whole
                raw = f.readline(MAX_LINE_BYTES)
            yield n, None, True, f"a line over {MAX_LINE_BYTES >> 20} MiB (no line tiletune writes); skipped"
            continue
        try:
            yield n, raw.decode("utf-8"), raw.endswith(b"\n"), None
        except UnicodeDecodeError as e:
            yield n, None, raw.endswith(b"\n"), f"not UTF-8 (bad byte at column {e.start + 1}); line skipped"


def iter_lines(path: Path) -> Iterator[LedgerLine]:
    """Stream a ledger line by line. A torn, foreign or malformed line is a LedgerLine with `problem` set.

    The file must be a regular file (a FIFO would block); each line is parsed with tiletune's
    bounded JSON (depth, digits) and its fields' types are checked before anyone uses them. A line
    cut while written (the start of a record, not its end) carries the attempt key it names.
    """
    try:
        f = bounded_input.open_input(path, what="ledger")
    except ReaderError as e:
        raise TunerError(f"{e} (as a ledger)") from None
    with f:
        for n, raw, ended, unusable in _raw_lines(f):
            if unusable is not None:
                yield LedgerLine(n, None, f"{path}:{n}: {unusable}")
                continue
            text = raw.strip() if raw is not None else ""
            if not text:
                continue
            try:
                data = bounded_input.loads(text, f"{path}:{n}")
            except ReaderError as e:
                cut = _CUT_KEY.match(text)
                if cut is not None and not text.endswith("}"):  # a record's start without its end
                    what = "torn last line (a run was killed mid-write?)" if not ended else "a record cut while written (a run killed mid-write)"
                    yield LedgerLine(n, None, f"{path}:{n}: {what}; line skipped", cut_key=_unescaped(cut.group(1)))
                    continue
                what = "torn last line (a run was killed mid-write?)" if not ended else str(e).split(": ", 1)[-1]
                yield LedgerLine(n, None, f"{path}:{n}: {what}; line skipped")
                continue
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                yield LedgerLine(n, None, f"{path}:{n}: not a {SCHEMA} record; line skipped")
                continue
            missing = [k for k in _REQUIRED if k not in data]
            if missing:
                yield LedgerLine(n, None, f"{path}:{n}: record lacks {', '.join(missing)}; line skipped")
                continue
            wrong = _wrong_field(data)
            if wrong is not None:
                yield LedgerLine(n, None, f"{path}:{n}: {wrong}; line skipped")
                continue
            yield LedgerLine(n, data)


def _unescaped(json_string_body: str) -> Optional[str]:
    try:
        value = json.loads(f'"{json_string_body}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


__all__ = ["SCHEMA", "Diagnosis", "LedgerLine", "iter_lines"]
