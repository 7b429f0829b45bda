"""Ticket text as users paste it: raised exceptions, Markdown environment lists, setup-only tickets,
shortened autotuner lines. Every case reads a real artifact of cache_samples/wild (its provenance
is in the artifact's artifact.json) or quotes one of its lines verbatim.
"""

from __future__ import annotations

from pathlib import Path

from tiletune.analysis.pipeline import inspect
from tiletune.core import error_text
from tiletune.core.records import Status, TuningRecord
from tiletune.formats.json_out import inspect_dict
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext
from tiletune.readers.logs.clues import ClueSet

WILD = Path(__file__).resolve().parents[2] / "cache_samples" / "wild"


def _out(slug: str) -> dict:
    files = [str(f) for f in sorted((WILD / slug).iterdir()) if f.name != "artifact.json"]
    return inspect_dict(inspect(files, ReadContext()))


def _facts(ev: dict) -> dict:
    return {k: v["value"] for k, v in ev["facts"].items()}


def _only(out: dict, kind: str) -> dict:
    evs = [e for e in out["events"] if e["kind"] == kind]
    assert len(evs) == 1, [e["kind"] for e in out["events"]]
    return evs[0]


def test_exception_naming_a_tactic_at_warm_up_is_a_fatal_finding():
    # flashinfer-ai/flashinfer#5269: the ValueError vLLM's warm-up raised on 4 GB300 ranks
    out = _out("flashinfer-5269-gb300-mxfp8-split-k-tactic-valueerror")
    ev = _only(out, "exception")
    f = _facts(ev)
    assert ev["fatal"] and out["fatal"]
    assert f["exception_type"] == "ValueError"
    assert f["tactic"] == "((128, 32), (1, 1), True, False, 2)"  # as written: a CuTe-DSL tuple, no number
    assert f["op"] == "mxfp8_gemm" and ev["facts"]["op"]["how"] == "inferred"
    assert f["stage"] == "warm-up" and ev["facts"]["stage"]["how"] == "inferred"
    assert ev["facts"]["stage"]["from"].startswith("line 11 ")  # the "raised under ... kernel_warmup" line
    lead = out["verdicts"][0]
    assert lead["fatal"] and lead["text"].startswith("the run ended: ValueError: Invalid MXFP8 split-K")
    assert "during warm-up" in lead["text"] and "serving" not in lead["text"]
    # the ticket's Markdown states the version and the GPU: both read, with where they came from
    inp = out["inputs"][0]
    assert inp["flashinfer_version"]["value"] == "0.6.18.post1" and "0.6.18.post1" in inp["flashinfer_version"]["from"]
    assert inp["arch"]["value"] == "sm103" and inp["arch"]["how"] == "inferred"  # from the GPU name GB300


def test_runner_and_source_location_of_a_flashinfer_check():
    # flashinfer-ai/flashinfer#3263 and sgl-project/mini-sglang#129: the same check, with and without context
    for slug in ("flashinfer-3263-sm120-tllmgen-fmha-unsupported-architecture",
                 "minisglang-129-rtx5070-tllmgen-fmha-bare-exception"):
        out = _out(slug)
        f = _facts(_only(out, "exception"))
        assert f["runner"] == "TllmGenFmhaRunner" and f["file"] == "fmhaRunner.cuh:30", slug
        assert f["error"].endswith("Unsupported architecture")
        assert "stage" not in f  # nothing around it says warm-up or serving
        assert out["verdicts"][0]["text"].startswith("the run ended: RuntimeError in TllmGenFmhaRunner (fmhaRunner.cuh:30)")
    assert out["inputs"][0]["arch"] is None  # the bare paste names no arch: none is made up


def test_kernel_name_and_serving_stage_of_a_batched_gemm_error():
    # sgl-project/sglang#16624: raised while serving (the traceback goes through the scheduler's event loop)
    out = _out("sglang-16624-trtllm-batched-gemm-run-error-sm100f")
    ev = _only(out, "exception")
    f = _facts(ev)
    assert f["function"] == "run" and f["file"] == "trtllm_batched_gemm_runner.cu:258"
    assert f["kernel"].startswith("bmm_E2m1_E2m1E2m1_Fp32_t128x8x512u2") and f["arch"] == "sm100f"
    assert ev["facts"]["arch"]["from"].startswith("kernel name")
    assert f["error_class"] == "launch_failure"  # a run-time failure with a source location, not a compile error
    assert f["stage"] == "serving"
    lead = out["verdicts"][0]["text"]
    assert lead.startswith("the run ended: RuntimeError in run (trtllm_batched_gemm_runner.cu:258)") and "while serving" in lead


