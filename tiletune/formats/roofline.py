"""Roofline pictures (PNG) for the report: one per arch and op, from model values already computed.

`roofline_data(result)` collects, per (arch, op), the roof (dense peak, DRAM bandwidth) and one
point per chosen tile and bucket (whole-problem intensity, expected FLOP/s from the model:
calibrated on the inputs' measured times where they hold some, unless `uncalibrated`), the failed
tiles, and the chosen tiles' measured points (FLOP / the time the inputs measured); `render_png(plot)`
draws it with matplotlib (optional; imported lazily), each point labelled with its tile, and returns
the bytes. Writing the file is the caller's job. The legend says which points are model estimates
(and whether calibrated) and which are measured.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from typing import Callable, Optional

from msgspec import Struct

from tiletune.analysis.results import InspectResult
from tiletune.core.records import Status

MAX_LABELS = 24  # points labelled with their tile per picture (more would overprint)


class RooflinePlot(Struct, frozen=True, gc=False):
    """What one picture shows; numbers in base units (FLOP/B, FLOP/s, bytes/s)."""

    arch: str
    op: str
    gpu: str
    peak_flops: float  # dense
    bandwidth: float
    chosen: tuple[tuple[float, float, str], ...]  # (intensity, FLOP/s, tile label)
    failed: tuple[tuple[float, float, str], ...]
    measured: tuple[tuple[float, float, str], ...] = ()  # chosen tiles at the FLOP/s the inputs measured
    calibrated: bool = False  # the model points are the model calibrated on the inputs' measured times

    @property
    def filename_stem(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"roofline-{self.arch}-{self.op}").strip("_")


def roofline_data(result: InspectResult, uncalibrated: bool = False) -> list[RooflinePlot]:
    """One RooflinePlot per (arch, op) with at least one modelled chosen entry."""
    groups: dict[tuple[str, str], dict] = {}
    times = _measured(result)
    for ae in result.entries:
        a = ae.analysis if ae.calibrated is None or uncalibrated else ae.calibrated
        if a is None or ae.config is None or ae.arch is None:
            continue
        if a.intensity_problem is None or a.flops is None or a.peak_dense is None or a.bandwidth is None:
            continue
        if not a.time_expected_s:  # None or zero: no point to plot
            continue
        g = groups.setdefault(
            (ae.arch, ae.record.op),
            {"gpu": a.gpu_name, "peak": a.peak_dense, "bw": a.bandwidth, "chosen": {}, "failed": {}, "measured": {},
             "calibrated": False},
        )
        point = (float(a.intensity_problem), float(a.flops) / a.time_expected_s, ae.config.label())
        if ae.record.status is Status.CHOSEN:
            g["chosen"][point] = None
            g["calibrated"] = g["calibrated"] or a is ae.calibrated
            r = ae.record
            t_ms = r.time_ms if r.time_ms is not None else times.get((r.source, r.op, r.runner, ae.entry.problem, repr(r.tactic)))
            if t_ms:
                g["measured"][(float(a.intensity_problem), float(a.flops) / (t_ms * 1e-3), ae.config.label())] = None
        elif ae.record.status is Status.FAILED:
            g["failed"][point] = None
    plots = []
    for (arch, op), g in sorted(groups.items()):
        if not g["chosen"]:
            continue
        plots.append(
            RooflinePlot(
                arch=arch,
                op=op,
                gpu=g["gpu"],
                peak_flops=float(g["peak"]),
                bandwidth=float(g["bw"]),
                chosen=tuple(g["chosen"]),
                failed=tuple(g["failed"]),
                measured=tuple(g["measured"]),
                calibrated=g["calibrated"],
            )
        )
    return plots


def _measured(result: InspectResult) -> dict[tuple, float]:
    """(source, op, runner, problem, tactic) -> the fastest time (ms) the inputs measured for it
    (a chosen entry's own record seldom holds one: the profiling lines of its log do)."""
    best: dict[tuple, float] = {}
    for ae in result.entries:
        r = ae.record
        if r.time_ms is None or ae.entry.problem is None:
            continue
        key = (r.source, r.op, r.runner, ae.entry.problem, repr(r.tactic))
        if key not in best or r.time_ms < best[key]:
            best[key] = r.time_ms
    return best


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


# A log axis over more than this many decades is no picture of a GPU (a GPU file's 1e308 GB/s):
# such a plot is not drawn, and the report says why.
MAX_DECADES = 24


def unplottable(plot: RooflinePlot) -> Optional[str]:
    """Why `plot` cannot be drawn on log axes (a peak or bandwidth that is not a finite positive
    number, points or a ridge out of range), or None."""
    values = [plot.peak_flops, plot.bandwidth] + [v for p in plot.chosen + plot.failed + plot.measured for v in p[:2]]
    if not all(math.isfinite(v) and v > 0 for v in values):
        return f"{plot.arch} {plot.op}: a peak, bandwidth or modelled point is not a finite positive number"
    xs = [p[0] for p in plot.chosen + plot.failed + plot.measured] + [plot.peak_flops / plot.bandwidth]
    ys = [p[1] for p in plot.chosen + plot.failed + plot.measured] + [plot.peak_flops]
    if not all(math.isfinite(v) and v > 0 for v in xs) or any(math.log10(max(v) / min(v)) > MAX_DECADES for v in (xs, ys)):
        return f"{plot.arch} {plot.op}: the model's numbers span more than {MAX_DECADES} decades (check the GPU's peak and bandwidth)"
    return None


def render_png(plot: RooflinePlot, *, dpi: int = 110, text: Callable[[str], str] = str) -> Optional[bytes]:
    """The PNG bytes, or None when matplotlib is not installed or the plot cannot be drawn
    (`unplottable`). Every label is passed through `text` (the report's redaction) and drawn as plain
    text: no math parsing (a `$` in a GPU name is a dollar sign)."""
    if unplottable(plot) is not None:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        return _draw(plt, plot, dpi, text)


TITLE_CHARS = 80  # a title line at fontsize 10 that fits the 7.2-inch figure


def plain_log_ticks(ax) -> None:  # noqa: ANN001 - a matplotlib Axes
    """Tick labels of log axes as plain numbers (10, 100, 0.1). Their default labels are mathtext
    ('$\\mathdefault{10^{2}}$'), which, with math parsing off so that no input text is read as
    math, were drawn as that source text; minor ticks are unlabelled."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def _draw(plt, plot: RooflinePlot, dpi: int, text: Callable[[str], str]) -> bytes:  # noqa: ANN001 - matplotlib.pyplot
    xs = [p[0] for p in plot.chosen + plot.failed]
    ridge = plot.peak_flops / plot.bandwidth
    lo = min(min(xs), ridge) / 4
    hi = max(max(xs), ridge) * 4
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    try:
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.plot(grid, [min(plot.peak_flops, plot.bandwidth * x) / 1e12 for x in grid], color="#333333", lw=1.6, label="roofline (dense peak, DRAM)")
        ax.axvline(ridge, color="#999999", lw=0.8, ls=":")
        ax.text(ridge * 1.08, 0.03, f"ridge {ridge:,.0f} FLOP/B", transform=ax.get_xaxis_transform(), fontsize=8, color="#555555")
        model = "model calibrated on the inputs' times" if plot.calibrated else "model"
        if plot.chosen:
            ax.scatter([p[0] for p in plot.chosen], [p[1] / 1e12 for p in plot.chosen], s=28, color="#1f77b4", zorder=3,
                       label=f"chosen tile ({model}, top of bucket)")
        if plot.measured:
            ax.scatter([p[0] for p in plot.measured], [p[1] / 1e12 for p in plot.measured], s=36, marker="D",
                       facecolors="none", edgecolors="#2ca02c", zorder=4, label="chosen tile, measured by the inputs")
        if plot.failed:
            ax.scatter([p[0] for p in plot.failed], [p[1] / 1e12 for p in plot.failed], s=40, marker="x", color="#d62728", zorder=3,
                       label=f"failed tile ({model}, had it run)")
        # each point says which tile it is; a measured point beside its own tile's modelled one is
        # not labelled twice (the two labels were drawn over each other)
        chosen_at = {(x, label) for x, _, label in plot.chosen}
        labelled = [*plot.chosen, *(p for p in plot.measured if (p[0], p[2]) not in chosen_at)]
        for x, y, label in labelled[:MAX_LABELS]:
            ax.annotate(text(label), (x, y / 1e12), textcoords="offset points", xytext=(4, 3), fontsize=6, color="#444444")
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlabel("arithmetic intensity (FLOP/B, whole problem)")
        ax.set_ylabel("throughput (TFLOP/s)")
        estimates = "model estimates calibrated on the inputs' times" if plot.calibrated else "model estimates"
        head = text(f"{plot.arch} {plot.op} on {plot.gpu} - {estimates}" + (", and measured times" if plot.measured else ""))
        ax.set_title(
            "\n".join(textwrap.wrap(head, TITLE_CHARS, break_long_words=False) or [""]) + "\n"
            f"dense peak {plot.peak_flops / 1e12:,.0f} TFLOP/s, DRAM {plot.bandwidth / 1e12:.2f} TB/s",
            fontsize=10,
        )
        ax.grid(True, which="both", ls=":", lw=0.5, color="#cccccc")
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        return buf.getvalue()
    finally:
        plt.close(fig)
