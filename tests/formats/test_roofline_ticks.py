"""The roofline pictures' axes read as numbers (issue 25, item 3: measured points plotted and labelled).

Math parsing is off while a picture is drawn (a '$' in an input's GPU name is a dollar sign), and
log axes label their ticks in mathtext: the report's pictures showed '$\\mathdefault{10^{2}}$'
under every tick, and a measured point's label was drawn over its modelled twin's.
"""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")


def test_log_ticks_are_plain_numbers_with_math_parsing_off():
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tiletune.formats.roofline import plain_log_ticks

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        fig, ax = plt.subplots()
        try:
            ax.plot([5, 3000], [0.5, 900])
            ax.set_xscale("log")
            ax.set_yscale("log")
            plain_log_ticks(ax)
            fig.canvas.draw()
            labels = [t.get_text() for t in (*ax.get_xticklabels(), *ax.get_yticklabels()) if t.get_text()]
        finally:
            plt.close(fig)
    assert labels and all("$" not in t and "mathdefault" not in t for t in labels), labels
    assert {"10", "100", "1000"} <= set(labels)