def test_wrapped_exception_message_is_joined():
    # sgl-project/sglang#31864: the author wrapped the error over three lines
    out = _out("sglang-31864-wrapped-batched-gemm-run-error-sm100f")
    ev = _only(out, "exception")
    f = _facts(ev)
    assert "Error occurred when running GEMM!" in f["error"] and "GemmMNK:  2224   512   6144" in f["error"]
    assert f["kernel"].endswith("_dynB_sm100f") and f["error_class"] == "launch_failure"
    assert ev["count"] == 1 and "wrapped" in ev["facts"]["error"]["from"]
    # prose that mentions graph capture ("not an EAGLE / ... graph capture case") places nothing
    assert "stage" not in f


def test_error_occurred_when_running_is_no_compile_error():
    text = ("RuntimeError: Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:258: "
            "Error occurred when running GEMM! (numBatches:  256 , GemmMNK:  2   512   7168 , Kernel:  x )")
    assert error_text.classify(text)[0] is error_text.ErrorClass.LAUNCH_FAILURE
    # a real compiler diagnostic keeps its class
    assert error_text.classify("kernel.cu(42): error: identifier \"x\" is undefined")[0] is error_text.ErrorClass.COMPILE_ERROR


def test_an_unrelated_exception_is_not_an_event():
    lines = [(1, "Traceback (most recent call last):"), (2, '  File "app.py", line 3, in <module>'),
             (3, "KeyError: 'user'"), (4, "ValueError: invalid literal for int() with base 10: 'x'")]
    items = list(logs.parse_lines(lines, "t.log", ReadContext().environment()))
    assert not [i for i in items if getattr(i, "kind", None) == "exception"]


def test_markdown_environment_bullets_give_version_and_arch():
    # flashinfer-ai/flashinfer#3537 and #4012: versions in bold, arch as a word, nvidia-smi's compute_cap
    out = _out("flashinfer-3537-gb200-mxfp4-moe-environment-bullets")
    inp = out["inputs"][0]
    assert inp["flashinfer_version"]["value"] == "0.6.12" and inp["arch"]["value"] == "sm100"
    assert not out["fatal"] and _facts(_only(out, "version_banner"))["version"] == "0.6.12"
    cs = ClueSet()
    cs.feed(1, "- GPU: **NVIDIA GB300** (SM103 / `compute_cap 10.3`), single GPU, TP=1")
    kinds = {(c.kind, c.value) for c in cs.clues if c.what == "arch"}
    assert ("compute capability", "sm103") in kinds and ("arch named", "sm103") in kinds
    cs = ClueSet()
    cs.feed(1, "- FlashInfer **0.6.14**")
    cs.feed(2, "In `flashinfer-python==0.6.7.post2`, the packaged header contains:")
    assert [c.value for c in cs.clues if c.what == "flashinfer_version"] == ["0.6.14", "0.6.7.post2"]


def test_arch_words_are_clues_only_when_a_line_names_one():
    cs = ClueSet()
    cs.feed(1, "the trtllm-gen runner accepts only SM100 / SM103 here")  # a list: no clue
    cs.feed(2, "/root/.cache/sglang/flashinfer/autotune/0.6.12/sm120/88ed/rank_tp0_pp0_dp0.json")  # a path: its own clue kind
    cs.feed(3, "FLASHINFER_CHECK(mSM == kSM_100, ...)")  # part of a name
    assert not [c for c in cs.clues if c.kind == "arch named"]


def test_a_ticket_stating_only_its_setup_is_read_not_refused(tmp_path):
    # the environment list of flashinfer-ai/flashinfer#4012, without the rest of the ticket
    p = tmp_path / "env.md"
    p.write_text("## Environment\n\n- GPU: **NVIDIA GB300** (SM103 / `compute_cap 10.3`), single GPU, TP=1\n"
                 "- container run as root\n")
    out = inspect_dict(inspect([str(p)], ReadContext()))
    assert not any("not a format" in pr["message"] for pr in out["problems"])
    assert out["inputs"][0]["arch"]["value"] == "sm103"
    assert any("only the setup it states" in pr["message"] and "sm103" in pr["message"] for pr in out["problems"])
    # a text that says nothing tiletune reads is no bad input either: a note saying what was looked for (exit 0)
    q = tmp_path / "notes.txt"
    q.write_text("this is not a cache\n")
    out = inspect_dict(inspect([str(q)], ReadContext()))
    assert any("nothing tiletune reads: looked for" in pr["message"] for pr in out["problems"])
    assert out["exit_status"] == 0 and out["sources"] == [{"path": str(q), "kind": "log"}]


