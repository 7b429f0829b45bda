"""The typer CLI: argument parsing, help and exit codes only (the output routing, one-line
errors and exit statuses it shares with cli/__init__.py's plain inspect are cli/output.py's).

Every command delegates to a library function the tests can call directly. `TiletuneError`s
are caught only by the CLI (here `_guard` and `_run_batch`, cli/__init__.py's cli.output.batch_status;
all through cli.output.failure_status) and printed as one line ("tiletune: <message>") with
their exit status (2 unless the error says else); anything else is a bug, and is still
printed as one line naming the inputs, exit status 2.
Reports go to stdout (or `--output`, written atomically); progress and summaries to stderr.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations at each
# start, and as strings it compiles and evaluates each twice (~40 ms for these eight commands);
# evaluated once at import they cost ~5 ms. tests/test_cli_annotations.py pins the result.
import enum
import os
import sys
from pathlib import Path
from typing import Annotated, Callable, List, Optional, Sequence, TypeVar

import click
import typer

from tiletune import __version__
from tiletune.cli.commands.inspect import inspect_context, inspect_status
from tiletune.cli.output import (
    FailOn,
    OutputFormat,
    batch_status,
    emit,
    failure_status,
    refuse_outputs_over_inputs,
)
from tiletune.cli.process import exit_kept, keep_results, kept_any

_APP_SETTINGS: dict = dict(
    name="tiletune",
    help="See which CUTLASS tiles FlashInfer's autotuner picked, which failed and why; model them; re-try them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # click's plain help: rendering it with rich imports ~1 s of modules first
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,  # --install-completion / --show-completion (typer: bash, zsh, fish, powershell)
)
app = typer.Typer(**_APP_SETTINGS)

T = TypeVar("T")
# what a command body raises to leave through click (typer.Exit is click's Exit, typer.Abort its
# Abort): click prints its message and exits with its status; not a failure of the inputs
_CLICK_EXITS = (click.exceptions.Exit, click.exceptions.Abort, click.exceptions.ClickException)


def _guard(fn: Callable[[], T], inputs: Sequence[object] = ()) -> T:
    """Run `fn`; turn a TiletuneError into its one-line message and exit code, no traceback.

    The last resort: any other exception (a bug an input provoked) becomes one line naming the
    inputs and exit status 2 (cli.output.failure_status).
    """
    try:
        return fn()
    except _CLICK_EXITS:
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for what an input did
        raise typer.Exit(code=failure_status(e, inputs)) from None


def _run_batch(run: Callable[[], int], inputs: Sequence[object]) -> None:
    """Run an inspecting command's body with the collector paused; exit with the status it returns
    (click's own exits, as under `_guard`, left to click)."""
    code = batch_status(run, inputs, _CLICK_EXITS)
    if code:
        raise typer.Exit(code=code)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tiletune {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    """tiletune: inspect, explain and re-try FlashInfer's CUTLASS autotuner tiles."""


# --- commands -------------------------------------------------------------------------------
# Each command below is owned by the module it calls; keep the bodies thin.

_FAIL_ON_HELP = ("Exit 1 when such findings exist: fatal (an event that ended a run: runner init failure, CUDA "
                 "abort, TMA descriptor, shared memory) or failed (any failed tactic, or a fatal event). "
                 "Unusable inputs still exit 2.")

_PATHS_HELP = "Caches, logs, blocklists, JIT workspaces, retry ledgers, or directories holding them. None: search the default places."


# Shell completion of option values (typer calls these only while completing, so their imports
# cost a normal run nothing).
def _complete(values: Sequence[str], incomplete: str) -> list[str]:
    return [v for v in values if v.startswith(incomplete)]


def complete_op(incomplete: str) -> list[str]:
    """--op: every op a tactic catalog covers, and the dense and fused-MoE op names."""
    from tiletune import catalogs
    from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE, FUSED_MOE_OPS

    return _complete(sorted({k[2] for k in catalogs.keys()} | set(DENSE_GEMM_OPERAND_DTYPE) | set(FUSED_MOE_OPS)), incomplete)


def complete_arch(incomplete: str) -> list[str]:
    """--arch / --only-arch: the archs tiletune knows."""
    from tiletune.core.archs import KNOWN_ARCHS

    return _complete(list(KNOWN_ARCHS), incomplete)


def complete_gpu(incomplete: str) -> list[str]:
    """--gpu: the GPU spec table's names."""
    from tiletune.model.gpus import table

    return _complete(sorted(g.name for g in table().gpus), incomplete)


def complete_status(incomplete: str) -> list[str]:
    """--status: the record statuses."""
    from tiletune.core.records import Status

    return _complete([s.value for s in Status], incomplete)


@app.command("inspect")
def inspect_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help=_PATHS_HELP, show_default=False, readable=False)] = None,
    *,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json (schema tiletune.inspect/1) or markdown.")] = OutputFormat.table,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply (sm90, sm100, sm120, ...).", autocompletion=complete_arch)] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU to model on (a `tiletune gpus` name). Default: the GPU the inputs name, else the arch's default SKU.", autocompletion=complete_gpu)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=_FAIL_ON_HELP)] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="One row per tactic (every profiled, failed and chosen one) instead of one line per M bucket.")] = False,
    only_op: Annotated[Optional[List[str]], typer.Option("--op", help="Only this op (repeatable), e.g. fp4_gemm; an unambiguous prefix will do (fp4).", autocompletion=complete_op)] = None,
    only_arch: Annotated[Optional[List[str]], typer.Option("--only-arch", help="Only entries of this arch (repeatable); --arch sets the arch instead.", autocompletion=complete_arch)] = None,
    only_rank: Annotated[Optional[List[str]], typer.Option("--rank", help="Only this rank (repeatable), as inspect names it: tp1_pp0_dp0, rank3.")] = None,
    only_status: Annotated[Optional[List[str]], typer.Option("--status", help="Only entries with this status (repeatable): chosen, failed, profiled, ...", autocompletion=complete_status)] = None,
    runtime_m: Annotated[Optional[List[str]], typer.Option("--m", help="Which tile runs at these runtime M (e.g. 37 or the CUDA-graph sizes 1,2,4,8,16,24,32; repeatable), through the release's bucket mapping.")] = None,
    uncalibrated: Annotated[bool, typer.Option("--uncalibrated", help="Show the table model's times even where the inputs' measured times calibrate it (by default such columns show the calibrated model and say so: 't us cal*').")] = False,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="Failures already accepted: a previous `inspect -f json`, a FlashInfer blocklist, or lines 'OP TACTICS' (e.g. 'mxfp8_gemm 6-9'). --fail-on failed then exits 1 only for failures not in it (or a fatal event).", readable=False)] = None,
    summary: Annotated[bool, typer.Option("--summary", "-q", help="Verdicts and counts only (table and Markdown).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Everything: every tactic (--all) and every list in full.")] = False,
    moe_dtype: Annotated[Optional[str], typer.Option("--dtype", help="Activation or weight dtype of fused-MoE keys that do not record it (before FlashInfer 0.6.18rc2), e.g. nvfp4, fp8, bf16: settles tiles the catalogs leave ambiguous between variants (as retry's --dtype).")] = None,
    fleet: Annotated[bool, typer.Option("--fleet", help="Many hosts: each PATH is a directory with one folder per host, or an index file listing host folders (one a line). One summary per (GPU, driver, CUDA, FlashInfer release): winners per op and bucket, keys where hosts chose different tiles and their measured times, outliers. Read one host at a time.")] = False,
) -> None:
    """Which tiles won, which failed and why, which were never tried: per arch and op.

    The table shows one line per M bucket (chosen tile, measured time, runner-up and margin,
    failed and never-tried counts) and a tile map; --all lists every tactic. JSON always holds
    every entry. Exit status 0 when every input was read (findings are not errors), 2 when any
    input was unusable (after printing everything that could be inspected). With no PATH and
    nothing found, says what was searched and exits 0.
    """

    _run_batch(lambda: inspect_status(
        paths, format=format, arch=arch, flashinfer_version=flashinfer_version, gpu=gpu, output=output, fail_on=fail_on,
        all_rows=all_rows, only_op=only_op, only_arch=only_arch, only_rank=only_rank, only_status=only_status,
        runtime_m=runtime_m, uncalibrated=uncalibrated, baseline=baseline, summary=summary, verbose=verbose,
        moe_dtype=moe_dtype, fleet=fleet),
        [*(paths or ()), *((baseline,) if baseline else ())])


