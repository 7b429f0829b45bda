# ruff: noqa: E501  (the quoted lines are kept verbatim)
"""What ended a run (issue 23 items 2 and 6): the first line that shows the process stopping and the
last unrecovered error before it; errors the autotuner survived are findings; stage, op and cut come
from evidence lines or are said to be unknown. Every text is quoted verbatim from a public ticket
(the thread is named above each); none is typed to fit the parser."""

from __future__ import annotations

from log_text import read_lines, verdicts_of

# vllm-project/vllm#24377 (2025-09-06): the runner's RuntimeError ends EngineCore_0's first
# traceback; "Process EngineCore_0:" and a second traceback follow (cut where the ticket cut it)
VLLM_24377 = [
    "```",
    '(EngineCore_0 pid=16272) ERROR 09-07 00:59:17 [core.py:712]   File "/home/jetson/miniconda3/envs/vllm/lib/python3.12/site-packages/torch/_ops.py", line 841, in __call__',
    "(EngineCore_0 pid=16272) ERROR 09-07 00:59:17 [core.py:712]     return self._op(*args, **kwargs)",
    "(EngineCore_0 pid=16272) ERROR 09-07 00:59:17 [core.py:712]            ^^^^^^^^^^^^^^^^^^^^^^^^^",
    "(EngineCore_0 pid=16272) ERROR 09-07 00:59:17 [core.py:712] RuntimeError: [FP4 gemm Runner] Failed to initialize cutlass FP4 gemm. Error: Error Internal",
    "(EngineCore_0 pid=16272) Process EngineCore_0:",
    "(EngineCore_0 pid=16272) Traceback (most recent call last):",
    '(EngineCore_0 pid=16272)   File "/home/jetson/miniconda3/envs/vllm/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
    "(EngineCore_0 pid=16272)     self.run()",
]

# flashinfer-ai/flashinfer#2023 (2025-11-01): the paste ends at the frame that calls the autotuner
FI_2023 = [
    "```",
    '(EngineCore_DP0 pid=2361841) ERROR 11-01 12:49:12 [core.py:800]   File "/home/varun-sundar-rabindranath/code/vllm/vllm-test/lib/python3.12/site-packages/flashinfer/fused_moe/core.py", line 2061, in trtllm_fp4_block_scale_routed_moe',
    "(EngineCore_DP0 pid=2361841) ERROR 11-01 12:49:12 [core.py:800]     return get_trtllm_moe_sm100_module().trtllm_fp4_block_scale_moe(",
    "(EngineCore_DP0 pid=2361841) ERROR 11-01 12:49:12 [core.py:800]            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '(EngineCore_DP0 pid=2361841) ERROR 11-01 12:49:12 [core.py:800]   File "/home/varun-sundar-rabindranath/code/vllm/vllm-test/lib/python3.12/site-packages/flashinfer/fused_moe/core.py", line 1540, in trtllm_fp4_block_scale_moe_op',
    "(EngineCore_DP0 pid=2361841) ERROR 11-01 12:49:12 [core.py:800]     _, tactic = tuner.choose_one(",
]

# flashinfer-ai/flashinfer#2800: a tactic's CUDA error the autotuner skipped, then "Autotuning process
# ends", then the worker's exception (its traceback cut after compile_or_warm_up_model)
FI_2800 = [
    "(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) 2026-03-13 12:01:42,816 - WARNING - autotuner.py:490 - flashinfer.jit: [Autotuner]: Skipping tactic <flashinfer.fused_moe.core.get_trtllm_moe_sm100_module.<locals>.MoERunner object at 0xffde1df4af30> [32, 15], due to failure while profiling: Error in function 'run' at <REDACTED_PATH>/trtllm_fused_moe_routing_renormalize.cu:463: Got CUDA error. See above for details.",
    "",
    "(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) 2026-03-13 12:01:42,820 - INFO - autotuner.py:262 - flashinfer.jit: [Autotuner]: Autotuning process ends",
    "",
    "(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) ERROR 03-13 12:01:42 [multiproc_executor.py:932] WorkerProc hit an exception.",
    "(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) ERROR 03-13 12:01:42 [multiproc_executor.py:932] Traceback (most recent call last):",
    '(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) ERROR 03-13 12:01:42 [multiproc_executor.py:932]   File "<REDACTED_PATH>/multiproc_executor.py", line 927, in worker_busy_loop',
    "(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) ERROR 03-13 12:01:42 [multiproc_executor.py:932]     output = func(*args, **kwargs)",
    '(Worker pid=4178717) (Worker_DP0_EP0 pid=4178717) ERROR 03-13 12:01:42 [multiproc_executor.py:932]   File "<REDACTED_PATH>/gpu_worker.py", line 594, in compile_or_warm_up_model',
]

