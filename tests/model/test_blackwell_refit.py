"""The SM100 / SM120 constants tiletune ships are the ones its own fit gives from the committed public points
(issue 26): a round that changes the catalog, a model term or the data without refitting fails here.

Runs the whole fit (tools/model_fit/blackwell_refit.py: the same code bench/blackwell_public/validate.py prints)
on tests/data/blackwell_public/points.jsonl, the byte copy of the bench's points; about a minute of CPU."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tiletune.model.mainloop import FITTED

POINTS = Path(__file__).resolve().parents[1] / "data" / "blackwell_public" / "points.jsonl"


@pytest.fixture(scope="module")
def fit():
    from tools.model_fit.blackwell_refit import refit

    return refit(POINTS)


@pytest.mark.parametrize("fam", ["sm100", "sm120"])
def test_the_shipped_constants_are_what_the_committed_fit_gives(fit, fam):
    from tools.model_fit.blackwell_refit import differences

    assert differences(FITTED[fam], fit.constants[fam]) == []


def test_a_constant_off_the_fit_is_reported(fit):
    from tools.model_fit.blackwell_refit import differences

    # round six's state: the catalog and the L2 rate changed, the constants did not (p 2.57, band (0.675, 1.875))
    stale = msgspec.structs.replace(FITTED["sm100"], p=2.57, ratio_band=(0.675, 1.875))
    found = differences(stale, fit.constants["sm100"])
    assert [line.split(":")[0] for line in found] == ["p", "ratio_band"]

