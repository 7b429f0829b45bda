# ruff: noqa: E501  (the quoted lines are kept verbatim)
"""What a report found, and where a pasted log with no error stops, lead the person's view (issue 23).

A text that states no failure leads with its findings in its own words, chosen by the structure authors use
to mark them (a summary heading or label, a conclusion marker, a bold clause, a count of outcomes), not with
"it shows: only its setup"; a log with no error leads with what it is and where it stops, with the warnings it
logged, not with "nothing tiletune reads" (tiletune/readers/logs/findings.py).

Every text is quoted verbatim from an artifact of cache_samples/wild (the public source is named above it; the
artifact's artifact.json holds its URL and date); none is typed to fit. Each test asserts the lead (the first
sentence) and its evidence line."""

from __future__ import annotations

from tiletune.analysis.pipeline import build
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import TuningRecord
from tiletune.decode import decode_all
from tiletune.formats import table
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext


def _result(lines: list[str]):
    items = list(logs.parse_lines(enumerate(lines, 1), "t.md", ReadContext().environment()))
    return build(decode_all([i for i in items if isinstance(i, TuningRecord)]),
                 events=[i for i in items if isinstance(i, Event)], inputs=[i for i in items if isinstance(i, InputFacts)])


def _lead(lines: list[str]):
    return _result(lines).verdicts[0]


def _view(lines: list[str]) -> str:
    return " ".join(table.format_inspect(_result(lines), width=400).split())


# https://github.com/turboderp-org/exllamav3/issues/307 (cache_samples/wild/exllamav3-307-rtx-pro-6000-sm120-coop-autotune-not-reproduced/comment.md, lines 1-17; retrieved 2026-09-09)
EXLLAMAV3_307 = [
    "Ran your repro on discrete sm_120 with a working `compute-sanitizer`, since that was the",
    "instrumentation you couldn't get in WSL2. **It does not reproduce**, and a few things I found while",
    "setting it up bear on the diagnosis.",
    "",
    "**Environment**",
    "",
    "```",
    "GPU     RTX PRO 6000 Blackwell Server Edition, cc 12.0, native Linux (not WSL2)",
    "        run at two SM counts via MIG: 46 SMs (1g.24gb) and 94 SMs (2g.48gb)",
    "torch   2.13.0+cu130, CUDA 13.0; compute-sanitizer from CUDA 13.1",
    "repro   your script verbatim, plus an `if __name__ == \"__main__\":` guard",
    "```",
    "",
    "Six stages at each SM count: K=8, K=4, `CUDA_LAUNCH_BLOCKING=1`, memcheck, synccheck, and",
    "memcheck+`CUDA_LAUNCH_BLOCKING=1`. **All twelve passed. memcheck and synccheck both report",
    "`ERROR SUMMARY: 0 errors`.** Each stage used a fresh `EXLLAMAV3_TUNE_CACHE`, because a warm cache",
    "short-circuits `launch_locked` and never enters `tune()` at all.",
]

# https://github.com/sgl-project/sglang/pull/36806 (cache_samples/wild/sglang-36806-dual-gb10-sm121-sparse-decode-validation/comment.md, lines 1-8; retrieved 2026-08-28)
SGLANG_36806 = [
    "## Dual DGX Spark / GB10 (SM121), TP=2 follow-up",
    "",
    "I ran an end-to-end two-node validation after the functional change in this PR (the PR merged while the run was in progress). The result supports keeping the capability check **exactly SM120** and not widening it to all SM12x devices.",
    "",
    "### Environment",
    "",
    "- 2x NVIDIA GB10, one GPU per node, TP=2; both devices report compute capability `(12, 1)` (`is_sm120() == False`, `is_sm121() == True`)",
    "- `lmsysorg/sglang:qwen38flashnext` (aarch64), PyTorch `2.13.0+cu130`, CUDA 13.0, driver 580.173.02, FlashInfer 0.6.17",
]