def test_shortened_no_tuned_config_line_keeps_its_op():
    # vllm-project/vllm#47720 quotes the warning shortened
    line = "[AutoTuner]: No tuned config covers bf16_gemm input_shapes=(... [H, vocab] ...)"
    items = list(logs.parse_lines([(1, line)], "pr.md", ReadContext().environment()))
    recs = [i for i in items if isinstance(i, TuningRecord)]
    assert len(recs) == 1 and recs[0].op == "bf16_gemm" and recs[0].status is Status.FALLBACK and recs[0].tactic == -1
    assert "shortened" in dict(recs[0].detail)["abbreviated"]
    assert not [i for i in items if "could not parse" in getattr(i, "message", "")]


def test_where_a_ticket_says_it_was_raised():
    # flashinfer-ai/flashinfer#5449: "at `flashinfer/gemm/gemm_base.py:5327`, called from `mm_mxfp8` ->
    # `CuteDSLMxfp8GemmRunner.forward`" on the line after the exception
    out = _out("flashinfer-5449-dgx-station-gb300-mxfp8-split-k-warmup")
    ev = _only(out, "exception")
    f = _facts(ev)
    assert f["runner"] == "CuteDSLMxfp8GemmRunner" and f["raised_in"] == "flashinfer/gemm/gemm_base.py:5327"
    assert ev["facts"]["runner"]["from"].startswith("line 18 ")
    assert f["tactic"] == "((128, 16), (1, 1), True, False, 4)" and f["stage"] == "warm-up"
    inp = out["inputs"][0]
    assert inp["arch"]["value"] == "sm103" and inp["flashinfer_version"]["value"] == "0.6.18.post1"


def test_innermost_kernel_code_frame_of_a_traceback():
    lines = [(1, "Traceback (most recent call last):"),
             (2, '  File "/usr/lib/python3.12/site-packages/vllm/model_executor/warmup/kernel_warmup.py", line 244, in flashinfer_autotune'),
             (3, "    runner._dummy_run(**dummy_run_kwargs)"),
             (4, '  File "/usr/lib/python3.12/site-packages/flashinfer/gemm/gemm_base.py", line 5327, in forward'),
             (5, "    raise ValueError(f\"Invalid MXFP8 split-K tactic: {tactic}\")"),
             (6, "ValueError: Invalid MXFP8 split-K tactic: ((128, 16), (1, 1), True, False, 4)")]
    # (a traceback of the shape vLLM prints; the frames and the message are those flashinfer-ai/flashinfer#5449 names)
    items = list(logs.parse_lines(lines, "t.log", ReadContext().environment()))
    [ev] = [i for i in items if getattr(i, "kind", None) == "exception"]
    assert ev.fact("raised_in") == "gemm_base.py:5327 in forward" and ev.fact("stage") == "warm-up"
    assert ev.is_fatal and ev.line == 6


def test_exception_quoted_in_a_prose_code_span():
    # vllm-project/vllm#43033: the CI analyzer quotes the exception inside a sentence
    out = _out("vllm-43033-b200-ci-check-failed-sf-layout-warmup")
    f = _facts(_only(out, "exception"))
    assert f["exception_type"] == "RuntimeError" and f["error"].endswith("Invalid sf layout in run")
    assert f["stage"] == "warm-up"  # "during kernel warmup" in the same sentence
    assert out["inputs"][0]["arch"]["value"] == "sm100"  # B200


