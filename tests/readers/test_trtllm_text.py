"""TensorRT-LLM's own texts: the assertion abort and the GEMM profiler's give-up line as a user posted
them (tests/data/trtllm_tickets, NVIDIA/TensorRT-LLM#4253), the torch autotuner's own log lines and
caches as its code wrote them (tests/data/trtllm_writers: NVIDIA@b35ac1b's per-rank files, hyukn@5619fce's
one file with `shared` and `rank_<r>` sections), with #19162's `[Autotuner] Candidate:` lines derived from
the PR's source among them (no stored source holds that code), and the TRTLLM_CACHE_DIR layout as
TensorRT-LLM's own bootstrap sets it, ranks kept apart."""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tiletune.core.records import Status
from tiletune.readers import read_inputs
from tiletune.readers.discover import discover
from tiletune.readers.interface import ReadContext

CTX = ReadContext()
DATA = Path(__file__).resolve().parents[1] / "data"
T4253 = DATA / "trtllm_tickets" / "trtllm-4253-orin-moe-gemm1-config-not-set" / "ticket.txt"
V074 = DATA / "flashinfer_writers" / "0.7.4"


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """No server cache variables (conftest.no_server_env)."""


def test_the_abort_is_a_fatal_event_with_file_line_and_runner(run):
    out = read_inputs([T4253], CTX)
    assert not [p for p in out.problems if p.loses_data]
    (e,) = [x for x in out.events if x.kind == "assertion_failed"]
    assert e.is_fatal
    assert e.fact("assertion") == "MOE GEMM1 Config is not set" and e.fact("file") == "moe_kernels.cu:2684"
    assert e.fact("runner") == "CutlassMoeFCRunner" and e.fact("function") == "CutlassMoeFCRunner::runMoe"
    r = run("inspect", str(T4253))
    assert r.exit_code == 0, r.output  # was "not a format tiletune reads", exit 2
    text = " ".join(r.stdout.split())
    assert "aborted" in text and "MOE GEMM1 Config is not set (moe_kernels.cu:2684)" in text


def test_no_valid_gemm_config_is_a_failure_per_shape():
    out = read_inputs([T4253], CTX)
    failed = sorted((r.detail_dict()["m"], r.detail_dict()["n"], r.detail_dict()["k"])
                    for r in out.records if r.status is Status.FAILED)
    assert failed == [(1, 768, 2048), (2, 768, 2048)]
    (e,) = [x for x in out.events if x.kind == "no_valid_config"]
    assert (e.fact("n"), e.fact("k"), e.fact("m"), e.count) == (768, 2048, (1, 2), 2)


# what NVIDIA/TensorRT-LLM@b35ac1b's own autotuner logged and saved, per rank, driven on CPU by tools/trtllm_writers
# (its PROVENANCE.json names the sources and their sha256); autotuner+candidates.rank<r>.log adds #19162's Candidate
# lines, derived from the PR's source and rendered with the run's own runners, shapes and times
WRITERS = DATA / "trtllm_writers" / "b35ac1b64368"
OWN_LOG = WRITERS / "autotuner.rank0.log"
WITH_CANDIDATES = WRITERS / "autotuner+candidates.rank0.log"
CACHE0 = WRITERS / "TRTLLM_CACHE_DIR" / "autotuner" / "cache.rank0.json"
FP8, FP4, SWAP = "trtllm::fp8_rowwise_gemm::gemm", "trtllm::fp4_gemm::gemm", "trtllm::fp8_swap_ab_gemm::gemm"
BLOCK = "trtllm::fp8_block_scaling_gemm::gemm"  # both tactics fail from M=8 on: "No valid runner/tactic" names the op


def _cache_winners(path: Path) -> dict:
    """(op, runner class, opt M) -> (tactic, min_time) as TensorRT-LLM's save_cache wrote them."""
    out = {}
    for key, v in json.loads(path.read_text())["cache_data"].items():
        op, runner, _hash, shapes = ast.literal_eval(key)
        out[(op, runner, shapes[0][0])] = (v["tactic"], v["min_time"])
    return out