# https://ai-muninn.com/en/blog/dgx-spark-nvfp4-trap-gb10-fp8-wins (cache_samples/wild/blog-ai-muninn-gb10-sm121-nvfp4-vs-fp8-benchmark/page.md, lines 1-17; retrieved: see its artifact.json)
MUNINN_TLDR = [
    "DGX Spark · part 19",
    "[Benchmark] NVFP4 Is a Trap on GB10: FP8 Wins by 32% (vLLM + SGLang Tested)",
    "❯ cat --toc",
    "- White-Box Version: Why Smaller Numbers Aren't Always Faster",
    "- Preface",
    "- 40.8 vs 53.8 tok/s: FP8 Beats NVFP4 by 32%",
    "- Root Cause: SM121 Is Missing a Hardware Instruction",
    "- SGLang: Three Attempts, Three Failures",
    "- Driver 580.142: A Free +4% for FP8",
    "- What Was Gained",
    "- Most Time-Consuming: SGLang Compatibility Chain",
    "- Transferable Diagnostic: Check Compute Capability Before Quantization Format",
    "- Universal Pattern",
    "- Conclusion",
    "TL;DR",
    "NVFP4 on DGX Spark's GB10 (SM121) is 32% slower than FP8 — not faster. Root cause: SM121 lacks the cvt.e2m1x2 hardware instruction that SM120 (RTX 5090) and SM100 (B200) have natively. Qwen 3.6-35B-A3B FP8 on vLLM hits 53.8 tok/s (driver 580.142). NVFP4 on vLLM falls back to Marlin dequant at 40.8 tok/s. SGLang NVFP4 crashes entirely. This is silicon — no driver update fixes it.",
    "White-Box Version: Why Smaller Numbers Aren't Always Faster",
]

# https://github.com/antirez/ds4/pull/716 (cache_samples/wild/ds4-716-jetson-thor-sm110-bench-gb10-in-passing/pr.md, lines 1-20; retrieved 2026-08-06)
DS4_716 = [
    "Benchmark CSV + SVG for hardware not yet in speed-bench, per the README invitation.",
    "",
    "**Machine:** NVIDIA Jetson AGX Thor devkit (T5000, Blackwell sm_110, 20 SMs, 14-core Neoverse-V3AE, 128 GB LPDDR5X unified @ 273 GB/s, JetPack 7.2 / L4T r39.2, CUDA 13.2, MAXN power mode).",
    "",
    "**Engine:** built from b030961 (the exact base of this branch) with `make cuda CUDA_ARCH=sm_110`. Builds clean; CUDA backend self-reports \"NVIDIA Thor (sm_110)\". Complements #109 which documents the same build flag.",
    "",
    "**Model:** `DeepSeek-V4-Flash-IQ2XXS-w2Q2K-AProjQ8-SExpQ8-OutQ8-chat-v2-imatrix-0731.gguf` (q2-imatrix, 80.76 GiB).",
    "",
    "**Command** (canonical sweep from speed-bench/README):",
    "",
    "```",
    "./ds4-bench -m <model> --cuda \\",
    "  --prompt-file speed-bench/promessi_sposi.txt \\",
    "  --ctx-start 2048 --ctx-max 65536 --step-incr 2048 --gen-tokens 128 \\",
    "  --csv speed-bench/thor.csv",
    "```",
    "",
    "**Summary:** prefill 437 t/s @2k tapering to 359 @64k; generation 13.1 t/s @2k to 9.9 @64k. Relative to gb10.csv (same-era engine): ~50% of GB10 prefill (tracks the 20-vs-~48 SM ratio) and ~72% of its generation (identical 273 GB/s memory bandwidth). Values reproduced within ~2% across reboots.",
    "",
    "Notes: cudaHostRegister is unsupported on Jetson (message only, harmless). `nvpmodel` MAXN with clocks verified pegged under load via devfreq.",
]

