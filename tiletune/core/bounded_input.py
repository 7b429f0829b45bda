"""Opening inputs: regular files only, under a size limit; JSON parsed with bounds.

Every reader, the ledger, `--gpu-file` and the calibration file open what they read through
`open_input` / `read_input`, and parse JSON through `loads` / `load_file`, so that no input can:
- block forever or never end (a FIFO, a socket, /dev/zero, a terminal): the path is opened
  non-blocking and refused unless `fstat` says it is a regular file;
- exhaust memory: a file over its reader's limit is refused before it is read, and a file that
  grows while it is read is read only up to the limit;
- exhaust the stack or the CPU: JSON nested deeper than `MAX_DEPTH`, or holding an integer
  with more than `MAX_INT_DIGITS` digits, is refused with one line (Python itself raises
  RecursionError near 1,000 levels and ValueError past 4,300 digits, and a huge integer later
  overflows a float).
Problems are `ReaderError`s whose message starts with the path; readers turn them into
`InputProblem`s. Nothing here opens anything for writing.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Optional, Union

import msgspec

from tiletune.core.errors import ReaderError

__all__ = [
    "MAX_DEPTH", "MAX_INT_DIGITS", "ObjectPieces", "check_depth", "decode_text", "load_file", "load_object_pieces",
    "loads", "open_input", "read_input", "sniffable", "text_encoding",
]

# Real inputs nest under 10 levels (a v1 cache 4, `_records` 8); keys and tactics far less.
MAX_DEPTH = 64
# Real integers are dimensions, tactics, counts and 64-bit hashes: 20 digits at most.
MAX_INT_DIGITS = 40

_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _mib(n: int) -> str:
    x = n / 2**20
    return f"{x:.0f} MiB" if x >= 1 or n == 0 else f"{x:.2g} MiB"


def open_input(path: Union[str, Path], *, limit: Optional[int] = None, what: str = "file",
               override: Optional[str] = None, why: str = "") -> BinaryIO:
    """Open `path` for reading in binary; refuse anything but a regular file of at most `limit` bytes.

    Opened with O_NONBLOCK so that opening a FIFO with no writer returns at once (the check then
    refuses it); the flag has no effect on regular files. `override` names what raises the limit
    (e.g. "TILETUNE_MAX_JSON_MB") and `why` says why the limit exists, for the message.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    verb = "cannot read it" if what == "file" else f"cannot open {what}"
    try:
        fd = os.open(os.fspath(path), flags)
    except PermissionError:
        raise ReaderError(f"{path}: {verb} (permission denied)") from None
    except IsADirectoryError:
        raise ReaderError(f"{path}: {verb} (is a directory)") from None
    except OSError as e:
        raise ReaderError(f"{path}: {verb} ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ReaderError(f"{path}: {verb} (is a directory)")
        if not stat.S_ISREG(st.st_mode):
            raise ReaderError(f"{path}: is {_kind(st.st_mode)}, not a regular file; not read")
        if limit is not None and st.st_size > limit:
            hint = f"; set {override} to raise the limit" if override else ""
            raise ReaderError(f"{path}: {_mib(st.st_size)} {what} is over tiletune's {_mib(limit)} limit{why}{hint}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def spool_stdin(dest: Path, limit: int, *, override: Optional[str] = None) -> int:
    """Copy stdin into the new file `dest` (at most `limit` bytes), so that stdin is read once and then
    routed and read like any named file; the number of bytes copied.

    Raises ReaderError when stdin is closed or unreadable, and when more than `limit` bytes come
    (`yes | tiletune inspect -` never ends: nothing of it is read then, at once, rather than minutes
    of parsing a prefix that stops at an arbitrary byte)."""
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # `tiletune inspect - <&-`: Python sets sys.stdin to None
        raise ReaderError("<stdin>: stdin is closed; nothing to read")
    n = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(dest, flags, 0o600), "wb") as out:
        while True:
            try:
                chunk = stream.read1(1 << 20) if hasattr(stream, "read1") else stream.read(1 << 20)
            except (OSError, ValueError) as e:
                raise ReaderError(f"<stdin>: cannot read it ({getattr(e, 'strerror', None) or e})") from None
            if not chunk:
                return n
            n += len(chunk)
            if n > limit:
                hint = f"; set {override} to raise the limit" if override else ""
                raise ReaderError(f"<stdin>: more than tiletune's {_mib(limit)} limit on stdin (a stream that does not end?); "
                                  f"not read: save it to a file and name the file{hint}")
            out.write(chunk)


def read_input(path: Union[str, Path], *, limit: int, what: str = "file", override: Optional[str] = None,
               why: str = "") -> bytes:
    """The whole of a regular file of at most `limit` bytes (see `open_input`)."""
    with open_input(path, limit=limit, what=what, override=override, why=why) as f:
        try:
            # The size fstat gives plus one byte, then the rest up to the limit only for a file that
            # grew (or reports size 0, as /proc does): asking for limit + 1 bytes outright allocates
            # a buffer of the whole limit (256 MiB for caches) for every file.
            size = os.fstat(f.fileno()).st_size
            data = f.read(min(size, limit) + 1)
            if len(data) > size:
                data += f.read(limit + 1 - len(data))
        except OSError as e:
            raise ReaderError(f"{path}: read failed ({e.strerror or e})") from None
    if len(data) > limit:  # it grew after the size check
        raise ReaderError(f"{path}: {what} grew past tiletune's {_mib(limit)} limit while being read")
    return data


_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def text_encoding(head: bytes) -> tuple[str, int]:
    """(encoding, BOM length) of text starting with `head`: UTF-8, UTF-8 with a BOM, or UTF-16 (with a
    BOM, or without one when every other byte of ASCII-range text is NUL, as Windows tools write it)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    h = head[:64]
    h = h[:len(h) - len(h) % 2]
    if len(h) >= 4 and not h[1::2].strip(b"\x00") and b"\x00" not in h[0::2]:
        return "utf-16-le", 0
    if len(h) >= 4 and not h[0::2].strip(b"\x00") and b"\x00" not in h[1::2]:
        return "utf-16-be", 0
    return "utf-8", 0


def sniffable(head: bytes) -> bytes:
    """The first bytes of an input as UTF-8 without a BOM, so sniffers see UTF-16 and BOM files as text."""
    encoding, bom = text_encoding(head)
    if encoding == "utf-8" and not bom:
        return head
    return head[bom:].decode(encoding, errors="ignore").encode("utf-8")


def decode_text(data: bytes, source: str) -> str:
    """Bytes of a text input as str (see `text_encoding`). Raises ReaderError for binary data or a bad byte."""
    encoding, bom = text_encoding(data[:64])
    if encoding == "utf-8" and b"\x00" in data[:4096]:
        raise ReaderError(f"{source}: binary file (NUL bytes), not text")
    try:
        return data[bom:].decode(encoding)
    except UnicodeDecodeError as e:
        raise ReaderError(f"{source}: not {encoding.upper()} text (bad byte at offset {e.start + bom})") from None


# Depth is checked on the text with C-speed bytes operations (a Python walk of a 50,000-entry cache
# costs half as much as parsing it): keep only brackets and quotes, drop escapes and strings, then
# peel matched innermost pairs; each round removes one level.
_NOT_STRUCTURE = bytes(range(256)).translate(None, b'[]{}"\\')
_STRING = re.compile(rb'"[^"]*"')
_ONE_BRACKET_KIND = bytes.maketrans(b"{}", b"[]")
# A run of more than MAX_INT_DIGITS ASCII digits, found with two C-speed bytes operations: every
# digit becomes "0" and everything else a space, then one substring search (a regex scan,
# rb"\d{41}", took longer than parsing the file). tests/test_hostile_inputs.py pins it to that regex.
_DIGIT_OR_SPACE = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)


def has_long_digit_run(raw: bytes) -> bool:
    """True when `raw` holds more than MAX_INT_DIGITS ASCII digits in a row."""
    return _LONG_RUN in raw.translate(_DIGIT_OR_SPACE)


def ends_open(text: bytes) -> bool:
    """True when JSON text ends inside a string or with a bracket still open: the file was cut (a
    cache cut right after an entry's `]` ends with a bracket, yet its object is open). A paste with
    `...` elisions closes all it opens. Byte passes at C speed, as for the depth."""
    b = text.translate(None, _NOT_STRUCTURE)
    b = b.replace(b"\\\\", b"").replace(b'\\"', b"").replace(b"\\", b"")
    if b.count(b'"') % 2:
        return True  # cut inside a string
    b = _STRING.sub(b"", b.replace(b'""', b""))
    return b.count(b"[") + b.count(b"{") > b.count(b"]") + b.count(b"}")


def _depth_over(text: bytes, limit: int) -> bool:
    b = text.translate(None, _NOT_STRUCTURE)
    if b.count(b"[") + b.count(b"{") <= limit:
        return False
    b = b.replace(b"\\\\", b"").replace(b'\\"', b"").replace(b"\\", b"")
    # Most strings hold no bracket: drop their quote pairs at C speed first (removing two adjacent
    # quotes only joins two strings into one), then the few strings left by the regex, far fewer
    # matches to make. tests/test_hostile_inputs.py pins this to the regex alone.
    b = b.replace(b'""', b"")
    if b'"' in b:
        b = _STRING.sub(b"", b)
    # Parsed already, so every bracket is matched: depth does not depend on its kind. One kind lets
    # each pass peel exactly one level (two replaces, one per kind, peeled two levels of `{[{[`).
    b = b.translate(_ONE_BRACKET_KIND)
    for _ in range(limit):
        if not b:
            return False
        b = b.replace(b"[]", b"")
    return bool(b)


def _int_checked(source: str):  # noqa: ANN202
    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise ReaderError(f"{source}: holds an integer of {len(s.lstrip('-')):,} digits "
                              f"(tiletune reads integers of up to {MAX_INT_DIGITS} digits)")
        return int(s)
    return parse_int


_STRICT_JSON = msgspec.json.Decoder()
_NOT_STRICT = object()


def _strict_parse(raw: bytes) -> Any:
    """`raw` parsed by msgspec when it is strict UTF-8 JSON (RFC 8259) with no integer over
    MAX_INT_DIGITS digits; `_NOT_STRICT` otherwise.

    msgspec parses a cache about twice as fast as `json.loads` of its decoded text, and needs no str
    copy of it. It accepts a subset of what `json.loads` does (it refuses NaN, Infinity, 1e999, lone
    surrogates, a BOM, bad UTF-8, control characters in strings, as it refuses any malformed text)
    and gives the same values where both accept (tests/core/test_strict_parse.py): whatever it
    refuses goes down the `json` path, which accepts it or words the one-line error as before."""
    if has_long_digit_run(raw):  # rare, most such runs are hashes in strings: the json path tells
        return _NOT_STRICT
    try:
        return _STRICT_JSON.decode(raw)
    except (msgspec.MsgspecError, RecursionError):  # (RecursionError: nested some 1,000 levels)
        return _NOT_STRICT


def loads(data: Union[bytes, str], source: str) -> Any:
    """Parse JSON text from `source` with bounds: depth, integer digits; raises ReaderError(one line).

    Bytes are decoded with `decode_text` (UTF-8, BOM, UTF-16). Non-finite numbers (NaN, Infinity,
    1e999) are accepted as Python's json does: TensorRT-LLM writes Infinity for untimed entries.
    Strict UTF-8 JSON (what caches are) is parsed by msgspec (`_strict_parse`), the rest by `json`,
    with the same limits, values and messages.
    """
    if isinstance(data, bytes) and text_encoding(data[:64]) == ("utf-8", 0):
        value = _strict_parse(data)
        if value is not _NOT_STRICT:
            if _depth_over(data, MAX_DEPTH):
                raise ReaderError(_too_deep(source))
            return value
    return _json_loads(data, source)


def _too_deep(source: str) -> str:
    return f"{source}: JSON nested more than {MAX_DEPTH} levels deep (real inputs nest under 10)"


def _json_loads(data: Union[bytes, str], source: str) -> Any:
    """`loads` through Python's json: every text `_strict_parse` refuses (and str input)."""
    if isinstance(data, bytes):
        raw, data = data, decode_text(data, source)
        if text_encoding(raw[:64]) != ("utf-8", 0):
            raw = data.encode("utf-8", "surrogatepass")  # a BOM or UTF-16: check the decoded text
    else:
        raw = data.encode("utf-8", "surrogatepass")
    hooks: dict[str, Any] = {}
    if has_long_digit_run(raw):  # a fast pre-filter: most such runs are inside strings (hashes)
        hooks["parse_int"] = _int_checked(source)
    try:
        value = json.loads(data, **hooks)
    except RecursionError:
        raise ReaderError(f"{source}: JSON nested too deeply (tiletune reads up to {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError as e:
        hint = " (the file ends early: truncated?)" if ends_open(raw) else ""
        raise ReaderError(f"{source}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}{hint}") from None
    except ValueError as e:  # Python's own 4,300-digit limit, when the pre-filter did not catch it
        raise ReaderError(f"{source}: {str(e).splitlines()[0]}") from None
    if _depth_over(raw, MAX_DEPTH):
        raise ReaderError(_too_deep(source))
    return value


def load_file(path: Union[str, Path], *, limit: int, what: str = "JSON file", override: Optional[str] = None,
              why: str = "") -> Any:
    """`read_input` then `loads`: a regular JSON file under `limit` bytes, parsed with bounds."""
    return loads(read_input(path, limit=limit, what=what, override=override, why=why), str(path))


def check_depth(value: Any, source: str, limit: int = MAX_DEPTH) -> None:
    """Raise ReaderError when a value built in Python (not parsed by `loads`) nests deeper than `limit`."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            raise ReaderError(f"{source}: nested more than {limit} levels deep")
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, (list, tuple)):
            continue
        stack.extend((x, d + 1) for x in v if isinstance(x, (list, tuple, dict)))


# --- a JSON object read in pieces --------------------------------------------------------------------
#
# A cache's parsed tree costs about 2.3 times the file (docs/bounded_memory.md): a 200 MB cache read
# whole held 470 MB of lists and strings before a record was made. `load_object_pieces` reads the
# top-level object's members in pieces of about PIECE_BYTES, each parsed by the same msgspec decoder
# as `loads`, so values, bounds and messages are the same; only one piece's tree is held at a time.

PIECE_BYTES = 2 << 20
# A file of at most this many bytes keeps its parsed pieces from the check (the bench's 50,000-entry
# cache is 15 MB): parsed once, as fast as whole; a bigger one is parsed a second time, piece by piece.
HOLD_BYTES = 16 << 20
# A piece ends at a comma between a value that ends with a bracket and the next key. The cut is proven
# by parsing `{` + members + `}`: JSON is tokenised left to right, so a comma inside a string or a
# nested value leaves that string or value open and the piece does not parse; a few earlier commas
# are tried, then a piece twice as long (a long member), then the file goes the whole-file way (which words the error, or parses what msgspec refuses).
_CUT = re.compile(rb'[\]}][ \t\r\n]*(,)[ \t\r\n]*"')
_CUT_TRIES = 4
_GROWTHS = 4
_LEADING_SPACE = b" \t\r\n"


class ObjectPieces:
    """A JSON object read in pieces: checked whole first, then given piece by piece.

    `kept` holds the members named by `keep` (what a reader needs before the others: a cache's
    `_metadata`, written first, and `_generation`, written last). `pieces()` yields each piece as a
    dict, in the file's order: the pieces parsed by the check when the file is at most HOLD_BYTES
    (parsed once, as a whole file was), else the file read and parsed again from the pieces' offsets,
    one piece held at a time; a file that changed meanwhile is an error rather than another file's entries."""

    def __init__(self, path: Union[str, Path], spans: list[tuple[int, int, bool]], kept: dict[str, Any],
                 stamp: tuple[int, int], held: Optional[list[dict[str, Any]]]) -> None:
        self.path, self.kept, self._spans, self._stamp, self._held = path, kept, spans, stamp, held

    def pieces(self) -> Iterator[dict[str, Any]]:
        if self._held is not None:
            yield from self._held
            return
        with open_input(self.path) as f:
            if _stamp(f) != self._stamp:
                raise ReaderError(f"{self.path}: changed while being read; read it again")
            for start, end, last in self._spans:
                f.seek(start)
                value = _piece(f.read(end - start), last)
                if value is _NOT_STRICT:
                    raise ReaderError(f"{self.path}: changed while being read; read it again")
                yield value

    def items(self) -> Iterator[tuple[str, Any]]:
        for piece in self.pieces():
            yield from piece.items()


def _stamp(f: BinaryIO) -> tuple[int, int]:
    st = os.fstat(f.fileno())
    return st.st_size, st.st_mtime_ns


def _piece(members: bytes, last: bool) -> Any:
    """`{` + members (+ `}` unless they end the object) parsed strictly, or `_NOT_STRICT`."""
    raw = b"{" + members + (b"" if last else b"}")
    value = _strict_parse(raw)
    if value is not _NOT_STRICT and (not isinstance(value, dict) or _depth_over(raw, MAX_DEPTH)):
        return _NOT_STRICT  # (the whole-file way words a depth error)
    return value


def load_object_pieces(path: Union[str, Path], *, limit: int, keep: frozenset[str], what: str = "JSON file",
                       override: Optional[str] = None, why: str = "", piece_bytes: int = PIECE_BYTES) -> Any:
    """A JSON file as `ObjectPieces` when it is a strict UTF-8 JSON object whose members parse piece
    by piece; anything else as `load_file` gives it (the parsed value, or its ReaderError).

    Every piece is parsed before this returns, so a file cut anywhere, or bad anywhere, is refused
    before a reader has seen any of it, with the whole-file error. Keys must not repeat across pieces
    (a dict keeps a repeated key's first place and last value; pieces cannot): a file whose keys are
    not in ascending order across pieces (FlashInfer sorts them) is read whole."""
    with open_input(path, limit=limit, what=what, override=override, why=why) as f:
        stamp = _stamp(f)
        try:
            checked = _check_pieces(f, limit, keep, piece_bytes, hold=stamp[0] <= HOLD_BYTES)
        except OSError as e:
            raise ReaderError(f"{path}: read failed ({e.strerror or e})") from None
    if checked is None:
        return load_file(path, limit=limit, what=what, override=override, why=why)
    spans, kept, held = checked
    return ObjectPieces(path, spans, kept, stamp, held)


def _check_pieces(f: BinaryIO, limit: int, keep: frozenset[str], piece_bytes: int, hold: bool) -> Any:
    """(spans, kept members, the parsed pieces if `hold` else None) when every piece parses; None otherwise."""
    buf = f.read(piece_bytes)
    if text_encoding(buf[:64]) != ("utf-8", 0):
        return None
    pos = len(buf) - len(buf.lstrip(_LEADING_SPACE))
    if buf[pos:pos + 1] != b"{":
        return None
    pos += 1
    offset = 0  # the file offset of buf[0]
    eof = False
    spans: list[tuple[int, int, bool]] = []
    kept: dict[str, Any] = {}
    underscored: set[str] = set()
    last_key: Optional[str] = None
    held: Optional[list[dict[str, Any]]] = [] if hold else None
    want = piece_bytes  # (doubled while a member is longer than the piece, up to _GROWTHS times)
    while True:
        while not eof and len(buf) - pos < want:
            more = f.read(piece_bytes)
            if not more:
                eof = True
                break
            offset += pos
            buf = buf[pos:] + more
            pos = 0
            if offset + len(buf) > limit:
                return None  # it grew past the limit: the whole-file way says so
        if eof:
            cut, value = len(buf), _piece(buf[pos:], True)
        else:
            cut, value = _cut(buf, pos)
            if value is _NOT_STRICT and want < piece_bytes << _GROWTHS:
                want *= 2
                continue
            want = piece_bytes
        if value is _NOT_STRICT:
            return None
        spans.append((offset + pos, offset + cut, eof))
        keys = [k for k in value if not k.startswith("_")]
        for k in value:
            if k.startswith("_"):
                if k in underscored:
                    return None  # a repeated section across pieces: read whole, as a dict keeps it
                underscored.add(k)
                if k in keep:
                    kept[k] = value[k]
        if keys:
            if last_key is not None and not last_key < keys[0]:
                return None
            if len(spans) > 1 or not eof:  # (one piece: a dict's own rules, as whole)
                if any(b <= a for a, b in zip(keys, keys[1:])):
                    return None
            last_key = keys[-1]
        if held is not None:
            held.append(value)
        if eof:
            return spans, kept, held
        pos = cut + 1  # past the comma


def _cut(buf: bytes, pos: int) -> tuple[int, Any]:
    """(the comma's index, the members before it parsed) for the last comma of `buf[pos:]` that ends
    a member; (0, _NOT_STRICT) when no candidate of the last few parses."""
    hi = len(buf)
    for _ in range(_CUT_TRIES):
        lo = max(pos, hi - (1 << 16))
        found = None
        while found is None:
            for m in _CUT.finditer(buf, lo, hi):
                found = m
            if found is None:
                if lo == pos:
                    return 0, _NOT_STRICT
                lo = max(pos, lo - (1 << 20))
        comma = found.start(1)
        value = _piece(buf[pos:comma], False)
        if value is not _NOT_STRICT:
            return comma, value
        hi = comma
    return 0, _NOT_STRICT
