"""Fixtures for the format tests: the synthetic result of synthetic.py."""

from __future__ import annotations

import pytest
from synthetic import port, synthetic_entries

from tiletune.analysis.pipeline import build


@pytest.fixture
def synthetic_result():
    ents, sources = synthetic_entries()
    return build(ents, sources=sources, model=port())