def _by_status(records, status):
    return {(r.op, r.runner, r.tactic, r.shapes): r for r in records if r.status is status}


def test_trtllm_own_log_is_timings_failures_and_the_winners_it_saved(run, tmp_path):
    """The torch autotuner's own lines: `Profiled runner=..: Xms.` a timing, `Failed when profiling runner=..` and
    its `Exception captured:` a failure with its error, `Profiling runner=.. for cache_key=..` the winner, whose op
    names the profile's candidates. The winners read from the log are the entries the same run saved."""
    out = read_inputs([OWN_LOG], CTX)
    assert not [p for p in out.problems if p.loses_data]  # was: "could not parse autotuner line", exit 2
    chosen = _by_status(out.records, Status.CHOSEN)
    assert {(op, runner, shapes[0][0]): (tactic, round(r.time_ms, 6)) for (op, runner, tactic, shapes), r in chosen.items()} \
        == {k: (t, round(ms, 6)) for k, (t, ms) in _cache_winners(CACHE0).items()}
    profiled = _by_status(out.records, Status.PROFILED)
    assert len(profiled) == 4 * 5 + (2 + 4) * 5 + 1 + 2 * 3  # every candidate that ran, per op, runner, tactic and M
    for (op, runner, tactic, shapes), r in chosen.items():  # the winner is the fastest of its profile
        rivals = [p.time_ms for k, p in profiled.items() if k[0] == op and k[3][0] == shapes[0]]
        assert r.time_ms == profiled[(op, runner, tactic, shapes)].time_ms == min(rivals)
    failed = _by_status(out.records, Status.FAILED)
    assert sorted({(op, runner, tactic) for op, runner, tactic, _s in failed}) == [
        (FP4, "CutlassFP4GemmRunner", 2), (BLOCK, "FP8BlockScalingGemmRunner", 0), (BLOCK, "FP8BlockScalingGemmRunner", 1),
        (FP8, "FP8RowwiseGemmRunner", 2)]
    assert len(failed) == 14 and all(f.time_ms is None for f in failed.values())
    # every candidate of M=8 and M=16 failed: the op is named by the warning that closes the profile, no winner
    assert sorted(s[0][0] for op, _r, _t, s in failed if op == BLOCK) == [8, 8, 16, 16]
    assert sorted(s[0][0] for op, _r, _t, s in chosen if op == BLOCK) == [1, 2, 4]
    assert "needs M < 8" in str(failed[(BLOCK, "FP8BlockScalingGemmRunner", 1, ((16, 512), (1024, 512)))].error)
    (nv,) = [e for e in out.events if e.kind == "no_valid_tactic"]
    assert (nv.fact("op"), nv.count, nv.is_fatal) == (BLOCK, 2, False) and "fallback tactic -1" in nv.summary
    assert "Failed to initialize cutlass gemm" in str(failed[(FP8, "FP8RowwiseGemmRunner", 2, ((1, 512), (1024, 512)))].error)
    r = run("inspect", str(OWN_LOG))
    assert r.exit_code == 0, r.output
    # "Set TLLM_LOG_LEVEL=DEBUG for more details" is the autotuner's advice, not a setting of this run
    assert "TLLM_LOG_LEVEL" not in r.stdout
    # tiletune retry drives FlashInfer's runners: it is not suggested for TensorRT-LLM's own
    text = " ".join(r.stdout.split())
    assert "tiletune retry" not in text.replace("`tiletune retry` drives", "")
    assert f"next for ? {FP8}: TensorRT-LLM's own autotuner timed tactic(s) 2 as failed" in text
    rep = run("report", str(OWN_LOG), "-o", str(tmp_path / "report.md"))
    md = (tmp_path / "report.md").read_text()
    assert rep.exit_code == 0 and "trtllm::fp8_rowwise_gemm::gemm" in md
    assert not re.search(r"^tiletune retry ", md, re.M)  # its re-test commands leave TensorRT-LLM's runners out
    doc = json.loads(run("inspect", str(OWN_LOG), "--format", "json").stdout)
    assert {(f["op"], f["autotuner"]) for f in doc["failures"]} == {(FP8, "TensorRT-LLM"), (FP4, "TensorRT-LLM"),
                                                                   (BLOCK, "TensorRT-LLM")}