class ReportFormat(str, enum.Enum):
    """Report formats."""

    markdown = "markdown"
    json = "json"


@app.command("report")
def report_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help=_PATHS_HELP, show_default=False, readable=False)] = None,
    *,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Report file (e.g. report.md); roofline PNGs are written beside it. Default: stdout, no pictures.", readable=False)] = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f", help="markdown (for a GitHub issue) or json.")] = ReportFormat.markdown,
    redact: Annotated[bool, typer.Option("--redact/--no-redact", help="Replace directories, host and user names (the default: reports leave the machine); --no-redact keeps them.")] = True,
    full: Annotated[bool, typer.Option("--full", help="Everything, uncapped (to attach as a file); by default the report is capped to fit a GitHub issue.")] = False,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU to model on (a `tiletune gpus` name).", autocompletion=complete_gpu)] = None,
    no_plot: Annotated[bool, typer.Option("--no-plot", help="Do not draw roofline PNGs.")] = False,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply.", autocompletion=complete_arch)] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=_FAIL_ON_HELP)] = None,
    only_op: Annotated[Optional[List[str]], typer.Option("--op", help="Only this op (repeatable), as inspect's --op.", autocompletion=complete_op)] = None,
    only_rank: Annotated[Optional[List[str]], typer.Option("--rank", help="Only this rank (repeatable), as inspect's --rank.")] = None,
    runtime_m: Annotated[Optional[List[str]], typer.Option("--m", help="Name the tile that runs at these runtime M (e.g. 1,2,4,8,37; repeatable), as inspect's --m.")] = None,
    uncalibrated: Annotated[bool, typer.Option("--uncalibrated", help="The table model's times even where the inputs' measured times calibrate it.")] = False,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="Failures already accepted, as inspect's --baseline: --fail-on failed exits 1 only for others.", readable=False)] = None,
) -> None:
    """A self-contained bug-ticket report: verdicts, environment, chosen tiles, failures and why, commands.

    Exit status as for inspect: 2 when any input was unusable (the report is still written).
    """

    def run() -> int:
        from tiletune.cli.commands.report import report_status

        return report_status(paths, output=output, as_json=format is ReportFormat.json, redact=redact, full=full,
                             gpu=gpu, plot=not no_plot, arch=arch, flashinfer_version=flashinfer_version, fail_on=fail_on,
                             only_op=only_op, only_rank=only_rank, runtime_m=runtime_m, uncalibrated=uncalibrated,
                             baseline=baseline)

    _run_batch(run, paths or ())


