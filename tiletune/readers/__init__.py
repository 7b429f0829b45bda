"""The reader registry: route every input path to the reader module that recognises it.

`read_inputs(paths, ctx)` takes files and directories. A directory is walked (symlinks followed,
loops cut by device+inode, unrelated files skipped by name before any byte is read); a directory
a reader claims as a whole (a FlashInfer v2 store, a JIT workspace) is handed to it and not
walked further. Each file's first 4 KiB go to every module's `sniff()` in registry order, most
specific first; the first that says yes reads it. Nothing is ever opened for writing.

Bad inputs become `InputProblem`s (one line naming the file, and the key or line), never
exceptions, so every other input is still read. Each says whether it loses data (a file, key
or line skipped: the CLI exits 2) or is a note that loses nothing (exit status stays 0).
"""

from __future__ import annotations

import importlib
import os
import re
import stat
from pathlib import Path
from types import ModuleType
from typing import Optional, Sequence, Union

from msgspec import Struct

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError, unexpected
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import InputProblem, TuningRecord
from tiletune.readers.interface import ReadContext
from tiletune.readers.named_cache import adopt_named_caches

__all__ = ["ReadOutcome", "read_inputs", "reader_modules"]

# Most specific first: layouts before the generic format, formats with unique markers before
# the v1 cache (whose sniff is the loosest JSON test), logs last (they accept free text).
_READER_NAMES = (
    "flashinfer_v2",
    "jit_workspace",
    "trtllm",
    "blocklist",
    "ledger",
    "sglang",
    "vllm",
    "flashinfer_v1",
    "logs",
)
# Readers that claim directories only (a JIT workspace is a folder): routing a file with content
# never asks them, so a cache does not import their patterns.
_DIRECTORY_ONLY = frozenset(("jit_workspace",))
_HEAD_BYTES = 4096
_MAX_DEPTH = 40
# While walking a directory only these names are opened at all (a JIT workspace holds thousands
# of object files); a file named on the command line is always looked at.
_WALK_SUFFIXES = frozenset((".json", ".jsonl", ".log", ".txt", ".out", ".err"))
_TEMP_PREFIXES = (".autotuner_", ".autotune_", ".tmp")
_CLAIM_SCAN_ENTRIES = 200_000  # directory entries looked at to find claimed directories before reading

Item = Union[TuningRecord, InputProblem]


class ReadOutcome(Struct, frozen=True, gc=False):
    """Everything read from the inputs: records, problems, and (path, reader kind) of each input used."""

    records: tuple[TuningRecord, ...]
    problems: tuple[InputProblem, ...]
    sources: tuple[tuple[str, str], ...]
    events: tuple[Event, ...] = ()  # non-entry facts of logs and pasted text (tiletune.core.events)
    inputs: tuple[InputFacts, ...] = ()  # what each text input says about its run (arch, versions)


def _reader(name: str) -> ModuleType:
    """One reader module, imported on first use: routing imports only the readers it tries, in
    order, so a cache never pays for the log reader's grammar (`tiletune --help` needs none)."""
    return importlib.import_module(f"tiletune.readers.{name}")


def reader_modules() -> tuple[ModuleType, ...]:
    """The reader modules, in routing order."""
    return tuple(_reader(name) for name in _READER_NAMES)


def _head(path: Path) -> Union[bytes, InputProblem]:
    """The first bytes of a regular file, as UTF-8 (UTF-16 and BOM text re-encoded for the sniffers)."""
    try:
        with bounded_input.open_input(path) as f:
            return bounded_input.sniffable(f.read(_HEAD_BYTES))
    except ReaderError as e:
        if "is a directory" in str(e):
            return b""
        return InputProblem(str(path), str(e), loses_data=True)
    except OSError as e:
        return InputProblem(str(path), f"{path}: cannot read it ({e.strerror or e})", loses_data=True)


def _route(path: Path, head: bytes) -> Optional[ModuleType]:
    for name in _READER_NAMES:
        if head and name in _DIRECTORY_ONLY:
            continue
        mod = _reader(name)
        try:
            if mod.sniff(path, head):
                return mod
        except OSError:  # e.g. a directory sniff that cannot look inside (permissions): not this reader's
            continue
    return None


_LOG_BRACKET = re.compile(rb"\[(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}-\d\d-\d\d|[A-Za-z][\w.-]*\]|rank\d)")