# sgl-project/sglang#40558 (2026-09-21): the scheduler's exception glued to an unfinished tuning bar
SGLANG_40558 = [
    "[2026-09-21 13:38:19 TP1] Running FlashInfer autotune with cache: /home/admin2/.cache/sglang/flashinfer/autotune/0.6.18/sm120/b642abdd0383a4db/rank_tp1_pp0_dp0.json",
    "[AutoTuner]: Tuning trtllm_batch_decode_mla:   0%|          | 0/21 [00:00<?, ?profile/s][2026-09-21 13:38:29 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/home/admin2/.sglang/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 5841, in run_scheduler_process',
    "    scheduler = Scheduler(",
]


def test_the_runner_error_that_ended_engine_core_leads_and_no_stage_is_made_up():
    _, (inp,), _ = read_lines(VLLM_24377)
    end = inp.run_end
    assert end.stopped.line == 5 and end.cause.line == 5 and end.cause_kind == "runner_init_failed"
    assert end.stage == "unknown" and end.cut is None
    lead = verdicts_of(VLLM_24377)[0]
    assert lead.fatal and lead.text.startswith(
        "the run ended: the fp4_gemm CUTLASS runner failed to initialize, Error Internal; stage not shown")
    assert "start-up" not in lead.text and "serving" not in lead.text
    # its evidence: the error's own line, stated in the ticket (a fenced paste)
    (ev,) = lead.evidence
    assert (ev.line, ev.how) == (5, "stated") and "RuntimeError: [FP4 gemm Runner]" in ev.words


def test_a_traceback_cut_after_its_last_frame_names_the_op_and_says_where_the_cut_is():
    _, (inp,), _ = read_lines(FI_2023)
    end = inp.run_end
    assert end.cause is None and end.cut == "after_last_frame"
    assert end.stage == "autotune" and end.op == "trtllm_fp4_block_scale_moe"
    assert "choose_one" in end.in_autotuner.words
    lead = verdicts_of(FI_2023)[0]
    assert lead.text.startswith("the run ended inside FlashInfer's autotuner while tuning trtllm_fp4_block_scale_moe "
                                "(trtllm_fp4_block_scale_routed_moe -> trtllm_fp4_block_scale_moe_op -> choose_one)")
    assert ("the traceback is cut after its last frame (trtllm_fp4_block_scale_moe_op: _, tactic = tuner.choose_one(): "
            "the error itself is not in the text") in lead.text
    assert "before the traceback" not in lead.text  # the cut is after the last frame, not before the first


def test_an_error_the_autotuner_skipped_is_a_finding_and_what_followed_ends_the_run():
    events, (inp,), _ = read_lines(FI_2800)
    (cuda,) = [e for e in events if e.kind == "cuda_error"]
    assert not cuda.is_fatal and cuda.fact("survived") is True
    end = inp.run_end
    assert end.stopped.line == 5 and end.cause is None and end.cut == "after_last_frame"
    assert end.after_autotune.line == 3
    assert (end.stage, end.stage_evidence.line) == ("warm-up", 9)
    vs = verdicts_of(FI_2800)
    lead = vs[0]
    assert lead.text.startswith("the run ended (WorkerProc hit an exception) during warm-up (compile_or_warm_up_model); "
                                "after autotuning ended (line 3)")
    assert [e.line for e in lead.evidence] == [5, 9, 3]
    survived = next(v for v in vs if v.text.startswith("the autotuner survived 1 CUDA error"))
    assert not survived.fatal and "it skipped and went on (line 1)" in survived.text


def test_a_stop_glued_to_an_unfinished_tuning_bar_is_during_that_ops_autotune():
    _, (inp,), _ = read_lines(SGLANG_40558)
    end = inp.run_end
    assert end.stage == "autotune" and end.op == "trtllm_batch_decode_mla" and end.cut == "after_last_frame"
    lead = verdicts_of(SGLANG_40558)[0]
    assert lead.text.startswith("the run ended (Scheduler hit an exception) during FlashInfer's autotune while tuning "
                                "trtllm_batch_decode_mla")


# cache_samples/wild/dspark-gx10-gb10-worker-failed-unsupported-mxfp4-backend (a committed vLLM worker
# log): "WorkerProc failed to start." then the worker's traceback; its ValueError is what ended the run
DSPARK_WORKER = [
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898] WorkerProc failed to start.',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898] Traceback (most recent call last):',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 865, in worker_main',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/quantization/mxfp4.py", line 678, in _setup_kernel',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898]     convert_weight_to_mxfp4_moe_kernel_format(',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/oracle/mxfp4.py", line 1582, in convert_weight_to_mxfp4_moe_kernel_format',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898]     raise ValueError(',
    '(Worker_TP1 pid=462) ERROR 07-18 21:14:17 [multiproc_executor.py:898] ValueError: Unsupported mxfp4_backend for Mxfp4MoEMethod: Mxfp4MoeBackend.FLASHINFER_CUTLASS_MXFP4_MXFP8. Expected TRTLLM, Triton, AITER, or XPU backend.',
]

