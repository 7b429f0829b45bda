"""Text from inputs made safe for a terminal: no escape sequences, no control characters.

A cache key, a log line or a path can carry ESC sequences: CSI (`ESC [ ... m`, colours, cursor
moves, screen clears) and OSC (`ESC ] ... BEL`, window titles, hyperlinks, clipboard writes), in
their 7-bit and 8-bit (C1) forms. Printed as they are, they rewrite the user's terminal or hide
lines. Every formatter's output and every message tiletune prints goes through `terminal_safe`:
sequences are removed, other control characters (but tab and newline) become U+FFFD.
"""

from __future__ import annotations

import re

__all__ = ["terminal_safe"]

_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI (a cut-off one too)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` without terminal escape sequences; other control characters (not tab or newline) as U+FFFD."""
    if not _CONTROL.search(text):  # the usual case: one C-speed scan
        return text
    return _CONTROL.sub("\ufffd", _SEQUENCE.sub("", text))
