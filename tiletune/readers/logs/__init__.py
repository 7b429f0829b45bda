"""Reader for logs and pasted text: FlashInfer autotuner logs (stderr captures,
`<workspace>/flashinfer_jit.log`), vLLM / SGLang / TensorRT-LLM server logs, crash output and
ticket text with caches pasted in.

This module owns the reader protocol (sniff, read) and streaming: lines are read one at a time
(at most MAX_LINE_BYTES of any line), a file is read up to the size it had when reading began
(a log that grows while read is not followed forever); stdin (`-`) is copied into a file first
(readers/__init__.py) and read like one. The work is split by responsibility:

- `grammar`: the line grammar, runner reprs, literals, error-text folding;
- `parser`: the autotuner message state machine -> records (aggregated, with time samples);
- `events`: fatal errors, progress, cache loads/saves -> events (`tiletune.core.events`);
- `clues`: arch, GPU, FlashInfer and server versions from every clue in the text;
- `fragments`: caches pasted into the text, with `...` elisions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Optional, Tuple

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import Environment, InputProblem
from tiletune.readers.interface import ReadContext, ReadItem
from tiletune.readers.jit_identity import slot_rank, workspace_identity
from tiletune.readers.logs.grammar import ParsedProfilingKey, parse_profiling_key
from tiletune.readers.logs.parser import KIND, LogFacts, LogParser

JIT_LOG_NAME = "flashinfer_jit.log"
MAX_LINE_BYTES = 1 << 20  # longer lines are cut: a corrupt log must not cost its size in memory
# Lines read of one text input. A log is streamed in flat memory, but each line costs time (a 1 GB
# file of 'y' lines is 537 million of them: half an hour here); a real DEBUG warm-up log is about
# 350 bytes a line, so this reads logs of a few GB whole. TILETUNE_MAX_LINES raises it.
DEFAULT_MAX_LINES = 10_000_000


def max_lines() -> int:
    """The line limit for one text input (env TILETUNE_MAX_LINES overrides DEFAULT_MAX_LINES)."""
    text = os.environ.get("TILETUNE_MAX_LINES", "")
    return int(text) if text.isascii() and text.isdigit() and 0 < len(text) <= 12 and int(text) > 0 else DEFAULT_MAX_LINES

Item = ReadItem

__all__ = ["KIND", "JIT_LOG_NAME", "LogFacts", "LogParser", "ParsedProfilingKey", "iter_lines", "parse_lines",
           "parse_profiling_key", "read", "read_log", "sniff"]

# --- streaming ---------------------------------------------------------------------------------
def iter_lines(f: BinaryIO, facts: Optional[LogFacts] = None, limit: Optional[int] = None) -> Iterator[Tuple[int, str]]:
    """(1-based line number, text) for each line, reading at most MAX_LINE_BYTES of any line and,
    with `limit`, at most `limit` bytes in all (a growing file stops at its size when reading began)."""
    lineno = 0
    left = limit
    while True:
        chunk = f.readline(MAX_LINE_BYTES if left is None else max(0, min(MAX_LINE_BYTES, left)))
        if not chunk:
            return
        if left is not None:
            left -= len(chunk)
        lineno += 1
        if not chunk.endswith(b"\n") and len(chunk) >= MAX_LINE_BYTES:
            if facts is not None:
                facts.truncated_lines += 1
            while left is None or left > 0:  # drop the rest of an over-long line without holding it
                more = f.readline(MAX_LINE_BYTES if left is None else min(MAX_LINE_BYTES, left))
                if left is not None:
                    left -= len(more)
                if not more or more.endswith(b"\n"):
                    break
        yield lineno, chunk.decode("utf-8", errors="replace").rstrip("\r\n")


def parse_lines(lines: Iterable[Tuple[int, str]], source: str, env: Environment,
                parser: Optional[LogParser] = None) -> Iterator[Item]:
    """Records from already-split lines (tests, other readers)."""
    p = parser or LogParser(source, env)
    for lineno, text in lines:
        yield from p.feed(lineno, text)
    yield from p.finish()


def environment_for(path: Path, ctx: ReadContext) -> Environment:
    """A JIT log's version and arch come from its path (`.../flashinfer/<version>/<arch>/`), the
    path it links to when it is a symlink (`latest.log` -> a workspace's flashinfer_jit.log)."""
    if path.name != JIT_LOG_NAME and path.is_symlink():
        try:
            path = path.resolve()
        except (OSError, RuntimeError):  # a loop: no workspace to learn from
            pass
    if path.name == JIT_LOG_NAME:
        ident = workspace_identity(path.parent)
        if ident is not None:
            return ctx.environment(flashinfer_version=ident.version, version_source="jit-path",
                                   arch=ident.arch, arch_source="jit-path" if ident.arch else None)
    return ctx.environment()


def read_log(path: Path, ctx: ReadContext, parser: Optional[LogParser] = None,
             env: Optional[Environment] = None) -> Iterator[Item]:
    """Stream one log file into records; `parser.facts` holds file-level facts afterwards."""
    source = str(path)
    p = parser or LogParser(source, env or environment_for(path, ctx), rank=slot_rank(path))
    try:
        f = bounded_input.open_input(path, what="log")  # a regular file only: a FIFO or /dev/zero never ends
    except ReaderError as e:
        yield InputProblem(source, str(e), fatal=True, loses_data=True)
        return
    cap = max_lines()
    with f:
        try:
            size = os.fstat(f.fileno()).st_size  # read what is there now, even if the log keeps growing
            for lineno, text in iter_lines(f, p.facts, limit=size):
                if lineno > cap:
                    yield InputProblem(source, f"{source}: more than {cap:,} lines; the first {cap:,} were read, the rest "
                                               "not (tiletune's line limit for one text input: set TILETUNE_MAX_LINES to "
                                               "raise it)", fatal=False, loses_data=True)
                    break
                yield from p.feed(lineno, text)
        except OSError as e:
            yield InputProblem(source, f"{source}: read error after line {p.facts.lines} ({e.strerror or e})",
                               fatal=False, loses_data=True)
    yield from p.finish()


# --- reader protocol -------------------------------------------------------------------------------
_EXC_MARKER = re.compile(rb"\w(?:Error|Exception): [^\n]{0,400}?(?:[Tt]actic\b|Runner\b|(?i:flashinfer|cutlass|trtllm))|"
                         rb"Error in function '")
_SNIFF_MARKERS = (
    re.compile(rb"flashinfer\.jit: "),
    re.compile(rb"\[(?:Autotuner|AutoTuner|AutoTunner|TacticsBlocklist)\]"),
    # crash output and server logs with no autotuner line: the events tiletune reports
    re.compile(rb"Failed to initialize (?:the TMA descriptor|cutlass)|CUDA error: |GEMM requires \d+ bytes|"
               rb"Running FlashInfer autotune with cache|\.cache/flashinfer/\d|flashinfer_autotune_cache/"),
    # an exception raised from the kernels' code or naming a tactic / runner (a pasted ticket in a folder)
    _EXC_MARKER,
    # TensorRT-LLM's own texts (readers/logs/trtllm_text.py)
    re.compile(rb"\[TensorRT-LLM\]\[(?:ERROR|WARNING)\] (?:Assertion failed|Have not found any valid GEMM config)"),
)


SNIFF_SCAN_BYTES = 16 << 20  # server logs start with pages of config before tuning begins
_SCAN_MARKERS = (b"flashinfer.jit: ", b"[Autotuner]: ", b"[AutoTuner]: ", b"[AutoTunner]: ", b"Failed to initialize cutlass",
                 b"[Autotuner] Candidate: ", b"[TensorRT-LLM][ERROR] Assertion failed", b"Have not found any valid GEMM config",
                 b"Failed to initialize the TMA descriptor", b"Running FlashInfer autotune with cache")
_TEXT_SUFFIXES = ("", ".log", ".out", ".err", ".txt")


def _scan_for_marker(path: Path) -> bool:
    """Look past the first 4 KiB (text-like names only) for an autotuner marker, in 1 MiB chunks."""
    try:
        with bounded_input.open_input(path) as f:
            tail, read = b"", 0
            while read < SNIFF_SCAN_BYTES:
                chunk = f.read(1 << 20)
                if not chunk:
                    return False
                if b"\x00" in chunk:
                    return False
                buf = tail + chunk
                if any(m in buf for m in _SCAN_MARKERS) or _EXC_MARKER.search(buf):
                    return True
                tail, read = buf[-512:], read + len(chunk)
    except (OSError, ReaderError):
        return False
    return False


def sniff(path: Path, head: bytes) -> bool:
    """A FlashInfer JIT log by name, or a text file with a flashinfer.jit / autotuner line, a fatal
    kernel error or an exception raised from the kernels' code (naming a tactic or runner) in its
    first 4 KiB (or, for .log/.out/.err/.txt names, its first 16 MiB).

    JSON (caches, blocklists) never matches: the first non-blank byte of a log is not `{` or `[`
    followed by a quote/newline. Binary files (NUL bytes) never match.
    """
    if path.is_dir():
        return False
    if path.name == JIT_LOG_NAME:
        return True
    stripped = head.lstrip()
    if stripped[:1] == b"{" or (stripped[:1] == b"[" and stripped[1:2] in (b"{", b"\n", b"\"", b"]", b" ")):
        return False
    if b"\x00" in head:
        return False
    if any(m.search(head) for m in _SNIFF_MARKERS):
        return True
    return len(head) >= 4096 and path.suffix.lower() in _TEXT_SUFFIXES and _scan_for_marker(path)


def read(path: Path, ctx: ReadContext) -> Iterator[Item]:
    """Records from one log file (protocol entry point)."""
    return read_log(path if isinstance(path, Path) else Path(path), ctx)