# https://github.com/flashinfer-ai/flashinfer/issues/2252 (cache_samples/wild/flashinfer-2252-dgx-spark-vllm-flashinfer-attention-load-log/server.log, lines 1-12; retrieved: see its artifact.json)
FLASHINFER_2252 = [
    "```",
    "(EngineCore_DP0 pid=9526) INFO 12-20 20:07:15 [parallel_state.py:1210] world_size=1 rank=0 local_rank=0 distributed_init_method=tcp://172.16.0.2:37065 backend=nccl",
    "(EngineCore_DP0 pid=9526) INFO 12-20 20:07:15 [parallel_state.py:1418] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0",
    "(EngineCore_DP0 pid=9526) INFO 12-20 20:07:16 [gpu_model_runner.py:3619] Starting to load model nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16...",
    "(EngineCore_DP0 pid=9526) INFO 12-20 20:07:16 [layer.py:373] Enabled separate cuda stream for MoE shared_experts",
    "(EngineCore_DP0 pid=9526) /home/spark/.vllm/lib/python3.12/site-packages/tvm_ffi/_optional_torch_c_dlpack.py:174: UserWarning: Failed to JIT torch c dlpack extension, EnvTensorAllocator will not be enabled.",
    "(EngineCore_DP0 pid=9526) We recommend installing via `pip install torch-c-dlpack-ext`",
    "(EngineCore_DP0 pid=9526)   warnings.warn(",
    "(EngineCore_DP0 pid=9526) INFO 12-20 20:07:16 [cuda.py:315] Using AttentionBackendEnum.FLASHINFER backend.",
    "Loading safetensors checkpoint shards:   0% Completed | 0/13 [00:00<?, ?it/s]",
    "Loading safetensors checkpoint shards:   8% Completed | 1/13 [00:25<05:02, 25.19s/it]",
    "Loading safetensors checkpoint shards:  15% Completed | 2/13 [00:50<04:37, 25.24s/it]",
]

# https://github.com/vllm-project/vllm/issues/26381 (cache_samples/wild/vllm-26381-cuda13-startup-log-ends-before-autotune/server.log, lines 1-12; retrieved: see its artifact.json)
VLLM_26381 = [
    "```",
    "(EngineCore_DP0 pid=4039410) W1007 17:36:26.725000 4039410 torch/utils/cpp_extension.py:2425] If this is not desired, please set os.environ['TORCH_CUDA_ARCH_LIST'] to specific architectures.",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0",
    "(EngineCore_DP0 pid=4039410) INFO 10-07 17:36:27 [parallel_state.py:1208] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0",
    "(EngineCore_DP0 pid=4039410) INFO 10-07 17:36:27 [topk_topp_sampler.py:55] Using FlashInfer for top-p & top-k sampling.",
    "(EngineCore_DP0 pid=4039410) INFO 10-07 17:36:27 [gpu_model_runner.py:2721] Starting to load model redhatai/meta-Llama-3.1-8B-FP8...",
    "(EngineCore_DP0 pid=4039410) INFO 10-07 17:36:28 [gpu_model_runner.py:2753] Loading model from scratch...",
]

# https://github.com/vllm-project/vllm/issues/57423 (cache_samples/wild/vllm-57423-autotune-cache-rank0-collect-env-head/ticket.md, lines 1-38; retrieved 2026-09-17)
VLLM_57423 = [
    "### Your current environment",
    "",
    "<details>",
    "<summary>The output of <code>python collect_env.py</code></summary>",
    "",
    "```text",
    "Collecting environment information...",
    "==============================",
    "        System Info",
    "==============================",
    "OS                           : Ubuntu 24.04.4 LTS (x86_64)",
    "GCC version                  : (Ubuntu 13.3.0-6ubuntu2~24.04.1) 13.3.0",
    "Clang version                : Could not collect",
    "CMake version                : Could not collect",
    "Libc version                 : glibc-2.39",
    "",
    "==============================",
    "       PyTorch Info",
    "==============================",
    "PyTorch version              : 2.13.0+cu130",
    "Is debug build               : False",
    "CUDA used to build PyTorch   : 13.0",
    "ROCM used to build PyTorch   : N/A",
    "XPU used to build PyTorch    : N/A",
    "",
    "==============================",
    "      Python Environment",
    "==============================",
    "Python version               : 3.12.3 (main, Jun 15 2026, 23:46:41) [GCC 13.3.0] (64-bit runtime)",
    "Python platform              : Linux-5.14.0-284.118.1.el9_2.x86_64-x86_64-with-glibc2.39",
    "",
    "==============================",
    "       CUDA / GPU Info",
    "==============================",
    "Is CUDA available            : True",
    "CUDA runtime version         : 13.0.88",
    "CUDA_MODULE_LOADING set to   :",
    "GPU models and configuration :",
]