@app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The earlier warm-up: a cache, log, ledger or a directory of them.", show_default=False, readable=False)],
    new: Annotated[Path, typer.Argument(help="The later warm-up, likewise.", show_default=False, readable=False)],
    *,
    old_also: Annotated[Optional[List[Path]], typer.Option("--old", help="Another input of the OLD side (repeatable).", readable=False)] = None,
    new_also: Annotated[Optional[List[Path]], typer.Option("--new", help="Another input of the NEW side (repeatable).", readable=False)] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json (schema tiletune.diff/1) or markdown.")] = OutputFormat.table,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch both sides imply.")] = None,
    old_version: Annotated[Optional[str], typer.Option("--old-flashinfer-version", help="Override the FlashInfer version OLD implies.")] = None,
    new_version: Annotated[Optional[str], typer.Option("--new-flashinfer-version", help="Override the FlashInfer version NEW implies.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=(
        "Gate on the NEW warm-up instead of on changes: exit 1 when NEW holds such findings (fatal: an event "
        "that ended a run; failed: any failed tactic, or a fatal event, as `inspect --fail-on` on NEW), else 0, "
        "whatever changed. Unusable inputs still exit 2."))] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="Failures already accepted (as inspect's --baseline): --fail-on failed gates on NEW's other failures only.", readable=False)] = None,
) -> None:
    """Compare two warm-ups in tile terms: winners that moved, buckets added or removed, tactics newly
    failing or recovered, and what changed in the environment.

    Across FlashInfer releases configs are compared, never tactic numbers. Exit status 0 when no
    entry differs (environment differences alone are shown), 1 when an entry does, 2 when an
    input is unusable. With --fail-on the findings in NEW decide 0 or 1 instead of the changes.
    """

    def run() -> int:
        from tiletune.cli.commands.diff import diff_status

        return diff_status(old, new, old_also=old_also or [], new_also=new_also or [], fmt=format, arch=arch,
                           old_version=old_version, new_version=new_version, output=output, fail_on=fail_on,
                           baseline=baseline)

    _run_batch(run, [old, new, *(old_also or []), *(new_also or [])])


class CatalogFormat(str, enum.Enum):
    """Output formats of `tiletune catalog`."""

    table = "table"
    json = "json"
    markdown = "markdown"


