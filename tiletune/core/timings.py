"""The one aggregated record of repeated timings: count, bounded samples, min / median.

A DEBUG log prints one `profiling ... avg_time` line per tactic per bucket per run, and a retry
ledger one line per attempt; a 1 GB log or ledger repeats the same (op, runner, tactic, shapes)
millions of times. Readers add each measurement to one `TimeSamples` per distinct key instead of
keeping a record per line, so memory follows the number of distinct keys, not the file size.

The kept samples are bounded (`MAX_SAMPLES`) and deterministic: every value until the bound, then
the list is halved (every other sample kept) and the stride doubles, so the kept samples stay
spread evenly over the whole stream. `min` and `count` are exact; `median` is the median of the
kept samples (exact while `count <= MAX_SAMPLES`).
"""

from __future__ import annotations

import math
from typing import Any, Optional

MAX_SAMPLES = 64


class TimeSamples:
    """Count, exact min/max, and an evenly thinned, bounded list of samples of one quantity."""

    __slots__ = ("count", "min", "max", "samples", "_stride", "_skip")

    def __init__(self) -> None:
        self.count = 0
        self.min: Optional[float] = None
        self.max: Optional[float] = None
        self.samples: list[float] = []
        self._stride = 1  # keep one value of every `_stride`
        self._skip = 0

    def add(self, value: Optional[float]) -> None:
        """Count one occurrence; its value (if a finite number) joins the samples."""
        self.count += 1
        if value is None or not math.isfinite(value):
            return
        if self.min is None or value < self.min:
            self.min = value
        if self.max is None or value > self.max:
            self.max = value
        if self._skip:
            self._skip -= 1
            return
        self.samples.append(value)
        self._skip = self._stride - 1
        if len(self.samples) >= MAX_SAMPLES:
            self.samples = self.samples[::2]
            self._stride *= 2
            self._skip = self._stride - 1

    @property
    def median(self) -> Optional[float]:
        s = sorted(self.samples)
        if not s:
            return None
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2

    def detail(self, unit: str = "ms") -> dict[str, Any]:
        """The aggregate as record detail fields (`time_count`, `time_min_ms`, ...)."""
        if not self.samples and self.min is None:
            return {}
        return {
            "time_count": self.count,
            f"time_min_{unit}": self.min,
            f"time_median_{unit}": self.median,
            f"time_max_{unit}": self.max,
            f"time_samples_{unit}": tuple(self.samples),
            "time_samples_exact": self.count == len(self.samples),
        }


__all__ = ["MAX_SAMPLES", "TimeSamples"]