# https://github.com/lightseekorg/tokenspeed/pull/820 (cache_samples/wild/tokenspeed-820-b200-flashinfer-autotune-window-measured/pr.md, lines 1-27; retrieved 2026-07-27)
TOKENSPEED_820 = [
    "## Summary",
    "",
    "Opens a single autotune window during engine startup — one dummy prefill at",
    "`chunked_prefill_size` tokens, before CUDA-graph capture — and makes it the",
    "**only** place kernel tuning can happen. Serving is a pure cache-lookup /",
    "heuristic-fallback path by construction.",
    "",
    "### Changes",
    "",
    "- **`ops/tuning.py`**: `autotune()` context manager + `set/get_autotune_max_num_tokens()`;",
    "  `ModelExecutor._autotune()` runs the dummy prefill under it. Flashinfer skips",
    "  cache hits, so shapes seeded from a pre-swept table cost nothing.",
    "- **`nvfp4_gemm_swiglu_nvfp4_quant`** (CuteDSL) joins the autotune framework:",
    "  12 `(mma_tiler, cluster)` tuple tactics with a `TunableRunner`, replacing the",
    "  fixed heuristic.",
    "- **Cleanup**: drop `autotune_frozen`/`freeze_autotuning` (a switch to suppress",
    "  serving-time tuning admits serving-time tuning is possible — it no longer is),",
    "  the MXFP4 SiTU lazy in-situ tuning pass (carried the TP rank-divergence",
    "  deadlock hazard the window removes), and the tuning-cache-active flag.",
    "  Pre-swept table loads become fire-and-forget cache seeding. The sweeper and",
    "  all MoE ops now key buckets from `get_autotune_max_num_tokens()`.",
    "",
    "### Measured (B200)",
    "",
    "- MiniMax-M3: MXFP8 GEMM **1.22×** overall / **1.68×** decode; NVFP4 MoE **1.11×**",
    "  (tuned vs. default tactic, nsys kernel-level, cold L2).",
    "",
]

# https://it.cwl.best/PrimitiveContext/blackwell (cache_samples/wild/blog-primitivecontext-blackwell-lab-sm120-sm121-status/page.md, lines 1-75; retrieved: see its artifact.json)
PRIMITIVECONTEXT = [
    "Blackwell LLM Deployment Lab",
    "49 benchmarked | 14 working | 29 pending | 17 failed — across 3 GPU architectures",
    "Canonical Docs and Public Attribution",
    "README.md is the canonical root document and the only root doc intended for publication.",
    "Local mirrors CLAUDE.md, AGENTS.md, and AGENT.md are symlinks to README.md and are git-ignored.",
    "Recreate local mirrors with ./scripts/sync_local_docs.sh.",
    "Public attribution identity for this repo is dev@primitivecontext.com.",
    "Local git hooks (in .githooks/) enforce attribution and block public AI co-author tags.",
    "Work is executed by a large agent swarm (up to ~20 concurrent) in a full-freedom dev sandbox.",
    "Research tools are valuable but sometimes stale or contradictory; agent triage can diverge.",
    "Timeline estimates will be laughed at. Work is performed right now, with agents scaled appropriately.",
    "Target",
    "Chip",
    "Products",
    "Memory",
    "SM100",
    "B200",
    "Datacenter Blackwell",
    "TMEM + HBM",
    "SM120",
    "GB202",
    "RTX 5090, RTX Pro 6000",
    "96 GB GDDR7",
    "SM121",
    "GB10",
    "DGX Spark",
    "128 GB unified LPDDR5x",
    "GPU",
    "Arch",
    "Count",
    "RTX Pro 6000 (96 GB GDDR7)",
    "SM120",
    "46 deployments",
    "DGX Spark (128 GB LPDDR5x)",
    "SM121",
    "41 deployments",
    "RTX 4090 (24 GB GDDR6X)",
    "SM89",
    "22 deployments",
    "Hardware: SM100 vs SM120/SM121",
    "Capability",
    "SM100",
    "SM120/SM121",
    "Impact",
    "Tensor Memory",
    "256 KB TMEM/SM",
    "None",
    "Operands must live in registers",
    "TMA Multicast",
    "Yes",
    "Disabled",
    "Cluster shape locked to 1×1×1",
    "Instruction Set",
    "tcgen05.mma",
    "mma.sync.aligned.block_scale",
    "Different memory models, layouts incompatible",
    "Operand Location",
    "SMEM/TMEM",
    "Registers",
    "Register pressure is the bottleneck",
    "Bottom line : SM100 kernels will not run on SM120/SM121. Code compiled for sm_100a traps on consumer Blackwell.",
    "Platforms: vLLM vs TensorRT-LLM vs Custom CUTLASS",
    "Platform",
    "SM120 NVFP4 Status",
    "Limitation",
    "vLLM",
    "Partial",
    "SM120 FP4 kernel detection fails (#31085), falls back to Marlin (40-50% perf loss)",
    "TensorRT-LLM",
    "Partial",
    "NVFP4 KV cache support requested but not shipped (#10241)",
    "SGLang",
    "Blocked",
    "All attention backends fail for MoE on SM120 (triton SMEM overflow)",
    "Custom CUTLASS",
]

