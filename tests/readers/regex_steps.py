"""Counting a regex's work instead of timing it.

`Steps(pattern)` compiles a pattern (through the standard library's own regex parser) into a
small backtracking program and runs it the way a backtracking engine does, counting every
instruction executed. It has none of the engine's shortcuts, so its count bounds what a
backtracking matcher can be made to do on that text: linear counts on growing inputs mean no
catastrophic backtracking, whatever the machine's load. `Counting` wraps a compiled pattern: the
real pattern answers (so behaviour is unchanged), the program counts, and both must agree.

Covers what tiletune's key patterns use: literals, classes (ranges, negation, \\d \\w \\s), `.`,
groups, alternation, greedy and lazy repeats, lookahead and fixed-width lookbehind.
"""

from __future__ import annotations

import re
from typing import Any, Callable, List, Optional, Tuple

try:  # the standard library's regex parser (3.11: re._parser; 3.10: sre_parse)
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

_CATEGORIES = {
    C.CATEGORY_DIGIT: str.isdecimal, C.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_", C.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
    C.CATEGORY_SPACE: str.isspace, C.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
}


def _is(x: str) -> Callable[[str], bool]:
    return lambda c: c == x


def _is_not(x: str) -> Callable[[str], bool]:
    return lambda c: c != x


def _between(lo: str, hi: str) -> Callable[[str], bool]:
    return lambda c: lo <= c <= hi


class Steps:
    """A counting backtracking matcher for one pattern."""

    def __init__(self, pattern: "re.Pattern[str]"):
        self.dotall = bool(pattern.flags & re.DOTALL)
        self.prog: List[Tuple[Any, ...]] = []
        self._emit_seq(P.parse(pattern.pattern, pattern.flags & ~re.UNICODE))
        self.prog.append(("match",))
        self.steps = 0

    # -- compiling: ("char", pred) ("split", preferred, other) ("jmp", to) ("assert", Steps, ahead, negate, width) ("match",)
    def _emit_seq(self, seq: Any) -> None:
        for op, av in seq:
            self._emit(op, av)

    def _emit(self, op: Any, av: Any) -> None:
        if op is C.LITERAL:
            self.prog.append(("char", _is(chr(av))))
        elif op is C.NOT_LITERAL:
            self.prog.append(("char", _is_not(chr(av))))
        elif op is C.ANY:
            self.prog.append(("char", (lambda c: True) if self.dotall else (lambda c: c != "\n")))
        elif op is C.IN:
            self.prog.append(("char", self._class(av)))
        elif op is C.SUBPATTERN:
            self._emit_seq(av[-1])
        elif op is C.BRANCH:
            jumps = []
            alts = av[1]
            for i, alt in enumerate(alts):
                if i < len(alts) - 1:
                    split = len(self.prog)
                    self.prog.append(None)
                    self._emit_seq(alt)
                    jumps.append(len(self.prog))
                    self.prog.append(None)
                    self.prog[split] = ("split", split + 1, len(self.prog))
                else:
                    self._emit_seq(alt)
            for j in jumps:
                self.prog[j] = ("jmp", len(self.prog))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, body = av
            greedy = op is C.MAX_REPEAT
            for _ in range(lo):
                self._emit_seq(body)
            if hi == C.MAXREPEAT:
                top = len(self.prog)
                self.prog.append(None)
                self._emit_seq(body)
                self.prog.append(("jmp", top))
                self.prog[top] = self._split(top + 1, len(self.prog), greedy)
            else:
                holes = []
                for _ in range(hi - lo):
                    holes.append(len(self.prog))
                    self.prog.append(None)
                    self._emit_seq(body)
                for h in holes:
                    self.prog[h] = self._split(h + 1, len(self.prog), greedy)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av
            inner = Steps.__new__(Steps)
            inner.dotall, inner.prog, inner.steps = self.dotall, [], 0
            inner._emit_seq(sub)
            inner.prog.append(("match",))
            width = sub.getwidth()
            assert direction == 1 or width[0] == width[1], "lookbehind must have a fixed width"
            self.prog.append(("assert", inner, direction == 1, op is C.ASSERT_NOT, width[0]))
        else:
            raise NotImplementedError(f"regex_steps: {op} is not supported")

    @staticmethod
    def _split(body: int, out: int, greedy: bool) -> Tuple[Any, ...]:
        return ("split", body, out) if greedy else ("split", out, body)

    def _class(self, items: Any) -> Callable[[str], bool]:
        negate = bool(items) and items[0][0] is C.NEGATE
        tests: List[Callable[[str], bool]] = []
        for op, av in items[1:] if negate else items:
            if op is C.LITERAL:
                tests.append(_is(chr(av)))
            elif op is C.RANGE:
                tests.append(_between(chr(av[0]), chr(av[1])))
            elif op is C.CATEGORY:
                tests.append(_CATEGORIES[av])
            else:
                raise NotImplementedError(f"regex_steps: class item {op}")
        return lambda c: any(t(c) for t in tests) != negate

    # -- running
    def run(self, text: str, pos: int, *, end: Optional[int] = None) -> Optional[int]:
        """Where a match starting at `pos` ends (the first one in backtracking order; with `end`,
        only a match ending exactly there counts), or None; adds the instructions run to `steps`."""
        stack = [(0, pos)]
        prog = self.prog
        while stack:
            pc, i = stack.pop()
            while True:
                self.steps += 1
                ins = prog[pc]
                kind = ins[0]
                if kind == "char":
                    if i < len(text) and ins[1](text[i]):
                        pc, i = pc + 1, i + 1
                        continue
                    break
                if kind == "split":
                    stack.append((ins[2], i))
                    pc = ins[1]
                    continue
                if kind == "jmp":
                    pc = ins[1]
                    continue
                if kind == "assert":
                    inner, ahead, negate, width = ins[1:]
                    if ahead:
                        ok = inner.run(text, i) is not None
                    else:
                        ok = i - width >= 0 and inner.run(text, i - width, end=i) is not None
                    self.steps += inner.steps
                    inner.steps = 0
                    if ok != negate:
                        pc += 1
                        continue
                    break
                if end is None or i == end:  # match
                    return i
                break
        return None


class Counting:
    """A compiled pattern that also counts, in `.steps`, what a backtracking matcher does."""

    def __init__(self, pattern: "re.Pattern[str]"):
        self.real = pattern
        self.program = Steps(pattern)

    @property
    def steps(self) -> int:
        return self.program.steps

    def fullmatch(self, text: str, pos: int = 0) -> Optional["re.Match[str]"]:
        got = self.real.fullmatch(text, pos)
        assert (self.program.run(text, pos, end=len(text)) is not None) == (got is not None)
        return got

    def match(self, text: str, pos: int = 0) -> Optional["re.Match[str]"]:
        got = self.real.match(text, pos)
        assert self.program.run(text, pos) == (got.end() if got else None)
        return got

    def _scan(self, text: str) -> int:
        """Matches found trying every start position, as a search, sub or subn does."""
        found, i = 0, 0
        while i <= len(text):
            e = self.program.run(text, i)
            if e is None:
                i += 1
            else:
                found += 1
                i = e if e > i else i + 1
        return found

    def search(self, text: str, pos: int = 0) -> Optional["re.Match[str]"]:
        self._scan(text[pos:])
        return self.real.search(text, pos)

    def subn(self, repl: Any, text: str) -> Tuple[str, int]:
        out = self.real.subn(repl, text)
        assert self._scan(text) == out[1]
        return out

    def sub(self, repl: Any, text: str) -> str:
        return self.subn(repl, text)[0]
