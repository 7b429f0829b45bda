"""bounded_input.loads parses strict UTF-8 JSON with msgspec and everything else with Python's json:
both routes must give the same value (types, key order, float bits) or the same one-line error."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tiletune.core import bounded_input
from tiletune.core.bounded_input import MAX_DEPTH, MAX_INT_DIGITS, _json_loads, _strict_parse, loads
from tiletune.core.errors import ReaderError

REPO = Path(__file__).resolve().parents[2]


def _outcome(f: Any, data: bytes) -> str:
    """What a parse gives, written so that 1, 1.0 and True, 0.0 and -0.0, and key orders differ."""
    try:
        return "value " + repr(f(data, "in.json"))
    except ReaderError as e:
        return "error " + str(e)


# Texts at the edges of the two parsers: what json takes and msgspec refuses, what both refuse with
# their own words, numbers at the ends of their ranges.
EDGES = [
    b"[NaN, Infinity, -Infinity]", b"[1e999, -1e999]", b'"\\ud800"', b'"\xed\xa0\x80"', b'"\xc0\x80"',
    b"\xef\xbb\xbf[1]", b'"a\x01b"', b"[\f1]", b"\x00", b"[1]\x00", b"[1,]", b"{1:2}", b"tru", b"", b"   ",
    b'{"a":1,"b":2,"a":3}', b"[1.0, -0, -0.0, 1E5, 1e-400, 5e-324, 2.2250738585072011e-308, 0.1e1]",
    b"[18446744073709551616, -9223372036854775809, 9223372036854775807]", b'"\\u0000"',
    b'{"\\ud83d\\ude00": 1}', b" \t\n\r[1] ", b"1" * MAX_INT_DIGITS, b"[" + b"1" * (MAX_INT_DIGITS + 1) + b"]",
    b"-" + b"9" * (MAX_INT_DIGITS + 1), b'["' + b"1" * 100 + b'"]', b"9" * 5000, b"0." + b"1" * 5000,
    b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    b"[" * 5000 + b"]" * 5000, b'{"k": "' + b"[" * 500 + b'"}', b'{"a": [1, 2', b'{"a": "b', b"[1] [2]",
    b'"\xf4\x8f\xbf\xbf"', b'"\xf4\x90\x80\x80"', b'"tab\there"', b'"\\x41"', b"[01]", b"[.5]", b"[1.]",
    b"[true, false, null]", b"[True]", "[\"\u00e9\u4e2d\U0001f600\"]".encode(),
    "[1]".encode("utf-16"), b"\x00[\x001\x00]\x00",
]


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_strict_route_gives_what_json_gives(data: bytes) -> None:
    assert _outcome(loads, data) == _outcome(_json_loads, data)


def test_strict_route_takes_caches() -> None:
    # the fast route is the one real caches take (else this file proves nothing about them)
    taken = 0
    for p in sorted((REPO / "cache_samples").rglob("*.json")):
        data = p.read_bytes()
        assert _outcome(loads, data) == _outcome(_json_loads, data), p
        taken += _strict_parse(data) is not bounded_input._NOT_STRICT
    assert taken >= 100


def test_random_numbers_and_strings_agree() -> None:
    rnd = random.Random(21)
    floats = [rnd.uniform(-1e6, 1e6) for _ in range(500)] + [rnd.random() * 10.0 ** rnd.randint(-320, 308)
                                                             for _ in range(500)]
    texts = [repr(f) for f in floats] + [f"{f:.17e}" for f in floats] + [f"{f:.3g}" for f in floats]
    texts += [str(rnd.randint(-10**39, 10**39)) for _ in range(300)]
    strings = ["".join(chr(rnd.choice([rnd.randint(32, 126), rnd.randint(0xA0, 0xD7FF), rnd.randint(0xE000, 0x10FFFF)]))
                       for _ in range(rnd.randint(0, 12))) for _ in range(300)]
    data = ("[" + ",".join(texts) + "," + json.dumps(strings) + "," + json.dumps(strings, ensure_ascii=False) + "]")
    raw = data.encode("utf-8")
    assert _strict_parse(raw) is not bounded_input._NOT_STRICT
    assert _outcome(loads, raw) == _outcome(_json_loads, raw)
