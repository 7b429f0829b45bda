"""The timed scenarios: drive.py's synthetic ops, each runner call also taking wall time, so the log's stamps
show where a start-up's time went. Run as `python drive_timed.py SCENARIO` beside drive.py (the caller,
tools/flashinfer_writers/__main__.py --timed, copies both); drive.py itself is unchanged, so the other
fixtures stay what it writes.

Every runner call sleeps for a wall time assigned here (WALL_*) before drive.py's runner does its work, so
the logger's `asctime` stamps advance as a start-up's do; drive.py's synthetic clock still gives the logged
kernel times. The runners keep drive.py's class names, module and qualified names (FlashInfer prints them).
  slow   `autotune(True, cache="slow.json")`: fp4_gemm's 4 buckets (the M=8 one the slowest) with tactics
         5 and 7 failing after WALL_FAIL_S each, then fp8_gemm.
  warm   the same calls again with slow.json loaded: every profile a cache hit (what a warm start costs,
         to hold the cold start's estimate against).
  hang   as slow without a cache, but tactic 3 of the M=4 bucket never returns: the caller kills the
         process (SIGKILL) after its log was quiet for HANG_KILL_S, as a watchdog or an operator would.
"""

import inspect
import json
import sys
import time

import drive  # type: ignore[import-not-found]

WALL_CALL_S = 0.002  # one successful runner call at M=1; x(1 + M/4) at larger M (the M=8 bucket is slowest)
WALL_FAIL_S = 0.25  # a failing tactic's call before it raises (an initialize that fails late)
HANG_KILL_S = 6.0  # the caller's watchdog (tools/flashinfer_writers/__main__.py)
HANG: dict = {"at": None}  # the (M, tactic) whose call never returns (drive.py: run beside this file)


def _timed_classes(fa):
    Fp4, Fp8 = drive._runner_classes(fa)

    class TimedFp4(Fp4):
        def forward(self, inputs, tactic=-1, do_preparation=False, **kwargs):
            if not do_preparation:
                m = inputs[0].shape[0]
                if HANG["at"] == (m, tactic):
                    time.sleep(3600)  # never returns within the caller's watchdog
                time.sleep(WALL_FAIL_S if tactic in self.fail_always else WALL_CALL_S * (1 + m / 4))
            return super().forward(inputs, tactic, do_preparation, **kwargs)

    class TimedFp8(Fp8):
        def forward(self, inputs, tactic=-1, do_preparation=False, **kwargs):
            if not do_preparation:
                time.sleep(WALL_CALL_S * 2)
            return super().forward(inputs, tactic, do_preparation, **kwargs)

    for timed, base in ((TimedFp4, Fp4), (TimedFp8, Fp8)):
        timed.__name__, timed.__qualname__, timed.__module__ = base.__name__, base.__qualname__, base.__module__
    return TimedFp4, TimedFp8


def _timed(torch, fa, notes, cache):
    Fp4, Fp8 = _timed_classes(fa)
    tuner = drive._tuner(fa)
    notes.update(wall_call_s=WALL_CALL_S, wall_fail_s=WALL_FAIL_S, warmup=getattr(tuner, "warmup", None),
                 repeat=getattr(tuner, "repeat", None))
    kw = {"cache": cache} if cache and "cache" in inspect.signature(fa.autotune).parameters else {}
    with fa.autotune(True, **kw):
        config, inputs = drive._fp4_call(torch, fa, 8)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)
        config, inputs = drive._fp8_call(torch, fa)
        tuner.choose_one("fp8_gemm", [Fp8()], config, inputs)


def scenario_slow(torch, fa, notes):
    _timed(torch, fa, notes, "slow.json")


def scenario_warm(torch, fa, notes):
    _timed(torch, fa, notes, "slow.json")


def scenario_hang(torch, fa, notes):
    HANG["at"] = (4, 3)
    notes.update(hang="M=4 bucket, tactic 3", kill_after_s=HANG_KILL_S)
    with open("notes-hang.json", "w") as f:  # written now: the process is killed, never reaches main's finally
        json.dump(notes, f, indent=1, sort_keys=True)
    _timed(torch, fa, notes, None)


SCENARIOS = {"slow": scenario_slow, "warm": scenario_warm, "hang": scenario_hang}


def main() -> int:
    name = sys.argv[1]
    import torch

    drive._install_clock(torch)
    import flashinfer  # noqa: F401  (the package as users import it)
    import flashinfer.autotuner as fa

    notes: dict = {"scenario": name}
    try:
        SCENARIOS[name](torch, fa, notes)
    finally:
        with open(f"notes-{name}.json", "w") as f:
            json.dump(notes, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
