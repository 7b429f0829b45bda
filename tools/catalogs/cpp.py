"""The one C++ scanner both catalog extractors read FlashInfer's source with.

It understands exactly what the extractors need and refuses the rest (`ExtractError`), so a
release whose code changed shape stops the build instead of yielding a guessed list:
- text: comments and `#ifdef FAST_BUILD` branches removed, brackets matched (string literals
  skipped), top-level comma splits, a function's body by name (definitions, not declarations);
- expressions: `cexpr` evaluates side-effect-free C++ (&&, || and ?: short-circuit as in C++,
  enum constants as their member name, calls to functions the caller puts in the environment);
- control flow: `scan` lists the data items of a body with the if/else conditions that guard
  each, `run_items` / `run_function` replay them for given inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional


class ExtractError(Exception):
    """The source is missing, or has a shape the extractors were not written for."""


# --------------------------------------------------------------------------------------------
# Text

_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def strip_comments(text: str) -> str:
    """Remove // and /* */ comments (not inside string literals), keeping the line structure."""

    def repl(m: re.Match) -> str:
        s = m.group(0)
        if s.startswith(("//", "/*")):
            return "\n" * s.count("\n") or " "
        return s

    return _TOKEN_RE.sub(repl, text)


def drop_fast_build(text: str) -> str:
    """Resolve `#ifdef FAST_BUILD ... #else ... #endif` as not defined (what release builds compile)."""
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # (is_fast_build_block, in_else)
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("#if"):
            stack.append((bool(re.match(r"#ifdef\s+FAST_BUILD\b", s)), False))
            if not stack[-1][0]:
                out.append(line)
            continue
        if s.startswith("#else") and stack:
            fb, _ = stack[-1]
            stack[-1] = (fb, True)
            if not fb:
                out.append(line)
            continue
        if s.startswith("#endif") and stack:
            fb, _ = stack.pop()
            if not fb:
                out.append(line)
            continue
        if any(fb and not in_else for fb, in_else in stack):
            continue
        out.append(line)
    return "\n".join(out)


def clean(text: str) -> str:
    """Comments stripped and FAST_BUILD-only code dropped."""
    return drop_fast_build(strip_comments(text))


_PAIRS = {"(": ")", "{": "}", "[": "]"}