@app.command("catalog")
def catalog_cmd(
    flashinfer_version: Annotated[
        Optional[str], typer.Option("--flashinfer-version", help="Release whose tactic tables to show (e.g. 0.6.14).")
    ] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="sm90, sm100, sm103, sm107, sm110, sm120 (sm121 uses sm120's).", autocompletion=complete_arch)] = None,
    op: Annotated[Optional[str], typer.Option("--op", help="fp4_gemm, mxfp8_gemm, fp8_gemm, bf16_gemm, ...", autocompletion=complete_op)] = None,
    fmt: Annotated[CatalogFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = CatalogFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Without --flashinfer-version: every release's list sizes, not one line per op.")] = False,
) -> None:
    """List the FlashInfer releases the tactic catalogs cover, or one release's tactic tables.

    A release's tables mark each tactic's known failure: the catalog's own (from the release's
    source), else the shared-memory model's verdict for that tile on that arch (labelled model).
    """
    def run() -> None:
        from tiletune.analysis.catalog_fit import model_failure
        from tiletune.catalogs.listing import catalog_view
        from tiletune.cli.commands.inspect import terminal_width
        from tiletune.formats import render

        view = {"width": terminal_width(output)} if fmt is CatalogFormat.table else {}
        emit(render("catalog", catalog_view(flashinfer_version, arch, op, judge=model_failure), fmt.value,
                    all_rows=all_rows, **view), output)

    _guard(run)


class RetryEngine(str, enum.Enum):
    """Retry engines."""

    flashinfer = "flashinfer"
    cutlass = "cutlass"