# https://github.com/NVIDIA/TensorRT-LLM/issues/8179 (cache_samples/wild/trtllm-8179-rtx-pro-6000-gpt-oss-trtllm-serve-last-lines/ticket.md, lines 1-31; retrieved 2025-10-07)
TRTLLM_8179 = [
    "### System Info",
    "",
    "Testing gpt-oss-120b on RTX 6000 PRO ",
    "",
    "**Version Information:**",
    "  - Branch: `main`",
    "  - Commit: `2b8722b67`",
    "",
    "```",
    "cd TensorRT-LLM/docker",
    "make release_build CUDA_ARCHS=\"120-real\"",
    "```",
    "",
    "`docker run -it --rm -v /mnt:/mnt/ --ipc=host --shm-size=8g --ulimit memlock=-1 --ulimit stack=67108864  --gpus all --network host  docker.io/tensorrt_llm/release:latest  bash",
    "`",
    "",
    "inside docker: ",
    "",
    "`CUDA_VISIBLE_DEVICES=0,1  trtllm-serve /mnt/gpt-oss-120b --host 0.0.0.0 --port 4997",
    "`",
    "last lines:",
    "",
    "```",
    "[10/07/2025-18:33:41] [TRT-LLM] [I] Finished prefetching /mnt/gpt-oss-120b/model-00002-of-00014.safetensors.",
    "Loading safetensors weights in parallel: 100%|██████████| 15/15 [00:00<00:00, 765.01it/s]",
    "Loading weights: 100%|██████████| 801/801 [00:15<00:00, 51.07it/s]",
    "Model init total -- 20.72s",
    "[10/07/2025-18:33:58] [TRT-LLM] [I] max_seq_len is not specified, using inferred value 131072",
    "[10/07/2025-18:33:58] [TRT-LLM] [I] Using Sampler: TorchSampler",
    "[10/07/2025-18:33:58] [TRT-LLM] [W] Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and 8224 with free memory 7.2676849365234375 of total memory 23.742691040039062, respectively). The smaller value will be used.",
    "",
]


# ----- findings ------------------------------------------------------------------------------------------------


def test_bold_clauses_are_the_findings_of_a_comment_that_reports_no_failure():
    v = _lead(EXLLAMAV3_307)
    assert v.text.startswith("no failure in the text; what it reports, in its words: 'It does not reproduce, and a few "
                             "things I found while setting it up bear on the diagnosis.' (line 2); 'All twelve passed. "
                             "memcheck and synccheck both report `ERROR SUMMARY: 0 errors`.' (line 15)")
    assert "only its setup" not in v.text and "short-circuits" not in v.text  # (not the tail of a sentence about caches)
    assert (v.evidence[0].line, v.evidence[0].how) == (2, "stated")
    assert v.evidence[1].words.startswith("All twelve passed.")


def test_a_sentence_opening_with_a_conclusion_marker_is_the_finding_after_what_the_text_says_first():
    v = _lead(SGLANG_36806)
    assert v.text.startswith("no failure in the text; what it says first: 'I ran an end-to-end two-node validation after "
                             "the functional change in this PR (the PR merged while the run was in progress).' (line 3); "
                             "what it reports, in its words: 'The result supports keeping the capability check exactly "
                             "SM120 and not widening it to all SM12x devices.' (line 3)")
    assert v.evidence[0].line == 3 and v.evidence[0].words.startswith("The result supports")


