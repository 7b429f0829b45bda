"""The second hostile-input campaign's fast cases (tests/hostile_round2.py), in CI: no defect in any class.

Each case builds a hostile input from the bundled samples and runs the real CLI (or reader) on it;
bench/hostile_round2/run.py runs these and the slow cases and writes the counts per class.
`OPEN` lists the findings not fixed yet (issue 24), each by its case name; it only shrinks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import hostile_round2 as H

OPEN: set[str] = set()


@pytest.mark.parametrize("case", [c for c in H.CASES if c.fast], ids=lambda c: f"class{c.cls}-{c.name}")
def test_no_defect(case: H.Case, tmp_path: Path) -> None:
    findings = case.fn(tmp_path)
    assert findings
    defects = [f for f in findings if f.defect and f.case not in OPEN]
    assert not defects, "\n".join(f"class {f.cls} {f.case}: {f.detail}" for f in defects)
    fixed = [f.case for f in findings if not f.defect and f.case in OPEN]
    assert not fixed, f"fixed: take them out of OPEN: {fixed}"


def test_every_prefix_of_every_v1_sample_ends_open() -> None:
    """A cut anywhere (a byte short of the end at least) leaves a string or a bracket open: the
    structural test the readers use to say a file was cut (and lost data) rather than pasted."""
    from tiletune.core.bounded_input import ends_open

    for sample in sorted((H.SAMPLES / "v1").glob("*.json")):
        data = sample.read_bytes().rstrip()
        assert not ends_open(data)
        assert all(ends_open(data[:i]) for i in range(1, len(data))), sample.name


def test_an_elided_paste_is_not_open() -> None:
    from tiletune.core.bounded_input import ends_open

    lines = H.CACHE.read_text().splitlines()
    pasted = "\n".join(lines[:20] + ["  ...", "  ..."] + lines[-8:])
    assert not ends_open(pasted.encode())
    assert ends_open(pasted[:-1].encode())