@app.command("retry")
def retry_command(
    paths: Annotated[Optional[List[Path]], typer.Argument(help="Caches, logs, blocklists or ledgers to take the configs from.", show_default=False, readable=False)] = None,
    *,
    ledger: Annotated[Path, typer.Option("--ledger", help="JSONL ledger: one line appended per attempt; a rerun resumes from it.", readable=False)] = Path("tiletune-ledger.jsonl"),
    engine: Annotated[RetryEngine, typer.Option("--engine", help="flashinfer: FlashInfer's own runner with the tactic forced; cutlass: a kernels/ reproducer of the decoded tile.")] = RetryEngine.flashinfer,
    all_: Annotated[bool, typer.Option("--all", help="Every config in the inputs, not only the failed / blocklisted ones.")] = False,
    op: Annotated[Optional[List[str]], typer.Option("--op", help="Only this op (repeatable), e.g. fp8_gemm.", autocompletion=complete_op)] = None,
    tactic: Annotated[Optional[str], typer.Option("--tactic", help="Only these tactics: 3, 0-7 or 1,4,9-11.")] = None,
    shape: Annotated[Optional[List[str]], typer.Option("--shape", help="Try --op/--tactic at MxNxK or BxMxNxK (repeatable) instead of configs from inputs.")] = None,
    runner: Annotated[Optional[str], typer.Option("--runner", help="Runner class for --shape (default: the op's runner, listed above).")] = None,
    dtype_out: Annotated[str, typer.Option("--dtype-out", help="Output dtype for --shape (bfloat16 or float16).")] = "bfloat16",
    dtype: Annotated[Optional[str], typer.Option("--dtype", help="Input dtype of fused-MoE keys that do not record it (before FlashInfer 0.6.18rc2): bf16, fp16 or fp8.")] = None,
    top_k: Annotated[Optional[int], typer.Option("--top-k", help="top_k of fused-MoE keys that do not record it (before FlashInfer 0.6.18rc2).")] = None,
    changed_env: Annotated[bool, typer.Option("--changed-env", help="Only failures recorded under a different environment (GPU, driver, CUDA, library versions).")] = False,
    since_driver: Annotated[bool, typer.Option("--since-driver", help="Only failures recorded under a different driver.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Time limit per attempt in seconds (the child is killed with its process group).")] = 120.0,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel builds when preparing (CUTLASS engine compiles).")] = 1,
    allow_jit_build: Annotated[bool, typer.Option("--allow-jit-build", help="Build missing FlashInfer JIT modules once before the attempts (never done silently).")] = False,
    no_resume: Annotated[bool, typer.Option("--no-resume", help="Redo attempts the ledger already has for this environment.")] = False,
    blocklist: Annotated[Optional[Path], typer.Option("--blocklist", help="Write a FlashInfer tactics blocklist (new file) of what still fails.", readable=False)] = None,
    pin_cache: Annotated[Optional[Path], typer.Option("--pin-cache", help="Write a NEW cache: the input cache with each retried key pinned to its fastest passing tactic.", readable=False)] = None,
    env_file: Annotated[Optional[Path], typer.Option("--env", help=(
        "With --pin-cache: the environment that will load it (a cache FlashInfer wrote there, a v2 manifest, or "
        "_collect_metadata()'s JSON): its _metadata fields are written, and tiletune says whether FlashInfer there "
        "will load the file."))] = None,
    reproducer: Annotated[Optional[Path], typer.Option("--reproducer", help="Write a CUTLASS reproducer folder (.cu, build.sh, run.sh) per target with a decoded tile.", readable=False)] = None,
    workspace_bytes: Annotated[Optional[int], typer.Option("--workspace-bytes", help="Run with this cuBLASLt workspace instead of FlashInfer's default (40 MiB in 0.7.2.post1; provokes workspace failures).")] = None,
    input_amplitude: Annotated[Optional[float], typer.Option("--input-amplitude", help="Scale inputs so dequantized values reach +-this (provokes output overflow).")] = None,
    iters: Annotated[int, typer.Option("--iters", help="Timed runs per passing attempt.")] = 20,
    no_run: Annotated[bool, typer.Option("--no-run", help="Attempt nothing; only write --blocklist / --pin-cache from the ledger (works without a GPU).")] = False,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Run the attempts on this Ray cluster (auto, or HOST:PORT): one num_gpus=1 task per target, CUTLASS builds as CPU tasks, results appended to the local ledger as they finish. Needs pip install 'tiletune[ray]'.")] = None,
    shard: Annotated[Optional[str], typer.Option("--shard", help="Take only shard I of N of the targets (I/N, 0-based), the same split on every node; auto: the index from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX (+ TILETUNE_SHARD_COUNT) or TILETUNE_SHARD=I/N. Each shard writes its own ledger ({shard} in --ledger).")] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Override the arch the inputs imply.", autocompletion=complete_arch)] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Override the FlashInfer version the inputs imply.")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, markdown (for a ticket) or json (schema tiletune.retry/1).")] = OutputFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the summary here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option("--fail-on", help=(
        "Exit 1 when such findings exist on this GPU: fatal (an attempt ended in an illegal instruction, illegal "
        "address or a crashed process: what would end a server) or failed (any attempt that did not pass, or a "
        "fatal one). Counted: this run's attempts and, for targets skipped as already done in this environment, "
        "their ledger attempts; failures in the inputs do not count (retry re-checks them). Unusable inputs "
        "still exit 2."))] = None,
) -> None:
    """Re-attempt failed (or any) configs on this GPU, each in a fresh process.

    Every attempt is diagnosed (passed with time and error, or why it
    failed) and appended to the ledger as soon as it ends. Exit status 0
    when the attempts ran (failures are findings; --fail-on makes them exit
    1), 2 for unusable inputs or
    when retry cannot run here: without a usable CUDA device it says so in
    one line before building anything (--reproducer, --no-run need no GPU).

    --runner defaults for --shape: fp8_gemm CublasFp8GemmRunner,
    bf16_gemm CublasltBf16GemmRunner, fp4_gemm CutlassFp4GemmRunner,
    mxfp8_gemm CutlassMxfp8GemmRunner.
    """

    def run() -> int:
        from tiletune.cli.commands.retry import RetryOptions, retry_status

        ctx = inspect_context(arch, flashinfer_version)
        opts = RetryOptions(
            paths=list(paths or []), ledger=ledger, engine=engine.value, all_statuses=all_, ops=list(op or []),
            tactic=tactic, shapes=list(shape or []), runner=runner, dtype_out=dtype_out, changed_env=changed_env,
            since_driver=since_driver, timeout_s=timeout, jobs=jobs, allow_jit_build=allow_jit_build,
            resume=not no_resume, blocklist=blocklist, pin_cache=pin_cache, env_file=env_file, reproducer=reproducer,
            workspace_bytes=workspace_bytes, input_amplitude=input_amplitude, iters=iters, arch=ctx.arch,
            flashinfer_version=ctx.flashinfer_version, as_json=format is OutputFormat.json, fmt=format.value, no_run=no_run,
            moe_dtype=dtype, top_k=top_k, output=output, shard=shard, ray=ray,
        )
        return retry_status(opts, fail_on)

    code = _guard(run, [*(paths or ()), ledger])
    if code:
        raise typer.Exit(code=code)


class GpusFormat(str, enum.Enum):
    """`tiletune gpus` output formats."""

    table = "table"
    json = "json"