def test_the_paragraph_under_a_tldr_heading_of_a_flattened_page_is_kept_whole_and_stops_at_the_next_title():
    v = _lead(MUNINN_TLDR)
    assert v.text.startswith("no failure in the text; what it reports, in its words: 'NVFP4 on DGX Spark's GB10 (SM121) "
                             "is 32% slower than FP8 — not faster. Root cause: SM121 lacks the cvt.e2m1x2 hardware")
    assert "40.8 tok/s" in v.text and "53.8 tok/s" in v.text and "SGLang NVFP4 crashes entirely." in v.text
    assert "White-Box Version" not in v.text  # (the next title line is not the summary)
    assert v.evidence[0].line == 16 and v.evidence[0].how == "stated"


def test_a_bold_summary_label_opens_the_authors_summary_paragraph():
    v = _lead(DS4_716)
    assert v.text.startswith("no failure in the text; what it says first: 'Benchmark CSV + SVG for hardware not yet in "
                             "speed-bench, per the README invitation.' (line 1); what it reports, in its words: 'Summary: "
                             "prefill 437 t/s @2k tapering to 359 @64k; generation 13.1 t/s @2k to 9.9 @64k. Relative to "
                             "gb10.csv (same-era engine): ~50% of GB10 prefill")
    assert v.evidence[0].line == 18 and v.evidence[0].words.startswith("Summary: prefill 437 t/s")
    assert "**" not in v.text


# ----- logs with no error: what they are and where they stop ---------------------------------------------------


def test_a_vllm_start_up_log_with_no_error_says_where_it_stops_and_the_warning_it_went_on_after():
    v = _lead(FLASHINFER_2252)
    assert v.text.startswith("no failure line in the text (no error line, no autotuner line); it is a vLLM log of 11 lines "
                             "that stops at line 12: 'Loading safetensors checkpoint shards: 15% Completed | 2/13 "
                             "[00:50<04:37, 25.24s/it]'; warnings it logged, and went on: 'UserWarning: Failed to JIT torch "
                             "c dlpack extension, EnvTensorAllocator will not be enabled.' (line 6)")
    assert "nothing tiletune reads" not in v.text
    assert [e.line for e in v.evidence] == [12, 6]
    view = _view(FLASHINFER_2252)
    assert "log lines naming FlashInfer: 'Using AttentionBackendEnum.FLASHINFER backend.' (line 9)" in view


def test_the_line_before_the_stop_is_shown_when_it_says_something_else():
    v = _lead(VLLM_26381)
    assert v.text.startswith("no failure line in the text (no error line, no autotuner line); it is a vLLM log of 11 lines "
                             "that stops at line 12: 'Loading model from scratch...'")
    assert v.evidence[0].line == 12 and v.evidence[0].words.endswith("Loading model from scratch...")
    view = _view(VLLM_26381)
    assert "the line before it: 'Starting to load model redhatai/meta-Llama-3.1-8B-FP8...' (line 11)" in view
    assert "log lines naming FlashInfer: 'Using FlashInfer for top-p & top-k sampling.' (line 10)" in view


def test_an_environment_report_shows_only_its_setup_and_versions_and_its_last_line():
    v = _lead(VLLM_57423)
    assert v.text.startswith("no failure line in the text (no error line, no autotuner line); it shows only its setup and "
                             "versions (PyTorch 2.13.0+cu130, CUDA runtime 13.0.88); it is a 'key : value' report of 29 "
                             "lines, its last line 38: 'GPU models and configuration :'")
    assert v.evidence[0].line == 38


def test_a_tensorrt_llm_log_that_stops_on_a_warning_says_so_once():
    v = _lead(TRTLLM_8179)
    assert "it is a TensorRT-LLM log of 7 lines that stops at line 30, a warning: 'Both free_gpu_memory_fraction and " \
           "max_tokens are set (to 0.8999999761581421" in v.text
    assert v.text.count("free_gpu_memory_fraction") == 1
    assert v.evidence[0].line == 30 and "[TRT-LLM] [W]" in v.evidence[0].words
    # (said in the lead, its evidence line and where the paste stops; not again as a warning it went on after)
    assert _view(TRTLLM_8179).count("Both free_gpu_memory_fraction and max_tokens are set") == 3


# ----- a report that also states failures; a failure named as a risk ---------------------------------------------


