# ruff: noqa: E501  (the quoted lines are kept verbatim)
"""Tickets as tickets and what ended a run (issue 23 items 2, 4, 5, 9): each text is quoted verbatim from
a working artifact of cache_samples/wild (a public ticket, named above it); none is typed to fit."""

from __future__ import annotations

from log_text import read_lines, verdicts_of

from tiletune.readers import logs
from tiletune.readers.interface import ReadContext
from tiletune.readers.logs.events import repeats

# NVIDIA/TensorRT-LLM#1739 (cache_samples/wild/trtllm-1739-...): the GEMM plugin profiler's warnings
TRTLLM_1739 = [
    '[TensorRT-LLM][WARNING] Have not found any valid GEMM config for shape (m=1, n=6144, k=4096). Will try to use default or fail at runtime',
    '[TensorRT-LLM][WARNING] Have not found any valid GEMM config for shape (m=2, n=6144, k=4096). Will try to use default or fail at runtime',
    '[TensorRT-LLM][WARNING] Have not found any valid GEMM config for shape (m=4, n=6144, k=4096). Will try to use default or fail at runtime',
]


# vllm-project/vllm#40887 (cache_samples/wild/vllm-40887-...): a PR's fenced lifecycle with a marked chain,
# then the autotuner's line with the author's repeat count
VLLM_40887 = [
    '```',
    'load_model()                  → weights loaded',
    'determine_available_memory()  → profile_run() measures peak activation',
    'initialize_from_config()      → KV cache allocated (fills remaining GPU memory)',
    'compile_or_warm_up_model()    → kernel_warmup() → flashinfer_autotune()  ← OOMs here',
    '```',
    '',
    "FlashInfer's autotuner benchmarks multiple CUTLASS kernel tactics for each GEMM shape. Each tactic allocates temporary workspace buffers. After KV cache allocation, there isn't enough free memory, so every tactic OOMs:",
    '',
    '```',
    '[Autotuner]: OOM detected, falling back to default tactic  (×64)',
    '```',
]


# kvcached (cache_samples/wild/kvcached-321-...): a paste that starts at the code line of a frame cut off above
KVCACHED_321 = [
    '```',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706]     torch.ops._C_custom_ar.all_reduce(fa, inp, out, reg_buffer, reg_buffer_sz_bytes)',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706]   File "/usr/local/lib/python3.12/dist-packages/torch/_ops.py", line 1243, in __call__',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706]     return self._op(*args, **kwargs)',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706]            ^^^^^^^^^^^^^^^^^^^^^^^^^',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706] torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706] Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706] ',
    '(Worker_TP7 pid=380351) ERROR 04-28-2026-15:50:31.931 [multiproc_executor.py:706] Traceback (most recent call last):',
]


# NVIDIA/TensorRT-LLM#5389 (cache_samples/wild/trtllm-5389-...): the executor's assertion, then its C++ backtrace
TRTLLM_5389 = [
    '[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [I] [Autotuner]: Autotuning process ends',
    '[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] Assertion failed: Error occurred when running GEMM! (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/KernelRunner.cpp:180)',
    '1       0x7fac7ac778fd tensorrt_llm::common::throwRuntimeError(char const*, int, char const*) + 97',
    '2       0x7fac7ac7f699 /usr/local/lib/python3.12/dist-packages/tensorrt_llm/libs/libtensorrt_llm.so(+0x1d5e699) [0x7fac7ac7f699]',
    '3       0x7fac7b14ab11 tensorrt_llm::kernels::trtllmGenFp8BlockScaleMoe::PermuteGemm1::Runner::run(void*, void*, void*, void*, void*, float*, float*, void*, void*, int, int, int, int, int, int*, int*, int*, int*, int*, void*, bool, int, CUstream_st*) + 241',
    '4       0x7fac7b14aec5 tensorrt_llm::kernels::trtllmGenFp8BlockScaleMoe::MoE::Runner::run(tensorrt_llm::kernels::trtllmGenFp8BlockScaleMoe::MoE::MoERunnerArgs const&, tensorrt_llm::kernels::trtllmGenFp8BlockScaleMoe::MoE::MoEWorkspace const&, int, CUstream_st*) + 325',
]


