"""`tiletune inspect`: its options checked (--arch, --flashinfer-version, the entry filters, --m),
the pipeline run, the result rendered and routed, the exit status returned. `report` and `diff`
start from `inspected` too."""

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Union

from tiletune.cli.output import FailOn, OutputFormat, emit, gate, refuse_outputs_over_inputs, report_problems
from tiletune.cli.process import keep_until_exit

if TYPE_CHECKING:  # (types only: the command imports these when it runs)
    from tiletune.analysis.entry_filter import EntryFilter
    from tiletune.readers.interface import ReadContext


def fleet_status(paths: Optional[List[Path]], *, format: OutputFormat, output: Optional[Path], arch: Optional[str],
                 flashinfer_version: Optional[str], moe_dtype: Optional[str], verbose: bool) -> int:
    """`inspect --fleet`: one summary per (GPU, driver, CUDA, FlashInfer release) over many hosts' folders,
    read one host at a time (analysis/fleet.py); exit 2 when an input or a host was unusable."""
    from tiletune.analysis.fleet import fleet
    from tiletune.cli.output import say
    from tiletune.core.errors import UsageError
    from tiletune.formats import render

    if not paths:
        raise UsageError("--fleet: name a directory with one folder per host, or an index file listing host folders")
    refuse_outputs_over_inputs([("--output", output)], list(paths))
    result = fleet(list(paths), inspect_context(arch, flashinfer_version, moe_dtype))
    emit(render("fleet", result, format.value, verbose=verbose), output, json=format is OutputFormat.json)
    for p in result.problems:
        say(f"tiletune: {p.message}")
    return 2 if any(p.loses_data for p in result.problems) else 0


def inspected(paths: Optional[List[Path]], arch: Optional[str], flashinfer_version: Optional[str], gpu: Optional[str],
               select=None, moe_dtype: Optional[str] = None, keep: bool = True):  # select: Optional[EntryFilter]
    """The inspect result for these inputs (what inspect and report start from), kept until the
    process exits (see `main`) unless `keep` is False (a result the command drops before it is done)."""
    from tiletune.analysis.pipeline import inspect

    result = inspect(list(paths or []), inspect_context(arch, flashinfer_version, moe_dtype), gpu=gpu, select=select)
    if keep:
        keep_until_exit(result)
    return result


def inspect_context(arch: Optional[str], flashinfer_version: Optional[str], moe_dtype: Optional[str] = None) -> "ReadContext":
    """--arch / --flashinfer-version / --dtype checked and normalised (bad values: one line, exit 2)."""
    from tiletune.core.archs import KNOWN_ARCHS, normalize_arch
    from tiletune.core.errors import UsageError
    from tiletune.readers.interface import ReadContext

    norm = None
    if arch is not None:
        norm = normalize_arch(arch)
        if norm is None:
            raise UsageError(f"--arch {arch!r} is not an architecture; use one of {', '.join(KNOWN_ARCHS)}")
    if flashinfer_version is not None:
        from tiletune.core.versions import shown, version_problem

        why = version_problem(flashinfer_version)
        if why is not None:
            raise UsageError(f"--flashinfer-version {shown(flashinfer_version)!r} is not a version ({why}; e.g. 0.6.14)")
    if moe_dtype is not None:
        from tiletune.core.vocabulary import INPUT_DTYPES, short_dtype

        if (short_dtype(moe_dtype.lower()) or moe_dtype.lower()) not in INPUT_DTYPES:
            raise UsageError(f"--dtype {moe_dtype!r} is not an input dtype; use one of {', '.join(INPUT_DTYPES)}")
    return ReadContext(arch=norm, flashinfer_version=flashinfer_version, moe_dtype=moe_dtype)


def _entry_filter(ops: Optional[List[str]], archs: Optional[List[str]], ranks: Optional[List[str]],
                  statuses: Optional[List[str]]) -> Optional["EntryFilter"]:
    """inspect's --op / --only-arch / --rank / --status (values checked; None: keep everything).
    What each value names is resolved against the inputs (analysis.entry_filter)."""
    from tiletune.analysis.entry_filter import EntryFilter

    return EntryFilter.of(ops, archs, ranks, statuses)


# --m's grammar: ASCII digits only (str.isdigit() also says yes to "²" and other digits int() refuses),
# at most 10 of them (2**31 has 10), so no value reaches int()'s quadratic or 4,300-digit paths.
_M_VALUE = re.compile(r"[0-9]{1,10}")
_MAX_M_VALUES = 64


