"""Where the requirement texts come from: PyPI wheel METADATA, or the files at a clone's tags."""
from __future__ import annotations

import io
import json
import re
import subprocess
import tarfile
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from packaging.version import InvalidVersion, Version

from tools.server_pins.parse import flashinfer_requirements

REPOSITORIES = {"vllm": "https://github.com/vllm-project/vllm", "sglang": "https://github.com/sgl-project/sglang"}
SDIST_LIMIT = 64 << 20  # bytes: vLLM sdists reach ~50 MB; a larger one is skipped (and said so)


def _pypi() -> Tuple[str, str]:
    """(files host URL, JSON API URL template) of pip's own default index (PyPI), as pip names them.
    Imported on use: pip's internals load the standard library's distutils, which a process that
    later imports setuptools must not have loaded."""
    from pip._internal.models.index import PyPI

    return f"https://{PyPI.file_storage_domain}", PyPI.pypi_url + "/{name}/json"
# The files at a release tag that hold (or built) the FlashInfer requirement, per server; each
# that exists at the tag is read (vLLM moved requirements-cuda.txt to requirements/cuda.txt in 0.8.x).
REPO_FILES = {
    "vllm": ("requirements/cuda.txt", "requirements-cuda.txt", "requirements/common.txt", "requirements-common.txt", "setup.py"),
    "sglang": ("python/pyproject.toml", "python/setup.py"),
}
_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|\.post|\.dev)\d+)*)$")


class SourceError(Exception):
    """A source could not be read (one line, names what)."""


@dataclass(frozen=True)
class Read:
    """One release's requirement text and where it was read."""

    version: str
    text: str
    source: str  # human words: file and tag, or the wheel's file name
    commit: Optional[str] = None


def _version_key(line: str) -> Tuple[int, Any]:
    try:
        return (0, Version(line.split(":", 1)[0]))
    except InvalidVersion:
        return (1, line)


def _get(url: str, timeout: float = 60.0) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "tiletune-tools-server_pins"})
    last: Optional[Exception] = None
    for _ in range(3):
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 (https URLs only)
                return r.read()
        except (OSError, ValueError) as e:  # urllib.error.URLError is an OSError; ValueError: a malformed URL
            last = e
    raise SourceError(f"{url}: {last}")


def _pick_wheel(files: List[dict]) -> Optional[dict]:
    """One wheel per release (their METADATA is built from the same requirement files; platform
    differences are environment markers inside it): a Linux x86_64 or pure-Python one first."""
    wheels = [f for f in files if f.get("packagetype") == "bdist_wheel" and not f.get("yanked")]
    wheels.sort(key=lambda f: (not ("x86_64" in f["filename"] or f["filename"].endswith("-any.whl")), f["filename"]))
    return wheels[0] if wheels else None


def _file_url(index_url: str, wheel: dict) -> str:
    """The wheel's absolute URL: as given, or (a mirror that writes relative links) PyPI's
    content-addressed path from the file's blake2b digest."""
    url = wheel["url"]
    if url.startswith("https://"):
        return url
    b2 = wheel.get("digests", {}).get("blake2b_256")
    if b2:
        return f"{_pypi()[0]}/packages/{b2[:2]}/{b2[2:4]}/{b2[4:]}/{wheel['filename']}"
    return urllib.parse.urljoin(index_url, url)


def pypi_releases(server: str, since: Optional[Version] = None, workers: int = 4) -> Tuple[List[Read], List[str]]:
    """Every release of `server` on PyPI (from `since` on) that has a wheel: its METADATA text (the
    PEP 658 `.metadata` file PyPI serves beside each wheel, a few kB, not the wheel itself). Also the
    releases skipped, with why."""
    index_url = _pypi()[1].format(name=server)
    index = json.loads(_get(index_url))
    todo, skipped = [], []
    for ver, files in index.get("releases", {}).items():
        try:
            v = Version(ver)
        except InvalidVersion:
            skipped.append(f"{ver}: not a PEP 440 version")
            continue
        if since is not None and v < since:
            continue
        wheel = _pick_wheel(files)
        sdist = next((f for f in files if f.get("packagetype") == "sdist" and not f.get("yanked")), None)
        if wheel is None and sdist is None:
            skipped.append(f"{ver}: no wheel or sdist on PyPI (or yanked)")
            continue
        todo.append((ver, wheel, sdist))

    def one(item: Tuple[str, Optional[dict], Optional[dict]]) -> Tuple[Optional[Read], str]:
        ver, wheel, sdist = item
        if wheel is not None:
            try:
                text = _headers(_get(_file_url(index_url, wheel) + ".metadata").decode("utf-8", "replace"))
                return Read(ver, text, f"Requires-Dist in the METADATA of {wheel['filename']} (PyPI)"), ""
            except SourceError as e:
                if "404" not in str(e):
                    raise
        # no METADATA file served beside the wheel: the sdist's own requirement files instead, else
        # the wheel's METADATA member, read with HTTP range requests (its zip directory and that member only)
        if sdist is not None and sdist.get("size", 0) <= SDIST_LIMIT:
            return _sdist_read(server, ver, sdist, _get(_file_url(index_url, sdist))), ""
        if wheel is not None:
            ranged = _wheel_metadata_by_range(_file_url(index_url, wheel), wheel.get("size"))
            if ranged is not None:
                return Read(ver, ranged, f"Requires-Dist in the METADATA of {wheel['filename']} (PyPI, read by range requests)"), ""
        return None, f"{ver}: no METADATA file served, no sdist under {SDIST_LIMIT >> 20} MiB, and the wheel's METADATA could not be read"

    with ThreadPoolExecutor(max_workers=workers) as pool:
        got = list(pool.map(one, todo))
    reads = [r for r, _ in got if r is not None]
    skipped += [why for r, why in got if r is None]
    return reads, sorted(skipped, key=_version_key)