# flashinfer-ai/flashinfer#4012 (cache_samples/wild/flashinfer-4012-...): the ticket places the crash itself
FI_4012 = [
    '## Summary',
    '',
    'On **GB300** (Blackwell-Ultra, SM103, `compute_cap 10.3`), enabling',
    '`enable_flashinfer_autotune` for **NVFP4 block-scale MoE** models makes vLLM engine',
    'startup crash at **CUDA-graph capture** with:',
    '',
    '```',
    'torch.AcceleratorError: CUDA error: operation not permitted',
    '```',
    '(`cudaErrorNotPermitted`), raised from `torch.cuda.graph(...).capture_end()`.',
    '',
    'Importantly, the **FlashInfer autotune sweep itself completes cleanly**',
    '(`[Autotuner]: Autotuning process ends`) — the crash happens *afterwards*, during',
    'CUDA-graph capture. This is therefore distinct from #3197 (illegal-memory access',
    '*during* the `trtllm_fp4_block_scale_moe` sweep), which appears resolved in 0.6.14.',
    '',
]


# sgl-project/sglang#5491 (cache_samples/wild/sglang-5491-...): a CUDA check's file and line, interleaved by the paste
SGLANG_5491 = [
    'CUDA Error: an illegal memory access was encountered (CUDA Error: 700an illegal memory access was encountered)  (/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh700: line ) 2349/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh at function cudaLaunchKernel((void*)kernel, nblks, nthrs, args, smem_size, stream): line 2349',
]


# vllm-project/vllm#13961 (cache_samples/wild/vllm-13961-...): the machine in the comment's prose
VLLM_13961 = [
    'Same issue as @elvingerpaul on GH200 with CUDA 12.4. Profiling with `ncu`, full `aarch64` build (including compilation) based on the Dockerfile.',
]


# flashinfer-ai/flashinfer#2219 (cache_samples/wild/flashinfer-2219-...): a setting the ticket names
FI_2219 = [
    'The issue only appears when I explicitly enable the FlashInfer MoE backend using VLLM_USE_FLASHINFER_MOE_FP16=1. If I remove this environment variable, the model serves successfully.',
]


# a Reddit debug report kept as one line (cache_samples/wild/reddit-1roqkw4-...)
REDDIT_1ROQKW4 = [
    "# NVFP4 MoE on SM120 (RTX PRO 6000 Blackwell): Full Debug Report ## Title **CUTLASS & FlashInfer NVFP4 MoE Grouped GEMM Fails on SM120 Desktop Blackwell GPUs — Debug Journey, Patches, and Benchmark Results** All native FP4 MoE backends produce garbage output or crash on SM120 (`compute_120`) due to broken CUTLASS grouped GEMM templates. Through systematic patching of FlashInfer 0.6.5's SM120 capability checks and CuTe DSL architecture restrictions, we achieved the first known correct native FP4 MoE output on desktop Blackwell — albeit at reduced speed (14.6 tok/s vs Marlin's 46-49 tok/s) due to FlashInfer autotuner falling back to slow kernel tactics after TMA WS grouped GEMM initialization failures. --- ## Environment | Component | Detail | |-----------|--------| | **GPUs** | 4x NVIDIA RTX PRO 6000 Blackwell Workstation Edition (96GB GDDR7 each, 384GB total) | | **Compute Capability** | SM 12.0 (`sm_120`, NOT `sm_120a`) | | **Interconnect** | PCIe (no NVLink) | | **Driver** | 582.16 | | **OS** | Windows 11 Pro + WSL2 Ubuntu 22.04 | | **CUDA** | 12.8 (primary), 13.0 (available for JIT) | | **PyTorch** | 2.10.0+cu128 | | **vLLM** | 0.17.0 | | **FlashInfer** | 0.6.5 (upgraded from 0.6.4) | | **CUTLASS** | 4.2.1 (vendored in vLLM), 4.4.1 (tested separately) | ## Model | Parameter | Value | |-----------|-------| | Model | `nvidia/Qwen3.5-397B-A17B-NVFP4` | | Total Params | 397B (17B active per token) | | Experts | 512 routed + 1 shared, 10 routed per token | | Quantization | NVFP4 (FP4 weights with FP8 block scales) | | Parallelism | TP=2 + PP=2 (optimal for PCIe) | | KV Cache | FP8 e4m3 | | Max Seq Len | 32,768 | --- ## The Problem NVFP4 MoE models produce **garbage output** (random whitespace, commas, fragments) on SM120 desktop Blackwell GPUs when using any backend that relies on CUTLASS grouped block-scaled FP4 GEMM kernels. Dense (non-MoE) FP4 GEMM works correctly — the issue is specificall",
]


