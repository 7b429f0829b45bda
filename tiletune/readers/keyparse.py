"""Parse an autotuner cache key string back into its parts, without eval.

FlashInfer writes each cache key as Python's `str()` of a tuple:
`(custom_op, runner_class, nearest_profile)` in v0.6.7-0.6.12 and
`(custom_op, runner_class, nearest_profile, extras)` since v0.6.13
(flashinfer/autotuner.py `save_configs`; later `ProfilingCacheKey.file_key`). TensorRT-LLM's own
autotuner writes `(custom_op, runner_class, runner_hash, nearest_profile)`. The text is not a
Python literal once `extras` holds a dtype (`torch.float8_e4m3fn`) or an enum
(`ActivationType.Swiglu`), and it must never be evaluated.

Three paths, same result:
- structural (`KeyParser`): the usual `('op', 'Runner', ((d, d), ...), extras)` layout split by
  string slicing, with the pieces memoised per file (the hot path: 50,000 keys in about 0.1 s CPU);
- fast (`parse_literal`): checked with linear-time string operations, rewritten into JSON text
  (tuples -> arrays, bare dotted names -> strings) and handed to `json.loads`;
- exact: a small hand-written tokenizer + depth-limited recursive-descent parser, used when the
  other paths' preconditions fail (strings holding quotes, commas or brackets) so nothing is mis-read.
Bare names come back as `Name` (a str subclass) so callers can tell `torch.bfloat16` from the
string `'torch.bfloat16'`.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple, Optional, Tuple, Union

from tiletune.core.bounded_input import MAX_INT_DIGITS


class KeyParseError(ValueError):
    """The key text is not a tuple literal of the expected shape."""


class Name(str):
    """A bare identifier found in a key (`torch.bfloat16`, `ActivationType.Swiglu`, `inf`)."""

    __slots__ = ()

    def __repr__(self) -> str:  # shows as written in the key, not quoted
        return str.__str__(self)


class ParsedKey(NamedTuple):
    """A FlashInfer cache key: `shapes` is the bucketed profile, `extras` None for 3-part keys.

    A NamedTuple rather than a dataclass: tens of thousands are built per cache, and this is
    the cheapest immutable record Python has.
    """

    op: str
    runner: str
    shapes: Tuple[Any, ...]
    extras: Optional[Tuple[Any, ...]]


# --- fast path -----------------------------------------------------------------------------------
# Checked with linear-time string operations only (a backtracking regex over the whole key could
# take exponential time on a garbled key). Outside quotes a key holds digits, names and
# punctuation; inside quotes nothing that could be mistaken for structure.
_OUTSIDE_CHARS = str.maketrans("", "", "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.-+ ,()[]")
_INSIDE_BAD = re.compile(r"[(),\[\]]")
_MAX_NUMBER_CHARS = MAX_INT_DIGITS  # dimensions, tactics and 64-bit hashes; Python refuses ints past 4,300 digits
_LONG_NUMBER = re.compile(r"\d{%d}" % (_MAX_NUMBER_CHARS + 1))
_FAST_MAX_PARENS = 400  # real keys have a few dozen; deeper nesting goes to the depth-guarded parser
# Bare names in a value position (after "(", "[" or ", "), other than the three constants.
_BARE_NAME = re.compile(r"(?<=[(\[ ])(?!(?:True|False|None)(?=[,)\]]))([A-Za-z_][\w.]*)(?=[,)\]])")
_CONSTS = (
    (re.compile(r"(?<=[(\[ ])True(?=[,)\]])"), "true"),
    (re.compile(r"(?<=[(\[ ])False(?=[,)\]])"), "false"),
    (re.compile(r"(?<=[(\[ ])None(?=[,)\]])"), "null"),
)
_NAME_MARK = "\ue000"  # (private-use char) prefixed to bare names inside the JSON text so they come back as Name


def _fast(text: str) -> Any:
    """JSON rewrite of a simple key; returns nested tuples, or raises ValueError."""
    if '"' in text or "\\" in text or text.count("(") > _FAST_MAX_PARENS or _LONG_NUMBER.search(text):
        raise ValueError("needs the exact parser")
    parts = text.split("'")
    if len(parts) % 2 == 0 or _INSIDE_BAD.search("".join(parts[1::2])) or "".join(parts[0::2]).translate(_OUTSIDE_CHARS):
        raise ValueError("needs the exact parser")
    s = text.replace("'", '"')
    # Strings hold no ",()[]", so these lookarounds can only match outside them.
    s, n = _BARE_NAME.subn('"' + _NAME_MARK + r'\1"', s)
    has_names = n > 0
    for pattern, repl in _CONSTS:
        s = pattern.sub(repl, s)
    s = s.replace("(", "[").replace(")", "]").replace(",]", "]")
    try:
        value = json.loads(s)
    except RecursionError:
        raise ValueError("too deep for the fast path") from None
    return _tuplify_marked(value) if has_names else _tuplify(value)


def _tuplify(value: Any) -> Any:
    """Nested lists -> nested tuples (the key only ever holds tuples)."""
    if value.__class__ is list:
        return tuple([_tuplify(v) if v.__class__ is list else v for v in value])
    return value


def _tuplify_marked(value: Any) -> Any:
    """As `_tuplify`, and turn marked strings back into `Name`s."""
    if value.__class__ is list:
        return tuple(_tuplify_marked(v) for v in value)
    if value.__class__ is str and value.startswith(_NAME_MARK):
        return Name(value[1:])
    return value


# --- exact path ----------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
      | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<name>[A-Za-z_][\w.]*)
      | (?P<punct>[()\[\],])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}


def _unquote(tok: str) -> str:
    body = tok[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], "\\" + body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _tokens(text: str) -> list[tuple[str, str]]:
    pos, out = 0, []
    end = len(text.rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            pos += len(text[pos:]) - len(text[pos:].lstrip())
            raise KeyParseError(f"unexpected character {text[pos:pos + 1]!r} at offset {pos}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


_MAX_DEPTH = 64  # real keys nest 3 deep; a limit keeps a garbled key from exhausting the stack


def _exact(text: str) -> Any:
    toks = _tokens(text)
    value, i = _parse_value(toks, 0, 0)
    if i != len(toks):
        raise KeyParseError(f"trailing text after the tuple (token {toks[i][1]!r})")
    return value


def _parse_value(toks: list[tuple[str, str]], i: int, depth: int) -> tuple[Any, int]:
    if i >= len(toks):
        raise KeyParseError("key ends early")
    kind, tok = toks[i]
    if kind == "num":
        if len(tok) > _MAX_NUMBER_CHARS:
            raise KeyParseError(f"a number of {len(tok):,} characters (tiletune reads up to {_MAX_NUMBER_CHARS})")
        return (float(tok) if any(c in tok for c in ".eE") else int(tok)), i + 1
    if kind == "str":
        return _unquote(tok), i + 1
    if kind == "name":
        const = {"True": True, "False": False, "None": None}
        return (const[tok] if tok in const else Name(tok)), i + 1
    if tok in "([":
        if depth >= _MAX_DEPTH:
            raise KeyParseError(f"nested more than {_MAX_DEPTH} levels deep")
        close = ")" if tok == "(" else "]"
        items: list[Any] = []
        i += 1
        while True:
            if i >= len(toks):
                raise KeyParseError(f"unclosed {tok!r}")
            if toks[i][1] == close:
                return (tuple(items) if close == ")" else list(items)), i + 1
            item, i = _parse_value(toks, i, depth + 1)
            items.append(item)
            if i < len(toks) and toks[i][1] == ",":
                i += 1
            elif i < len(toks) and toks[i][1] != close:
                raise KeyParseError(f"expected ',' or {close!r}, got {toks[i][1]!r}")
    raise KeyParseError(f"unexpected {tok!r}")


# --- structural fast path -----------------------------------------------------------------------
# FlashInfer keys are `('op', 'Runner', ((d, d), (d,), (), ...)[, extras])`: the profile is a tuple
# of flat int tuples, one per input. `_KEY_LAYOUT` is that layout: op and runner without quotes or
# escapes, the profile a tuple of flat int tuples. Linear time: the character classes cannot match
# the delimiters around them, so the only backtracking is `.*` giving back the final ")".
_HEAD = r"\('([^'\"\\]*)', '([^'\"\\]*)'"  # ('op', 'Runner'
_FIRST = r"[-0-9, ]*"  # the first shape's dims: the M bucket
_TAIL = r"((?:, \([-0-9, ]*\))*)\)(?:, (.*))?\)"  # the other shapes, the profile's ")", the extras, the key's ")"
_KEY_LAYOUT = re.compile(_HEAD + r", \(\((" + _FIRST + r")\)" + _TAIL, re.DOTALL)
# The same layout cut in two at the key's first ")": the front (op, runner and the first shape's
# dims) and the tail. A match of both is a match of the whole with the same groups (the whole
# pattern cuts there too: op and runner are quoted and hold no quote, dims no parenthesis); a key
# that does not cut this way (a ")" inside the op's quotes) is matched whole.
# tests/readers/test_keyparse.py pins this to the whole match.
_FRONT_LAYOUT = re.compile(_HEAD + r", \(\((" + _FIRST + r")")
_TAIL_LAYOUT = re.compile(_TAIL, re.DOTALL)
_MEMO_LIMIT = 200_000


class KeyParser:
    """Parses keys with memoised pieces; one instance per file keeps memory bounded.

    Consecutive buckets of one GEMM differ only in M (the first shape), and every bucket of an op
    repeats its op, runner, other shapes and extras: the key is cut at its first ")" and each of
    the two pieces (front: op, runner, first shape; tail: the other shapes, extras) is parsed once
    per file and looked up after, by its text (a key whose front is the key before's: one
    `startswith` and one dict lookup; else one `find` and two lookups). Every record of a file
    shares one op and one runner string per text, and the keys of one front its 1-tuple of shapes."""

    def __init__(self) -> None:
        self._fronts: dict[str, tuple[str, str, Tuple[Tuple[int, ...]]]] = {}
        self._dims: dict[str, Tuple[int, ...]] = {}
        self._tails: dict[str, tuple[Tuple[Tuple[int, ...], ...], Optional[Tuple[Any, ...]]]] = {}
        self._extras: dict[str, Tuple[Any, ...]] = {}
        self._names: dict[str, str] = {}  # one op and one runner string per text, shared by every front
        # The key before's front with its ")", and that front's parts: a file's keys are sorted, so
        # consecutive keys mostly share it (every N and K of one M bucket), and one `startswith`
        # then stands for the cut, the slice and the lookup. `()` starts no text.
        self._last_cut: Union[str, Tuple[str, ...]] = ()
        self._last_front: tuple[str, str, Tuple[Tuple[int, ...]]] = ("", "", ((),))

    def _dims_of(self, piece: str) -> Optional[Tuple[int, ...]]:
        """'4096, 2048' / '0,' / '' -> int tuple (memoised); None if not a flat int tuple."""
        t = self._dims.get(piece)
        if t is None:
            # one trailing comma, after an element: "(0,)"; "(0,,)" and "(,)" are no tuples (the general
            # parser refuses them)
            body = piece[:-1] if piece.endswith(",") else piece
            if piece and not body:
                return None
            if len(body) > _MAX_NUMBER_CHARS and _LONG_NUMBER.search(body):
                return None  # the general parser names the number
            try:
                t = tuple(map(int, body.split(","))) if body else ()
            except ValueError:
                return None  # e.g. "(1, (2,))" nested: the general parser decides
            if len(self._dims) > _MEMO_LIMIT:
                self._dims.clear()
            self._dims[piece] = t
        return t

    def parse(self, text: str) -> ParsedKey:
        """Split a cache key into op, runner, shapes and extras (None for 3-part keys).

        Raises KeyParseError (a ValueError) naming what is wrong.
        """
        fast = self.split(text)
        return ParsedKey(*fast) if fast is not None else parse_general(text)

    def split(self, text: str) -> Optional[tuple[str, str, Tuple[Any, ...], Optional[Tuple[Any, ...]]]]:
        """(op, runner, shapes, extras) of a key in the common layout (see `_KEY_LAYOUT`), or None:
        then only the general parser can say. Raises KeyParseError for unreadable extras."""
        if text.startswith(self._last_cut):  # the key before's front: its first ")" is this key's too
            front = self._last_front
            tail_text = text[len(self._last_cut):]
        else:
            close = text.find(")")
            if close < 0:
                return None  # no tuple closes: not the layout
            front_text = text[:close]
            known = self._fronts.get(front_text)
            if known is not None:
                front = known
            else:
                mf = _FRONT_LAYOUT.fullmatch(front_text)
                if mf is None:
                    return self._whole(text)  # e.g. a ")" inside the op's quotes
                op, runner, first_text = mf.groups()
                first = self._dims_of(first_text)
                if first is None:
                    return None
                names = self._names
                if len(names) > _MEMO_LIMIT:
                    names.clear()
                op, runner = names.setdefault(op, op), names.setdefault(runner, runner)
                front = self._memo(self._fronts, front_text, (op, runner, (first,)))
            self._last_cut, self._last_front = front_text + ")", front
            tail_text = text[close + 1:]
        tail = self._tails.get(tail_text)
        if tail is None:
            mt = _TAIL_LAYOUT.fullmatch(tail_text)
            if mt is None:
                return self._whole(text)
            tail = self._tail(*mt.groups())
            if tail is None:
                return None
            self._memo(self._tails, tail_text, tail)
        others, extras = tail
        return front[0], front[1], front[2] + others if others else front[2], extras

    def _whole(self, text: str) -> Optional[tuple[str, str, Tuple[Any, ...], Optional[Tuple[Any, ...]]]]:
        """`split` by one match of the whole key, for a key the cut points do not split (rare)."""
        mt = _KEY_LAYOUT.fullmatch(text)
        if mt is None:
            return None
        op, runner, first_text, rest_text, etext = mt.groups()
        first = self._dims_of(first_text)
        if first is None:
            return None
        tail = self._tail(rest_text, etext)
        if tail is None:
            return None
        return op, runner, (first,) + tail[0], tail[1]

    def _tail(self, rest_text: str, etext: Optional[str]) -> Optional[tuple[Tuple[Tuple[int, ...], ...], Optional[Tuple[Any, ...]]]]:
        """(the other shapes, the extras) of `_TAIL_LAYOUT`'s groups; None if the shapes are not flat
        int tuples. Raises KeyParseError for unreadable extras."""
        parts = []
        if rest_text:
            for p in rest_text[3:-1].split("), ("):  # ", (d, d), (d,), ()" -> "d, d", "d,", ""
                dims = self._dims_of(p)
                if dims is None:
                    return None
                parts.append(dims)
        if etext is None:
            return tuple(parts), None
        extras = self._extras.get(etext)  # every shape of an op repeats its extras
        if extras is None:
            value = parse_literal(etext)
            extras = self._memo(self._extras, etext, value if isinstance(value, tuple) else (value,))
        return tuple(parts), extras

    @staticmethod
    def _memo(memo: dict, text: str, value: Any) -> Any:
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        memo[text] = value
        return value


# --- public API ----------------------------------------------------------------------------------
def parse_literal(text: str) -> Any:
    """Parse a key-like Python literal (tuples, ints, floats, strings, True/False/None, bare names)."""
    try:
        return _fast(text)
    except ValueError:
        return _exact(text)  # raises KeyParseError with the reason


def parse_general(text: str) -> ParsedKey:
    """A key in any layout, by the general parser (`KeyParser.split` reads the common one faster)."""
    return _from_value(parse_literal(text))


def _from_value(value: Any) -> ParsedKey:
    if not isinstance(value, tuple) or len(value) not in (3, 4):
        what = (f"a {len(value)}-element tuple" if isinstance(value, tuple)
                else "a bare name" if isinstance(value, Name) else type(value).__name__)
        raise KeyParseError(f"expected a 3- or 4-element tuple (op, runner, shapes[, extras]), got {what}")
    op, runner, shapes = value[0], value[1], value[2]
    if not isinstance(op, str) or isinstance(op, Name) or not isinstance(runner, str) or isinstance(runner, Name):
        raise KeyParseError("the first two elements (op, runner class) must be quoted strings")
    if not isinstance(shapes, tuple):
        raise KeyParseError("the third element (shape profile) must be a tuple")
    extras = value[3] if len(value) == 4 else None
    if extras is not None and not isinstance(extras, tuple):
        extras = (extras,)
    return ParsedKey(op=op, runner=runner, shapes=shapes, extras=extras)


def parse_key(text: str) -> ParsedKey:
    """Split a FlashInfer cache key into op, runner, shapes and extras (None for 3-part keys).

    Raises KeyParseError (a ValueError) naming what is wrong. For many keys, use one KeyParser.
    """
    return KeyParser().parse(text)