def pypi_versions(project: str) -> List[Version]:
    """Every release PyPI lists for `project` (files yanked or not), from the same JSON API: the
    table says which pinned FlashInfer releases a user cannot install from PyPI."""
    index = json.loads(_get(_pypi()[1].format(name=project)))
    out = []
    for ver, files in index.get("releases", {}).items():
        try:
            if files:
                out.append(Version(ver))
        except InvalidVersion:
            continue
    return sorted(out)


def _headers(metadata: str) -> str:
    """METADATA's header block: the body after the first blank line is the README, whose code
    examples must not read as requirements."""
    return re.split(r"\r?\n\r?\n", metadata, maxsplit=1)[0]


class _RangeFile:
    """A remote file read by HTTP range requests (64 KiB at least per request, the last span kept),
    so zipfile can read one member of a large wheel without downloading it."""

    CHUNK = 1 << 16

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0
        self.start, self.buf = 0, b""

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        if not (self.start <= self.pos and end <= self.start + len(self.buf)):
            lo, hi = self.pos, min(self.size, max(end, self.pos + self.CHUNK))
            req = urllib.request.Request(self.url, headers={"Range": f"bytes={lo}-{hi - 1}",
                                                            "User-Agent": "tiletune-tools-server_pins"})
            with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310
                if r.status != 206:
                    raise SourceError(f"{self.url}: the server ignores range requests")
                self.start, self.buf = lo, r.read()
        data = self.buf[self.pos - self.start:end - self.start]
        self.pos += len(data)
        return data


def _wheel_metadata_by_range(url: str, size: Optional[int]) -> Optional[str]:
    if not size:
        return None
    try:
        with zipfile.ZipFile(_RangeFile(url, size)) as z:
            name = next((n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1), None)
            return _headers(z.read(name).decode("utf-8", "replace")) if name else None
    except (OSError, SourceError, zipfile.BadZipFile, ValueError):
        return None


def _sdist_read(server: str, ver: str, sdist: dict, blob: bytes) -> Read:
    """The requirement files of REPO_FILES (and a top-level pyproject.toml / setup.py: SGLang's sdist
    is its python/ directory) inside an sdist."""
    wanted = set(REPO_FILES[server]) | {"pyproject.toml", "setup.py"}
    texts, names = [], []
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tar:
        for m in tar.getmembers():
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if m.isfile() and rel in wanted:
                f = tar.extractfile(m)
                text = f.read().decode("utf-8", "replace") if f else ""
                texts.append(text)
                if flashinfer_requirements(text):
                    names.append(rel)
    where = ", ".join(sorted(names)) if names else "requirement files"
    return Read(ver, "\n".join(texts), f"{where} in {sdist['filename']} (PyPI sdist)")


def _git(repo: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SourceError(f"{repo}: git {' '.join(args)}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    return r.stdout


def release_tags(repo: Path) -> Dict[str, str]:
    """version -> tag for every release-looking tag of a clone (bare or not)."""
    out: Dict[str, str] = {}
    for tag in _git(repo, "tag", "--list").split():
        m = _TAG.match(tag)
        if not m:
            continue
        try:
            out.setdefault(str(Version(m.group(1))), tag)
        except InvalidVersion:
            continue
    return out


def repo_releases(server: str, repo: Path, since: Optional[Version] = None) -> Iterator[Read]:
    """Each release tag's requirement files (those of REPO_FILES that exist at the tag), joined."""
    if not (repo / ".git").exists() and not (repo / "HEAD").exists():
        raise SourceError(f"{repo}: not a git clone")
    for ver, tag in sorted(release_tags(repo).items(), key=lambda kv: Version(kv[0])):
        if since is not None and Version(ver) < since:
            continue
        commit = _git(repo, "rev-parse", f"{tag}^{{commit}}").strip()
        texts, names = [], []
        for path in REPO_FILES[server]:
            r = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True)
            if r.returncode == 0:
                texts.append(r.stdout)
                if flashinfer_requirements(r.stdout):
                    names.append(path)
        where = ", ".join(names) if names else "/".join(p for p in REPO_FILES[server])
        yield Read(ver, "\n".join(texts), f"{where} at {tag}", commit)