def test_no_valid_gemm_config_warnings_are_warnings_with_their_shapes():
    vs = verdicts_of(TRTLLM_1739)
    lead = vs[0]
    # a tuning failure per shape (issue 22): no tactic passed profiling; never "no failure" nor "not failures"
    assert lead.text.startswith("no tactic passed TensorRT-LLM's GEMM profiling for 3 shapes (n=6144, k=4096, m = 1, 2 "
                                "and 4): 3 warnings 'Have not found any valid GEMM config for shape'")
    assert "not failures" not in lead.text and lead.evidence[0].words.startswith("[TensorRT-LLM][WARNING] Have not")
    assert not any("unsupported tactic skip" in v.text or "failed 3 times" in v.text for v in vs)


def test_a_repeat_count_counts_and_a_marked_chain_says_where():
    assert repeats("[Autotuner]: OOM detected, falling back to default tactic  (×64)") == 64
    assert repeats("(RayWorkerWrapper pid=1) INFO x [repeated 7x across cluster]") == 7
    assert repeats("Tuning 21/21") == 1
    events, (inp,), _ = read_lines(VLLM_40887)
    (oom,) = [e for e in events if e.kind == "oom_fallback"]
    assert oom.count == 64
    (chain,) = inp.chains
    assert chain.value == "compile_or_warm_up_model -> kernel_warmup -> flashinfer_autotune" and chain.line == 5
    lead = verdicts_of(VLLM_40887)[0]
    assert "ran out of memory 64 times" in lead.text and "(a fallback, not a failure)" in lead.text
    assert "in compile_or_warm_up_model -> kernel_warmup -> flashinfer_autotune (the ticket marks it, line 5)" in lead.text


def test_a_sticky_error_below_a_cut_is_reported_in_the_call_the_paste_starts_with():
    _, (inp,), _ = read_lines(KVCACHED_321)
    assert inp.run_end.innermost.line == 2 and "torch.ops._C_custom_ar.all_reduce(" in inp.run_end.innermost.words
    lead = verdicts_of(KVCACHED_321)[0]
    assert "reported in the call torch.ops._C_custom_ar.all_reduce(" in lead.text  # reported, not raised: sticky
    assert "in process Worker_TP7" in lead.text


def test_a_cpp_backtrace_names_the_frame_that_raised():
    lead = verdicts_of(TRTLLM_5389)[0]
    assert "after autotuning ended (line 1)" in lead.text
    assert "raised in tensorrt_llm::kernels::trtllmGenFp8BlockScaleMoe::PermuteGemm1::Runner::run" in lead.text


def test_a_ticket_places_the_crash_at_graph_capture_after_autotuning_ended():
    _, (inp,), _ = read_lines(FI_4012)
    assert inp.after_tune is not None and inp.after_tune.line == 13
    lead = verdicts_of(FI_4012)[0]
    assert lead.text.startswith("the run ended: torch.AcceleratorError: CUDA error: operation not permitted; during warm-up (CUDA-graph capture); "
                                "after autotuning ended (the ticket says so, line 13)")
    assert [e.line for e in lead.evidence][:2] == [8, 5] and "**CUDA-graph capture**" in lead.evidence[1].words


def test_a_cuda_check_names_its_file_and_line():
    (ev,), _, _ = read_lines(SGLANG_5491)
    assert ev.fact("file") == "prefill.cuh:2349" and "(caught at prefill.cuh line 2349)" in ev.summary


