"""Writing files safely: every file tiletune writes appears whole or not at all.

Users' caches and logs are only ever opened for reading; outputs go to new paths via a temp
file in the same directory and os.replace, so a crash never leaves a half-written report.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable, List, Tuple, Union


def write_atomic(path: Union[str, Path], data: Union[str, bytes, Iterable[Union[str, bytes]]]) -> None:
    """Write `data` to `path` atomically (temp file + fsync + os.replace in the same directory).

    `data` may be text chunks (a formatter's output as it is made): nothing appears at `path`
    until the last chunk is on disk. An existing path that is not a regular file (/dev/stdout, a
    FIFO) is written in place: replacing it would swap a device for a file. Its folder must exist:
    no folder is ever created (a typo in -o must not leave directories behind). Any OSError becomes
    an OutputError naming the path (one line at the CLI)."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():
            if path.is_dir():
                raise IsADirectoryError(21, "is a directory")
            with _open_in_place(path) as f:
                _write_data(f, data)
            return
        refuse_missing_folder(path)
        _write_replacing(path, data)
    except OSError as e:
        from tiletune.core.errors import OutputError

        raise OutputError(f"{path}: cannot write it ({e.strerror or e})") from None


def _open_in_place(path: Path):  # noqa: ANN202 - a binary file
    """A device or FIFO opened for writing without blocking: a FIFO no process reads would hold the
    command forever (O_NONBLOCK makes that open fail with ENXIO instead); once open, writes block
    as usual (the flag is cleared)."""
    import errno
    import fcntl

    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(e.errno, "a FIFO no process is reading") from None
        raise
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "wb")


def _write_data(f, data: Union[str, bytes, Iterable[Union[str, bytes]]]) -> None:  # noqa: ANN001 - a binary file
    if isinstance(data, (str, bytes)):
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    else:
        for chunk in data:  # text chunks, or UTF-8 bytes (the JSON writer's)
            f.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
    f.flush()


def _write_replacing(path: Path, data: Union[str, bytes, Iterable[Union[str, bytes]]]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 minus umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            _write_data(f, data)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def refuse_missing_folder(path: Union[str, Path]) -> None:
    """An output's folder must exist: tiletune creates no parent directories (OSError otherwise)."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise FileNotFoundError(2, f"its folder {parent} does not exist (tiletune creates no folders: make it first)")


def append_line_durable(path: Union[str, Path], line: str) -> None:
    """Append one line (a JSONL record) with a single write + fsync, so a crash loses at most this line.

    O_APPEND makes the single write land at the end even with concurrent appenders; a reader
    must still tolerate a torn last line after a power loss. A file that ends without a newline
    (such a torn line) gets one first, so the new line never joins the torn one: the torn bytes
    stay (the file is never rewritten) as one bad line of their own."""
    if "\n" in line:
        raise ValueError("append_line_durable: line must not contain a newline")
    path = Path(path)
    refuse_missing_folder(path)
    fd = os.open(str(path), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, (("\n" if torn else "") + line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def same_file(a: Union[str, Path], b: Union[str, Path]) -> bool:
    """True when `a` and `b` name one file: the same resolved path (symlinks followed) or the
    same inode (hard links, bind mounts). A path that does not exist matches only by name.
    `-` (stdin) is the file stdin was redirected from, if any (`inspect - -o c.json < c.json`)."""
    if str(b) == "-":
        a, b = b, a
    if str(a) == "-":
        try:
            return str(b) != "-" and os.path.samestat(os.fstat(0), os.stat(b))
        except (OSError, ValueError):
            return False
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def refuse_outputs_over_inputs(outputs: Iterable[Tuple[str, Union[str, Path, None]]],
                               inputs: Iterable[Union[str, Path]]) -> None:
    """Raise OutputError when an output (option, path) names one of `inputs` (or another output):
    an input is never overwritten, however it is named (symlink, hard link, relative path)."""
    from tiletune.core.errors import OutputError

    inputs = list(inputs)
    taken: List[Tuple[str, Union[str, Path]]] = []
    for option, out in outputs:
        if out is None:
            continue
        for inp in inputs:
            if same_file(out, inp):
                shown = "stdin, redirected from it" if str(inp) == "-" else inp
                raise OutputError(f"{option} {out}: is an input ({shown}); inputs are never overwritten, give a new path")
        for other_option, other in taken:
            if same_file(out, other):
                raise OutputError(f"{option} {out}: also given as {other_option}; give each output its own path")
        taken.append((option, out))
