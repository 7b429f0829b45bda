"""Issue 23 item 7: the same bytes give the same answer from a file and from stdin; a text in which
nothing is recognised is a note (exit 0) that says what was looked for; binary stays exit 2; a
text that was read is one input, never "0 inputs"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "cache_samples" / "logs" / "sm120_moe_0.6.7_warning_backtrace.log"


def _run(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tiletune", *args], input=stdin, capture_output=True, cwd=REPO)


def _flat(text: str) -> str:
    """The text with its line wrapping undone (a longer name wraps the same words differently)."""
    return " ".join(text.split())


def _same(file_out: str, stdin_out: str, path: str) -> None:
    # the characters compared with no whitespace at all: a token longer than the terminal (a kernel file's path) is
    # broken by the wrap at a column that depends on the input's name; the words are the answer, not the layout
    a = "".join(file_out.replace(path, "<stdin>").split())
    b = "".join(stdin_out.replace("'<stdin>'", "<stdin>").split())
    assert a == b


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_log_gives_the_same_answer_from_a_file_and_from_stdin(fmt):
    data = LOG.read_bytes()
    rel = str(LOG.relative_to(REPO))
    f = _run(["inspect", rel, "--format", fmt])
    s = _run(["inspect", "-", "--format", fmt], data)
    assert f.returncode == s.returncode == 0
    if fmt == "json":
        import json

        a, b = json.loads(f.stdout), json.loads(s.stdout)
        for doc in (a, b):  # (where the input came from: a file of a folder, or stdin)
            doc.pop("sources")
            doc.pop("source_groups")
        # a file's source group is its directory; stdin's is itself: the names differ, nothing else
        want = json.dumps(a).replace(rel, "<stdin>").replace(str(LOG.parent.relative_to(REPO)), "<stdin>")
        assert want == json.dumps(b).replace("'<stdin>'", "<stdin>")
    else:
        _same(f.stdout.decode(), s.stdout.decode(), rel)


def test_text_with_nothing_recognised_is_a_note_from_both(tmp_path):
    text = b"We upgraded the driver last week and nothing else changed.\nAny idea?\n"
    p = tmp_path / "ticket.md"
    p.write_bytes(text)
    f = _run(["inspect", str(p)])
    s = _run(["inspect", "-"], text)
    assert f.returncode == s.returncode == 0
    for out, name in ((f, str(p)), (s, "<stdin>")):
        o = _flat(out.stdout.decode())
        assert o.startswith("tiletune inspect: 1 input, 0 entries"), o  # read: one input, not 0
        assert f"{name}: nothing tiletune reads: looked for FlashInfer autotuner lines" in o
    _same(f.stdout.decode(), s.stdout.decode(), str(p))


def test_binary_stays_a_refusal(tmp_path):
    p = tmp_path / "blob.txt"
    p.write_bytes(b"\x00\x01\x02 not text")
    f = _run(["inspect", str(p)])
    assert f.returncode == 2 and b"binary file" in f.stderr
