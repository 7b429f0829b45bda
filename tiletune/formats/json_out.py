"""`--format json` for inspect: the "tiletune.inspect/1" document (formats/inspect_doc.py's types),
encoded by msgspec.

The entries are written first, in chunks, as they are built (a 50,000-entry output never exists as
one string); then the rest of the document, whose `problem_notes` lists the notes the entries
pointed to and whose `notes` say when a non-finite number was written as null.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Union

import msgspec

from tiletune.analysis.results import InspectResult
from tiletune.core.records import Problem, TileConfig
from tiletune.formats.inspect_doc import (
    EntryWriter,
    NoteTable,
    Strict,
    config_out,
    decode_out,
    inspect_doc,
    model_out,
    problem_notes_out,
)
from tiletune.model.perf import ModelResult

# entries per chunk `iter_inspect` yields: big enough that writes are few, small enough that a
# 50,000-entry output (~80 MB) never exists as one string
_CHUNK_ENTRIES = 2000
_ENCODER = msgspec.json.Encoder()
_ENCODE = _ENCODER.encode
_ENCODE_INTO = _ENCODER.encode_into


def format_inspect(result: InspectResult) -> str:
    """Compact JSON (one object) and a newline."""
    return b"".join(iter_inspect(result)).decode("utf-8", "surrogatepass")


def iter_inspect(result: InspectResult, **view: Any) -> Iterator[Union[bytes, bytearray]]:
    """`format_inspect`'s UTF-8 bytes in chunks, for writing as they are made (each chunk of entries
    is encoded once and written as it is). JSON holds every entry, so the table's layout options
    (all_rows, width, colour) change nothing here; `runtime_m` (--m) adds `at_runtime_m`, which
    tile runs at each runtime M asked about (every flag acts in every format)."""
    notes = NoteTable()
    strict = Strict()
    write = EntryWriter(notes, strict, result.entries)
    entries = result.entries
    if not entries:
        yield _head() + b"["
    else:
        yield _head()
    for lo in range(0, len(entries), _CHUNK_ENTRIES):
        # a chunk's list: the first keeps its "[" (the entries' own), the others start with a comma
        chunk = bytearray()
        _ENCODE_INTO([write(ae) for ae in entries[lo:lo + _CHUNK_ENTRIES]], chunk)
        if lo:
            chunk[0] = 0x2C  # ","
        del chunk[-1]  # (its "]")
        yield chunk
    tail = _ENCODE(inspect_doc(result, entries=False, notes=notes, strict=strict, runtime_m=view.get("runtime_m") or ()))
    yield b"]" + _after_entries(tail) + b"\n"


def iter_inspect_values(result: InspectResult, chunk: int = _CHUNK_ENTRIES) -> Iterator[tuple[str, Any]]:
    """`inspect_dict`'s document in pieces, for a writer that embeds it (the report): ("entries",
    the compact JSON text (bytes) of a list of `chunk` entries) per chunk, then ("rest", the
    document with "entries": [] in its place, as plain JSON values). Only one chunk exists at a
    time: as plain values an entry takes ~35 KB (a 50,000-entry result, ~1.7 GB), so the entries
    stay encoded."""
    notes = NoteTable()
    strict = Strict()
    write = EntryWriter(notes, strict)
    entries = result.entries
    for lo in range(0, len(entries), chunk):
        yield "entries", _ENCODE([write(ae) for ae in entries[lo:lo + chunk]])
    yield "rest", _json_values(inspect_doc(result, entries=False, notes=notes, strict=strict))


def _head() -> bytes:
    """The document's text up to its entries' `[`: `{"schema":...,"tiletune_version":...,"entries":`."""
    from tiletune import __version__

    return b'{"schema":"tiletune.inspect/1","tiletune_version":' + _ENCODE(__version__) + b',"entries":'


def _after_entries(doc: bytes) -> bytes:
    """A document encoded with no entries: its text after `"entries":[]`."""
    marker = b'"entries":[]'
    return doc[doc.index(marker) + len(marker):]


def inspect_dict(result: InspectResult) -> dict[str, Any]:
    """The whole document as plain JSON values (the report embeds it)."""
    out: dict[str, Any] = _json_values(inspect_doc(result))
    return out


def config_dict(c: Optional[TileConfig]) -> Optional[dict[str, Any]]:
    out: Optional[dict[str, Any]] = _json_values(config_out(c))
    return out


def decode_dict(decode: Any) -> dict[str, Any]:
    out: dict[str, Any] = _json_values(decode_out(decode))
    return out


def problem_dict(p: Optional[Problem]) -> Optional[dict[str, Any]]:
    """A problem with its notes written out."""
    out: Optional[dict[str, Any]] = _json_values(problem_notes_out(p))
    return out


def analysis_dict(a: Optional[ModelResult], *, notes: bool = True) -> Optional[dict[str, Any]]:
    """The model's numbers for one case (with its notes unless `notes=False`)."""
    out: Optional[dict[str, Any]] = _json_values(model_out(a, Strict(), notes=notes))
    return out


__all__ = ["analysis_dict", "config_dict", "decode_dict", "format_inspect", "inspect_dict", "iter_inspect",
           "iter_inspect_values",
           "problem_dict"]


def _json_values(doc: Any) -> Any:
    """An output object as the plain JSON values it encodes to (lists, dicts, numbers, strings)."""
    return msgspec.json.decode(msgspec.json.encode(doc))
