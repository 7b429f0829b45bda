"""python3 -m tools.release_watch: is what today's newest releases write still read by tiletune?

CI's release watch (.ci/run), so that the next FlashInfer, vLLM or SGLang release is caught the day it
ships rather than by a user whose cache reads as empty:

- FlashInfer: the newest flashinfer-python on PyPI is installed in a throwaway venv (CPU torch) and its
  own writers are driven (tools/flashinfer_writers); every entry shape, metadata key, autotuner log
  line and raised text it wrote, and every message its autotuner source can log, must be one tiletune
  reads (tools/flashinfer_writers/check.py). Its fixtures must be committed under
  tests/data/flashinfer_writers/<release>/.
- vLLM and SGLang: every release PyPI lists must be a row of the shipped pin table
  (tiletune/core/data/server_flashinfer_pins.json), and the newest one's FlashInfer requirement, read
  again from its wheel METADATA, must be the row's; the FlashInfer release it pins must have committed
  writer fixtures when PyPI has it (0.7.3, which vLLM 0.34.0 pins, never was), and the vLLM / SGLang
  loader fixtures (tests/data/engine_loaders, their own code) must come from that newest release.

- TensorRT-LLM: NOT covered, and the watch says so in its output. `pip index versions tensorrt-llm`
  lists releases (1.2.1 on 2026-12-05), but none installs from PyPI: no wheel for this platform
  (`--only-binary=:all:` finds none) and the sdist is a 10 kB stub whose build backend, wheel-stub,
  fetches the wheel from NVIDIA's own index. Its writers are re-run from stored sources by hand
  (tools/trtllm_writers).
- For the newest vLLM and SGLang, whether tiletune has a catalog of the FlashInfer release each pins:
  a pin PyPI has but tiletune has not catalogued is a finding; a pin PyPI never had (vLLM 0.34.0's
  0.7.3) is said so, with the nearest catalogued releases named as an inference.

Exit status: 0 everything read; 1 a finding (each on its own line, with what to do); 75 PyPI cannot
be reached: one line starting "WARNING: release watch NOT run", nothing was checked. Whether 75 fails
a build is the caller's choice (.ci/run fails it: CI has PyPI).

    python3 -m tools.release_watch [--cache DIR] [--torch REQUIREMENT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.catalogs.cpp import ExtractError  # noqa: E402
from tools.flashinfer_writers import __main__ as writers  # noqa: E402
from tools.flashinfer_writers.check import check_source, check_written  # noqa: E402

OFFLINE = 75  # EX_TEMPFAIL: not a finding about tiletune, and not a pass either
FIXTURES = ROOT / "tests" / "data" / "flashinfer_writers"
PIN_TABLE = ROOT / "tiletune" / "core" / "data" / "server_flashinfer_pins.json"
ENGINE_LOADERS = ROOT / "tests" / "data" / "engine_loaders" / "PROVENANCE.json"
DEFAULT_CACHE = Path(os.environ.get("TILETUNE_WATCH_CACHE") or Path.home() / ".cache" / "tiletune" / "fi-writers")


class Offline(Exception):
    """PyPI could not be reached (the message says how it failed)."""


def newest_flashinfer(timeout: float = 120.0) -> str:
    """The newest flashinfer-python PyPI lists, through pip's own index client (honours pip's config)."""
    try:
        r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "flashinfer-python"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Offline(f"pip index versions flashinfer-python: no answer in {timeout:.0f} s") from None
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise Offline(f"pip index versions flashinfer-python: exit {r.returncode}: {tail}")
    return writers.newest_release()


def watch_flashinfer(version: str, cache: Path, torch: str, log: Callable[[str], None]) -> list[str]:
    """Derive `version` with its own writers (reusing a derivation by the same drive.py) and check it."""
    out = cache / "derived"
    prov = out / version / "PROVENANCE.json"
    if prov.exists() and json.loads(prov.read_text()).get("drive_sha256") == writers.drive_sha256():
        log(f"release watch: FlashInfer {version}: derived before by this drive.py ({out / version}), reused")
    else:
        t0 = time.monotonic()
        try:
            writers.main(["--out", str(out), "--work", str(cache / "work"), "--base", str(cache / "base"),
                          "--torch", torch, version])
        except (SystemExit, ExtractError) as e:  # a step failed: its command and stderr tail are in the message
            if isinstance(e, SystemExit) and e.code in (None, 0):
                raise
            said = e.code if isinstance(e, SystemExit) else e
            return [f"FlashInfer {version} could not be driven (tools/flashinfer_writers; a release that changed what "
                    f"drive.py calls needs drive.py updated, a network failure needs a rerun): {said}"]
        log(f"release watch: FlashInfer {version} derived by its own writers in {time.monotonic() - t0:.0f} s")
    findings = check_written(out / version)
    findings += check_source(writers.wheel_of(version, writers.DEFAULT_WHEELS))
    if not (FIXTURES / version / "PROVENANCE.json").exists():
        findings.append(f"FlashInfer {version} is the newest release on PyPI but has no committed fixtures: run "
                        f"python3 -m tools.flashinfer_writers --out tests/data/flashinfer_writers {version}")
    return findings


def watch_pins(log: Callable[[str], None]) -> list[str]:
    """Every vLLM / SGLang release on PyPI is a row of the pin table; the newest's pin is read again."""
    from tools.server_pins import sources

    doc = json.loads(PIN_TABLE.read_text())
    findings: list[str] = []
    for server in doc["servers"]:
        try:
            listed = sources.pypi_versions(server)
            reads, _ = sources.pypi_releases(server, since=listed[-1])
        except sources.SourceError as e:
            raise Offline(str(e)) from None
        text = next((r.text for r in reads if r.version == str(listed[-1])), None)
        findings += pin_findings(doc, server, [str(v) for v in listed], text, log)
    return findings