def test_gh200_and_cuda_version_in_prose():
    _, (inp,), _ = read_lines(VLLM_13961)
    assert inp.arch.value == "sm90" and inp.cuda.value == "12.4"


def test_a_setting_the_ticket_names_is_kept_with_its_line():
    _, (inp,), _ = read_lines(FI_2219)
    assert [(s.value, s.line) for s in inp.settings] == [("VLLM_USE_FLASHINFER_MOE_FP16=1", 1)]


def test_a_stated_fallback_is_quoted_around_its_words():
    _, (inp,), _ = read_lines(REDDIT_1ROQKW4)
    (went,) = inp.went_on
    assert "FlashInfer autotuner falling back to slow kernel tactics" in went.value and went.value.startswith("... ")
    v = next(v for v in verdicts_of(REDDIT_1ROQKW4) if v.text.startswith("the ticket states a failure in words"))
    assert "it says the run went on (a fallback or skip, not an abort)" in v.text


# noir-sh/ds4#716 (cache_samples/wild/ds4-716-...): a benchmark PR's summary paragraph, no log line
DS4_716 = [
    "**Summary:** prefill 437 t/s @2k tapering to 359 @64k; generation 13.1 t/s @2k to 9.9 @64k. Relative to gb10.csv (same-era engine): ~50% of GB10 prefill (tracks the 20-vs-~48 SM ratio) and ~72% of its generation (identical 273 GB/s memory bandwidth). Values reproduced within ~2% across reboots."
]

# vllm-project/vllm#48732 (cache_samples/wild/vllm-48732-...): a reply in hard-wrapped prose
VLLM_48732 = [
    "Some measured data points on this from an RTX PRO 6000 Blackwell Server Edition",
    "(sm_120, 96 GB) — a different Blackwell SKU than your 5090, so this is adjacent",
    "evidence rather than a fix for your case, but two of the findings generalize.",
    "",
    "**1. The coverage gap is real for this SKU too.** vLLM 0.26.0 ships 4 tuned",
    "configs for `device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition`, all",
    "fp8_w8a8 — zero bf16. Loading Qwen/Qwen3-30B-A3B (bf16, `moe_backend=\"triton\"`)",
    "fires the expected warning naming the missing file",
    "(`E=128,N=768,device_name=..._Server_Edition.json`).",
    "",
    "**2. The stock tuner cannot currently produce configs on this setup.** A",
    "`benchmark_moe.py --tune` sweep aborted ~2.5 h in when one candidate config",
    "crashed Triton's compiler (MLIR `TritonGPURemoveLayoutConversions` pass",
    "failure, triton 3.6.0) — the tune loop only catches `OutOfResources`, so the",
    "whole run died with nothing saved. With a small patch that skips any",
    "per-candidate compile failure, the full sweeps completed instead of aborting —",
    "the fix is now up as #50711, with a validated per-key rerun showing **192**",
    "failing candidates skipped across the six original keys (48 each on keys >= 16;",
    "none on keys 1 and 4). *Correction: an earlier version of this comment quoted a"
]

# vllm-project/vllm#54794 (cache_samples/wild/vllm-54794-...): two redraws of a slow tqdm bar
VLLM_54794 = [
    "[AutoTuner]: Tuning flashinfer::trtllm\\_fp4\\_block\\_scale\\_moe:  50%|██████████████              | 11/22 [06:15<07:51, 42.84s/profile](<EngineCore pid=2422677>) INFO 09-01 15:39:04 [shm\\_broadcast.py:801] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
    "[AutoTuner]: Tuning flashinfer::trtllm_fp4_block_scale_moe:  55%|███████████████▎            | 12/22 [06:58<07:10, 43.03s/profile]"
]