def _is_text(head: bytes) -> bool:
    """Non-empty, no NUL byte, UTF-8 (a cut multi-byte character at the 4 KiB edge allowed), not JSON. A log
    whose first line starts with a bracketed timestamp or tag ("[06/21/2025-01:30:42] [TRT-LLM]") is text."""
    stripped = head.lstrip()
    if not head or b"\x00" in head or stripped[:1] == b"{" or (stripped[:1] == b"[" and not _LOG_BRACKET.match(stripped)):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start >= len(head) - 3
    return True


def _describe_unknown(path: Path, head: bytes) -> str:
    if not head:
        return f"{path}: empty file, nothing to read"
    if b"\x00" in head:
        return f"{path}: binary file, not a cache, log or blocklist tiletune reads"
    return f"{path}: not a format tiletune reads (FlashInfer v1/v2 cache, SGLang/vLLM/TensorRT-LLM cache, log, blocklist, ledger)"


class _StdinPath(type(Path())):  # type: ignore[misc]  # PosixPath or WindowsPath, as Path() makes
    """The private file stdin was copied into, named `<stdin>` wherever a reader names its input
    (`str()`: records' source, messages) and opened at its real place (`os.fspath()`). Paths made from
    it (its parent) are plain paths of the private folder."""

    def __str__(self) -> str:
        return "<stdin>" if self.name == "stdin" else super().__str__()

    def __fspath__(self) -> str:
        return super().__str__()