def test_candidate_lines_close_their_candidates_without_counting_twice():
    """#19162's Candidate line follows each candidate's own line: it names the op of that candidate (held until then),
    keeps the Profiled line's six decimals, adds no second sample, and `inf` is the failure already read."""
    own, both = read_inputs([OWN_LOG], CTX), read_inputs([WITH_CANDIDATES], CTX)
    assert not [p for p in both.problems if p.loses_data]
    p_own, p_both = _by_status(own.records, Status.PROFILED), _by_status(both.records, Status.PROFILED)
    swap = {k for k in p_own if k[0] == SWAP}
    assert len(swap) == 1 and set(p_both) == set(p_own) - swap
    assert all((p_both[k].count, p_both[k].time_ms) == (p_own[k].count, p_own[k].time_ms) for k in p_both)
    assert {k: f.count for k, f in _by_status(both.records, Status.FAILED).items()} \
        == {k: f.count for k, f in _by_status(own.records, Status.FAILED).items()}
    # the single (runner, tactic) pair: #14458's shortcut, time=0.000ms = recorded without profiling
    swap_chosen = [r for r in both.records if r.op == SWAP and r.status is Status.CHOSEN]
    assert sorted(("not_measured" in r.detail_dict(), "cache_key" in r.detail_dict()) for r in swap_chosen) == [
        (False, True), (True, False)]  # the winner line with its key, and the shortcut's pair
    assert all(r.time_ms is None for r in swap_chosen)  # 0.000 is no time, and no Profiled line is left to give one


def test_candidate_lines_alone_are_timings_failures_and_unmeasured_pairs(tmp_path):
    """Only the Candidate lines of that log (each kept byte for byte): three decimals, `inf`, `0.000`."""
    lines = [ln for ln in WITH_CANDIDATES.read_text().splitlines(keepends=True) if "[Autotuner] Candidate: " in ln]
    path = tmp_path / "candidates.log"
    path.write_text("".join(lines))
    out = read_inputs([path], CTX)
    assert not [p for p in out.problems if p.loses_data]
    profiled = _by_status(out.records, Status.PROFILED)
    fp8_m16 = profiled[(FP8, "FP8RowwiseGemmRunner", 4, ((16, 512), (1024, 512)))]
    assert fp8_m16.time_ms == round(fp8_m16.time_ms, 3) and fp8_m16.count == 1  # printed with three decimals
    failed = _by_status(out.records, Status.FAILED)
    assert len(failed) == 14 and {(k[0], k[2]) for k in failed} == {(FP8, 2), (FP4, 2), (BLOCK, 0), (BLOCK, 1)}
    assert sum(1 for ln in lines if "time=infms" in ln) == 14
    (shortcut,) = [r for r in out.records if r.status is Status.CHOSEN]
    assert shortcut.op == SWAP and shortcut.time_ms is None and "without profiling" in shortcut.detail_dict()["not_measured"]


def test_trtllm_cache_dir_as_its_bootstrap_lays_it_out_is_discovered_ranks_apart(tmp_path):
    """TRTLLM_CACHE_DIR as TensorRT-LLM's own _bootstrap.py sets it (NVIDIA/TensorRT-LLM@00832e8:64-85, run by
    tools/trtllm_writers): the one <root>/autotuner/cache.json both ranks' writers merged their sections into
    (tests/data/trtllm_writers/5619fce9f304, copied whole with its .lock), and FlashInfer's workspace base
    <root>/flashinfer, under which FlashInfer keeps its JIT workspaces (.cache/flashinfer/<version>/<arch>)."""
    root = tmp_path / "trtllm-cache"
    shutil.copytree(SECTIONS / "TRTLLM_CACHE_DIR", root)
    prov = json.loads((SECTIONS / "PROVENANCE.json").read_text())
    base = prov["ranks"][0]["bootstrap"]["FLASHINFER_WORKSPACE_BASE"]  # "TRTLLM_CACHE_DIR/flashinfer"
    ws = root / base.split("/", 1)[1] / ".cache" / "flashinfer" / "0.7.4" / "100a"
    ws.mkdir(parents=True)
    shutil.copyfile(V074 / "flashinfer_jit.log", ws / "flashinfer_jit.log")
    found = discover({"TRTLLM_CACHE_DIR": str(root)}, home=tmp_path / "home")
    assert root / "autotuner" in found.paths and ws in found.paths
    out = read_inputs(list(found.paths), CTX)
    assert not [p for p in out.problems if p.loses_data]
    trt = Counter(r.rank for r in out.records if r.source_kind == "trtllm")
    assert trt == {None: 5, "rank0": 13, "rank1": 13}  # shared, then each rank's own section
    assert any(r.source_kind == "log" for r in out.records)


