"""bounded_input.load_object_pieces reads a JSON object member by member in pieces: it must give
the members a whole-file parse gives (same values, order, repeated keys), or the same one-line error,
for any piece size, whether the pieces are kept from the check or parsed again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tiletune.core import bounded_input
from tiletune.core.bounded_input import MAX_DEPTH, MAX_INT_DIGITS, ObjectPieces, load_file, load_object_pieces
from tiletune.core.errors import ReaderError
from tiletune.readers import flashinfer_v1
from tiletune.readers.interface import ReadContext

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "cache_samples" / "v1").glob("*.json"))
KEEP = frozenset({"_metadata", "_generation", "_records"})
SIZES = (16, 100, 333, 4096, bounded_input.PIECE_BYTES)


def _whole(path: Path) -> str:
    try:
        return "value " + repr(list(load_file(path, limit=1 << 30).items()))
    except ReaderError as e:
        return "error " + str(e)
    except AttributeError:
        return "not an object"


def _pieces(path: Path, size: int) -> str:
    try:
        got = load_object_pieces(path, limit=1 << 30, keep=KEEP, piece_bytes=size)
    except ReaderError as e:
        return "error " + str(e)
    if isinstance(got, ObjectPieces):
        items = list(got.items())
        # what the check kept is what the file holds (a repeated section would have been read whole)
        assert got.kept == {k: v for k, v in items if k in KEEP}
        return "value " + repr(items)
    return "value " + repr(list(got.items())) if isinstance(got, dict) else "not an object"


@pytest.mark.parametrize("hold", [0, 1 << 30])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_reads_the_same_in_pieces(path: Path, hold: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", hold)
    whole = _whole(path)
    for size in SIZES:
        assert _pieces(path, size) == whole, size


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_records_in_pieces_are_the_records_read_whole(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (repr: every field of every record and problem, the Environment the records share included)
    whole = [repr(r) for r in flashinfer_v1.read_object(path, load_file(path, limit=1 << 30), ReadContext(), None)]
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", 0)
    monkeypatch.setattr(bounded_input, "PIECE_BYTES", 256)
    obj = load_object_pieces(path, limit=1 << 30, keep=KEEP, piece_bytes=256)
    assert isinstance(obj, ObjectPieces) and len(obj._spans) > 3
    assert [repr(r) for r in flashinfer_v1.read_object(path, obj, ReadContext(), None)] == whole


def test_a_cut_anywhere_is_the_whole_files_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file cut at any byte: the whole file's one-line error (or value), never a shorter object
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", 0)
    data = SAMPLES[-1].read_bytes()
    cut = tmp_path / "cut.json"
    for n in range(0, len(data), max(1, len(data) // 400)):
        cut.write_bytes(data[:n])
        whole = _whole(cut)
        for size in (64, 1000):
            assert _pieces(cut, size) == whole, (n, size)


@pytest.mark.parametrize("text", [
    # repeated keys across pieces (a dict keeps the first place and the last value), out of order
    b'{"(b)": [1], "(a)": [2], "(b)": [3], "(c)": [4]}',
    b'{"_metadata": {"a": 1}, "(a)": [1], "(b)": [2], "_metadata": {"a": 2}, "(c)": [3]}',
    b'{"(a)": [1], "(a)": [2]}',
    # bounds inside a piece: depth, digits, non-finite numbers and what msgspec refuses
    b'{"(a)": [1], "(b)": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b', "(c)": [1]}',
    b'{"(a)": [1], "(b)": [' + b"7" * (MAX_INT_DIGITS + 1) + b'], "(c)": [1]}',
    b'{"(a)": [1], "(b)": [NaN], "(c)": [1]}',
    b'{"(a)": [1], "(b)": ["\\ud800"], "(c)": [1]}',
    b'\xef\xbb\xbf{"(a)": [1], "(b)": [2]}',
    # commas inside strings and nested values that look like a member's end
    b'{"(a], \\"x)": [1], "(b)": [[1], "(c)"], "(d\\\\": [{"k": [1]}, "], \\"e"]}',
    # not an object, trailing text, empty
    b'[1, 2]', b'{"(a)": [1]} x', b'{}', b'', b' {"(a)": [1] ',
])
def test_edges_read_as_whole(tmp_path: Path, text: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", 0)
    p = tmp_path / "c.json"
    p.write_bytes(text)
    whole = _whole(p)
    for size in (4, 10, 25, 1000):
        assert _pieces(p, size) == whole, size


def test_a_file_changed_between_the_check_and_the_read_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", 0)
    p = tmp_path / "c.json"
    p.write_text(json.dumps({f"({i:02})": ["R", i] for i in range(50)}))
    got = load_object_pieces(p, limit=1 << 20, keep=KEEP, piece_bytes=64)
    assert isinstance(got, ObjectPieces)
    p.write_text(json.dumps({f"({i:02})": ["R", i + 1] for i in range(50)}))
    os.utime(p, ns=(1, 1))
    with pytest.raises(ReaderError, match="changed while being read"):
        list(got.items())


def test_big_files_hold_one_piece_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # over HOLD_BYTES nothing parsed is kept from the check: only the pieces' offsets
    monkeypatch.setattr(bounded_input, "HOLD_BYTES", 1000)
    p = tmp_path / "c.json"
    p.write_text(json.dumps({f"({i:04})": ["R", i] for i in range(500)}, indent=2))
    got = load_object_pieces(p, limit=1 << 20, keep=KEEP, piece_bytes=512)
    assert isinstance(got, ObjectPieces) and got._held is None and len(got._spans) > 5
    seen: list[Any] = []
    for piece in got.pieces():
        assert isinstance(piece, dict) and len(json.dumps(piece)) < 4 * 512
        seen += piece
    assert seen == [f"({i:04})" for i in range(500)]