@app.command("model")
def model_command(
    *,
    dtype: Annotated[str, typer.Option("--dtype", help="nvfp4, mxfp4, mxfp8, fp8, bf16, fp16, fp32, int8, int4.")],
    m: Annotated[int, typer.Option("--m", help="Rows of A (tokens); for MoE the token count before top-k routing.")],
    n: Annotated[int, typer.Option("--n", help="Output features (rows of the weight).")],
    k: Annotated[int, typer.Option("--k", help="Reduction size, in elements.")],
    tile: Annotated[str, typer.Option("--tile", help="CTA tile MxNxK in elements, e.g. 128x128x256.")],
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU name (see `tiletune gpus`); nvidia-smi names work.", autocompletion=complete_gpu)] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Arch (sm90, sm100, sm120...); without --gpu its default SKU is used.", autocompletion=complete_arch)] = None,
    cluster: Annotated[str, typer.Option("--cluster", help="Cluster shape XxYxZ.")] = "1x1x1",
    swap_ab: Annotated[bool, typer.Option("--swap-ab", help="The kernel computes the transposed product (its M runs over N).")] = False,
    stream_k: Annotated[bool, typer.Option("--stream-k", help="Stream-K scheduler.")] = False,
    split_k: Annotated[int, typer.Option("--split-k", help="Split-K factor.")] = 1,
    grouped: Annotated[bool, typer.Option("--grouped", help="Grouped (ptr-array / MoE) kernel.")] = False,
    experts: Annotated[Optional[int], typer.Option("--experts", help="MoE experts (implies --grouped).")] = None,
    top_k: Annotated[Optional[int], typer.Option("--top-k", help="MoE experts per token.")] = None,
    stage_policy: Annotated[Optional[str], typer.Option("--stage-policy", help="'auto' (StageCountAutoCarveout) or 'fixed:N' (StageCount<N>).")] = None,
    schedule: Annotated[Optional[str], typer.Option("--schedule", help="Kernel schedule: cooperative, pingpong, warpspecialized, single-warpgroup, 1sm, 2sm, sm80 or auto (SM90: ping-pong for 64-row tiles).")] = None,
    stages: Annotated[Optional[int], typer.Option("--stages", help="Explicit stage count (StageCount<N>; same as --stage-policy fixed:N).")] = None,
    fast_accum: Annotated[Optional[bool], typer.Option("--fast-accum/--no-fast-accum", help="SM90 fp8: fast accumulation (FlashInfer's choice, the default) or the fp32-promoted mainloop.")] = None,
    sm_clock: Annotated[Optional[float], typer.Option("--sm-clock", help="SM clock in MHz the GPU runs at (e.g. a power-capped sustained clock); default: the SKU's max clock.")] = None,
    power_limit: Annotated[Optional[float], typer.Option("--power-limit", help="Board power cap in W below the SKU's rated power (nvidia-smi -pl): the SM clock follows it (ignored with --sm-clock).")] = None,
    l2: Annotated[Optional[str], typer.Option("--l2", help="L2 state of the timing to compare with: warm (an autotuner re-timing the same tensors) or cold (L2 flushed); default unknown: expected cold, band down to warm.")] = None,
    timer: Annotated[Optional[str], typer.Option("--timer", help="How the timing to compare with was taken: kernel (a profiler's kernel duration: CUPTI, nsys, proton), graph (CUDA-graph replay), events (CUDA events around launches) or unknown (band spans all); sets the fixed per-kernel term. Default: the fit's own (events).")] = None,
    exact: Annotated[bool, typer.Option("--exact", help="Shared memory from a compiled CUTLASS kernel type (nvcc, no GPU) instead of the model.")] = False,
    gpu_file: Annotated[Optional[Path], typer.Option("--gpu-file", help="JSON file adding/overriding GPUs (env TILETUNE_GPU_FILE).", readable=False)] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = OutputFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """What-if for one problem and tile on one GPU: shared-memory fit, intensity, roofline, waves, expected time."""

    def run() -> None:
        from tiletune.cli.commands.inspect import terminal_width
        from tiletune.cli.commands.model import run_model

        refuse_outputs_over_inputs([("--output", output)], _gpu_files(gpu_file))
        text = run_model(dtype=dtype, m=m, n=n, k=k, tile=tile, gpu=gpu, arch=arch, cluster=cluster, swap_ab=swap_ab,
                         stream_k=stream_k, split_k=split_k, grouped=grouped, experts=experts, top_k=top_k,
                         stage_policy=stage_policy, exact=exact, gpu_file=str(gpu_file) if gpu_file else None,
                         fmt=format.value, schedule=schedule, stages=stages, fast_accum=fast_accum, sm_clock=sm_clock, l2=l2,
                         power_limit=power_limit, timer=timer,
                         width=terminal_width(output) if format is OutputFormat.table else None)
        emit(text, output)

    _guard(run, [gpu_file] if gpu_file else ())


def _gpu_files(gpu_file: Optional[Path]) -> List[Path]:
    """The GPU files a model / gpus run reads (an input like any other)."""
    named = gpu_file or os.environ.get("TILETUNE_GPU_FILE")
    return [Path(named)] if named else []