# flashinfer-ai/flashinfer#4920 (a PR comment, cache_samples/wild/flashinfer-4920-...): an escape in the
# unpatched control, the OOM fallback the PR adds, then the default tactic's MemoryError escapes
FI_4920 = [
    'Thanks for putting this together. We applied the current PR head (32ce2516f07536a508961f46f9f56ed1811537db) to FlashInfer 0.6.18 and ran paired unpatched/patched hardware reproductions on NVIDIA B200 with PyTorch 2.13.0+cu130.',
    '',
    'What we verified:',
    '- In the unpatched control, Site A’s workspace requirement measured 10,775 MiB. Under constrained memory, `prepare_moe` requested 502 MiB and escaped through TVM-FFI as a builtin `MemoryError`; an oversized ordinary PyTorch allocation under the same guard was correctly caught.',
    '- With this PR applied, a constrained Site A allocation was caught, `[Autotuner]: OOM detected, falling back to default tactic` was logged, and execution successfully returned through that attempt. This verifies the intended Site A recovery on B200.',
    '- In the four-rank test, the patched run showed no Site A escape.',
    '',
    'What is still failing:',
    '- At a tighter memory rung, the Site A fallback proceeds to the selected default tactic and fails at Site B:',
    '  `run_selected_tactic → Fp8BlockScaleLauncher::run → prepare_moe → TVMFFIEnvTensorAlloc`.',
    '- That allocation again escapes as builtin `MemoryError` 48 MiB requested with only 11.81 MiB free in our patched single-GPU run.',
]

# sgl-project/sglang#25563 (cache_samples/wild/sglang-25563-...): an sm100f kernel on sm_103 hardware
SGLANG_25563 = [
    "Exception: Capture cuda graph failed: Error in function 'run' at",
    '  /workspace/csrc/trtllm_batched_gemm_runner.cu:276:',
    '  Error occurred when running GEMM! (numBatches: 256, GemmMNK: 128 1024 6144,',
    '  Kernel: bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6_et128x8_m128x8x16',
    '          _c1x1x1_16dp256b_rM_BN_transOut_schPd2x1x2x3_bN_ldgsts_ldgstsSf',
    '          _rgTma_clmp_swiGlu_dynB_sm100f)',
    '```',
    '',
    "The `sm100f` suffix on the kernel name is the load-bearing detail — the trtllm GEMM dispatcher selected a Blackwell-base (sm_100f) kernel for Blackwell-Ultra (sm_103) hardware. Strongly suggests the dispatch tables in both `csrc/trtllm_batched_gemm_runner.cu` and `flash_attn/cute/flash_fwd_sm100.py` only enumerate `{sm_100, sm_100f, sm_110, sm_110f}` and don't know about `sm_103`/`sm_103a` (Blackwell Ultra).",
]


def test_a_wrapper_line_then_the_workers_traceback_the_exception_ends_the_run():
    _, (inp,), _ = read_lines(DSPARK_WORKER)
    end = inp.run_end
    assert (end.stopped.line, end.cause.line, end.cause_kind) == (1, 8, "exception")
    lead = verdicts_of(DSPARK_WORKER)[0]
    assert lead.text.startswith("the run ended: ValueError: Unsupported mxfp4_backend for Mxfp4MoEMethod")
    assert "raised in convert_weight_to_mxfp4_moe_kernel_format" in lead.text
    assert "the engine reported it: WorkerProc failed to start (line 1)" in lead.text


def test_a_memory_error_after_the_oom_fallback_ends_the_run_with_the_stated_chain():
    events, (inp,), _ = read_lines(FI_4920)
    mem = [e for e in events if e.kind == "memory_error"]
    assert [e.line for e in mem] == [4, 11] and all(e.is_fatal and e.fact("survived") is None for e in mem)
    assert inp.ticket and inp.run_end.cause.line == 11 and inp.run_end.cause.how == "stated"
    (chain,) = inp.chains
    assert chain.value == "run_selected_tactic -> Fp8BlockScaleLauncher::run -> prepare_moe -> TVMFFIEnvTensorAlloc"
    vs = verdicts_of(FI_4920)
    lead = vs[0]
    assert lead.text.startswith("the run ended: a builtin MemoryError escaped")
    assert "48 MiB requested with 11.81 MiB free" in lead.text
    assert "falling back to the default tactic (line 5)" in lead.text and "via run_selected_tactic -> " in lead.text
    assert [e.line for e in lead.evidence] == [11, 5, 10]
    assert not any(v.text.startswith("the autotuner survived") for v in vs)
    assert any("a fallback, not a failed tactic" in v.text for v in vs)


def test_the_hardware_a_ticket_names_outranks_the_family_kernel_name():
    _, (inp,), _ = read_lines(SGLANG_25563)
    assert inp.arch.value == "sm103" and inp.arch.line == 9 and "(sm_103) hardware" in inp.arch.source