def pin_findings(doc: dict[str, Any], server: str, listed: Sequence[str], newest_metadata: Optional[str],
                 log: Callable[[str], None] = lambda s: None) -> list[str]:
    """What the pin table `doc` misses of `server`'s releases `listed` on PyPI (in version order), given the
    newest one's METADATA text as PyPI serves it now (None: not read)."""
    from packaging.version import Version

    from tools.server_pins import parse

    rows = doc["servers"][server]
    source = next(s for s in doc["generated_by"]["sources"] if s["server"] == server)
    skipped = {line.split(":", 1)[0] for line in source.get("skipped", [])}
    findings: list[str] = []
    missing = [v for v in listed if v not in rows and v not in skipped]
    if missing:
        findings.append(f"{server}: {len(missing)} release(s) on PyPI not in the pin table ({', '.join(missing[-5:])}): "
                        "run python3 -m tools.server_pins")
    newest = listed[-1]
    row = rows.get(newest)
    log(f"release watch: {server} {newest} (newest on PyPI): "
        + ("in the pin table" if row is not None else "NOT in the pin table")
        + (f", pins flashinfer {row['pin']}" if row is not None and row["pin"] else ""))
    if row is None:
        return findings
    if newest_metadata is not None:
        now = parse.summarize(parse.flashinfer_requirements(newest_metadata))
        if (now["pin"], now["spec"]) != (row["pin"], row["spec"]):
            findings.append(f"{server} {newest}: PyPI's METADATA now requires {now['spec']!r}, the pin table "
                            f"says {row['spec']!r}: run python3 -m tools.server_pins")
    if row["pin"]:
        said, finding = pin_catalog(server, newest, row["pin"], row.get("pin_on_pypi", True))
        log(said)
        findings += [finding] if finding else []
    if row["pin"] and row.get("pin_on_pypi", True) and not (FIXTURES / row["pin"] / "PROVENANCE.json").exists():
        findings.append(f"{server} {newest} pins FlashInfer {row['pin']}, which has no committed writer fixtures: run "
                        f"python3 -m tools.flashinfer_writers --out tests/data/flashinfer_writers {row['pin']}")
    loaders = json.loads(ENGINE_LOADERS.read_text())["engine_sources"].get(server)
    if loaders is not None and Version(loaders["wheel"].split("-")[1]) != Version(newest):
        findings.append(f"tests/data/engine_loaders ran {loaders['wheel']}'s loader code, but {server} {newest} is the "
                        "newest on PyPI: run python3 -m tools.engine_loaders --out tests/data/engine_loaders")
    return findings


