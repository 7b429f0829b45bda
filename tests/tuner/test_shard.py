"""`retry --shard`: the split, the schedulers' index variables, one ledger per shard, and every reader of
ledgers reading them all (exports, inspect). The attempts are real child processes (tuner_fakes)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from msgspec import structs
from tuner_fakes import FAKE_ENV, FakeEngine

from tiletune.cli.commands.retry import RetryOptions, retry
from tiletune.core.errors import UsageError
from tiletune.tuner.ledger import Ledger
from tiletune.tuner.shard import parse_shard, split

ROOT = Path(__file__).resolve().parents[2]
H200_CACHE = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
# the real cache's tactics mapped onto real child behaviours (as test_command.py does)
MODES = {0: "pass", 1: "exit3", 2: "pass", 3: "segv", 4: "pass", 5: "pass", 6: "pass", 7: "pass"}


class ByTactic(FakeEngine):
    def child_spec(self, target, scratch):
        return super().child_spec(structs.replace(target, tactic=MODES.get(target.tactic, "pass")), scratch)


def test_shard_spec_and_scheduler_variables():
    assert parse_shard("3/8", {}).index == 3 and parse_shard("3/8", {}).label == "3-of-8"
    assert parse_shard("0/12", {}).label == "00-of-12"
    # Slurm: --array=4-7 -> ids 4..7, MIN 4, COUNT 4; --array=0-6:2 -> ids 0,2,4,6, STEP 2, COUNT 4
    s = parse_shard("auto", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "4"})
    assert (s.index, s.count, s.source) == (3, 4, "SLURM_ARRAY_TASK_ID")
    s = parse_shard("auto", {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2",
                             "SLURM_ARRAY_TASK_COUNT": "4"})
    assert (s.index, s.count) == (2, 4)
    s = parse_shard("auto", {"JOB_COMPLETION_INDEX": "5", "TILETUNE_SHARD_COUNT": "8"})
    assert (s.index, s.count, s.source) == (5, 8, "JOB_COMPLETION_INDEX")
    assert parse_shard("auto", {"TILETUNE_SHARD": "1/2"}).index == 1
    for bad, env in (("8/8", {}), ("x", {}), ("auto", {}), ("auto", {"JOB_COMPLETION_INDEX": "1"}),
                     ("auto", {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "2"})):
        with pytest.raises(UsageError):
            parse_shard(bad, env)


SHAPES = dict(ops=["fp8_gemm"], tactic="0-7", shapes=["64x4096x4096", "128x4096x4096", "1024x4096x4096", "128x7168x2048"])


def _targets(tmp_path):
    from tiletune.cli.commands.retry import collect_targets

    return collect_targets(RetryOptions(**SHAPES), dict(FAKE_ENV)).targets


def test_split_is_a_partition_independent_of_input_order(tmp_path):
    targets = _targets(tmp_path)
    assert len(targets) == 32
    for n in (1, 3, 8):
        parts = split(targets, n)
        keys = [t.key for p in parts for t in p]
        assert sorted(keys) == sorted(t.key for t in targets)  # every target once
        shuffled = list(targets)
        random.Random(n).shuffle(shuffled)
        assert [sorted(t.key for t in p) for p in split(shuffled, n)] == [sorted(t.key for t in p) for p in parts]
        # one build's targets (op, runner, tactic, tile) stay in one shard
        where = {}
        for i, p in enumerate(parts):
            for t in p:
                assert where.setdefault((t.op, t.runner, t.tactic), i) == i
        sizes = [len(p) for p in parts]
        biggest_group = max(sum(1 for t in targets if (t.op, t.runner, t.tactic) == g) for g in where)
        assert max(sizes) - min(sizes) <= biggest_group


def test_three_slurm_array_tasks_then_exports_and_inspect_over_all_ledgers(tmp_path, monkeypatch):
    """The recipe of docs/scale.md on one machine: three array tasks as Slurm numbers them, each with
    its own ledger; then the exports and inspect read the ledger directory. The blocklist equals the
    one a single unsharded run writes."""
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    runs = []
    for task in (10, 11, 12):  # sbatch --array=10-12
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", str(task))
        monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "10")
        monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
        opts = RetryOptions(**SHAPES, ledger=ledgers / "retry-{shard}.jsonl", shard="auto")
        out = retry(opts, progress=None, env=dict(FAKE_ENV), engine=ByTactic())
        assert out.exit_code == 0 and out.notes[0].startswith(f"shard {task - 10}/3 (from SLURM_ARRAY_TASK_ID)")
        runs.append(out.run)
    files = sorted(p.name for p in ledgers.iterdir())
    assert files == ["retry-0-of-3.jsonl", "retry-1-of-3.jsonl", "retry-2-of-3.jsonl"]
    per_shard = [[a["key"] for a in Ledger(ledgers / f).load().attempts] for f in files]
    all_keys = [k for p in per_shard for k in p]
    assert len(all_keys) == len(set(all_keys)) == len(_targets(tmp_path))  # disjoint, complete

    # exports over all shards (a directory of ledgers), and a copy of one shard's ledger counts once
    shutil.copy(ledgers / files[0], tmp_path / "copy.jsonl")
    merged = retry(RetryOptions(paths=[ledgers, tmp_path / "copy.jsonl"], no_run=True, ledger=tmp_path / "none.jsonl",
                                blocklist=tmp_path / "block-shards.json"), progress=None, env=dict(FAKE_ENV))
    assert any("exports from 4 ledgers" in n for n in merged.notes)
    single = retry(RetryOptions(**SHAPES, ledger=tmp_path / "single.jsonl",
                                blocklist=tmp_path / "block-single.json"), progress=None, env=dict(FAKE_ENV), engine=ByTactic())
    assert single.exit_code == 0
    shards_block = json.loads((tmp_path / "block-shards.json").read_text())["invalid_tactics"]
    single_block = json.loads((tmp_path / "block-single.json").read_text())["invalid_tactics"]
    assert shards_block == single_block and shards_block  # segv and exit3 tactics: failing everywhere

    # inspect reads every shard's ledger in the directory
    from tiletune.analysis.pipeline import inspect
    from tiletune.readers.interface import ReadContext

    result = inspect([ledgers], ReadContext())
    assert {Path(e.record.source).name for e in result.entries} == set(files)
    assert len(result.entries) == len(all_keys)


def test_shard_needs_its_own_ledger_name(tmp_path):
    with pytest.raises(UsageError, match=r"\{shard\}"):
        retry(RetryOptions(paths=[H200_CACHE], ledger=tmp_path / "one.jsonl", shard="0/2"), progress=None,
              env=dict(FAKE_ENV), engine=ByTactic())


def test_ray_is_an_extra_one_line_without_it(tmp_path):
    """`retry --ray` in a core install says what to install, in one line, before anything runs."""
    import importlib.util

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here (bench/ray_local runs it)")
    from tiletune.core.errors import TunerError

    with pytest.raises(TunerError, match=r"pip install 'tiletune\[ray\]'"):
        retry(RetryOptions(**SHAPES, ledger=tmp_path / "l.jsonl", ray="127.0.0.1:6379"), progress=None, env=dict(FAKE_ENV))
    assert not (tmp_path / "l.jsonl").exists()


def test_flashinfer_engine_spreads_one_tactics_shapes_the_cutlass_engine_keeps_them_together():
    """The H200 run (bench/h200_074/results/shards): `retry CACHE --all --shard auto` over FlashInfer
    0.7.4's real cache gave 8 targets, all tactic 0 at 8 shapes, and they went 8/0 to two shards:
    grouped as one build, though FlashInfer's JIT module is built once per node anyway."""
    from tiletune.cli.commands.retry import collect_targets

    cache = ROOT / "cache_samples" / "h200_074" / "fp8_gemm_cache_074.json"
    targets = collect_targets(RetryOptions(paths=[cache], all_statuses=True), dict(FAKE_ENV)).targets
    assert len(targets) == 8 and {t.tactic for t in targets} == {0}
    assert sorted(len(p) for p in split(targets, 2, "flashinfer")) == [4, 4]
    assert sorted(len(p) for p in split(targets, 2, "cutlass")) == [0, 8]  # one CUTLASS build serves them all
    # the shares are a partition whatever the engine
    for engine in ("flashinfer", "cutlass"):
        assert sorted(t.key for p in split(targets, 3, engine) for t in p) == sorted(t.key for t in targets)
