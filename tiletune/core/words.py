"""Shortening text for a narrow place without cutting a word: `clip_words`.

Every view that must shorten a text (a table cell, a verdict's clause, a ticket capped to fit an
issue) cuts it here, at a space, and marks the cut with an ellipsis: a reader never sees half a
word ("was p…") and mistakes it for another. A single word longer than the room is kept whole,
up to `LONGEST_WORD` characters: past that it is no word a reader reads (a hash, a dump, hostile
input) and is cut, so no view grows without bound.
"""

from __future__ import annotations

import re

ELLIPSIS = "\u2026"
LONGEST_WORD = 48


def clip_words(text: str, width: int) -> str:
    """`text` when it fits `width` characters; else its words up to the last space that leaves room
    for " …", then " …". A first word longer than `width` is kept whole unless it is longer than
    LONGEST_WORD too (then it is cut at `width`)."""
    if len(text) <= width:
        return text
    head = text[: max(width - 2, 0) + 1]  # (+1: a space right after the room still ends a word there)
    cut = head.rfind(" ")
    if cut <= 0:
        word_end = text.find(" ")
        word = text if word_end < 0 else text[:word_end]
        if len(word) > max(LONGEST_WORD, width):
            return text[: max(width - 1, 1)] + ELLIPSIS
        return word if word_end < 0 else word + " " + ELLIPSIS
    return text[:cut].rstrip(" ,;:") + " " + ELLIPSIS


# where a quote may be cut, best first: a sentence's end, then a clause's ("; ", ", ", ": ", a dash, a parenthesis)
_SENTENCE_ENDS = (". ", "! ", "? ", ".) ")
_CLAUSE_ENDS = ("; ", ": ", " — ", " – ", " - ", ") ", ", ")


_TEMPLATE_ARGS = re.compile(r"<[^<>]{12,}>")  # a template's argument list ("kernel<T, T_cache, ...>"), innermost first
# a call's argument list in code ("f(&num_blocks, kernel<...>, 0)"): an address, a scope, a template, no prose
_CALL_ARGS = re.compile(r"(?<=[\w>])\((?=[^()]*(?:&|::|<\.\.\.>))[^()]{12,}\)")


_DIRS = re.compile(r"(?<![\w/.~])(?:\.{1,2}|~)?/(?:[\w.+-]+/){2,}(?=[\w.+-])")  # a path's directories (its file name stays)


def _code_args_folded(t: str, room: int) -> str:
    """A long error line whose middle is code (template arguments, a call's arguments) with that middle folded to
    '<...>' / '(...)', innermost first, then paths to their file names ('.../x.h:274'), until it fits `room`: what the error says comes after it ('...(...): no
    kernel image is available for execution on the device') and must not be the part that is cut."""
    for pattern, folded in ((_TEMPLATE_ARGS, "<...>"), (_CALL_ARGS, "(...)"), (_DIRS, ".../")):
        while len(t) > room:
            new = pattern.sub(folded, t, count=1)
            if new == t:
                break
            t = new
    return t


def quote_bounded(text: str, limit: int, mark: str = " ...") -> str:
    """A person's words quoted within about `limit` characters (runs of space folded): whole when they fit in a
    quarter more than `limit` (a sentence a little long is not cut for a few words); else cut after the last
    sentence that ends in the second half of the room, else after the last clause, else at a word (never
    mid-word), and the cut says how many words it left out: "... [12 more words]"."""
    t = " ".join(str(text).split())
    if len(t) <= limit + limit // 4:
        return t
    t = _code_args_folded(t, limit + limit // 4)
    if len(t) <= limit + limit // 4:
        return t
    room = t[: limit + 1]
    cut = -1
    for ends in (_SENTENCE_ENDS, _CLAUSE_ENDS):
        cut = max((room.rfind(e) + len(e.rstrip()) for e in ends if room.rfind(e) >= limit // 2), default=-1)
        if cut > 0:
            break
    if cut <= 0:
        sp = room.rfind(" ")
        cut = sp if sp > limit // 2 else limit
    head = t[:cut].rstrip(" ,;:—–-")
    left = len(t[cut:].split())
    return f"{head}{mark} [{left} more word{'s' if left != 1 else ''}]" if left else head


# the advice a library prints after an error's words ("Please set TLLM_LOG_LEVEL=WARNING to find out ...", "For
# debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Search for `cudaErrorIllegalAddress' in ..."): never a fact of the run
_ADVICE = re.compile(r"(?:\.\s+|\s+)(?=(?:Please )?[Ss]et [A-Z][A-Z0-9_]+=|Search for `|For debugging consider|Compile with `|"
                     r"CUDA kernel errors might)")


def without_advice(text: str) -> str:
    """A logged error's words up to the advice its library prints after them (the advice left out); the words whole
    when there is none, or when the text is nothing but advice."""
    t = " ".join(str(text).split())
    parts = _ADVICE.split(t, maxsplit=1)
    head = parts[0].rstrip(" ,;:") if len(parts) > 1 else t
    return head if head else t


__all__ = ["ELLIPSIS", "LONGEST_WORD", "clip_words", "quote_bounded", "without_advice"]
