r"""Redaction for reports that leave the machine: directories, the user name and the host name.

`Redactor(paths, host_names, user_names, home)` replaces, in any text (Markdown or JSON):
- the home directory by `~`;
- the directory part of every input path the report names (absolute or relative, with spaces or
  any other character; also in its Markdown-escaped spelling) by `<dir1>`, `<dir2>`... numbered
  shortest first; a path named as a directory becomes `<dirN>` whole, and what lies below a
  numbered directory keeps its relative names (`<dir1>/v1/cache.json`);
- any other absolute directory (in error texts, log lines) by the same numbering; file names stay.
  It starts at a `/` after a space, bracket, quote, `=` or `:` (`cache_dir:/srv/x/`, the second
  entry of `PATH=/a:/b`, `file:///srv/x/`; a URL's path after its host stays), runs through
  names that may hold single spaces, brackets and parentheses (`/srv/my data/`, `/srv/run[3]/`),
  and ends at its last `/` before a space that leads to no further `/`; a Windows folder
  (`C:\Users\alice\`, `\\server\share\`) and another account's home (`~bob/`) are numbered too;
- `aliases`: other spellings of a directory (a source group's label, relative to what the groups
  share) replaced by that directory's token;
- user and host names in any letter case, also inside file names (`alice-cache.json`,
  `cache_GPUBOX7.log`): names of 3 or more characters wherever they stand between separators,
  shorter ones only inside a path, file, host or e-mail name (a one-letter user name must not
  eat every "a" in the prose).
Deterministic for given inputs; nothing here reads the machine except `local_identity()`.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Iterable, Optional, Sequence

import msgspec

__all__ = ["Redactor", "local_identity", "redact", "redact_json_strings"]

# Shared system and image account names identify no one, and several are words ("root cause",
# "the user"): redacting them would garble prose and protect nothing. Their home folders are
# still folded into "~" and other directories still numbered.
GENERIC_ACCOUNTS = frozenset({"root", "admin", "user", "ubuntu", "debian", "centos", "fedora", "ec2-user", "runner",
                              "nobody", "jovyan", "docker", "nvidia", "guest", "vscode", "codespace"})

# An absolute directory inside a text: "/data/alice/logs/" (its file name is kept); "~/..." is left
# alone once the home directory has been folded into "~". A name may hold single spaces (each
# followed by more of the name before the next "/"), brackets and parentheses; it never holds a
# quote, "<", ">", "|", ":", ",", ";" or a backslash, which end it.
_NAME = r"[^\s/\\'\"`<>|:,;]+(?: [^\s/\\'\"`<>|:,;]+)*"
_ABS_DIR = re.compile(r"(?:(?<![\w./<>~\\-])|(?<=://))/(?:" + _NAME + r"/)+|(?<![\w./<>~\\-])~[\w.-]+/(?:" + _NAME + r"/)*")
# A Windows folder: "C:\Users\alice\" or "\\server\share\" (its file name kept).
_WIN_DIR = re.compile(r"(?<![\w\\])(?:[A-Za-z]:|\\\\[^\s\\'\"`<>|]+)\\(?:[^\s\\/'\"`<>|:]+(?: [^\s\\/'\"`<>|:]+)*\\)+")
# Separators a name can stand between inside a file or host name ("_" is one: cache_alice.json).
_EDGE_BEFORE = r"(?<![A-Za-z0-9])"
_EDGE_AFTER = r"(?![A-Za-z0-9])"
# A token that is a path, a file, a host or an e-mail name: where short names are replaced.
_PATHISH = re.compile(r"[^\s'\"`()\[\]<>|,;]*[/._@-][^\s'\"`()\[\]<>|,;]*")


_MEMO_TEXTS = 200_000  # distinct texts remembered per report (the cells of a big report's tables)


def _escaped(path: str) -> str:
    from tiletune.formats.markdown import cell

    return cell(path)


class Redactor:
    """A text -> text function; see the module docstring."""

    def __init__(self, paths: Iterable[str] = (), *, host_names: Sequence[str] = (), user_names: Sequence[str] = (),
                 home: Optional[str] = None, aliases: Iterable[tuple[str, str]] = ()) -> None:
        self.home = home.rstrip("/") + "/" if home and home.rstrip("/") else None
        dirs: set[str] = set()
        for p in paths:
            p = str(p)
            if not p or p in ("-", "."):
                continue
            if self.home and p.startswith(self.home):
                p = "~/" + p[len(self.home):]
            real = self.home + p[2:] if p.startswith("~/") and self.home else p
            # a path that is not here (a report of another machine's paths): a name with a suffix is a file
            is_dir = os.path.isdir(real) or (not os.path.exists(real) and "." not in os.path.basename(real.rstrip("/")))
            d = p.rstrip("/") if is_dir else p[: p.rfind("/") + 1]
            if d and d not in ("~", "~/", "/"):
                dirs.add(d)
        self.numbers: dict[str, str] = {}
        for d in sorted({d.rstrip("/") for d in dirs}, key=lambda d: (len(d), d)):
            # below a directory already numbered the relative structure stays: <dir1>/wild/x/ticket.txt
            if not any(d.startswith(known + "/") for known in self.numbers):
                self.numbers[d] = f"<dir{len(self.numbers) + 1}>"
        # (spelling, token) longest first, each directory in its raw and its Markdown-escaped spelling
        pairs = []
        for d, token in self.numbers.items():
            for spelling in {d, _escaped(d)}:
                pairs.append((spelling, token))
        self.pairs = sorted(pairs, key=lambda x: -len(x[0]))
        names = [(n, "<host>") for n in host_names if n] + [(n, "<user>") for n in user_names if n]
        self.long_names = [(re.compile(_EDGE_BEFORE + re.escape(n) + _EDGE_AFTER, re.IGNORECASE), t)
                           for n, t in sorted(names, key=lambda x: -len(x[0])) if len(n) >= 3]
        self.short_names = [(re.compile(_EDGE_BEFORE + re.escape(n) + _EDGE_AFTER, re.IGNORECASE), t)
                            for n, t in sorted(names, key=lambda x: -len(x[0])) if len(n) < 3]
        # another spelling of a directory (a group label "data/acme/deeper" for "/x/data/acme/deeper"):
        # its directory's token, where it stands as a token of its own (between spaces, brackets,
        # quotes or commas: "(trtllm)" is the folder, "trtllm::fp4_gemm::gemm" an op name)
        self._memo: dict[str, str] = {}
        self.aliases: list[tuple[re.Pattern[str], str]] = []
        found = []
        labels = []
        for label, name in aliases:
            label = str(label).rstrip("/")
            if len(label) < 3 or label in (".", "..") or label == str(name).rstrip("/"):
                continue
            token = self(str(name).rstrip("/") + "/")[:-1]
            if token != label:
                labels.append(label)
                found.append((re.compile(r"(?<![^\s(\[{'\",])" + re.escape(label) + r"(?![^\s)\]}'\",;])"), token))
        self.aliases = sorted(found, key=lambda x: -len(x[0].pattern))
        self._memo.clear()
        self._words = ([spelling for spelling, _ in self.pairs] + labels
                       + [n for n in (*host_names, *user_names) if n])

    def __call__(self, text: str) -> str:
        """`text` redacted (memoised: a report's tables repeat most of their cells)."""
        out = self._memo.get(text)
        if out is None:
            out = self._redact(text)
            if len(self._memo) < _MEMO_TEXTS:
                self._memo[text] = out
        return out

    def _redact(self, text: str) -> str:
        if self.home:
            text = re.sub(re.escape(self.home.rstrip("/")) + r"(?![\w.-])", "~", text)
        for spelling, token in self.pairs:
            if spelling in text:
                text = text.replace(spelling, token)
        if "\\" in text:
            text = _WIN_DIR.sub(self._number, text)
        text = _ABS_DIR.sub(self._number, text)
        for pattern, token in self.aliases:
            text = pattern.sub(token, text)
        for pattern, token in self.long_names:
            text = pattern.sub(token, text)
        if self.short_names:
            text = _PATHISH.sub(self._short_in_path, text)
        return text

    def words(self) -> list[str]:
        """Every literal besides "/", "\\" and "~" whose presence in a text can make `self` change
        it: the directories' spellings, the aliases' labels, the user and host names (any case)."""
        return list(self._words)

    def _number(self, m: "re.Match[str]") -> str:
        whole = m.group(0)
        sep = whole[-1]  # "/" or a Windows "\\"
        d = whole.rstrip(sep)
        if d not in self.numbers:
            self.numbers[d] = f"<dir{len(self.numbers) + 1}>"
        return self.numbers[d] + sep

    def _short_in_path(self, m: "re.Match[str]") -> str:
        token = m.group(0)
        for pattern, name in self.short_names:
            token = pattern.sub(name, token)
        return token


# A JSON string as msgspec and json write it: `"` and `\` and control characters escaped, the rest
# as UTF-8 bytes (no UTF-8 sequence holds the byte of `"` or `\`).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# What lies between two strings of a JSON text: structure, numbers, true / false / null.
_BETWEEN_STRINGS = re.compile(r"[\s,:\[\]{}0-9+\-.eEnultrfas]*", re.IGNORECASE)


def redact_json_strings(data: bytes, redact: Callable[[str], str]) -> bytes:
    """`data`, a JSON text, with `redact` applied to each of its strings (object keys too), as
    applying it to every string of the decoded value and encoding that again would give, but for
    the spelling of the strings that did not change (kept as they were).

    A report's entries hold about 100 strings each (a 100,000-entry report, 10 million), nearly
    all of them tiletune's own words; walking the decoded tree to redact each took most of `report
    -f json`'s time. With a `Redactor`, only the strings that can change are looked at: those
    holding a "/", a "\\" (any escape), a "~" or one of its words (Redactor.words), found with
    bytes.find. Nothing between two strings of a JSON text is one of those, so each one found lies
    in a string, whose ends are the nearest unescaped quotes around it; unless a word could be
    spelled by JSON's own structure ("true", "1e5") or is not ASCII (whose other letter cases are
    not searched): then, as for any other `redact`, every string is looked at."""
    memo: dict[bytes, bytes] = {}

    def redacted(token: bytes) -> bytes:
        out = memo.get(token)
        if out is None:
            text = msgspec.json.decode(token) if b"\\" in token else token[1:-1].decode("utf-8", "surrogatepass")
            new = redact(text)
            out = token if new == text else msgspec.json.encode(new)
            if len(memo) < _MEMO_TEXTS:
                memo[token] = out
        return out

    words = [w for w in redact.words() if w] if isinstance(redact, Redactor) else None
    if words is None or any(_BETWEEN_STRINGS.fullmatch(w) or not w.isascii() for w in words):
        return _JSON_STRING.sub(lambda m: redacted(m.group()), data)
    needles = [b"/", b"~", b"\\"] + sorted({w.lower().encode() for w in words})
    low = data.lower() if len(needles) > 3 else data  # (ASCII case only: the words are ASCII)
    nxt = {n: low.find(n) for n in needles}
    parts: list[bytes] = []
    pos = 0
    while True:
        live = [i for i in nxt.values() if i >= 0]
        if not live:
            break
        hit = min(live)
        start = _unescaped_quote(data, hit, backward=True)
        end = _unescaped_quote(data, hit, backward=False) + 1
        parts += (data[pos:start], redacted(data[start:end]))
        pos = end
        for n, i in nxt.items():
            if 0 <= i < pos:
                nxt[n] = low.find(n, pos)
    parts.append(data[pos:])
    return b"".join(parts)


def _unescaped_quote(data: bytes, i: int, *, backward: bool) -> int:
    """The index of the nearest `"` before (or from) byte `i` that no backslash escapes."""
    q = i
    while True:
        q = data.rfind(b'"', 0, q) if backward else data.find(b'"', q)
        if q < 0:
            raise ValueError("not inside a JSON string")
        b = q
        while b > 0 and data[b - 1] == 0x5C:
            b -= 1
        if (q - b) % 2 == 0:
            return q
        if not backward:
            q += 1


def redact(text: str, *, host_names: Sequence[str] = (), user_names: Sequence[str] = (), home: Optional[str] = None,
           paths: Iterable[str] = ()) -> str:
    """`Redactor(...)(text)` in one call."""
    return Redactor(paths, host_names=host_names, user_names=user_names, home=home)(text)


def local_identity() -> tuple[list[str], list[str], Optional[str]]:
    """(host names, user names, home) of this machine, for `Redactor`; generic account names
    (GENERIC_ACCOUNTS) are no user names here."""
    import getpass
    import socket

    hosts = {socket.gethostname()}
    try:
        hosts.add(socket.getfqdn())
    except OSError:
        pass
    hosts |= {h.split(".")[0] for h in list(hosts)}
    hosts.discard("localhost")
    users = {os.environ.get(v, "") for v in ("USER", "LOGNAME")}
    try:
        users.add(getpass.getuser())
    except Exception:  # noqa: BLE001 - no user name is fine
        pass
    home = os.path.expanduser("~")
    if home and home not in ("/", "~"):
        users.add(os.path.basename(home.rstrip("/")))
    users = {u for u in users if u and u.lower() not in GENERIC_ACCOUNTS}
    hosts.discard("")
    return sorted(hosts), sorted(users), home if home not in ("/", "~") else None