def test_a_process_ending_during_an_unfinished_tuning_bar_names_that_op():
    # sgl-project/sglang#40558: "Scheduler hit an exception" glued to the 0/21 bar of trtllm_batch_decode_mla
    out = _out("sglang-40558-sm120-mla-autotune-scheduler-exception")
    ended = out["inputs"][0]["ended"]
    assert ended["value"] is True
    assert "during FlashInfer's autotune of trtllm_batch_decode_mla, 0/21 profiles done" in ended["from"]
    lead = out["verdicts"][0]
    assert lead["fatal"] and "trtllm_batch_decode_mla, 0/21" in lead["text"]
    assert any("trtllm_batch_decode_mla (0/21 profiles)" in v["text"] for v in out["verdicts"][1:])
    # a bar that had finished before the process ended names nothing (sglang#29562 has no bar at all)
    out = _out("sglang-29562-sm120-nvfp4-autotune-cache-paths-exception")
    assert "during" not in out["inputs"][0]["ended"]["from"]


def test_a_pasted_exception_in_a_walked_folder_is_read(tmp_path):
    # a folder of pasted crash output: the bare exception of sgl-project/mini-sglang#129, as crash.txt
    text = (WILD / "minisglang-129-rtx5070-tllmgen-fmha-bare-exception" / "ticket.md").read_text()
    (tmp_path / "crash.txt").write_text(text)
    (tmp_path / "notes.txt").write_text("unrelated notes\n")
    out = inspect_dict(inspect([str(tmp_path)], ReadContext()))
    assert [e["kind"] for e in out["events"]] == ["exception"] and out["fatal"]
    assert out["events"][0]["source"].endswith("crash.txt")  # the unrelated notes.txt is left alone


def test_any_exception_whose_traceback_went_through_kernel_code():
    # frames as vLLM prints them (vllm-project/vllm#50705), closed by an exception that names no kernel:
    # the frame in FlashInfer's code makes it the kernels' exception
    lines = [(1, "[rank0]: Traceback (most recent call last):"),
             (2, '[rank0]:   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/warmup/kernel_warmup.py", line 244, in flashinfer_autotune'),
             (3, "[rank0]:     runner._dummy_run(**dummy_run_kwargs)"),
             (4, '[rank0]:   File "/usr/local/lib/python3.12/dist-packages/flashinfer/jit/core.py", line 108, in check_cuda_arch'),
             (5, '[rank0]:     raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")'),
             (6, "[rank0]: RuntimeError: FlashInfer requires GPUs with sm75 or higher"),
             (7, "[rank0]: KeyError: 'unrelated'")]  # a later exception without a kernel frame is not one
    items = list(logs.parse_lines(lines, "t.log", ReadContext().environment()))
    evs = [i for i in items if getattr(i, "kind", None) == "exception"]
    assert len(evs) == 1 and evs[0].line == 6
    assert evs[0].fact("raised_in") == "core.py:108 in check_cuda_arch" and evs[0].fact("stage") == "warm-up"


def test_bare_exception_and_cpp_what_lines():
    # flashinfer-ai/flashinfer#1422's title, and a C++ exception as std::terminate prints it
    lines = [(1, "Exception: Capture cuda graph failed: unsupported weight_scale_vec_size"),
             (2, "terminate called after throwing an instance of 'std::runtime_error'"),
             (3, "  what():  Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:258: Error occurred when running GEMM!")]
    items = list(logs.parse_lines(lines, "t.log", ReadContext().environment()))
    evs = [i for i in items if getattr(i, "kind", None) == "exception"]
    # the first names no kernel, runner or tactic and has no kernel-code frame: not the kernels' exception
    assert [(e.fact("exception_type"), e.fact("file")) for e in evs] == [("C++ exception (what())", "trtllm_batched_gemm_runner.cu:258")]


def test_an_exception_after_the_server_was_up_ended_it_while_serving():
    # SGLang's ready line (flashinfer-ai/flashinfer#2697 quotes it), then sgl-project/sglang#16624's error
    lines = [(1, "[2026-03-10 05:19:56] The server is fired up and ready to roll!"),
             (2, "RuntimeError: Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:258: "
                 "Error occurred when running GEMM! (numBatches:  256 , GemmMNK:  2   512   7168 , Kernel:  "
                 "bmm_E2m1_E2m1E2m1_Fp32_t128x8x512u2_s5_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_transOut_schedS_"
                 "bN_ldgsts_tmaOpt_clmp_swiGlu_dynBatch_sm100f )")]
    items = list(logs.parse_lines(lines, "t.log", ReadContext().environment()))
    [ev] = [i for i in items if getattr(i, "kind", None) == "exception"]
    assert ev.fact("served_before") is True and ev.is_fatal