def runtime_ms(texts: Union[None, str, Sequence[str]]) -> tuple[int, ...]:
    """--m '1,2,4,8' (repeatable: `--m 12 --m 13` is `--m 12,13`) -> (1, 2, 4, 8); at most 64 values,
    each 1..2**31, each given once."""
    from tiletune.core.errors import UsageError

    if texts is None:
        return ()
    out: list[int] = []
    for text in [texts] if isinstance(texts, str) else texts:
        shown = text if len(text) <= 40 else text[:30] + "..."
        for part in text.replace(" ", "").split(","):
            if not _M_VALUE.fullmatch(part) or not 1 <= int(part) <= 1 << 31:
                raise UsageError(f"--m {shown!r}: each value must be a whole number of tokens from 1 to 2**31 (e.g. --m 1,2,4,8,37)")
            out.append(int(part))
            if len(out) > _MAX_M_VALUES:
                raise UsageError(f"--m takes at most {_MAX_M_VALUES} values")
    return tuple(dict.fromkeys(out))


def _colour(output: Optional[Path]) -> bool:
    """ANSI colours only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def terminal_width(output: Optional[Path], environ: Optional[dict] = None) -> int:
    """The width the table is laid out for: COLUMNS when set (a terminal, a pipe or a file: the user
    said how wide), else the terminal's width when writing to one, else 120. At least 40: narrower,
    no table fits whatever is dropped."""
    import shutil

    env = os.environ if environ is None else environ
    text = env.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return max(40, int(text))
    if output is not None or not sys.stdout.isatty():
        return 120
    return max(40, shutil.get_terminal_size((120, 24)).columns)


def inspect_status(paths: Optional[List[Path]], *, format: OutputFormat = OutputFormat.table, arch: Optional[str] = None,
                    flashinfer_version: Optional[str] = None, gpu: Optional[str] = None, output: Optional[Path] = None,
                    fail_on: Optional[FailOn] = None, all_rows: bool = False, only_op: Optional[List[str]] = None,
                    only_arch: Optional[List[str]] = None, only_rank: Optional[List[str]] = None,
                    only_status: Optional[List[str]] = None, runtime_m: Union[None, str, Sequence[str]] = None,
                    uncalibrated: bool = False, baseline: Optional[Path] = None, summary: bool = False,
                    verbose: bool = False, moe_dtype: Optional[str] = None, fleet: bool = False) -> int:
    """`tiletune inspect`'s body (cli.inspect_command holds its options' help): print the result,
    report the problems, return the exit status."""
    if fleet:
        others = [name for name, given in (("--fail-on", fail_on), ("--all", all_rows), ("--op", only_op),
                                           ("--only-arch", only_arch), ("--rank", only_rank), ("--status", only_status),
                                           ("--m", runtime_m), ("--uncalibrated", uncalibrated),
                                           ("--baseline", baseline), ("--summary", summary)) if given]
        if others:
            from tiletune.core.errors import UsageError

            raise UsageError(f"--fleet summarises hosts; {', '.join(others)} work on one server's inputs (inspect without --fleet)")
        return fleet_status(paths, format=format, output=output, arch=arch, flashinfer_version=flashinfer_version,
                            moe_dtype=moe_dtype, verbose=verbose)
    refuse_outputs_over_inputs([("--output", output)], [*(paths or []), *((baseline,) if baseline else ())])
    from tiletune.cli.output import load_baseline

    if summary and verbose:
        from tiletune.core.errors import UsageError

        raise UsageError("-q/--summary and -v/--verbose ask for opposite views; give one")
    accepted = load_baseline(baseline)  # (read before the inputs: a bad baseline stops the command first)
    select = _entry_filter(only_op, only_arch, only_rank, only_status)
    ms = runtime_ms(runtime_m)
    result = inspected(paths, arch, flashinfer_version, gpu, select, moe_dtype)
    refuse_outputs_over_inputs([("--output", output)], [], result)
    from tiletune.formats import render

    colour = _colour(output)
    view = {"all_rows": all_rows or verbose, "runtime_m": ms, "width": terminal_width(output), "colour": colour,
            "uncalibrated": uncalibrated, "summary": summary, "verbose": verbose}
    emit(render("inspect", result, format.value, **view), output,  # JSON comes in chunks, written as made
          json=format is OutputFormat.json, colour=colour)
    report_problems(result)
    return gate(result, fail_on, baseline=accepted)
