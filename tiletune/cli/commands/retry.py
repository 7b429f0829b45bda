"""`tiletune retry` as a library call: inputs -> targets -> engine -> ledger -> exports -> summary.

The CLI parses options into `RetryOptions` and calls `retry()`; tests call it directly. Targets
come from the inputs (caches, logs, blocklists, ledgers: `tiletune.readers.read_inputs` then
`tiletune.decode.decode`) or, with `--shape`, from the command line. The summary is a table or
JSON on stdout; progress goes to stderr.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, TextIO, Tuple

from msgspec import structs

from tiletune.analysis.results import loses_data
from tiletune.cli.output import FailOn, emit, say
from tiletune.core.errors import TunerError, UsageError
from tiletune.core.records import InputProblem
from tiletune.formats import render_text
from tiletune.formats.retry import RetrySummary
from tiletune.tuner import fingerprint
from tiletune.tuner.engine import RetryTarget
from tiletune.tuner.orchestrator import RetryRun, run_retry
from tiletune.tuner.resume import options_for
from tiletune.tuner.targets import (
    check_env_known,
    check_named,
    explicit_targets,
    nothing_to_retry,
    parse_shape,
    parse_tactics,
    targets_from_entries,
)

DEFAULT_LEDGER = Path("tiletune-ledger.jsonl")


@dataclass
class RetryOptions:
    """Everything `tiletune retry` was told (see the CLI's help for each)."""

    paths: List[Path] = field(default_factory=list)
    ledger: Path = DEFAULT_LEDGER
    engine: str = "flashinfer"
    all_statuses: bool = False
    ops: List[str] = field(default_factory=list)
    tactic: Optional[str] = None
    shapes: List[str] = field(default_factory=list)
    runner: Optional[str] = None
    dtype_in: str = "float8_e4m3fn"
    dtype_out: str = "bfloat16"
    changed_env: bool = False
    since_driver: bool = False
    timeout_s: float = 120.0
    jobs: int = 1
    allow_jit_build: bool = False
    resume: bool = True
    blocklist: Optional[Path] = None
    pin_cache: Optional[Path] = None
    env_file: Optional[Path] = None  # --env: the metadata of the environment that will load --pin-cache
    reproducer: Optional[Path] = None
    workspace_bytes: Optional[int] = None
    input_amplitude: Optional[float] = None
    warmup: int = 3
    iters: int = 20
    arch: Optional[str] = None
    flashinfer_version: Optional[str] = None
    as_json: bool = False
    fmt: str = "table"  # the summary's format: table, markdown or json (as_json=True means json)
    no_run: bool = False
    moe_dtype: Optional[str] = None  # --dtype: fused-MoE keys without extras (before FlashInfer 0.6.18rc2)
    top_k: Optional[int] = None  # --top-k: likewise
    output: Optional[Path] = None  # -o: the summary file the CLI writes; only checked here (never an input)
    shard: Optional[str] = None  # --shard I/N or auto: this node's share of the targets (tuner/shard.py)
    ray: Optional[str] = None  # --ray ADDRESS: attempts as Ray tasks (tuner/ray_runner.py, the [ray] extra)


@dataclass
class RetryOutcome:
    """What the command produced: the run, input problems, export notes, and the text for stdout."""

    run: Optional[RetryRun]
    problems: List[InputProblem]
    notes: List[str]
    text: str
    exit_code: int
    findings: Optional["RetryFindings"] = None  # set by retry(): what --fail-on gates on


# Attempt outcomes that would end a server process: sticky CUDA errors and a crashed child.
FATAL_DIAGNOSES = frozenset(("illegal_instruction", "illegal_address", "crashed"))
# Outcomes that are no evidence about the config: it passed, or the engine could not start it.
NOT_FAILED = frozenset(("passed", "engine_error"))


@dataclass
class RetryFindings:
    """What `retry --fail-on` gates on: each selected target's outcome on this GPU, from this run's
    attempt or, for a target skipped because the ledger already holds its attempt in this
    environment (same options), that attempt. Failures in the inputs do not count: retry is how
    they are re-checked."""

    failed: List[str] = field(default_factory=list)  # keys of targets whose attempt failed
    fatal: List[str] = field(default_factory=list)  # keys whose attempt ended as FATAL_DIAGNOSES says

    def fails_on(self, what: str) -> bool:
        if what == "fatal":
            return bool(self.fatal)
        if what == "failed":
            return bool(self.failed) or bool(self.fatal)
        raise ValueError(f"--fail-on {what!r}: expected fatal or failed")


def findings_of(run: Optional[RetryRun], engine_name: str) -> RetryFindings:
    """The outcome of every target `run` attempted or skipped as already finished (see RetryFindings)."""
    out = RetryFindings()
    if run is None:
        return out
    outcomes = [(a.target.key, a.diagnosis.value) for a in run.attempts]
    if run.skipped and run.ledger is not None:
        from tiletune.tuner.ledger import Ledger
        from tiletune.tuner.resume import line_identity, target_identity

        latest: Dict[Any, str] = {}  # identity -> the last attempt's diagnosis in this environment
        for line in Ledger(run.ledger).iter_attempts():
            if line.get("env_id") == run.env_id:
                ident = line_identity(line)
                if ident is not None:
                    latest[ident] = str(line.get("diagnosis"))
        for t in run.skipped:
            diagnosis = latest.get(target_identity(t, engine_name))
            if diagnosis is not None:
                outcomes.append((t.key, diagnosis))
    for key, diagnosis in outcomes:
        if diagnosis in FATAL_DIAGNOSES:
            out.fatal.append(key)
        elif diagnosis not in NOT_FAILED:
            out.failed.append(key)
    return out


# --shape defaults: the runner FlashInfer's engine drives for each op, and the op's input dtype
DEFAULT_RUNNERS = {"fp8_gemm": "CublasFp8GemmRunner", "bf16_gemm": "CublasltBf16GemmRunner",
                   "fp4_gemm": "CutlassFp4GemmRunner", "mxfp8_gemm": "CutlassMxfp8GemmRunner"}
OP_INPUT_DTYPES = {"bf16_gemm": "bfloat16", "fp4_gemm": "nvfp4", "mxfp8_gemm": "mxfp8"}


def _default_runner(op: str) -> str:
    if op not in DEFAULT_RUNNERS:
        known = ", ".join(f"{o} -> {r}" for o, r in DEFAULT_RUNNERS.items())
        raise UsageError(f"--shape needs --runner for op {op!r} (known defaults: {known})")
    return DEFAULT_RUNNERS[op]


def _make_engine(opts: RetryOptions, progress: Optional[TextIO]):
    if opts.engine == "flashinfer":
        from tiletune.tuner.flashinfer_engine import FlashInferEngine

        return FlashInferEngine(
            allow_jit_build=opts.allow_jit_build,
            warmup=opts.warmup,
            iters=opts.iters,
            workspace_bytes=opts.workspace_bytes,
            input_amplitude=opts.input_amplitude,
            moe_dtype=opts.moe_dtype,
            moe_top_k=opts.top_k,
            progress=progress,
        )
    if opts.engine == "cutlass":
        from tiletune.tuner.cutlass_engine import CutlassEngine

        return CutlassEngine(moe_top_k=opts.top_k)
    raise UsageError(f"--engine {opts.engine!r}: use flashinfer or cutlass")


class Collected(NamedTuple):
    """What retry takes from its bounded_input."""

    targets: List[RetryTarget]
    problems: List[InputProblem]
    key_problems: Dict[str, Any]  # {cache key: (op, runner, (b, m, n, k))}, for --pin-cache
    sources: List[Tuple[str, str]] = []  # (path, reader kind) of every input file read
    why_none: Optional[str] = None  # when no target was selected from the inputs: why, as what they hold


def collect_targets(opts: RetryOptions, current_env: Dict[str, Any]) -> Collected:
    """Targets from --shape or from the inputs; also {cache key: (op, runner, (b, m, n, k))} for pinning."""
    tactics = parse_tactics(opts.tactic)
    if opts.shapes:
        if len(opts.ops) != 1 or tactics is None:
            raise UsageError("--shape needs exactly one --op and --tactic (e.g. --op fp8_gemm --tactic 0-7 --shape 128x4096x4096)")
        named = [t for t in tactics if not isinstance(t, int)]
        if named:
            raise UsageError(f"--tactic {named[0]!r}: with --shape a tactic is a whole number (the runner's index, "
                             "e.g. --tactic 0-7)")
        op = opts.ops[0]
        from tiletune.core.archs import normalize_arch

        cc = current_env.get("compute_capability")
        arch = opts.arch or (normalize_arch(str(cc)) if cc else None)
        return Collected(
            explicit_targets(
                op=op,
                runner=opts.runner or _default_runner(op),
                tactics=tactics,
                shapes=[parse_shape(s) for s in opts.shapes],
                dtype_in=OP_INPUT_DTYPES.get(op, opts.dtype_in),  # fp8_gemm's is a choice (e4m3 / e5m2); the others are fixed
                dtype_out=opts.dtype_out,
                arch=arch,
                flashinfer_version=opts.flashinfer_version or current_env.get("flashinfer"),
            ),
            [],
            {},
        )
    if not opts.paths:
        if opts.no_run:  # nothing to select: the exports read --ledger alone
            return Collected([], [], {})
        raise UsageError("give caches/logs/blocklists/ledgers to take configs from, or --op/--tactic/--shape")
    from tiletune.decode import decode_all
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    outcome = read_inputs(opts.paths, ReadContext(arch=opts.arch, flashinfer_version=opts.flashinfer_version))
    entries = decode_all(outcome.records)
    ops = check_named(entries, opts.ops, tactics)
    if opts.changed_env or opts.since_driver:
        check_env_known(current_env, driver_only=opts.since_driver and not opts.changed_env)
    key_problems: Dict[str, Any] = {}
    for e in entries:
        if e.record.raw_key and e.problem is not None:
            p = e.problem
            key_problems[e.record.raw_key] = (e.record.op, e.record.runner, (p.batch, p.m, p.n, p.k))
    targets = targets_from_entries(
        entries,
        all_statuses=opts.all_statuses,
        ops=ops or None,
        tactics=tactics,
        changed_env=opts.changed_env,
        since_driver=opts.since_driver,
        current_env=current_env,
        moe_dtype=opts.moe_dtype,
    )
    why = None if targets else nothing_to_retry(entries, all_statuses=opts.all_statuses, ops=ops, tactics=tactics,
                                                changed_env=opts.changed_env, since_driver=opts.since_driver)
    return Collected(targets, list(outcome.problems), key_problems, list(outcome.sources), why)


def retry(opts: RetryOptions, *, progress: Optional[TextIO] = sys.stderr, env: Optional[Dict[str, Any]] = None, engine=None) -> RetryOutcome:
    """Run `tiletune retry`; raise TiletuneError only for what stops the whole command."""
    shard_note: List[str] = []
    shard = None
    if opts.shard:
        from tiletune.tuner.shard import ledger_for, parse_shard

        shard = parse_shard(opts.shard)
        import dataclasses

        opts = dataclasses.replace(opts, ledger=ledger_for(opts.ledger, shard, DEFAULT_LEDGER))
    _refuse_outputs_over_inputs(opts, [])
    ledger_problems = check_ledger(opts.ledger)
    env = dict(env) if env is not None else fingerprint.collect()
    targets, problems, key_problems, sources, why_none = collect_targets(opts, env)
    problems = [*problems, *ledger_problems]
    if shard is not None:
        from tiletune.tuner.shard import select

        total = len(targets)
        targets = select(targets, shard, opts.engine)
        shard_note.append(f"shard {shard.index}/{shard.count} (from {shard.source}): {len(targets)} of {total} target(s); "
                          f"ledger {opts.ledger}")
    _refuse_outputs_over_inputs(opts, [Path(path) for path, _ in sources])
    input_ledgers = [Path(path) for path, kind in sources if kind == "ledger"]
    # options that change what a target runs ride on it into the ledger, so resume tells runs apart
    targets = [structs.replace(t, options=options_for(t, moe_dtype=opts.moe_dtype, top_k=opts.top_k)) for t in targets]
    notes: List[str] = list(shard_note)
    if opts.reproducer is not None:
        notes += reproducers_or_why(targets, opts.reproducer, top_k=opts.top_k, why_none=why_none)
    run: Optional[RetryRun] = None
    engine_name = opts.engine
    if opts.top_k is not None and opts.top_k < 1:
        raise UsageError(f"--top-k {opts.top_k}: must be 1 or more")
    if opts.no_run:
        notes.append(f"--no-run: {len(targets)} target(s) selected, none attempted; exports use the ledger as it is")
        if why_none is not None:
            notes.append(why_none)
    elif targets and opts.ray:
        from tiletune.tuner.ray_runner import run_retry_ray

        options: Dict[str, Any] = {"moe_top_k": opts.top_k}
        if opts.engine == "flashinfer":
            options.update(allow_jit_build=opts.allow_jit_build, warmup=opts.warmup, iters=opts.iters,
                           workspace_bytes=opts.workspace_bytes, input_amplitude=opts.input_amplitude, moe_dtype=opts.moe_dtype)
        run = run_retry_ray(targets, opts.engine, opts.ledger, address=opts.ray, options=options, timeout_s=opts.timeout_s,
                            resume=opts.resume, progress=progress)
    elif targets:
        # the device is looked for before anything is built (a CUTLASS build takes minutes); an
        # engine passed in (tests' CPU engines) brings its own children and needs none
        device_problem = None if engine is not None else _device_problem()
        engine = engine or _make_engine(opts, progress)
        reasons = [r for r in (device_problem, engine.unavailable_reason()) if r]
        if reasons:
            raise TunerError(f"retry cannot run here: {'; and '.join(reasons)}. {len(targets)} target(s), nothing built or "
                             "attempted (--reproducer DIR --no-run writes reproducer folders; --no-run writes exports: "
                             "neither needs a GPU)")
        if progress is not None:
            progress.write(f"tiletune retry: {len(targets)} target(s), engine {engine.name}, ledger {opts.ledger}\n")
        engine_name = engine.name
        run = run_retry(targets, engine, opts.ledger, timeout_s=opts.timeout_s, jobs=opts.jobs, resume=opts.resume, progress=progress, env=env)
    elif why_none is not None:
        notes.append(why_none)
    notes += export(opts, key_problems, input_ledgers, env.get("gpu"))
    # any loss in the inputs (a skipped ledger line or key, not only a whole unusable file) is exit 2,
    # as for inspect; the attempts that could run have run and are in the ledger
    lost = any(loses_data(p) for p in problems)
    planned = list(targets) if opts.no_run else []  # --no-run: what it would try, listed
    fmt = "json" if opts.as_json else opts.fmt
    from tiletune.cli.commands.inspect import terminal_width

    view = {"width": terminal_width(opts.output)} if fmt == "table" else {}
    text = render_text("retry", RetrySummary(run, notes, planned), fmt, **view)
    return RetryOutcome(run=run, problems=problems, notes=notes, text=text, exit_code=2 if lost else 0,
                        findings=findings_of(run, engine_name))


def check_ledger(path: Path) -> List[InputProblem]:
    """The ledger retry appends to is read like any input first (an absent or empty file is a new
    ledger): a file that is not a tiletune ledger stops the command before anything is appended to
    it (one line, exit 2); unusable lines are problems, as `inspect` of the same file reports them
    (exit 2 at the end; the lines stay: the ledger is never rewritten)."""
    try:
        if not path.exists() and not path.parent.is_dir():
            raise UsageError(f"--ledger {path}: its folder {path.parent} does not exist (tiletune creates no folders: "
                             "make it first)")
        if not path.exists() or (path.is_file() and path.stat().st_size == 0):
            return []
    except OSError as e:
        raise UsageError(f"--ledger {path}: {e.strerror or e}") from None
    if not path.is_file():
        return []  # a FIFO, a device, a folder: refused where the ledger is opened, with what it is
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    outcome = read_inputs([path], ReadContext())
    kinds = {kind for _, kind in outcome.sources}
    fatal = [p for p in outcome.problems if p.fatal]
    if kinds != {"ledger"} or fatal:
        why = fatal[0].message if fatal else f"it reads as {', '.join(sorted(kinds)) or 'nothing tiletune reads'}"
        raise UsageError(f"--ledger {path}: not a tiletune ledger ({why}); nothing appended. Name a new file, or the "
                         "ledger an earlier retry wrote")
    return [p for p in outcome.problems if loses_data(p)]


def _device_problem() -> Optional[str]:
    from tiletune.tuner.device import cuda_device_problem

    problem = cuda_device_problem()
    return None if problem is None else f"no usable CUDA device ({problem})"


def _refuse_outputs_over_inputs(opts: RetryOptions, read: Sequence[Path]) -> None:
    """No output may name an input (named, or read from a directory) or the ledger, which is
    read too; only the ledger itself is appended to, by design."""
    from tiletune.core.fileio import refuse_outputs_over_inputs

    if opts.env_file is not None and opts.pin_cache is None:
        raise UsageError("--env describes where a --pin-cache file will be loaded: give --pin-cache too")
    outputs = [("--output", opts.output), ("--blocklist", opts.blocklist), ("--pin-cache", opts.pin_cache),
               ("--reproducer", opts.reproducer)]
    refuse_outputs_over_inputs(outputs, [*opts.paths, opts.ledger, *read, *([opts.env_file] if opts.env_file else [])])


def blocklist_path(given: Path, attempts: Any, current_gpu: Optional[str]) -> Path:
    """--blocklist FILE, or --blocklist FOLDER: the file FlashInfer's naming gives the GPU the
    attempts ran on (else this machine's), tactics_<GPU>.json, in that folder."""
    if not given.is_dir():
        return given
    from tiletune.core.vocabulary import blocklist_file_name
    from tiletune.tuner.exports import blocklist_metadata
    from tiletune.tuner.ledgers import LedgerDigest

    # (`attempts`: a ledger's attempts in time order, or their ledgers.digest)
    gpu = (attempts.metadata if isinstance(attempts, LedgerDigest) else blocklist_metadata(attempts)).get("gpu")
    gpu = gpu if gpu and gpu != "*" else current_gpu
    if not gpu:
        raise UsageError(f"--blocklist {given}: a folder, and neither the attempts nor this machine name a GPU to name "
                         "the file after (FlashInfer's tactics_<GPU>.json); give a file name")
    return given / blocklist_file_name(gpu)


def export(opts: RetryOptions, key_problems: Dict[str, Any], input_ledgers: Sequence[Path] = (),
           current_gpu: Optional[str] = None) -> List[str]:
    """Write --blocklist / --pin-cache from every attempt known: the ledgers given as inputs, then
    --ledger (this run and earlier ones); a file named both ways is read once."""
    if opts.blocklist is None and opts.pin_cache is None:
        return []
    from tiletune.tuner import exports
    from tiletune.tuner.ledgers import digest

    # streamed: the last attempt per key and environment kept, never every line (a 1 GB ledger)
    d = digest([*input_ledgers, opts.ledger], exports.METADATA_FIELDS)
    attempts = list(d.latest.values())
    notes = []
    read = [p for p in d.read if p.exists()]
    if len(read) > 1:
        notes.append(f"exports from {len(read)} ledgers ({d.lines} attempts, {len(attempts)} keys and environments; "
                     "the last per key and environment counts)")
    if opts.blocklist is not None:
        path = blocklist_path(opts.blocklist, d, current_gpu)
        block, mixed = exports.write_blocklist(attempts, path, metadata=d.metadata)
        n = sum(len(v) for v in block.values())
        notes.append(f"wrote {path}: {n} tactic(s) that failed at every shape tried (FLASHINFER_TACTICS_BLOCKLIST format)")
        for op_runner, tacs in mixed.items():
            notes.append(f"not blocklisted ({op_runner}): tactic(s) {tacs} fail at some shapes and pass at others")
    if opts.pin_cache is not None:
        caches = [p for p in opts.paths if p.is_file() and p.suffix == ".json" and _is_v1_cache(p)]
        if len(caches) != 1:
            raise UsageError(f"--pin-cache needs exactly one FlashInfer JSON cache among the inputs (found {len(caches)})")
        from tiletune.tuner.pin_metadata import load_env

        env = load_env(opts.env_file) if opts.env_file is not None else None
        pinned = exports.write_pinned_cache(caches[0], attempts, opts.pin_cache, key_problems=key_problems, env=env)
        entries = "1 entry" if len(pinned.changed) == 1 else f"{len(pinned.changed)} entries"
        notes.append(f"wrote {opts.pin_cache}: copy of {caches[0]} with {entries} pinned to the fastest passing tactic")
        if pinned.dropped_selections:
            notes.append(f"{opts.pin_cache}: dropped FlashInfer's selection record of {pinned.dropped_selections} pinned "
                         "entr(ies): it timed the tactic FlashInfer chose, not the pinned one")
        if pinned.metadata_from_env:
            notes.append(f"{opts.pin_cache}: _metadata {', '.join(pinned.metadata_from_env)} taken from --env {opts.env_file}")
        notes += [f"{opts.pin_cache}: {line}" for line in pinned.verdict]
    return notes


def _is_v1_cache(path: Path) -> bool:
    from tiletune.core import bounded_input
    from tiletune.core.errors import ReaderError

    try:
        with bounded_input.open_input(path) as f:
            head = f.read(4096)
    except (OSError, ReaderError):
        return False
    return b'"_metadata"' in head or b"('" in head


def reproducers_or_why(targets: Sequence[RetryTarget], out_dir: Path, *, top_k: Optional[int] = None,
                       why_none: Optional[str] = None) -> List[str]:
    """--reproducer: write what can be written; when nothing can, stop with why and the fix (a
    TunerError: one line, exit 2). Writing nothing that was asked for is never a quiet success."""
    if not out_dir.parent.is_dir():
        raise UsageError(f"--reproducer {out_dir}: its folder {out_dir.parent} does not exist (tiletune creates no "
                         "folders above the one asked for: make it first)")
    if not targets:
        raise UsageError(f"--reproducer {out_dir}: nothing written: no target selected"
                         + (f" ({why_none})" if why_none else ""))
    if not any(t.config is not None and t.arch for t in targets):
        raise UsageError(
            f"--reproducer {out_dir}: nothing written: none of the {len(targets)} target(s) has a decoded CUTLASS tile "
            "(a tactic names a tile only in its FlashInfer release's catalog for its arch: give --arch and "
            "--flashinfer-version where the inputs do not say; cuBLAS / cuDNN tactics have no CUTLASS tile)")
    from tiletune.tuner.cutlass_toolchain import find_cutlass

    try:
        find_cutlass()
    except TunerError as e:
        raise TunerError(f"--reproducer {out_dir}: nothing written: {e}") from None
    notes = write_reproducers(targets, out_dir, top_k=top_k)
    if not any(n.startswith("--reproducer: wrote ") for n in notes):
        reasons = list(dict.fromkeys(n.split(": ", 2)[-1] for n in notes))
        raise TunerError(f"--reproducer {out_dir}: nothing written: " + "; ".join(reasons[:3]))
    return notes


def write_reproducers(targets: Sequence[RetryTarget], out_dir: Path, *, top_k: Optional[int] = None) -> List[str]:
    """One CUTLASS reproducer folder per target with a decoded tile (tuner.cutlass_engine writes it)."""
    from tiletune.tuner.cutlass_engine import operand_dtype
    from tiletune.tuner.reproducer import write_reproducer

    notes = []
    for t in targets:
        if t.config is None or not t.arch:
            notes.append(f"--reproducer: {t.key}: no decoded CUTLASS tile (or arch unknown); no reproducer")
            continue
        p = t.problem
        sub = out_dir / "".join(c if c.isalnum() or c in "._-" else "_" for c in t.key)[:120]
        try:
            problem, groups = (p.m, p.n, p.k) if p else (4096, 4096, 4096), None
            if p is not None and p.experts:  # a MoE GEMM: experts as groups, per-expert M (uniform routing)
                from tiletune.tuner.moe_problem import grouped_gemm_mnk

                k_routed = p.top_k or top_k
                if not k_routed:
                    raise TunerError("the key does not record top_k; pass --top-k")
                problem = grouped_gemm_mnk(tokens=p.m_range[1] if p.m_range else p.m, top_k=k_routed,
                                           experts=p.experts, n=p.n, k=p.k)
                groups = p.experts
            write_reproducer(t.config, t.arch, operand_dtype(t), sub,
                             problem=problem, grouped=bool(p and p.experts), groups=groups)
        except Exception as e:  # one config the writer cannot handle must not stop the others
            notes.append(f"--reproducer: {t.key}: {e}")
            continue
        notes.append(f"--reproducer: wrote {sub} (build.sh, run.sh, README.txt)")
    return notes


def retry_status(opts: RetryOptions, fail_on: Optional[FailOn]) -> int:
    """`tiletune retry`'s body (typer_app.retry_command holds its options' help): run, print the
    summary and the problems, return the exit status."""
    outcome = retry(opts)
    emit(outcome.text, opts.output)
    for p in outcome.problems:
        say(f"tiletune: {p.message}")
    return retry_gate(outcome, fail_on)


def retry_gate(outcome: RetryOutcome, fail_on: Optional[FailOn]) -> int:
    """retry's exit status: 2 for lost input, else 1 when --fail-on findings exist on this GPU, else 0."""
    found = outcome.findings
    if outcome.exit_code == 0 and fail_on is not None and found is not None and found.fails_on(fail_on.value):
        say(f"tiletune: --fail-on {fail_on.value}: "
             + (f"{len(found.fatal)} attempt(s) ended fatally" if found.fatal else f"{len(found.failed)} attempt(s) failed")
             + " on this GPU")
        return 1
    return int(outcome.exit_code)