def test_trtllm_cache_dir_layout_is_discovered_ranks_apart(tmp_path):
    """TRTLLM_CACHE_DIR with the b35ac1b writer's per-rank files (cache_path <root>/autotuner/cache.json ->
    cache.rank<r>.json) and per-rank FlashInfer workspaces <root>/flashinfer/rank-<r>: issue 22 names that
    layout, no TensorRT-LLM source read creates it (the bootstrap gives one base), so these folders are made
    here to show that, should a launcher make them, each rank's workspace is still read apart."""
    root = tmp_path / "trtllm-cache"
    shutil.copytree(WRITERS / "TRTLLM_CACHE_DIR", root)
    for r in (0, 1):
        ws = root / "flashinfer" / f"rank-{r}" / ".cache" / "flashinfer" / "0.7.4" / "100a"
        ws.mkdir(parents=True)
        shutil.copyfile(V074 / "flashinfer_jit.log", ws / "flashinfer_jit.log")
    found = discover({"TRTLLM_CACHE_DIR": str(root)}, home=tmp_path / "home")
    assert root / "autotuner" in found.paths
    workspaces = [p for p in found.paths if p.name == "100a"]
    assert len(workspaces) == 2 and any("TRTLLM_CACHE_DIR FlashInfer JIT workspace (rank-1)" in s for s in found.searched)
    out = read_inputs(list(found.paths), CTX)
    trt = Counter(r.rank for r in out.records if r.source_kind == "trtllm")
    fi = {r.rank for r in out.records if r.source_kind == "log"}
    assert trt == {"rank0": 14, "rank1": 14} and fi == {"rank0", "rank1"}


# what hyukn/TensorRT-LLM@5619fce's single-file writer logged (HuiGao-NV/TensorRT-LLM@195839a's logger: `[RANK r]`
# prefix, stdout), rank 0 then rank 1 into the one <TRTLLM_CACHE_DIR>/autotuner/cache.json (tools/trtllm_writers)
SECTIONS = DATA / "trtllm_writers" / "5619fce9f304"
SHARED_OP = "trtllm::broadcast_gemm::gemm"  # tuned with the BROADCAST strategy: saved to the `shared` section


def _section_winners(section: dict) -> dict:
    return {(op, runner, shapes[0][0]): (ast.literal_eval(v["tactic"]), v["min_time"])
            for key, v in section.items() for op, runner, _uid, shapes in [ast.literal_eval(key)]}