def test_a_report_in_prose_quotes_the_sentences_that_carry_its_measurements():
    (lead, *_) = verdicts_of(DS4_716)
    # (the paragraph the author labels "Summary:" is the finding, whole: readers/logs/findings.py)
    assert lead.text.startswith("no failure in the text; what it reports, in its words: 'Summary: prefill 437 t/s @2k "
                                "tapering to 359 @64k; generation 13.1 t/s @2k to 9.9 @64k. Relative to gb10.csv")
    from tiletune.core.records import InputProblem

    notes = [i.message for i in logs.parse_lines(enumerate(DS4_716, 1), "t.txt", ReadContext().environment())
             if isinstance(i, InputProblem)]
    assert notes and all("only the setup" not in n for n in notes)  # (a report is not "only the setup")
    assert lead.text.count("prefill 437 t/s") == 1  # (the measurement sentences inside the summary are not quoted again)
    assert lead.evidence[0].how == "stated" and lead.evidence[0].line == 1


def test_a_wrapped_sentence_is_read_whole_and_cut_at_words():
    _, (inp,), _ = read_lines(VLLM_48732)
    said = [str(f.value) for f in inp.reported]
    assert any("sweep aborted ~2.5 h in when one candidate config crashed Triton's compiler" in s for s in said)
    assert any("192 failing candidates skipped across the six original keys" in s for s in said)
    assert all(len(s) <= 230 for s in said) and any(s.endswith(" ...") for s in said)  # long ones cut at a word


def test_a_slow_bar_says_its_last_state_and_pace():
    (lead, *_) = verdicts_of(VLLM_54794)
    assert "tuned flashinfer::trtllm_fp4_block_scale_moe (12/22 profiles, 06:58 in at 43.03 s per profile)" in lead.text


# vllm-project/vllm#31740 (cache_samples/wild/vllm-31740-gb10-torch-...): PyTorch's UserWarning for a GB10
VLLM_31740 = [
    "(EngineCore_DP0 pid=120) /usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:435: UserWarning:",
    "(EngineCore_DP0 pid=120)     Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.",
    "(EngineCore_DP0 pid=120)     Minimum and Maximum cuda capability supported by this version of PyTorch is",
    "(EngineCore_DP0 pid=120)     (8.0) - (12.0)",
    "(EngineCore_DP0 pid=120)",
    "(EngineCore_DP0 pid=120)   queued_call()"
]


def test_pytorchs_capability_warning_is_a_warning_that_names_the_gpu_and_the_range():
    (lead, *_) = verdicts_of(VLLM_31740)
    assert lead.text.startswith("no failure in the text; it shows: PyTorch warned that GPU0 NVIDIA GB10 (cuda capability "
                                "12.1) is outside the range its build supports, (8.0) - (12.0): a warning, not a failure")
    assert lead.evidence[0].line == 2
    assert not lead.fatal


# sgl-project/sglang#16624 (cache_samples/wild/sglang-16624-...): a trtllm-gen kernel named only by its family "_sm100f"
SGLANG_16624 = [
    "```",
    "RuntimeError: Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:258: Error occurred when running GEMM! (numBatches:  256 , GemmMNK:  2   512   7168 , Kernel:  bmm_E2m1_E2m1E2m1_Fp32_t128x8x512u2_s5_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_transOut_schedS_bN_ldgsts_tmaOpt_clmp_swiGlu_dynBatch_sm100f )",
    "",
    "[2026-02-06 21:15:27 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2974, in run_scheduler_process"
]

# sgl-project/sglang#34629 (cache_samples/wild/sglang-34629-...): a stage named only as the other case ("instead of")
SGLANG_34629 = [
    "The presentation differs: instead of non-finite output during startup autotune, the selected tactic here passes warmup and then **silently corrupts serving output**. Decode emits a few correct tokens and then collapses into a run of token id `0` (`!` in this tokenizer) until `max_tokens`:"
]