def close_of(text: str, i: int) -> int:
    """Index of the bracket closing the one at text[i] ((, {, [), skipping string literals."""
    stack = [_PAIRS[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == '"':
            j += 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        elif c in _PAIRS:
            stack.append(_PAIRS[c])
        elif c in ")}]":
            if c != stack.pop():
                raise ExtractError(f"unbalanced {c!r} at offset {j}")
            if not stack:
                return j
        j += 1
    raise ExtractError(f"no closing bracket for {text[i]!r} at offset {i}")


def split_top(s: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside (), {}, [] and string literals; items stripped, a trailing empty one dropped."""
    out, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = s.index('"', i + 1)
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur))
    return [x.strip() for x in out]


def find_function_body(text: str, name: str) -> Optional[str]:
    """Body (inside the braces) of the first definition of function `name` (a plain or qualified
    name; declarations and calls are skipped), or None."""
    for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"\s*\(", text):
        close = close_of(text, m.end() - 1)
        head = re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?\{", text[close + 1:])
        if head:
            brace = close + head.end()  # head matched from close + 1 and ends with the "{"
            return text[brace + 1:close_of(text, brace)]
    return None


def function_body(text: str, name: str, where: str) -> str:
    """find_function_body, raising ExtractError naming `where` when there is no definition."""
    body = find_function_body(text, name)
    if body is None:
        raise ExtractError(f"{where}: no definition of {name}() found")
    return body


# --------------------------------------------------------------------------------------------
# Expressions

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)|(?P<op>==|!=|>=|<=|&&|\|\||[-+*/%<>!&|?:(),]))"
)


def _tokens(expr: str) -> list[str]:
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ExtractError(f"cannot tokenise C++ expression {expr!r} at {expr[pos:pos + 20]!r}")
        out.append(m.group(m.lastgroup))  # type: ignore[arg-type]
        pos = m.end()
        while pos < len(expr) and expr[pos].isspace():
            pos += 1
    return out


def enum_shape(name: str) -> Optional[tuple[int, int, int]]:
    """(m, n, k) from a shape-named enum value: CtaShape128x16x128B, ClusterShape_2x1x1."""
    m = re.search(r"(\d+)x(\d+)x(\d+)", name)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def cexpr(expr: str, env: Mapping[str, Any], flags: Optional[Mapping[str, int]] = None) -> Any:
    """Evaluate a side-effect-free C++ expression.

    Unqualified names come from `env` (unknown ones raise ExtractError); `f(a, b)` calls env's
    callable `f`; qualified constants evaluate to their last component (enum member names),
    except `CutlassGemmConfig::<flag>` which evaluates to `flags[flag]`."""
    toks = _tokens(expr)
    pos = 0
    Thunk = Callable[[], Any]

    def peek() -> Optional[str]:
        return toks[pos] if pos < len(toks) else None

    def take(t: Optional[str] = None) -> str:
        nonlocal pos
        if pos >= len(toks) or (t is not None and toks[pos] != t):
            raise ExtractError(f"C++ expression {expr!r}: expected {t!r} at token {pos}")
        pos += 1
        return toks[pos - 1]

    def name_value(t: str) -> Any:
        if "::" in t:
            last = t.split("::")[-1]
            if flags is not None and t.startswith("CutlassGemmConfig::") and last in flags:
                return flags[last]
            return last
        if t in env:
            return env[t]
        raise ExtractError(f"C++ expression {expr!r}: unknown name {t!r}")

    def shape_of(v: Any) -> tuple[int, int, int]:
        shp = enum_shape(v) if isinstance(v, str) else None
        if shp is None:
            raise ExtractError(f"C++ expression {expr!r}: enum_to_shape_tuple of {v!r}")
        return shp

    def args() -> list[Thunk]:
        take("(")
        out: list[Thunk] = []
        while peek() != ")":
            out.append(ternary())
            if peek() == ",":
                take(",")
        take(")")
        return out

    def primary() -> Thunk:
        t = take()
        if t == "(":
            v = ternary()
            take(")")
            return v
        if t.isdigit():
            return lambda: int(t)
        if t in ("true", "false"):
            return lambda: t == "true"
        if t == "std::get" and peek() == "<":
            take("<")
            idx = int(take())
            take(">")
            (v,) = args()
            return lambda: v()[idx]
        if t == "enum_to_shape_tuple":
            (v,) = args()
            return lambda: shape_of(v())
        if peek() == "(" and "::" not in t:
            fn_args = args()

            def call() -> Any:
                fn = name_value(t)
                if not callable(fn):
                    raise ExtractError(f"C++ expression {expr!r}: {t!r} is not a function tiletune models")
                return fn(*(a() for a in fn_args))

            return call
        return lambda: name_value(t)

    def unary() -> Thunk:
        if peek() == "!":
            take()
            v = unary()
            return lambda: not v()
        if peek() == "-":
            take()
            v = unary()
            return lambda: -v()
        return primary()

    levels = [["||"], ["&&"], ["|"], ["&"], ["==", "!="], ["<", ">", "<=", ">="], ["+", "-"], ["*", "/", "%"]]
    fns: dict[str, Callable[[Thunk, Thunk], Any]] = {
        "||": lambda a, b: bool(a()) or bool(b()),
        "&&": lambda a, b: bool(a()) and bool(b()),
        "|": lambda a, b: a() | b(),
        "&": lambda a, b: a() & b(),
        "==": lambda a, b: a() == b(),
        "!=": lambda a, b: a() != b(),
        "<": lambda a, b: a() < b(),
        ">": lambda a, b: a() > b(),
        "<=": lambda a, b: a() <= b(),
        ">=": lambda a, b: a() >= b(),
        "+": lambda a, b: a() + b(),
        "-": lambda a, b: a() - b(),
        "*": lambda a, b: a() * b(),
        "/": lambda a, b: a() // b(),
        "%": lambda a, b: a() % b(),
    }

    def binary(level: int) -> Thunk:
        if level == len(levels):
            return unary()
        v = binary(level + 1)
        while peek() in levels[level]:
            f = fns[take()]
            w = binary(level + 1)
            v = (lambda f, a, b: lambda: f(a, b))(f, v, w)  # noqa: B023 - f, v, w are bound by the outer call
        return v

    def ternary() -> Thunk:
        c = binary(0)
        if peek() == "?":
            take()
            a = ternary()
            take(":")
            b = ternary()
            return lambda: a() if c() else b()
        return c

    tree = ternary()
    if pos != len(toks):
        raise ExtractError(f"C++ expression {expr!r}: trailing tokens {toks[pos:]}")
    return tree()


# --------------------------------------------------------------------------------------------
# Control flow: the ordered data items of a body with the if-conditions that guard each


@dataclass(frozen=True)
class Item:
    conds: tuple[tuple[str, bool], ...]  # (condition text, required truth) from outermost in
    kind: str  # "data" | "return" | "throw"
    text: str


def scan(body: str, item: re.Pattern[str]) -> list[Item]:
    """Walk `body` keeping the stack of enclosing `if (...)` / `else` conditions; report every
    match of `item` plus every `return` and `TLLM_THROW` with the conditions it sits under.
    Loops and switches are entered without a condition (their bodies are data in order);
    `else if` chains are refused rather than guessed."""
    items: list[Item] = []
    frames: list[int] = []  # how many conds each open brace added
    conds: list[tuple[str, bool]] = []
    pending: Optional[tuple[str, bool]] = None  # condition of an if/else whose body is next
    last_if: Optional[str] = None  # condition of the if statement that just ended
    i, n = 0, len(body)

    def word_at(k: int, w: str) -> bool:
        return body.startswith(w, k) and (k == 0 or not (body[k - 1].isalnum() or body[k - 1] == "_")) and not (
            body[k + len(w) : k + len(w) + 1].isalnum() or body[k + len(w) : k + len(w) + 1] == "_"
        )

    while i < n:
        if body[i].isspace():
            i += 1
            continue
        if word_at(i, "else"):
            if last_if is None:
                raise ExtractError("else without a preceding if")
            j = i + 4
            while j < n and body[j].isspace():
                j += 1
            if word_at(j, "if"):
                raise ExtractError("`else if` chains are not supported by this scanner")
            pending, last_if = (last_if, False), None
            i += 4
            continue
        m = re.match(r"if\s*(?:constexpr\s*)?\(", body[i:]) if word_at(i, "if") else None
        if m:
            open_paren = i + m.end() - 1
            close = close_of(body, open_paren) + 1
            pending, last_if = (body[open_paren + 1 : close - 1].strip(), True), None
            i = close
            continue
        m = re.match(r"(?:for|while|switch)\s*\(", body[i:]) if any(word_at(i, w) for w in ("for", "while", "switch")) else None
        if m:
            k = close_of(body, i + m.end() - 1) + 1
            while k < n and body[k].isspace():
                k += 1
            if k >= n or body[k] != "{":
                raise ExtractError("loop without braces is not supported by this scanner")
            if pending is not None:
                conds.append(pending)
                frames.append(1)
                pending = None
            frames.append(0)
            last_if = None
            i = k + 1
            continue
        if body[i] == "{":
            if pending is not None:
                conds.append(pending)
                frames.append(1)
                pending = None
            else:
                frames.append(0)
            last_if = None
            i += 1
            continue
        if body[i] == "}":
            if not frames:
                raise ExtractError("unbalanced braces while scanning")
            added = frames.pop()
            last_if = None
            for _ in range(added):
                c, truth = conds.pop()
                last_if = c if truth else None
            i += 1
            continue
        # a statement: up to the next ';' at bracket depth 0, skipping brace-init lists
        j, depth = i, 0
        while j < n:
            ch = body[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "{":
                j = close_of(body, j) + 1
                continue
            elif ch == ";" and depth == 0:
                break
            j += 1
        stmt = body[i : j + 1].strip()
        here = tuple(conds) + ((pending,) if pending else ())
        items.extend(Item(here, "data", mm.group(0)) for mm in item.finditer(stmt))
        if re.match(r"return\b", stmt):
            items.append(Item(here, "return", stmt))
        elif "TLLM_THROW" in stmt:
            items.append(Item(here, "throw", stmt))
        last_if = pending[0] if pending and pending[1] else None
        pending = None
        i = j + 1
    return items


def holds(item: Item, env: Mapping[str, Any], flags: Optional[Mapping[str, int]] = None) -> bool:
    """Whether every condition guarding `item` has its required truth in `env`."""
    return all(bool(cexpr(c, env, flags)) == want for c, want in item.conds)


def run_items(items: list[Item], env: Mapping[str, Any], where: str, flags: Optional[Mapping[str, int]] = None) -> list[str]:
    """The data items reached, in order, stopping at the first `return` reached; a reached throw
    raises ExtractError (the C++ would throw for this configuration)."""
    out = []
    for it in items:
        if not holds(it, env, flags):
            continue
        if it.kind == "data":
            out.append(it.text)
        elif it.kind == "throw":
            raise ExtractError(f"{where}: the C++ throws for this configuration: {it.text[:120]}")
        else:
            return out  # a returned literal list's items were already collected as data
    return out


def run_function(items: list[Item], env: Mapping[str, Any], where: str, flags: Optional[Mapping[str, int]] = None) -> Any:
    """Execute a predicate body: `auto const [a, b, c] = expr;` / `bool const x = expr;`
    declarations (data items) in order, `return expr;` under if-conditions."""
    scope = dict(env)
    for it in items:
        if not holds(it, scope, flags):
            continue
        if it.kind == "data":
            m = re.match(r"auto\s+const\s*\[\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\]\s*=\s*([\s\S]*);", it.text)
            if m:
                scope.update(zip(m.group(1, 2, 3), cexpr(m.group(4), scope, flags)))
                continue
            m = re.match(r"bool\s+const\s+(\w+)\s*=\s*([\s\S]*);", it.text)
            if not m:
                raise ExtractError(f"{where}: cannot read declaration {it.text[:80]!r}")
            scope[m.group(1)] = bool(cexpr(m.group(2), scope, flags))
        elif it.kind == "return":
            return cexpr(re.match(r"return\s+([\s\S]*);", it.text).group(1), scope, flags)  # type: ignore[union-attr]
        else:
            raise ExtractError(f"{where}: throws: {it.text[:80]}")
    raise ExtractError(f"{where}: predicate body ends without a return")


def join_continuations(text: str) -> str:
    """Macro line continuations (backslash-newline) joined into one line."""
    return text.replace("\\\n", " ")
