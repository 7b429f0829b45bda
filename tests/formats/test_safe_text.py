"""json_safe's byte-level prefilter says what the plain regex says."""

from __future__ import annotations

import random

from tiletune.formats.safe_text import _C1_OR_DEL, json_safe


def test_json_safe_matches_the_regex():
    # DEL, every C1 character, their neighbours, Latin-1 letters (and U+00A0..U+00BF, which share
    # the UTF-8 lead byte C2 with C1), wider characters, a lone surrogate
    pool = ["a", "\"", "\\", "\x7e", "\x7f", "\xa0", "\xb5", "\xbf", "\xc2", "\xe9", "\xff", "\u2026", "\ud800",
            "\U0001f600", *map(chr, range(0x80, 0xa0))]
    rng = random.Random(5)
    cases = ["", "plain", "M\u00fcller", "\u2026", "\x85", "\xc2\x85", "\xb5s"]
    for _ in range(4000):
        cases.append("".join(rng.choice(pool) for _ in range(rng.randrange(1, 12))))
        cases.append("x" * rng.randrange(0, 3) + rng.choice(pool) * rng.randrange(1, 3))
    for text in cases:
        assert json_safe(text) == _C1_OR_DEL.sub("\ufffd", text), ascii(text)
