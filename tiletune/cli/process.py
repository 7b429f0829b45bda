"""Process policy of one CLI command: the cyclic collector paused while it runs, its results kept
until the process exits, an exit that skips freeing them, and SIGTERM / SIGHUP turned into an
exit that runs every clean-up. A process policy, so it lives in the CLI and never in the library."""

import gc
import os
import signal
import sys
from contextlib import contextmanager
from typing import Iterator, NoReturn, Optional


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run one command with the cyclic garbage collector paused (restored afterwards).

    Why: inspect keeps ~10 container objects per entry alive until it has printed them, so the
    collector's periodic full scans re-walk the whole growing heap (about 1 s of a 50,000-entry
    run) while finding nothing: records, entries, analyses and rows form no reference cycles. On
    the way out the objects still alive are frozen (`gc.freeze`): freed by reference counting
    when dropped, but never rescanned; re-enabling without it costs one full scan of them all.
    A process policy, so it lives here and not in the library.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


_KEEP_UNTIL_EXIT: Optional[list] = None


def keep_until_exit(obj: object) -> None:
    """Hold `obj` until the process exits (only when run through a `main`; tests call `app` directly)."""
    if _KEEP_UNTIL_EXIT is not None:
        _KEEP_UNTIL_EXIT.append(obj)


def keep_results() -> None:
    """From now on, results are kept until the process exits (`exit_kept`)."""
    global _KEEP_UNTIL_EXIT
    _KEEP_UNTIL_EXIT = []


def kept_any() -> bool:
    return bool(_KEEP_UNTIL_EXIT)


def exit_kept(code: int) -> NoReturn:
    """After a command that kept its result (inspect, report): exit with os._exit once stdout and
    stderr are flushed, as mypy does. Freeing a 50,000-entry result object by object and then
    tearing the interpreter down took about 0.07 s and produces nothing; every file tiletune
    writes is closed before (write_atomic)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # e.g. `tiletune inspect | head`: nothing left to tell the reader
        pass
    os._exit(code)


def exit_cleanly_on_signals() -> None:
    """SIGTERM and SIGHUP (a job killed, a terminal closed) leave through SystemExit(128 + signal)
    raised in the main thread, so every `finally` and `except BaseException` runs on the way out:
    `write_atomic` removes its temp file (before, a signal during the write left `.NAME.xxxx.tmp`
    beside the output), retry's isolation kills its children. A signal already ignored (`nohup`
    ignores SIGHUP) stays ignored; a second signal of the kind while leaving kills as usual."""
    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _leave)


def _leave(signum: int, _frame: object) -> None:
    signal.signal(signum, signal.SIG_DFL)
    raise SystemExit(128 + signum)