# flashinfer-ai/flashinfer#2554 (cache_samples/wild/flashinfer-2554-...): log lines outside a fence are not prose
FI_2554 = [
    "## Save configs the first time:",
    "flashinfer/benchmarks$ python3 flashinfer_benchmark.py --routine mm_fp4 --m 1024 --n 7168 --k 4608 --out_dtype bfloat16 --backends trtllm --use_128x4_sf_layout --use_nvfp4 --refcheck --autotune --autotune_cache autotune_cache.json",
    "2026-02-13 16:32:16,790 - INFO - autotuner.py:313 - flashinfer.jit: [Autotuner]: Autotuning process starts ...",
    "2026-02-13 16:32:16,914 - INFO - autotuner.py:320 - flashinfer.jit: [Autotuner]: Autotuning process ends",
    "2026-02-13 16:32:16,920 - INFO - autotuner.py:1002 - flashinfer.jit: [Autotuner]: Saved 11 configs to autotune_cache.json (11 new, 0 from previous config)",
    "[PERF] trtllm_autotune:: median time 0.027 ms; std 0.000 ms; achieved tflops 2473.969 TFLOPs/sec; achieved tb_per_sec 1.227 TB/sec",
    "",
    "",
    "## Same command triggers cache hit and skips autotune.",
    "flashinfer/benchmarks$ python3 flashinfer_benchmark.py --routine mm_fp4 --m 1024 --n 7168 --k 4608 --out_dtype bfloat16 --backends trtllm --use_128x4_sf_layout --use_nvfp4 --refcheck --autotune --autotune_cache autotune_cache.json",
    "2026-02-13 16:32:22,802 - INFO - autotuner.py:1044 - flashinfer.jit: [Autotuner]: Loaded 11 configs from autotune_cache.json",
    "2026-02-13 16:32:22,802 - INFO - autotuner.py:313 - flashinfer.jit: [Autotuner]: Autotuning process starts ..."
]


def test_a_family_kernel_name_gives_the_family_not_one_arch():
    _, (inp,), _ = read_lines(SGLANG_16624)
    assert inp.arch is not None and inp.arch.value == "sm100"  # (the family's base arch, for the catalogs)
    from tiletune.analysis.run_verdicts import _setup_verdict

    v = _setup_verdict(inp, "sm100", "t.txt", inp.ticket)
    assert v is not None and v.text.startswith("setup stated: arch sm100f, a family target (")
    assert "which one this machine is, the text does not say" in v.text


def test_a_stage_named_for_another_case_is_not_this_ones():
    _, (inp,), _ = read_lines(SGLANG_34629)
    assert inp.stated_stage is None  # "instead of non-finite output during startup autotune": not where it failed
    (lead, *_) = verdicts_of(SGLANG_34629)
    assert "at warm-up" not in lead.text and "as the ticket says" not in lead.text


def test_log_lines_outside_a_fence_are_not_a_reports_sentences():
    _, (inp,), _ = read_lines(FI_2554)
    assert inp.reported == ()


# vllm-project/vllm#54225 (cache_samples/wild/vllm-54225-...): a failure stated in hard-wrapped prose, under its heading
VLLM_54225 = [
    "### 🐛 Describe the bug",
    "",
    "On sm_120 (RTX PRO 6000 Blackwell), the **FLASHINFER attention backend** crashes the",
    "engine with a CUDA memory fault when serving an NVFP4 (ModelOpt `MIXED_PRECISION`)",
    "Qwen3.6-35B-A3B with `--kv-cache-dtype fp8`. Switching only",
    "`--attention-backend TRITON_ATTN` — changing nothing else — makes the crash go away.",
    "",
    "The crash is **erratic in timing but reliable in outcome**. Across three separate",
    "FlashInfer runs it killed the engine after 63 requests, 74 requests, and — most",
    "usefully — **on the very first request**, a 16-token prompt:"
]


def test_a_wrapped_failure_sentence_is_quoted_whole_with_its_stage_and_counts():
    (lead, *_) = verdicts_of(VLLM_54225)
    assert lead.text.startswith("the ticket states a failure in words (no log line of it): 'On sm_120 (RTX PRO 6000 "
                                "Blackwell), the FLASHINFER attention backend crashes the engine with a CUDA memory fault "
                                "when serving")
    assert "it reports: 'Across three separate FlashInfer runs it killed the engine after 63 requests, 74 requests" in lead.text
    assert "while serving, as the ticket says ('when serving', line 4)" in lead.text