def test_a_prs_description_and_its_measured_section_lead_and_a_hazard_it_removes_is_no_failure():
    v = _lead(TOKENSPEED_820)
    assert v.text.startswith("no failure in the text; what it says first: 'Opens a single autotune window during engine "
                             "startup — one dummy prefill at `chunked_prefill_size` tokens, before CUDA-graph capture — and "
                             "makes it the only place kernel tuning can happen.' (line 3); what it reports, in its words: "
                             "'MiniMax-M3: MXFP8 GEMM 1.22× overall / 1.68× decode; NVFP4 MoE 1.11× (tuned vs. default "
                             "tactic, nsys kernel-level, cold L2).' (line 25)")
    assert "failure in words" not in v.text and "Cleanup" not in v.text  # ("the deadlock hazard the window removes")
    assert v.evidence[0].line == 25 and v.evidence[0].how == "stated"


def test_a_status_page_says_its_counts_and_bottom_line_after_the_failures_it_states():
    v = _lead(PRIMITIVECONTEXT)
    assert v.text.startswith("the ticket states a failure in words (no log line of it): 'SM120 FP4 kernel detection fails "
                             "(#31085), falls back to Marlin (40-50% perf loss)' (line 68)")
    assert "; its own summary, in its words: '49 benchmarked | 14 working | 29 pending | 17 failed — across 3 GPU " \
           "architectures' (line 2); 'Bottom line : SM100 kernels will not run on SM120/SM121.' (line 61)" in v.text
    assert "Datacenter Blackwell TMEM" not in v.text  # (a table flattened to one cell a line is not a sentence)
    assert (v.evidence[0].line, v.evidence[1].line) == (68, 2)


def test_a_page_naming_several_machines_archs_takes_none_of_them_as_this_machines():
    items = list(logs.parse_lines(enumerate(PRIMITIVECONTEXT, 1), "t.md", ReadContext().environment()))
    notes = [i.message for i in items if hasattr(i, "message")]
    assert any("the text names the archs of several machines (sm89, sm100, sm120, sm121), not one machine's: no arch is "
               "taken for this text" in n for n in notes)
    assert not any("arch clues disagree" in n for n in notes)
    (inp,) = [i for i in items if isinstance(i, InputFacts)]
    assert inp.arch is None


# ----- arch from a GPU named as written and from a build's arch list ---------------------------------------------


def test_a_gpu_written_rtx_6000_pro_is_sm120_and_the_command_and_commit_are_stated():
    r = _result(TRTLLM_8179)
    setup = next(v for v in r.verdicts if v.text.startswith("setup stated"))
    assert setup.text.startswith("setup stated: arch sm120 ('RTX 6000 PRO', a GPU the text names, line 3)")
    assert setup.evidence[0].line == 3 and setup.evidence[0].words == "Testing gpt-oss-120b on RTX 6000 PRO"
    view = _view(TRTLLM_8179)
    assert "commands it runs: 'docker run -it --rm" in view
    assert "'trtllm-serve /mnt/gpt-oss-120b --host 0.0.0.0 --port 4997' (line 19)" in view
    assert "commit 2b8722b67 (line 7)" in view


def test_a_builds_single_arch_list_is_a_build_flag_clue():
    block = TRTLLM_8179[8:12]  # the build lines alone: ``` / cd TensorRT-LLM/docker / make release_build CUDA_ARCHS="120-real" / ```
    setup = next(v for v in _result(block).verdicts if v.text.startswith("setup stated"))
    assert setup.text.startswith("setup stated: arch sm120 ('CUDA_ARCHS=\"120-real\"', a build flag, line 3)")
    assert setup.evidence[0].line == 3


# Anemll/dspark-vllm-gx10 (cache_samples/wild/dspark-gx10-gb10-vllm-moe-autotune-glued-tqdm-saved-60/head.log, line 2;
# https://github.com/Anemll/dspark-vllm-gx10, 2026-07-18): the message of a vLLM warning, as a sentence of prose
DSPARK_AVOID = ("CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph "
                "memory is not accounted for during KV cache allocation, which may require lowering "
                "--gpu-memory-utilization to avoid OOM. Consider re-enabling it (the default as of v0.21.0) and increasing "
                "--gpu-memory-utilization from 0.7800")


def test_a_failure_named_as_a_risk_is_not_a_failure_the_text_states():
    from tiletune.readers.logs.ticket import TicketReader

    for lines in ([DSPARK_AVOID], TOKENSPEED_820):
        t = TicketReader()
        for i, line in enumerate(lines, 1):
            t.feed(i, line)
        assert t.failure_lines() == []  # ("to avoid OOM", "the deadlock hazard the window removes")