def test_single_file_writer_logs_are_read_whole_and_their_winners_are_what_the_file_holds():
    """Each rank's log, `[RANK r]` lines: no line unread or unparsed; the winners read from it are that rank's
    section (and, for rank 0, which tuned the BROADCAST op, the shared section), plus the op the writer tuned but
    never saved (exclude_from_cache); rank 1 found rank 0's file and says what it loaded."""
    cache = json.loads((SECTIONS / "TRTLLM_CACHE_DIR" / "autotuner" / "cache.json").read_text())
    for rank, expected in ((0, {**_section_winners(cache["rank_0"]), **_section_winners(cache["shared"])}),
                           (1, _section_winners(cache["rank_1"]))):
        out = read_inputs([SECTIONS / f"autotuner.rank{rank}.log"], CTX)
        assert out.problems == (), out.problems  # no line unread ("a newer FlashInfer?"), none unparsed
        chosen = {(r.op, r.runner, r.shapes[0][0]): (r.tactic, r.time_ms)
                  for r in out.records if r.status is Status.CHOSEN and r.op != SWAP}
        assert {k: (t, round(ms, 6)) for k, (t, ms) in chosen.items()} == {
            k: (t, round(ms, 6)) for k, (t, ms) in expected.items()}
        assert {r.op for r in out.records if r.status is Status.CHOSEN} - {k[0] for k in expected} == {SWAP}
    (loaded,) = [e for e in read_inputs([SECTIONS / "autotuner.rank1.log"], CTX).events if e.kind == "configs_loaded"]
    assert (loaded.fact("path"), loaded.fact("entries")) == ("TRTLLM_CACHE_DIR/autotuner/cache.json", len(cache["shared"]))
    assert loaded.summary.endswith(f"({len(cache['shared'])} entries: {len(cache['shared'])} shared)")


def test_an_ops_failures_printed_once_are_counted_by_the_writers_own_summary(run):
    """This writer prints an op's `Failed when profiling` once (warning_once): the verdict gives the writer's own count
    of failed (runner, profile) pairs beside the one failure line read, with the summary line as evidence."""
    log = SECTIONS / "autotuner.rank0.log"
    out = read_inputs([log], CTX)
    counted = {e.fact("op"): (e.fact("failed"), e.fact("failure_lines")) for e in out.events
               if e.kind == "tuning_failures_counted"}
    assert counted == {FP8: (5, 1), FP4: (5, 1), BLOCK: (2, 1)}
    assert sum(1 for r in out.records if r.status is Status.FAILED and r.op == FP8) == 1  # the one line there is
    text = " ".join(run("inspect", str(log)).stdout.split())
    assert (f"{FP8}: 5 chosen non-CUTLASS tactic(s) (no tile to decode); tactic 2 failed once (Error Internal) and were "
            "skipped: the autotuner went on; TensorRT-LLM counted 5 failed (runner, profile) pair(s) for this op, 1 with "
            "a line in the log (it prints an op's failure once)") in text
    assert "Total failed profiling tactics occurs: 5 for custom_op=trtllm::fp8_rowwise_gemm::gemm" in text  # evidence
    # the b35ac1b writer prints every failure: no count to add, its verdicts are unchanged
    assert "TensorRT-LLM counted" not in run("inspect", str(OWN_LOG)).stdout


def test_ranks_lines_interleaved_in_one_server_log_are_kept_apart(tmp_path, run):
    """One server's stdout holds every rank's lines, interleaved (here: the two rank logs the writer wrote, line by
    line in turn). The logger's `[RANK r]` keeps each rank's held candidates, winners and failures apart: the
    records are exactly those of the two per-rank logs, each with its rank; the failure counts are summed by rank."""
    own = {r: read_inputs([SECTIONS / f"autotuner.rank{r}.log"], CTX) for r in (0, 1)}
    lines = [(SECTIONS / f"autotuner.rank{r}.log").read_text().splitlines(keepends=True) for r in (0, 1)]
    mixed = [ln for pair in zip(*lines) for ln in pair] + lines[0][len(lines[1]):] + lines[1][len(lines[0]):]
    log = tmp_path / "server.log"
    log.write_text("".join(mixed))
    out = read_inputs([log], CTX)
    assert out.problems == ()

    def facts(records, rank=None):
        return Counter((rank or r.rank, r.op, r.runner, r.tactic, r.shapes, r.status, r.time_ms, r.count)
                       for r in records)

    assert {r.rank for r in own[0].records} == {"rank0"}  # a per-rank log's lines say their rank too
    assert facts(out.records) == facts(own[0].records) + facts(own[1].records)
    text = " ".join(run("inspect", str(log)).stdout.split())
    assert (f"{FP8}: 10 chosen non-CUTLASS tactic(s) (no tile to decode); tactic 2 failed 2 times (Error Internal) and "
            "were skipped: the autotuner went on; TensorRT-LLM counted 10 failed (runner, profile) pair(s) for this op "
            "over 2 ranks, 2 with a line in the log") in text
