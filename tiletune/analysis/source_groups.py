"""Source groups: which inputs are the run of one server, so that nothing of two servers is merged.

Verdicts, failure rows, not-tried lists, the tile map and rank checks are built per group. The
rule (docs/guide.md's "Inputs from several servers" says the same):

1. Files of one layout directory belong together: the ranks of one SGLang / vLLM / TensorRT-LLM
   cache (files that name a rank), a vLLM cache directory, a FlashInfer v2 store, a JIT workspace.
2. Any other file (a FlashInfer v1 cache file, a TensorRT-LLM cache, a log, pasted text, stdin)
   belongs with the other files of its folder, except a log that names no arch and no GPU (in
   its text, path or records) in a folder holding several logs: nothing ties it to its neighbours,
   and logs side by side are often runs of different machines, so it is a group of its own
   (showing one run in two rows loses nothing; merging two runs hides which one failed).
3. A place inside a server's cache root (a path through a folder named `flashinfer`, `sglang` or
   `vllm`: FlashInfer's JIT workspaces and store, SGLANG_CACHE_DIR, VLLM_CACHE_ROOT) belongs to
   that root, the folder above the first such name: one machine's caches, whatever server wrote them.
4. Places of one folder or root that state different FlashInfer versions, archs or GPU names (in
   their own text, path or metadata; --arch / --flashinfer-version state nothing) are different
   servers: each conflicting place starts a group of its own.
5. Blocklists and retry ledgers are not a server's output but facts about configs on a GPU: they
   join the only group when the other inputs form one; otherwise the group of their own folder.

Different folders are different servers (hostA/vllm.log and hostB/vllm.log never merge, even
when both name one GPU and release). A group is named by its folder or root, or by its first
place where that is split. `label` is the name relative to what all groups share, for text.
Pure: paths and records in, groups out; no I/O.
"""

from __future__ import annotations

import os.path
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from msgspec import Struct

from tiletune.core.events import InputFacts
from tiletune.core.records import TuningRecord

# readers whose input is a directory layout (the record's source is that directory)
_DIRECTORY_LAYOUTS = frozenset(("flashinfer-v2", "jit-workspace"))
# readers of files whose place in a server's layout the path names (vLLM / SGLang cache roots)
_FILE_LAYOUTS = frozenset(("sglang", "vllm"))
_AUXILIARY = frozenset(("blocklist", "ledger"))  # facts about configs, not a server run's output
_LOGS = frozenset(("log", "stdin"))
_STATED = ("flashinfer_version", "arch", "gpu")


class SourceGroup(Struct, frozen=True, gc=False):
    """Inputs that belong to one server run."""

    name: str  # the layout directory, folder or file that names the group
    label: str  # `name` relative to what every group's name shares (for text)
    sources: tuple[str, ...]  # the inputs (records' `source`) in it
    basis: str  # why they belong together: "layout directory", "folder", "one log", ...


def _folder(source: str) -> str:
    return os.path.dirname(source) or "."


def _rank_home(source: str, rank: str) -> str:
    """The directory holding every rank of a per-rank layout: the parent of the path part that names `rank`."""
    parts = source.replace("\\", "/").split("/")
    for i in range(len(parts) - 1, -1, -1):
        if rank in parts[i]:
            return "/".join(parts[:i]) or "."
    return _folder(source)


@dataclass
class _Input:
    source: str
    kind: str
    home: Optional[str] = None  # the layout directory, for inputs of rule 1
    stated: dict[str, set[str]] = field(default_factory=dict)  # fact -> values the input states


def _stated_by(record: TuningRecord) -> Iterable[tuple[str, str]]:
    env = record.env
    if env.flashinfer_version and not (env.version_source or "").startswith("--"):
        yield "flashinfer_version", env.flashinfer_version
    if env.arch and not (env.arch_source or "").startswith("--"):
        yield "arch", env.arch
    if env.gpu:
        yield "gpu", env.gpu


def _conflict(a: Mapping[str, set[str]], b: Mapping[str, set[str]]) -> bool:
    """Both state a fact and share none of its values."""
    return any(a.get(f) and b.get(f) and not (a[f] & b[f]) for f in _STATED)


