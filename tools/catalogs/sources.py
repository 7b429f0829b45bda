"""Where a release's C++ comes from: its PyPI wheel, or a tag of a FlashInfer git clone.

Both read files by repository path (`include/...`, `csrc/...`, `flashinfer/...`); a wheel ships
the C++ under `flashinfer/data/`. Each source says exactly what it is (`describe()`), which the
data files record per release, so a reader can fetch the same bytes again.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from packaging.version import Version

from tools.catalogs.cpp import ExtractError

# The releases the catalogs cover. Every one of them is on PyPI except the 0.6.18 release
# candidates, which exist only as tags of https://github.com/flashinfer-ai/flashinfer.
PYPI_RELEASES = (
    "0.6.3", "0.6.4", "0.6.5", "0.6.6",
    "0.6.7", "0.6.7.post1", "0.6.7.post2", "0.6.7.post3", "0.6.8", "0.6.8.post1", "0.6.9",
    "0.6.10", "0.6.10.post1", "0.6.11", "0.6.11.post1", "0.6.11.post2", "0.6.11.post3",
    "0.6.12", "0.6.13", "0.6.14", "0.6.15", "0.6.15.post1",
    "0.6.16", "0.6.16.post1", "0.6.16.post2", "0.6.16.post3", "0.6.16.post4", "0.6.17",
    "0.6.18", "0.6.18.post1", "0.7.0", "0.7.0.post1", "0.7.1", "0.7.2", "0.7.2.post1", "0.7.4",
)
GIT_RELEASES = tuple(f"0.6.18rc{i}" for i in range(1, 8))
REPOSITORY = "https://github.com/flashinfer-ai/flashinfer"


class Source:
    """One release's files by repository path."""

    kind: str
    version: str
    ref: str
    commit: Optional[str]

    def read(self, path: str) -> Optional[str]:
        raise NotImplementedError

    def need(self, path: str) -> str:
        """read(), raising ExtractError naming the release and path when the file is absent."""
        text = self.read(path)
        if text is None:
            raise ExtractError(f"{self.ref}:{path}: not in this release")
        return text

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class Wheel(Source):
    """A flashinfer-python wheel as PyPI serves it."""

    path: Path
    kind: str = "wheel"
    _zip: Any = field(default=None, repr=False)
    _meta: Optional[str] = field(default=None, repr=False)

    def _z(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.path)
        return self._zip

    def _build_meta(self) -> str:
        if self._meta is None:
            self._meta = self.read("flashinfer/_build_meta.py") or ""
        return self._meta

    @property
    def ref(self) -> str:  # type: ignore[override]
        return self.path.name

    @property
    def version(self) -> str:  # type: ignore[override]
        m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", self._build_meta())
        if not m:
            raise ExtractError(f"{self.path.name}: no __version__ in flashinfer/_build_meta.py")
        return str(Version(m.group(1)))

    @property
    def commit(self) -> Optional[str]:  # type: ignore[override]
        # __git_version__ in 0.6.3 .. 0.6.6, __git_commit__ later
        m = re.search(r"__git_(?:commit|version)__\s*=\s*['\"]([0-9a-f]{7,40})['\"]", self._build_meta())
        return m.group(1) if m else None

    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def read(self, path: str) -> Optional[str]:
        name = "flashinfer/data/" + path if path.startswith(("include/", "csrc/")) else path
        try:
            return self._z().read(name).decode("utf-8", "replace")
        except KeyError:
            return None

    def describe(self) -> dict[str, Any]:
        return {"kind": "wheel", "ref": self.ref, "sha256": self.sha256(), "commit": self.commit,
                "pip": f"flashinfer-python=={self.version}"}  # what `pip download` fetched (PyPI)


@dataclass
class GitTag(Source):
    """A release tag of a FlashInfer git clone (plain or bare)."""

    gitdir: Path
    tag: str
    kind: str = "git-tag"

    @property
    def ref(self) -> str:  # type: ignore[override]
        return self.tag

    @property
    def version(self) -> str:  # type: ignore[override]
        return str(Version(self.tag.lstrip("v")))

    @property
    def commit(self) -> str:  # type: ignore[override]
        return _git(self.gitdir, "rev-parse", f"{self.tag}^{{commit}}").strip()

    def read(self, path: str) -> Optional[str]:
        r = subprocess.run(["git", "-C", str(self.gitdir), "show", f"{self.tag}:{path}"], capture_output=True)
        return r.stdout.decode("utf-8", "replace") if r.returncode == 0 else None

    def describe(self) -> dict[str, Any]:
        return {"kind": "git-tag", "ref": self.tag, "commit": self.commit, "repository": REPOSITORY}


def _git(gitdir: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(gitdir), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise ExtractError(f"git {' '.join(args)} in {gitdir}: {r.stderr.strip() or 'failed'}")
    return r.stdout


def download_wheel(version: str, wheel_dir: Path) -> Wheel:
    """The flashinfer-python wheel of `version` in `wheel_dir`, downloaded from PyPI with pip when
    absent (a wheel already there is read as is: its sha256 is recorded either way)."""
    wheel_dir.mkdir(parents=True, exist_ok=True)
    found = _wheel_in(version, wheel_dir)
    if found is None:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            f"flashinfer-python=={version}", "-d", str(wheel_dir)], capture_output=True, text=True)
        found = _wheel_in(version, wheel_dir)
        if r.returncode != 0 or found is None:
            tail = (r.stderr.strip().splitlines() or ["no wheel saved"])[-1]
            raise ExtractError(f"pip download flashinfer-python=={version}: {tail}")
    return Wheel(found)


def _wheel_in(version: str, wheel_dir: Path) -> Optional[Path]:
    for p in sorted(wheel_dir.glob("flashinfer_python-*.whl")):
        if Version(p.name.split("-")[1]) == Version(version):
            return p
    return None


def git_tag(clone: Path, version: str) -> GitTag:
    """The tag `v<version>` of a FlashInfer clone (ExtractError when the clone lacks it)."""
    tag = f"v{version}"
    r = subprocess.run(["git", "-C", str(clone), "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise ExtractError(f"{clone}: no tag {tag} (clone {REPOSITORY} with its tags: git clone {REPOSITORY})")
    return GitTag(clone, tag)


@dataclass
class Unpacked(Wheel):
    """An unpacked wheel or installed flashinfer-python: `path` is the directory holding `flashinfer/`."""

    kind: str = "unpacked"

    @property
    def ref(self) -> str:  # type: ignore[override]
        return str(self.path / "flashinfer")

    def read(self, path: str) -> Optional[str]:
        name = "flashinfer/data/" + path if path.startswith(("include/", "csrc/")) else path
        f = self.path / name
        return f.read_text(encoding="utf-8", errors="replace") if f.is_file() else None

    def describe(self) -> dict[str, Any]:
        return {"kind": "unpacked", "ref": self.ref, "commit": self.commit}


def find_installed() -> Optional[Path]:
    """Where `import flashinfer` would load from, without importing it (find_spec runs no package code)."""
    import importlib.util

    spec = importlib.util.find_spec("flashinfer")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent
