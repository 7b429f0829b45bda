"""Shortening text for a narrow place without cutting a word: `clip_words`.

Every view that must shorten a text (a table cell, a verdict's clause, a ticket capped to fit an
issue) cuts it here, at a space, and marks the cut with an ellipsis: a reader never sees half a
word ("was p…") and mistakes it for another. A single word longer than the room is kept whole,
up to `LONGEST_WORD` characters: past that it is no word a reader reads (a hash, a dump, hostile
input) and is cut, so no view grows without bound.
"""

from __future__ import annotations

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


__all__ = ["ELLIPSIS", "LONGEST_WORD", "clip_words"]