def source_groups(
    records: Iterable[TuningRecord],
    *,
    sources: Sequence[tuple[str, str]] = (),
    inputs: Sequence[InputFacts] = (),
    event_sources: Iterable[str] = (),
) -> tuple[SourceGroup, ...]:
    """Split the inputs into source groups (rule in the module docstring), in order of first appearance.

    `records` give each input's kind, rank and stated facts; `sources` ((path, kind) of each input
    used) and `event_sources` add inputs that gave only events; `inputs` add what text inputs state.
    """
    seen: dict[str, _Input] = {}

    def note(source: str, kind: str) -> _Input:
        i = seen.get(source)
        if i is None:
            i = seen[source] = _Input(source, kind)
        return i

    last: Optional[TuningRecord] = None
    for r in records:
        if last is not None and r.source == last.source and r.env is last.env:
            continue  # records of one input share their environment: look once
        last = r
        i = note(r.source, r.source_kind)
        if r.rank:
            i.home = _rank_home(r.source, r.rank)
        elif r.source_kind in _DIRECTORY_LAYOUTS:
            i.home = r.source
        elif r.source_kind in _FILE_LAYOUTS:
            i.home = _folder(r.source)
        for fact, value in _stated_by(r):
            i.stated.setdefault(fact, set()).add(value)
    for path, kind in sources:
        note(path, kind)
    for source in event_sources:
        note(source, "log")
    for info in inputs:
        i = note(info.source, "log")
        for fact in _STATED:
            f = getattr(info, fact)
            if f is not None and f.value and not str(f.source or "").startswith("--"):  # an option states nothing
                i.stated.setdefault(fact, set()).add(str(f.value))

    # places: a layout directory (rule 1), a log of a folder with several logs, else a loose file's folder (rule 2)
    logs_in: dict[str, int] = {}
    for i in seen.values():
        if i.home is None and i.kind in _LOGS:
            logs_in[_folder(i.source)] = logs_in.get(_folder(i.source), 0) + 1
    # rule 4 inside a folder: a loose file whose facts conflict with its folder's is a place of its own
    places: dict[str, tuple[list[_Input], dict[str, set[str]]]] = {}
    auxiliary: list[_Input] = []
    split: set[str] = set()  # inputs set apart from their folder because their facts conflict

    def join(place: str, i: _Input, alone: str) -> None:
        members, facts = places.setdefault(place, ([], {}))
        if members and _conflict(i.stated, facts):
            members, facts = places.setdefault(alone, ([], {}))
            split.add(i.source)
        members.append(i)
        for fact, values in i.stated.items():
            facts.setdefault(fact, set()).update(values)

    for i in seen.values():
        if i.home is None and i.kind in _AUXILIARY:
            auxiliary.append(i)
        elif i.home is not None:
            join(i.home, i, i.home)
        elif i.source == "<stdin>" or (i.kind in _LOGS and logs_in[_folder(i.source)] > 1
                                       and not (i.stated.get("arch") or i.stated.get("gpu"))):
            join(i.source, i, i.source)
        else:
            join(_folder(i.source), i, i.source)
    # rule 3: places of one server cache root together; rule 4: split where their facts conflict
    per_root: dict[str, list[tuple[str, list[_Input], dict[str, set[str]]]]] = {}
    for place, (members, stated) in places.items():
        subgroups = per_root.setdefault(_cache_root(place) or place, [])
        for _first, ms, facts in subgroups:
            if not _conflict(stated, facts):
                for fact, values in stated.items():
                    facts.setdefault(fact, set()).update(values)
                ms.extend(members)
                break
        else:
            subgroups.append((place, list(members), dict(stated)))
    groups: dict[str, list[str]] = {}  # name -> sources, in order
    basis: dict[str, str] = {}
    for root, subgroups in per_root.items():
        for first, members, _facts in subgroups:
            name = root if len(subgroups) == 1 else first
            kinds = {_basis(root, first, m, split) for m in members}
            why = kinds.pop() if len(kinds) == 1 else "one folder or server cache root"
            if len(subgroups) > 1 or any(m.source in split for m in members):
                why += "; split from the rest of its folder or root: it states another FlashInfer version, arch or GPU"
            for m in members:
                groups.setdefault(name, []).append(m.source)
            basis[name] = why
    # rule 5: blocklists and ledgers
    only = next(iter(groups)) if len(groups) == 1 else None
    for i in auxiliary:
        name = only if only is not None else _folder(i.source)
        groups.setdefault(name, []).append(i.source)
        basis.setdefault(name, "folder")
    return _labelled(groups, basis)


_ROOT_NAMES = ("flashinfer", "sglang", "vllm")


def _cache_root(place: str) -> Optional[str]:
    """The server cache root a place lies in: the folder above the first part named flashinfer, sglang or vllm."""
    parts = place.replace("\\", "/").split("/")
    for k, part in enumerate(parts):
        if part in _ROOT_NAMES:
            return "/".join(parts[:k]) or ("/" if place.startswith("/") else ".")
    return None


def _basis(root: str, place: str, i: _Input, split: set[str]) -> str:
    if i.home is not None:
        what = "layout directory"
    elif i.source in split:
        what = "one input"
    elif place == i.source:
        what = "one input" if i.source == "<stdin>" or i.kind not in _LOGS else "one log naming no arch or GPU (its folder holds several logs)"
    else:
        what = "folder"
    return what + (" in one server cache root" if root != place and _cache_root(place) == root else "")


def _labelled(groups: Mapping[str, list[str]], basis: Mapping[str, str]) -> tuple[SourceGroup, ...]:
    names = list(groups)
    labels = {n: n for n in names}
    if len(names) > 1:
        try:
            common = os.path.commonpath([os.path.abspath(n) for n in names])
        except ValueError:  # different drives
            common = ""
        if common:
            for n in names:
                rel = os.path.relpath(os.path.abspath(n), common)
                labels[n] = _short(rel if rel != "." else n)
    return tuple(SourceGroup(n, labels[n], tuple(groups[n]), basis[n]) for n in names)


def _short(path: str, part: int = 16, keep: int = 3) -> str:
    """A label that fits a table row: long hashes cut to 8 characters (a hash is no word: its head
    names it), middle parts elided; a name with words in it is kept whole (never cut mid-word)."""
    parts = [p[:8] + "…" if len(p) > part and p.isalnum() else p for p in path.split("/")]
    if len(parts) > keep:
        parts = [parts[0], "…", *parts[-(keep - 1):]]
    return "/".join(parts)


def group_of(groups: Sequence[SourceGroup]) -> dict[str, SourceGroup]:
    """source -> its group."""
    return {s: g for g in groups for s in g.sources}


def group_names(groups: Sequence[SourceGroup]) -> dict[str, str]:
    """source -> its group's name (what results' `group` fields and the overview's keys hold)."""
    return {s: g.name for g in groups for s in g.sources}


__all__ = ["SourceGroup", "group_names", "group_of", "source_groups"]
