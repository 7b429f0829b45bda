"""formats.redact.redact_json_strings: a JSON text's strings redacted in the text (the report's
entries, issue 24) must be what redacting every string of the decoded value gives, for any
strings: escapes, quotes, backslashes, non-ASCII, names in any letter case, words that JSON's
own structure could spell (the slow path), paths in keys."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tiletune.formats.redact import Redactor, redact_json_strings
from tiletune.formats.report import _redacted_tree

# pieces a hostile or ordinary string is made of: the redactor's names and paths, JSON's own
# words, characters JSON escapes, non-ASCII
_PIECES = ["/srv/alice data/run 3/", "gpu-node-7", "GPU-NODE-7", "alicesmith", "AliceSmith", "~bob/x/", "C:\\Users\\alice\\",
           "/home/alicesmith/.cache/", "true", "null", "1e5", "\"", "\\", "\n", "\t", "é", "日本", "\u2028", " ", "/", "~",
           "fp4_gemm", "runs/gpu-node-7/c.json", "file:///srv/x/", "PATH=/a:/b", "x", "sm120", "0"]

_TEXT = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join)
_VALUES = st.recursive(
    st.one_of(_TEXT, st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=20,
)

_REDACTORS = {
    # the fast path: words are ASCII and none can be spelled by JSON's structure
    "fast": Redactor(["/srv/alice data/run 3/c.json", "runs/gpu-node-7/c.json"], host_names=["gpu-node-7", "vm"],
                     user_names=["alicesmith", "al"], home="/home/alicesmith"),
    # a host name JSON's structure can spell ("true"): every string is looked at
    "structural word": Redactor(["/srv/x/c.json"], host_names=["true"], user_names=["alicesmith"], home="/home/alicesmith"),
    # a non-ASCII user name (other letter cases are not searched in bytes): every string
    "non-ASCII name": Redactor(["/srv/x/c.json"], host_names=["gpu-node-7"], user_names=["élodie"], home="/home/élodie"),
}


def _expected(value: Any, redactor: Redactor) -> Any:
    return _redacted_tree(json.loads(json.dumps(value)), redactor)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_every_string_of_a_json_text_is_redacted_as_a_value(value: Any) -> None:
    data = msgspec.json.encode(value)
    for name, redactor in _REDACTORS.items():
        assert msgspec.json.decode(redact_json_strings(data, redactor)) == _expected(value, redactor), name


def test_strings_that_cannot_change_keep_their_bytes() -> None:
    redactor = _REDACTORS["fast"]
    data = msgspec.json.encode({"op": "fp4_gemm", "error": "CUDA error: an illegal memory access\nat /srv/x/y.cu:12",
                                "n": [1, 2.5, None, True], "alicesmith": "GPU-NODE-7 said"})
    out = redact_json_strings(data, redactor)
    assert b'"op":"fp4_gemm"' in out and b'"n":[1,2.5,null,true]' in out
    assert b"alicesmith" not in out.lower() and b"gpu-node-7" not in out.lower() and b"/srv/x/" not in out
    assert msgspec.json.decode(out) == _expected(msgspec.json.decode(data), redactor)


def test_any_callable_redacts_every_string() -> None:
    data = msgspec.json.encode({"a": ["b", {"c": "d"}], "e": 1})
    assert msgspec.json.decode(redact_json_strings(data, str.upper)) == {"A": ["B", {"C": "D"}], "E": 1}
