"""Fit the time model's constants on half of the H200 sweep and report the error on the other half.

CPU only: `python3 bench/h200_sweep/analyze.py [bench/h200_sweep/results/run1/h200_sweep.json]` prints the
Markdown that RESULTS.md holds (fit on even-indexed shapes, error on odd-indexed ones; the rule
is in tools.model_fit.fit.split_rows).
"""

import sys

from tools.model_fit.fit import report

if __name__ == "__main__":
    print(report(sys.argv[1] if len(sys.argv) > 1 else "bench/h200_sweep/results/run1/h200_sweep.json"))
