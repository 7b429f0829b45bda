"""What `tiletune inspect` imports decides most of its time on a small cache (issue 12 item 7): the
modules a run does not use are imported where they are used, not at start-up. Each is checked
both ways: absent from an inspect of a cache that does not need it, present when the input does
(so the lazy import is the one that runs, and the output stays the plain one: same_output.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "cache_samples" / "logs" / "sm120_0.6.17_warmup_debug.log"

# Run the CLI in a fresh interpreter and print the modules it loaded (after the command's output).
_CHILD = """
import json, sys
from tiletune.cli.typer_app import app
try:
    app(sys.argv[1:])
except SystemExit:
    pass
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""

# module -> what needs it
LAZY = {
    "tiletune.core.error_text": "error texts (failures, log events)",
    "tiletune.analysis.doctor": "tiletune doctor",
    "tiletune.readers.discover": "inspect without a path",
    "statistics": "calibrating against measured times",
    "tiletune.readers.jit_workspace": "a JIT workspace folder (files are not routed to it)",
}


def _loaded(*argv: str, home: Path | None = None) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if home is not None:  # discovery looks here only
        env = {k: v for k, v in env.items() if not k.startswith("FLASHINFER_")}
        env["HOME"] = str(home)
    out = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600).stdout
    return set(json.loads(out.rsplit("\nMODULES ", 1)[1]))


def _small_cache(path: Path) -> Path:
    """A v1 cache of chosen tactics only: nothing failed, no times measured."""
    key = str(("fp4_gemm", "CutlassFp4GemmRunner", ((128, 4096), (4096, 8192), (-1, 512), (512, 8192), (), (0,),
                                                    (-1, 8192), (0,), (0,), (-1,))))[:-1] + ", ())"
    doc = {"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
           key: ["CutlassFp4GemmRunner", 3, ["l2_cache_policy", "cold"]]}
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_inspect_of_a_plain_cache_leaves_them_out(tmp_path: Path) -> None:
    cache = _small_cache(tmp_path / "cache.json")
    loaded = _loaded("inspect", str(cache), "--format", "json")
    assert "tiletune.analysis.pipeline" in loaded and "tiletune.readers.flashinfer_v1" in loaded  # it did run
    assert {m for m in LAZY if m in loaded} == set()


def test_each_is_imported_when_its_input_needs_it(tmp_path: Path) -> None:
    assert "tiletune.core.error_text" in _loaded("inspect", str(LOG), "--format", "json")  # the log's failures
    assert "tiletune.readers.discover" in _loaded("inspect", "--format", "json", home=tmp_path)  # nothing named
    assert "tiletune.analysis.doctor" in _loaded("doctor", "--format", "json")
    assert "tiletune.readers.jit_workspace" in _loaded("inspect", str(ROOT / "cache_samples" / "jit"), "--format", "json")


def test_routing_a_file_skips_only_readers_that_never_claim_one() -> None:
    """readers._route against the plain routing (every reader's sniff, in order) for every sample
    file: the same reader, and the directory-only readers say no to each file."""
    from tiletune import readers

    files = [p for p in sorted((ROOT / "cache_samples").rglob("*")) if p.is_file()]
    assert len(files) > 50
    for path in files:
        head = readers._head(path)
        if isinstance(head, bytes) and head:
            plain = next((m for m in map(readers._reader, readers._READER_NAMES) if m.sniff(path, head)), None)
            assert readers._route(path, head) is plain, path
            assert not any(readers._reader(n).sniff(path, head) for n in readers._DIRECTORY_ONLY), path