class _Collector:
    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.records: list[TuningRecord] = []
        self.problems: list[InputProblem] = []
        self.sources: list[tuple[str, str]] = []
        self.events: list[Event] = []
        self.inputs: list[InputFacts] = []
        self.stdin_read = False
        self.seen: set[tuple[int, int]] = set()  # (device, inode) of every file and directory visited
        # (device, inode) of the files inside directories a reader claims whole (a JIT workspace, a v2
        # store): read through that reader, which knows their version and arch from the layout, never
        # as a plain file reached by another route (a `latest.log` symlink to the workspace's log)
        self.claimed: set[tuple[int, int]] = set()

    def first_visit(self, path: Path) -> bool:
        """False when this file or directory was already read (named twice, or reached by two routes)."""
        try:
            st = path.stat()
        except OSError:
            return True  # let the reader report why it cannot be read
        ident = (st.st_dev, st.st_ino)
        if ident in self.seen:
            return False
        self.seen.add(ident)
        return True

    def run(self, mod: ModuleType, path: Path) -> None:
        records, problems, events = self.records, self.problems, self.events
        n_records, n_problems = len(records), len(problems)
        try:
            for item in mod.read(path, self.ctx):
                if isinstance(item, TuningRecord):
                    records.append(item)
                elif isinstance(item, Event):
                    events.append(item)
                elif isinstance(item, InputFacts):
                    self.inputs.append(item)
                else:
                    problems.append(item)
        except OSError as e:  # a file vanished or lost permission mid-read
            problems.append(InputProblem(str(path), f"{path}: read failed ({e.strerror or e})", loses_data=True))
        except ReaderError as e:  # a reader's own one-line refusal
            problems.append(InputProblem(str(path), str(e) if str(e).startswith(str(path)) else f"{path}: {e}",
                                         loses_data=True))
        except Exception as e:  # noqa: BLE001 - last resort: one bad input must not stop the others
            problems.append(InputProblem(str(path), f"{path}: could not be read: {unexpected(e)}", loses_data=True))
        if (len(records) == n_records and mod.KIND != "log" and path.is_file()
                and any("invalid JSON" in p.message for p in problems[n_problems:])):
            self._recover_pasted(path, n_problems)
        unusable = len(records) == n_records and any(p.fatal for p in problems[n_problems:])
        if not unusable:  # `sources` lists the inputs actually used
            self.sources.append((str(path), mod.KIND))

    def find_claims(self, roots: Sequence[Path]) -> None:
        """Before anything is read: the directories under `roots` a reader claims whole, and the files
        inside them (`claimed`). Only directories are looked at here (no file is opened)."""
        seen: set[tuple[int, int]] = set()
        stack = [(r, 0) for r in reversed(roots)]
        budget = _CLAIM_SCAN_ENTRIES
        while stack and budget > 0:
            d, depth = stack.pop()
            try:
                st = d.stat()
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) in seen or depth > _MAX_DEPTH:
                continue  # (a file named on the command line claims nothing: no reader is asked)
            seen.add((st.st_dev, st.st_ino))
            if _route(d, b"") is not None:
                budget -= self._claim_files(d, budget)
                continue
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            budget -= len(entries)
            for e in entries:
                try:
                    if e.is_dir():  # follows symlinks, as the walk does
                        stack.append((Path(e.path), depth + 1))
                except OSError:
                    continue

    def _claim_files(self, d: Path, budget: int) -> int:
        """Add the readable-by-name files under the claimed directory `d`; the entries looked at."""
        looked = 0
        for top, _dirs, names in os.walk(d):
            looked += len(names) + 1
            for name in names:
                if os.path.splitext(name)[1] in _WALK_SUFFIXES:
                    try:
                        st = os.stat(os.path.join(top, name))
                    except OSError:
                        continue
                    self.claimed.add((st.st_dev, st.st_ino))
            if looked >= budget:
                break
        return looked

    def file(self, path: Path, explicit: bool) -> None:
        try:
            st = path.stat()
            if (st.st_dev, st.st_ino) in self.claimed:
                return  # read, with its layout's facts, by the reader of the directory that holds it
        except OSError:
            pass
        if not self.first_visit(path):
            return
        head = _head(path)
        if isinstance(head, InputProblem):
            if explicit:
                self.problems.append(head)
            else:  # an unreadable file in a walked directory matters only if it was a cache
                self.problems.append(InputProblem(head.source, head.message, fatal=False, loses_data=True))
            return
        mod = _route(path, head)
        if mod is None and explicit and (path.suffix == ".json" or isinstance(path, _StdinPath)) and head.lstrip()[:1] in (b"{", b"["):
            # JSON the sniffers do not recognise: the v1 reader says precisely what is wrong with it
            mod = _reader("flashinfer_v1")
        if mod is None and explicit and _is_text(head) and path.suffix.lower() not in (".json", ".jsonl"):
            # a text file named on the command line (a ticket, a crash output): the log reader says
            # what it holds (events, a pasted cache) or that it holds nothing tiletune reads
            self._text_fallback(_reader("logs"), path, head)
            return
        if mod is None:
            if explicit:
                self.problems.append(InputProblem(str(path), _describe_unknown(path, head), loses_data=True))
            return
        self.run(mod, path)

    def _text_fallback(self, mod: ModuleType, path: Path, head: bytes) -> None:
        """A named text file no reader claimed (a ticket, a crash output): read by the log reader, as
        stdin's text is, so the same bytes give the same answer from a file and from stdin. A text in
        which nothing is recognised is not bad input: the reader's note says what was looked for
        (exit 0); binary or unreadable files, and files whose name claims JSON (.json, .jsonl: a cache
        or a ledger that is not one) never get here."""
        self.run(mod, path)

    def _recover_pasted(self, path: Path, n_problems: int) -> None:
        """A cache pasted with `...` lines (or cut short) is no JSON: recover its entries line by line."""
        from tiletune.readers import logs

        items = list(logs.read_log(path, self.ctx))
        recovered = [i for i in items if isinstance(i, TuningRecord)]
        if not recovered:
            return
        json_problem = self.problems[n_problems:]
        del self.problems[n_problems:]
        self.records.extend(recovered)
        self.events.extend(i for i in items if isinstance(i, Event))
        self.inputs.extend(i for i in items if isinstance(i, InputFacts))
        self.problems.extend(i for i in items if isinstance(i, InputProblem))
        first = json_problem[0].message.split(": ", 1)[-1] if json_problem else "invalid JSON"
        n = f"{len(recovered)} entr{'y' if len(recovered) == 1 else 'ies'}"
        if "ends early" in first:  # cut off: what followed the cut is lost (exit status 2), the rest is recovered
            self.problems.insert(n_problems, InputProblem(str(path), f"{path}: {first}; {n} before the cut recovered line by line, "
                                                         "the rest is lost", fatal=False, loses_data=True))
        else:  # a paste with '...' elisions: every entry that is there was read
            self.problems.insert(n_problems, InputProblem(str(path), f"{path}: not valid JSON ({first}); read as a pasted cache, "
                                                         f"{n} recovered line by line", fatal=False, loses_data=False))

    def stdin(self) -> None:
        """`-`: stdin copied once into a private file (under the JSON size limit), then routed and read
        like a file named on the command line, its records and messages naming it `<stdin>`: the same
        sniffers, bounded decoder and limits as a file (a deep JSON, binary data, a cut cache)."""
        import shutil
        import tempfile

        from tiletune.readers import json_common

        source = "<stdin>"
        if self.stdin_read:  # the CLI refuses `-` named twice; a library caller gets a problem
            self.problems.append(InputProblem(source, f"{source}: named twice; stdin is read once", loses_data=True))
            return
        self.stdin_read = True
        spool = Path(tempfile.mkdtemp(prefix="tiletune-stdin-"))
        try:
            path = _StdinPath(spool / "stdin")
            try:
                size = bounded_input.spool_stdin(path, json_common.max_json_bytes(), override="TILETUNE_MAX_JSON_MB")
            except ReaderError as e:
                self.problems.append(InputProblem(source, str(e), loses_data=True))
                return
            if not size:  # nothing came: nothing to lose either
                self.problems.append(InputProblem(source, f"{source}: empty, nothing to read", fatal=False, loses_data=False))
                return
            self.file(path, explicit=True)
        finally:
            shutil.rmtree(spool, ignore_errors=True)

    def directory(self, root: Path) -> None:
        before, n_problems = len(self.sources), len(self.problems)
        self._walk(root, 0)
        if len(self.sources) == before and not any(p.fatal for p in self.problems[n_problems:]):
            self.problems.append(InputProblem(str(root), f"{root}: no cache, log or blocklist found in this directory",
                                              fatal=False, loses_data=False))  # nothing there to lose

    def _walk(self, d: Path, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.problems.append(InputProblem(str(d), f"{d}: more than {_MAX_DEPTH} directories deep; not walked further "
                                              "(name it on the command line to read it)", fatal=False, loses_data=True))
            return
        if not self.first_visit(d):
            return  # a symlink loop, or a second way into a directory already read
        mod = _route(d, b"")
        if mod is not None:
            self.run(mod, d)
            return
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except PermissionError:
            # fatal when it is the directory the user named; for one found while walking the rest is
            # still read, but whatever that directory held is lost
            self.problems.append(InputProblem(str(d), f"{d}: cannot list it (permission denied)" + ("" if depth == 0 else "; skipped"),
                                              fatal=depth == 0, loses_data=True))
            return
        except OSError:
            return
        subdirs = []
        for e in entries:
            if e.name.startswith(_TEMP_PREFIXES) or e.name.endswith((".tmp", ".lock")):
                continue
            try:
                mode = e.stat().st_mode  # follows symlinks; a dangling one raises
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                subdirs.append(Path(e.path))
            elif stat.S_ISREG(mode) and os.path.splitext(e.name)[1] in _WALK_SUFFIXES:
                self.file(Path(e.path), explicit=False)
        for s in subdirs:
            self._walk(s, depth + 1)


def read_inputs(paths: Sequence[Union[str, Path]], ctx: ReadContext) -> ReadOutcome:
    """Read every input; files are routed by sniffing, directories walked. Never raises for bad input."""
    c = _Collector(ctx)
    c.find_claims([Path(p) for p in paths if str(p) != "-"])
    for p in paths:
        if str(p) == "-":
            c.stdin()
            continue
        path = Path(p)
        try:
            mode = path.stat().st_mode  # follows symlinks
        except FileNotFoundError:
            msg = "broken symbolic link" if path.is_symlink() else "no such file or directory"
            c.problems.append(InputProblem(str(path), f"{path}: {msg}", loses_data=True))
            continue
        except PermissionError:
            c.problems.append(InputProblem(str(path), f"{path}: cannot reach it (permission denied on a parent directory)",
                                           loses_data=True))
            continue
        except OSError as e:  # ELOOP, ENAMETOOLONG, ...
            c.problems.append(InputProblem(str(path), f"{path}: cannot access it ({e.strerror or e})", loses_data=True))
            continue
        if stat.S_ISDIR(mode):
            c.directory(path)
        elif stat.S_ISREG(mode):
            c.file(path, explicit=True)
        else:  # a FIFO or device would block or never end: never open one
            c.problems.append(InputProblem(str(path), f"{path}: not a regular file or directory", loses_data=True))
    records, inputs = adopt_named_caches(list(c.records), c.events, list(c.inputs), c.problems)
    return ReadOutcome(records=tuple(records), problems=tuple(c.problems), sources=tuple(c.sources),
                       events=tuple(c.events), inputs=tuple(inputs))

