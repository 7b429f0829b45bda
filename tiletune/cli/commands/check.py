"""`tiletune check PATHS [--env FILE]`: will the target's FlashInfer use each cache file, will vLLM's and
SGLang's rank rules keep each rank group's files, and which keys differ between ranks (tile terms).

The target is this host (what `tiletune doctor` finds here) or `--env FILE`, the JSON `tiletune
doctor -f json` wrote on the target. The analysis is analysis/check.py; rendering formats/check.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from tiletune.analysis.check import CheckResult, TargetEnv
from tiletune.core.errors import ReaderError, UsageError


def target_from_doctor(doc: Any, origin: str, release: Optional[str] = None) -> TargetEnv:
    """The target environment from a doctor report's JSON (`tiletune doctor -f json`)."""
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("tiletune.doctor/"):
        raise ReaderError(f"{origin}: not a `tiletune doctor -f json` report (no tiletune.doctor schema)")
    fm = doc.get("flashinfer_metadata")
    if not isinstance(fm, dict) or not isinstance(fm.get("values"), (list, tuple)):
        raise ReaderError(f"{origin}: the doctor report has no flashinfer_metadata (written by an older tiletune): "
                          "run `tiletune doctor -f json` of this version on the target")
    try:
        values = tuple((str(k), None if v is None else str(v)) for k, v in fm["values"])
        basis = tuple((str(k), str(v)) for k, v in fm.get("basis") or ())
    except (TypeError, ValueError):
        raise ReaderError(f"{origin}: flashinfer_metadata.values is not a list of [field, value] pairs") from None
    host = doc.get("host")
    how = (f"FlashInfer {fm.get('release')}'s own _collect_metadata()" if fm.get("source") == "flashinfer"
           else "inferred without FlashInfer")
    source = f"{origin}: {how}" + (f" on host {host}" if host else "")
    rel = fm.get("release")
    if release:
        source += f"; release taken as {release} (--flashinfer-version)"
        values = tuple((k, release if k == "flashinfer_version" else v) for k, v in values)
        if "flashinfer_version" not in dict(values):
            values += (("flashinfer_version", release),)
        basis = tuple((k, "--flashinfer-version" if k == "flashinfer_version" else v) for k, v in basis)
        rel = release
    return TargetEnv(rel if isinstance(rel, str) else None, values, basis, source)


def this_host(release: Optional[str] = None) -> TargetEnv:
    from msgspec import to_builtins as asdict

    from tiletune.cli.commands import doctor
    from tiletune.formats.doctor import SCHEMA

    report = doctor.collect()
    return target_from_doctor({"schema": SCHEMA, **asdict(report)}, "this host", release)


def run_check(paths: Sequence[Path], env_file: Optional[Path], release: Optional[str], ranks: Optional[int] = None) -> CheckResult:
    from tiletune.analysis.check import V1_KINDS, check
    from tiletune.core import bounded_input
    from tiletune.core.records import InputProblem
    from tiletune.decode import decode_all
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext
    from tiletune.readers.json_common import load_json

    if not paths:
        raise UsageError("tiletune check: name the cache files or directories to check")
    if env_file is not None:
        doc = bounded_input.load_file(env_file, limit=16 << 20, what="doctor report")
        target = target_from_doctor(doc, str(env_file), release)
    else:
        target = this_host(release)
    outcome = read_inputs([str(p) for p in paths], ReadContext())
    raw: Dict[str, Any] = {}
    stores: Dict[str, Any] = {}
    problems = list(outcome.problems)
    for path, kind in outcome.sources:
        if kind == "flashinfer-v2":
            if Path(path).is_dir():
                stores[path] = store_facts(Path(path))
            else:
                problems.append(InputProblem(path, f"{path}: one entry of a FlashInfer managed (v2) store: not judged "
                                                   "(name the store's directory, which holds its manifest)",
                                             fatal=False, loses_data=False))
        if kind in V1_KINDS and path not in raw:
            got = load_json(Path(path))
            if isinstance(got, InputProblem):
                problems.append(got)
            else:
                raw[path] = got
    entries = decode_all(r for r in outcome.records if r.source in raw)
    if ranks is not None and ranks < 1:
        raise UsageError(f"--ranks {ranks}: must be 1 or more")
    return check(outcome.sources, raw, entries, target, problems, ranks, stores)


def store_facts(store: Path) -> Any:
    """What `check` needs of a managed v2 store: its manifest, the hash FlashInfer computes from it, and the
    entry files FlashInfer would never read (named other than by their key's hash)."""
    from tiletune.analysis.check import StoreFacts
    from tiletune.core.records import InputProblem
    from tiletune.readers.flashinfer_v2 import entry_name, env_hash
    from tiletune.readers.json_common import load_json

    manifest = load_json(store / "manifest.json") if (store / "manifest.json").is_file() else None
    if isinstance(manifest, InputProblem):
        manifest = None
    misplaced, n = [], 0
    entries = store / "entries"
    for f in sorted(entries.glob("*.json")) if entries.is_dir() else []:
        n += 1
        e = load_json(f)
        key = e.get("key") if isinstance(e, dict) else None
        if not isinstance(key, str) or entry_name(key) != f.name:
            misplaced.append(f.name)
    return StoreFacts(manifest, store.name, env_hash(manifest) if isinstance(manifest, dict) else None, n,
                      tuple(misplaced[:20]))
