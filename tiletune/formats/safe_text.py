"""Text from inputs made safe for a terminal: no escape sequences, no control characters.

A cache key, a log line or a path can carry ESC sequences: CSI (`ESC [ ... m`, colours, cursor
moves, screen clears) and OSC (`ESC ] ... BEL`, window titles, hyperlinks, clipboard writes), in
their 7-bit and 8-bit (C1) forms. Printed as they are, they rewrite the user's terminal or hide
lines. Every formatter's output and every message tiletune prints goes through `terminal_safe`:
7-bit sequences are removed, other control characters (but tab and newline, and the 8-bit
introducers too) become U+FFFD.
"""

from __future__ import annotations

import re

__all__ = ["terminal_safe"]

# 7-bit sequences are removed whole (ESC always starts one); a string sequence (OSC, DCS, ...) only
# up to its terminator on the same line, at most 512 characters, so an unterminated one cannot eat
# the rest of the output. The 8-bit introducers (C1: U+009B CSI, U+009D OSC, ...) are replaced
# alone like every other control character: what followed them is left as harmless text (and a
# JSON string that holds one stays a valid JSON string).
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI (a cut-off one too)
    r"|\x1b[\]PX^_][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)?"  # OSC, DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` without terminal escape sequences; other control characters (not tab or newline) as U+FFFD."""
    if not _CONTROL.search(text):  # the usual case: one C-speed scan
        return text
    return _CONTROL.sub("\ufffd", _SEQUENCE.sub("", text))