def pin_catalog(server: str, release: str, pin: str, on_pypi: bool) -> tuple[str, Optional[str]]:
    """Whether tiletune has a tactic catalog of the FlashInfer release `server` `release` pins: a log line, and a
    finding when it has none though PyPI has the release (tools/catalogs can build it). A pin PyPI never had (vLLM
    0.34.0's 0.7.3) cannot be catalogued: the line says so and names the nearest catalogued releases, as an
    inference (what `inspect` says of such entries too: tiletune/analysis/release_verdicts.py)."""
    from tiletune import catalogs

    if catalogs.canonical_version(pin) is not None:
        return f"release watch: {server} {release} pins FlashInfer {pin}: catalogued", None
    near = catalogs.nearest_releases(pin, 1)
    nearest = (f"; nearest catalogued releases: {' and '.join(near)} (an inference, not a decode: whether {pin}'s "
               "tactic lists equal theirs is not known)") if near else ""
    if not on_pypi:
        return (f"release watch: {server} {release} pins FlashInfer {pin}, which PyPI never had and tiletune has no "
                f"catalog of: its CUTLASS tactics are not decoded{nearest}"), None
    return (f"release watch: {server} {release} pins FlashInfer {pin}: NOT catalogued{nearest}",
            f"{server} {release} pins FlashInfer {pin}, which PyPI has and tiletune has no catalog of: run "
            "python3 -m tools.catalogs (tools/catalogs/README.md)")


def tensorrt_llm_line(timeout: float = 120.0) -> str:
    """What the watch says of TensorRT-LLM, which it cannot cover: the newest release PyPI lists (pip's own index
    client; not checked when PyPI does not answer) and why none is driven."""
    why = ("no release's writer is derived from PyPI (on 2026-12-05 none installed from it: no wheel, and the sdist is "
           "a 10 kB stub whose build backend, wheel-stub, fetches the wheel from NVIDIA's own index); tools/trtllm_writers "
           "re-runs stored sources by hand (tests/data/trtllm_writers)")
    try:
        r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "tensorrt-llm"],
                           capture_output=True, text=True, timeout=timeout)
        first = r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout.strip() else ""
    except subprocess.TimeoutExpired:
        first = ""
    listed = f"PyPI lists {first.strip()}; " if first.startswith("tensorrt-llm (") else ""
    return f"release watch: TensorRT-LLM NOT covered: {listed}{why}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.release_watch", description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="kept between runs: the CPU-torch base venv and what was derived ($TILETUNE_WATCH_CACHE)")
    ap.add_argument("--torch", default=os.environ.get("TILETUNE_WATCH_TORCH", writers.TORCH),
                    help=f"pip requirement for torch in the base venv (default: {writers.TORCH}, or $TILETUNE_WATCH_TORCH)")
    args = ap.parse_args(argv)

    def log(s: str) -> None:
        print(s, flush=True)

    t0 = time.monotonic()
    try:
        version = newest_flashinfer()
        log(f"release watch: FlashInfer {version} is the newest flashinfer-python on PyPI")
        findings = watch_pins(log)
        findings += watch_flashinfer(version, args.cache, args.torch, log)
        log(tensorrt_llm_line())
    except Offline as e:
        print(f"WARNING: release watch NOT run: PyPI cannot be reached ({e}); the newest FlashInfer, vLLM and "
              "SGLang releases were not checked", flush=True)
        return OFFLINE
    for f in findings:
        print(f"release watch: {f}", flush=True)
    print(f"release watch: {len(findings)} finding(s) in {time.monotonic() - t0:.0f} s", flush=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