@app.command("gpus")
def gpus_command(
    *,
    format: Annotated[GpusFormat, typer.Option("--format", "-f", help="table or json (json carries every source).")] = GpusFormat.table,
    gpu_file: Annotated[Optional[Path], typer.Option("--gpu-file", help="JSON file adding/overriding GPUs (env TILETUNE_GPU_FILE).", readable=False)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
) -> None:
    """The GPU spec table: SMs, clock, bandwidth, L2, shared memory, dense (and quoted sparse) tensor peaks."""

    def run() -> None:
        from tiletune.cli.commands.model import run_gpus

        refuse_outputs_over_inputs([("--output", output)], _gpu_files(gpu_file))
        from tiletune.cli.commands.inspect import terminal_width

        width = terminal_width(output) if format is GpusFormat.table else None
        emit(run_gpus(fmt=format.value, gpu_file=str(gpu_file) if gpu_file else None, width=width), output)

    _guard(run, [gpu_file] if gpu_file else ())


class DoctorFormat(str, enum.Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


@app.command("doctor")
def doctor_command(
    *,
    format: Annotated[DoctorFormat, typer.Option("--format", "-f", help="table, json or markdown (to paste into a ticket).")] = DoctorFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    python: Annotated[Optional[str], typer.Option("--python", help="Ask this interpreter's FlashInfer for its cache metadata (a server's venv, e.g. /opt/vllm/bin/python). Default: this one.")] = None,
) -> None:
    """What tiletune can see here: versions (tiletune, Python, OS, driver, CUDA, nvcc, FlashInfer, CUTLASS, torch),
    GPUs, where CUTLASS headers are, JIT workspaces, caches, the FLASHINFER_* / TLLM_* / VLLM_* / SGLANG_*
    variables set, and the metadata FlashInfer compares a cache with (`tiletune check --env` reads this report as JSON)."""

    def run() -> None:
        from tiletune.cli.commands import doctor
        from tiletune.cli.commands.inspect import terminal_width
        from tiletune.formats import render

        view = {"width": terminal_width(output)} if format is DoctorFormat.table else {}
        emit(render("doctor", doctor.collect(python=python), format.value, **view), output)

    _guard(run)


class DeployLayout(str, enum.Enum):
    vllm = "vllm"
    sglang = "sglang"
    trtllm = "trtllm"
    flashinfer_v2 = "flashinfer-v2"


@app.command("deploy")
def deploy_command(
    table: Annotated[Path, typer.Argument(help="A FlashInfer v1 cache: a `retry --pin-cache` output or any tuned table.", show_default=False, readable=False)],
    *,
    layout: Annotated[DeployLayout, typer.Option("--layout", help="vllm: autotune_configs_dp{d}_rank{r}.json; sglang: rank_tp{t}_pp{p}_dp{d}.json; trtllm: a TensorRT-LLM autotuner cache, used in place (prints TLLM_AUTOTUNER_CACHE_PATH); flashinfer-v2: FlashInfer 0.7.x's managed store under -o ROOT (ROOT/v2/<env hash>/, as autotune_v2 writes it; prints FLASHINFER_AUTOTUNE_CACHE_DIR).")],
    ranks: Annotated[int, typer.Option("--ranks", help="vLLM: tensor x pipeline parallel size of an engine; SGLang: TP size.")] = 1,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Directory for the rank files (new files only; vllm and sglang).", readable=False)] = None,
    pp: Annotated[int, typer.Option("--pp", help="SGLang pipeline parallel size.")] = 1,
    dp: Annotated[int, typer.Option("--dp", help="Data parallel size (one set of rank files per dp rank).")] = 1,
    skip_op: Annotated[Optional[List[str]], typer.Option("--skip-op", help="An op the server should not tune (repeatable): printed as the engine's skip-ops setting.")] = None,
    env: Annotated[Optional[Path], typer.Option("--env", help="Check what was written against this target (`tiletune doctor -f json` on it).", readable=False)] = None,
    measure: Annotated[Optional[List[str]], typer.Option("--measure", help="flashinfer-v2: a non-default MeasurementPolicy field of the server's autotune_v2, NAME=VALUE (execution_mode, cold_l2, timer, graph_timing; repeatable): it is part of the store's identity.")] = None,
    format: Annotated[DoctorFormat, typer.Option("--format", "-f", help="table or json (schema tiletune.deploy/1).")] = DoctorFormat.table,
) -> None:
    """Seed one tuned table into every rank of a vLLM or SGLang deployment (the same file under each rank's name,
    so the engines' rank rules keep it), or write it as FlashInfer's managed v2 store, and print the settings to
    paste (cache directory, skip-ops)."""

    def run() -> None:
        from tiletune.cli.commands.deploy import run_deploy
        from tiletune.formats import render

        refuse_outputs_over_inputs([("--output", output)], [table, *([env] if env else [])])
        if output is None and layout is not DeployLayout.trtllm:
            raise typer.BadParameter(f"--layout {layout.value} writes files: give -o DIR")
        if measure and layout is not DeployLayout.flashinfer_v2:
            raise typer.BadParameter("--measure is part of a v2 store's identity: only with --layout flashinfer-v2")
        seeded = run_deploy(table, output or Path("."), layout.value, ranks, pp, dp, list(skip_op or []), env,
                            list(measure or []))
        emit(render("deploy", seeded, format.value), None)

    _guard(run, [table, *([env] if env else [])])


class CheckFailOn(str, enum.Enum):
    miss = "miss"


@app.command("check")
def check_command(
    paths: Annotated[List[Path], typer.Argument(help="Cache files or a server's cache directory (vLLM, SGLang or plain FlashInfer v1 files).", show_default=False, readable=False)],
    *,
    env: Annotated[Optional[Path], typer.Option("--env", help="The target: JSON written by `tiletune doctor -f json` on it. Default: this host.", readable=False)] = None,
    flashinfer_version: Annotated[Optional[str], typer.Option("--flashinfer-version", help="Take the target's FlashInfer release as this one (an upgrade being planned).")] = None,
    ranks: Annotated[Optional[int], typer.Option("--ranks", help="Ranks per group on the target (vLLM: tensor x pipeline parallel size; SGLang: TP size), so a missing highest rank's file is seen.")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json (schema tiletune.check/1) or markdown.")] = OutputFormat.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.", readable=False)] = None,
    fail_on: Annotated[Optional[CheckFailOn], typer.Option("--fail-on", help="miss: exit 1 when a file will be ignored or a rank group discarded. Unusable inputs still exit 2.")] = None,
) -> None:
    """Will these caches hit on the target? Per file, the target FlashInfer release's own metadata rule (which field decides);
    per rank group, vLLM's fingerprint rule and SGLang's digest rule (kept or discarded), and which keys differ between ranks in tile terms."""

    def run() -> int:
        from tiletune.cli.commands.check import run_check
        from tiletune.cli.output import say
        from tiletune.formats import render

        refuse_outputs_over_inputs([("--output", output)], [*paths, *([env] if env else [])])
        result = run_check(paths, env, flashinfer_version, ranks)
        from tiletune.cli.commands.inspect import terminal_width

        view = {"width": terminal_width(output)} if format is OutputFormat.table else {}
        emit(render("check", result, format.value, **view), output, json=format is OutputFormat.json)
        for p in result.problems:
            say(f"tiletune: {p.message}")
        if any(p.loses_data for p in result.problems):
            return 2
        return 1 if fail_on is CheckFailOn.miss and result.misses else 0

    code = _guard(run, [*paths, *([env] if env else [])])
    if code:
        raise typer.Exit(code=code)


def main() -> None:
    """Console-script entry point (launch.main runs a plain inspect without typer, everything else here).

    After a command that kept its result (inspect, report), exit with os._exit once stdout and
    stderr are flushed (cli.process.exit_kept); other commands exit normally.
    """
    keep_results()
    code: object = 0
    try:
        _app_for(sys.argv)()
    except SystemExit as e:
        code = e.code
        if not kept_any() or not (code is None or isinstance(code, int)):
            raise
    if not kept_any():
        return
    exit_kept(code if isinstance(code, int) else 0)


def _app_for(argv: Sequence[str]) -> typer.Typer:
    """The app to run for this command line: when its first word names a command, a copy of `app`
    holding that command alone (and the root callback); otherwise `app` itself.

    Why: typer builds every command's click parameters at each start (about a hundred for the
    eight commands) and an inspect uses thirteen. The command's parsing, help, errors and exit
    statuses are the same (tests/test_cli_one_command.py compares them for every command); the
    root's own help, --version, shell completion and unknown commands go through `app`.
    """
    if len(argv) < 2:
        return app
    named = [c for c in app.registered_commands if c.name == argv[1]]
    if not named:
        return app
    one = typer.Typer(**_APP_SETTINGS)
    one.registered_callback = app.registered_callback
    one.registered_commands = named
    return one


if __name__ == "__main__":  # pragma: no cover
    main()
