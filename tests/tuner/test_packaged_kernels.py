"""kernels/ travels in a built wheel: installed non-editable, tiletune finds the reproducer sources
with no environment variable; an editable install (this checkout) keeps using kernels/ in place.

The wheel is built for real by pip (PEP 517, setuptools.build_meta, setup.py's build hook) from a
copy of this source tree, installed into a fresh venv, and driven from outside the checkout: the
library's writer and nvcc command, and the `tiletune retry --reproducer` CLI on a real cache.
About 15-20 s (a wheel build and a pip install).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tiletune.tuner import cutlass_toolchain as toolchain

ROOT = Path(__file__).resolve().parents[2]
KERNEL_SOURCES = sorted(p.name for p in (ROOT / "kernels").iterdir() if p.suffix in (".cu", ".hpp") or p.name == "README.md")
SM120_CACHE = ROOT / "cache_samples" / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"


def _source_copy(dest: Path) -> Path:
    """What pip would see in a clean clone: the packaging files, tiletune/ and kernels/."""
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("tiletune", "kernels"):
        shutil.copytree(ROOT / name, dest / name, ignore=junk)
    return dest


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", toolchain.KERNELS_DIR_ENV, "PYTHONSTARTUP")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=240, **kw)
    assert r.returncode == 0, f"{argv}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


def _build_isolation_flag() -> list:
    """Build with this environment's setuptools when it can build wheels on its own (fast, offline);
    else let pip fetch the build requirements (CI has PyPI)."""
    import setuptools
    from packaging.version import Version

    builtin_wheel = Version(setuptools.__version__) >= Version("70.1")
    return ["--no-build-isolation"] if builtin_wheel or importlib.util.find_spec("wheel") else []


def test_editable_checkout_uses_its_own_kernels_folder(monkeypatch):
    monkeypatch.delenv(toolchain.KERNELS_DIR_ENV, raising=False)
    assert toolchain.kernels_dir() == ROOT / "kernels"
    assert not (ROOT / "tiletune" / "_kernels").exists()  # nothing copied into the source tree


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv, its site-packages): the wheel pip builds from a copy of this tree, installed in a fresh venv."""
    tmp = tmp_path_factory.mktemp("packaged")
    src = _source_copy(tmp / "src")
    env = _clean_env()
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(dist), *_build_isolation_flag()],
         cwd=tmp, env=env)
    (wheel,) = dist.glob("tiletune-*.whl")
    assert not (src / "tiletune" / "_kernels").exists()  # the hook writes into the build tree only
    # a fresh venv; the core dependencies come from this interpreter's site-packages (no network)
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], env=env)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=tmp, env=env)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env).stdout.strip())
    return wheel, venv, site


def test_wheel_carries_the_kernel_sources_byte_for_byte(installed):
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as z:
        packaged = sorted(n.split("/")[-1] for n in z.namelist() if n.startswith("tiletune/_kernels/"))
        assert packaged == KERNEL_SOURCES
        for name in packaged:
            assert z.read(f"tiletune/_kernels/{name}") == (ROOT / "kernels" / name).read_bytes()


def test_installed_package_finds_its_kernels_without_an_environment_variable(installed, tmp_path):
    _, venv, site = installed
    out = tmp_path / "repro"
    probe = (
        "import json, sys, tiletune\n"
        "from pathlib import Path\n"
        "from tiletune.core.records import TileConfig\n"
        "from tiletune.tuner import cutlass_build as cb, cutlass_toolchain as toolchain, reproducer\n"
        "cfg = TileConfig(tile=(128, 128, 64))\n"
        "headers = toolchain.CutlassHeaders(Path(sys.argv[2]) / 'include', None, '4.5.0', 'test')\n"
        "paths = reproducer.write_reproducer(cfg, 'sm90', 'bf16', Path(sys.argv[1]), headers=headers)\n"
        "cmd = cb.nvcc_command(cb.kernel_build(cfg, 'sm90', 'bf16'), headers, Path(sys.argv[1]) / 'bin')\n"
        "print(json.dumps({'tiletune': tiletune.__file__, 'kernels': str(toolchain.kernels_dir()), 'cmd': cmd}))\n"
    )
    r = _run([str(venv / "bin" / "python"), "-c", probe, str(out), str(tmp_path / "cutlass")], cwd=tmp_path, env=_clean_env())
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    kdir = site / "tiletune" / "_kernels"
    assert Path(seen["tiletune"]) == site / "tiletune" / "__init__.py"  # the installed copy, not the checkout
    assert Path(seen["kernels"]) == kdir
    assert f"-I{kdir}" in seen["cmd"] and str(kdir / "sm90_gemm.cu") in seen["cmd"]
    for name in ("sm90_gemm.cu", "tt_common.hpp"):
        assert (out / name).read_bytes() == (ROOT / "kernels" / name).read_bytes()


def test_installed_cli_writes_reproducers_for_a_real_cache(installed, tmp_path):
    _, venv, _ = installed
    found = toolchain.cutlass_candidates()
    if not found:
        if os.environ.get("TILETUNE_REQUIRE_CUTLASS") == "1":
            pytest.fail("TILETUNE_REQUIRE_CUTLASS=1 but no CUTLASS headers were found")
        pytest.skip("no CUTLASS headers here (the reproducer writer needs their path; the library test covers the rest)")
    out = tmp_path / "cli-repro"
    r = _run([str(venv / "bin" / "tiletune"), "retry", str(SM120_CACHE), "--all", "--no-run", "--op", "fp4_gemm",
              "--tactic", "0", "--reproducer", str(out)],
             cwd=tmp_path, env=dict(_clean_env(), **{toolchain.CUTLASS_DIR_ENV: str(found[0].include.parent)}))
    assert "--reproducer: wrote" in r.stdout, r.stdout
    written = sorted(out.glob("*/blockscaled_gemm.cu"))
    assert written and all(p.read_bytes() == (ROOT / "kernels" / "blockscaled_gemm.cu").read_bytes() for p in written)
