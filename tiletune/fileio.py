"""Writing files safely: every file tiletune writes appears whole or not at all.

Users' caches and logs are only ever opened for reading; outputs go to new paths via a temp
file in the same directory and os.replace, so a crash never leaves a half-written report.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable, Union


def write_atomic(path: Union[str, Path], data: Union[str, bytes, Iterable[str]]) -> None:
    """Write `data` to `path` atomically (temp file + fsync + os.replace in the same directory).

    `data` may be text chunks (a formatter's output as it is made): nothing appears at `path`
    until the last chunk is on disk."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 minus umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, (str, bytes)):
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            else:
                for chunk in data:
                    f.write(chunk.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def append_line_durable(path: Union[str, Path], line: str) -> None:
    """Append one line (a JSONL record) with a single write + fsync, so a crash loses at most this line.

    O_APPEND makes the single write land at the end even with concurrent appenders; a reader
    must still tolerate a torn last line after a power loss.
    """
    if "\n" in line:
        raise ValueError("append_line_durable: line must not contain a newline")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
