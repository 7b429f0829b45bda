"""Text from inputs made safe for a terminal: no escape sequences, no control characters.

A cache key, a log line or a path can carry ESC sequences: CSI (`ESC [ ... m`, colours, cursor
moves, screen clears) and OSC (`ESC ] ... BEL`, window titles, hyperlinks, clipboard writes), in
their 7-bit and 8-bit (C1) forms, and bidirectional controls that make text display in another
order. Printed as they are, they rewrite the user's terminal or hide lines. Every formatter's
output and every message tiletune prints goes through `terminal_safe`: 7-bit sequences are
removed, other control characters (but tab and newline, and the 8-bit introducers too) and the
bidirectional controls become U+FFFD. JSON keeps the data: there a bidirectional control is
written as its `\\uXXXX` escape (`json_safe`).
"""

from __future__ import annotations

import re

__all__ = ["BIDI", "json_safe", "terminal_safe"]

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
# Bidirectional controls (embeddings, overrides, isolates, marks: U+061C, U+200E/F, U+202A-E,
# U+2066-9) reorder what a terminal or a browser shows, so a key or a path can display as something
# else (CVE-2021-42574, "Trojan Source"): replaced like control characters.
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI + "]")


# every byte but the control characters a terminal acts on (tab and newline are kept)
_NOT_CONTROL = bytes(range(256)).translate(None, bytes([*range(0, 9), *range(11, 32), 127]))
_C1_OR_DEL = re.compile(r"[\x7f-\x9f]")


# The colours tiletune itself writes on a terminal (red, green, reset): kept when asked to.
_OWN_COLOURS = re.compile(r"\x1b\[(?:31|32|0)m")


def terminal_safe(text: str, *, keep_colours: bool = False) -> str:
    """`text` without terminal escape sequences; other control characters (not tab or newline) as U+FFFD.
    `keep_colours`: tiletune's own colour codes (red, green, reset) stay (an input's copy of them can
    only colour text, not move the cursor, retitle the window or hide anything)."""
    if text.isascii():  # O(1): then a C-speed pass finds any control byte (a regex scan is 10x slower)
        if not text.encode("ascii").translate(None, _NOT_CONTROL):
            return text
    elif not _CONTROL.search(text):
        return text
    if keep_colours:
        parts = _OWN_COLOURS.split(text)
        codes = _OWN_COLOURS.findall(text)
        clean = [_CONTROL.sub("\ufffd", _SEQUENCE.sub("", p)) for p in parts]
        return "".join(c + (codes[i] if i < len(codes) else "") for i, c in enumerate(clean))
    return _CONTROL.sub("\ufffd", _SEQUENCE.sub("", text))


def json_safe(text: str) -> str:
    """`terminal_safe` for JSON text, which escapes every C0 control character itself: only DEL and the
    C1 characters (kept raw in non-ASCII output) are replaced; a bidirectional control (only ever
    inside a string) becomes its `\\uXXXX` escape, the same character to a JSON reader but inert on a
    terminal. ASCII text is returned at once."""
    if text.isascii():
        return text.replace("\x7f", "\ufffd") if "\x7f" in text else text
    if _may_hold_c1_or_del(text):
        text = _C1_OR_DEL.sub("\ufffd", text)
    if any(ch in text for ch in BIDI):  # twelve C-speed scans; a regex pass over every chunk costs more
        text = text.translate(_BIDI_ESCAPES)
    return text


_BIDI_ESCAPES = {ord(ch): f"\\u{ord(ch):04x}" for ch in BIDI}


def json_safe_bytes(chunk: bytes) -> bytes:
    """`json_safe` for UTF-8 JSON bytes (the JSON writer's chunks): ASCII without DEL is returned at
    once (a C-speed pass); anything else is decoded, made safe and encoded again."""
    if chunk.isascii():
        return chunk.replace(b"\x7f", "\ufffd".encode()) if b"\x7f" in chunk else chunk
    text = bytes(chunk).decode("utf-8", "surrogatepass")
    safe = json_safe(text)
    return chunk if safe is text else safe.encode("utf-8", "surrogatepass")


# every byte but DEL and the C1 range (as Latin-1 bytes: U+007F..U+009F)
_NOT_C1_OR_DEL = bytes(range(256)).translate(None, bytes(range(0x7F, 0xA0)))


def _may_hold_c1_or_del(text: str) -> bool:
    """False only when `text` has no DEL or C1 character, found by C-speed byte passes: a regex scan
    of a big inspect's non-ASCII JSON took 30 ms per 3.5 MB chunk (0.8 s over 50,000 entries)."""
    try:  # text of Latin-1 characters (a path with an accent): one byte per character, an exact test
        return bool(text.encode("latin-1").translate(None, _NOT_C1_OR_DEL))
    except UnicodeEncodeError:  # wider characters: in UTF-8, DEL is 7F and every C1 character starts with C2
        utf8 = text.encode("utf-8", "surrogatepass")
        return b"\x7f" in utf8 or b"\xc2" in utf8
