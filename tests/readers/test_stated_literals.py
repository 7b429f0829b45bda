# ruff: noqa: E501  (the quoted lines are kept verbatim)
"""The facts a text states reach the person's view whole (issue 23): errors joined over the author's line
wraps and kept to their sentence's end, the ops, frames, files, tiles, shared-memory bytes, GPUs, arch tokens
and versions it names, as written, in a "Stated in the text" block of every human view and in the JSON.

Every text is quoted verbatim from an artifact of cache_samples/wild (a public ticket, named above it; the
artifact's artifact.json holds its URL and date); none is typed to fit."""

from __future__ import annotations

import json
import re

from tiletune.analysis.pipeline import build
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import TuningRecord
from tiletune.decode import decode_all
from tiletune.formats import markdown, report, table
from tiletune.formats.json_out import format_inspect as json_inspect
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext


def _result(lines: list[str], source: str = "t.txt"):
    items = list(logs.parse_lines(enumerate(lines, 1), source, ReadContext().environment()))
    events = [i for i in items if isinstance(i, Event)]
    inputs = [i for i in items if isinstance(i, InputFacts)]
    records = [i for i in items if isinstance(i, TuningRecord)]
    return build(decode_all(records), events=events, inputs=inputs)


def _stated(lines: list[str]) -> str:
    """The default view's "Stated in the text" block, its wrapped lines joined."""
    text = table.format_inspect(_result(lines), width=400)
    block = text.split("Stated in the text", 1)[1].split("\n\n", 1)[0]
    return " ".join(block.split())


def _lead(lines: list[str]) -> str:
    return _result(lines).verdicts[0].text


# QwenLM/FlashQLA#4 (cache_samples/wild/flashqla-4-gb10-sm121a-dynamic-smem-196608-prose): the author wrapped the error
FLASHQLA_4 = [
    "i get an error in the prepare_h kernel:",
    "",
    "tvm.error.InternalError: Failed to set the allowed dynamic shared",
    "memory size to 196608 [192 KB]",
    "",
    "GB10 specs (sm_121a): maxSharedMemoryPerBlockOptin = 99 KB (101376 bytes)",
]


def test_an_error_wrapped_by_its_author_is_joined_in_the_lead_and_the_stated_block():
    lead = _lead(FLASHQLA_4)
    assert "Failed to set the allowed dynamic shared memory size to 196608 [192 KB]" in lead
    stated = _stated(FLASHQLA_4)
    assert "error: 'tvm.error.InternalError: Failed to set the allowed dynamic shared memory size to 196608 [192 KB]' (line 3)" in stated
    assert "prepare_h kernel (line 1)" in stated
    assert "101376 bytes (line 6)" in stated and "99 KB (line 6)" in stated and "196608" in stated
    assert "arch tokens named: sm_121a (line 6)" in stated


# flashinfer-ai/flashinfer#4157 (cache_samples/wild/flashinfer-4157-b200-bf16-moe-autotune-illegal-address)
FI_4157 = [
    "**Symptom:** engine warmup crashes with `cudaErrorIllegalAddress` during the",
    "AutoTuner sweep for `flashinfer::trtllm_bf16_moe`. Reproduced on vLLM 0.24,",
    "0.26.0, and nightly (2026-07-25).",
]


def test_an_error_sentence_cut_at_a_wrap_keeps_its_evidence_to_the_sentence_end():
    res = _result(FI_4157)
    (ev,) = [e for e in res.events if e.kind == "cuda_error"]
    assert ev.text == ("**Symptom:** engine warmup crashes with `cudaErrorIllegalAddress` during the AutoTuner sweep "
                       "for `flashinfer::trtllm_bf16_moe`.")
    view = table.format_inspect(res, width=400)
    assert "during the AutoTuner sweep for `flashinfer::trtllm_bf16_moe`." in view
    assert "ops, kernels and runners: flashinfer::trtllm_bf16_moe (line 2)" in _stated(FI_4157)


# vllm-project/vllm#46861 (cache_samples/wild/vllm-46861-gb200-aarch64-trtllm-moe-accelerator-error): one long line
VLLM_46861 = [
    "On aarch64 / NVIDIA Grace (B200/GB200), launching `Qwen/Qwen3.6-35B-A3B` (bf16) with `--moe-backend flashinfer_trtllm` crashes during engine-core init: the flashinfer fused-MoE autotune step faults inside cudagraph capture while tuning `flashinfer::trtllm_bf16_moe`, raising `torch.AcceleratorError: CUDA error: an illegal memory access was encountered`. The same config and image boot and serve correctly on x86_64, so this is arch-specific. Workaround is `--moe-backend triton` (or unset to let vLLM auto-select).",
]


def test_a_quoted_cuda_error_ends_at_its_code_span_and_keeps_its_type():
    lead = _lead(VLLM_46861)
    # (the error ends at its code span; the op the same sentence names follows it: run_verdicts' "next to it")
    assert "torch.AcceleratorError: CUDA error: an illegal memory access was encountered (the op named next to it: " \
           "flashinfer::trtllm_bf16_moe, line 1);" in lead
    assert "x86_64" not in lead  # (the next sentences are not the error)
    res = _result(VLLM_46861)
    (ev,) = [e for e in res.events if e.kind == "cuda_error"]
    assert ev.text.endswith("an illegal memory access was encountered`. ...") and len(ev.text) <= 160
    assert "flashinfer::trtllm_bf16_moe" in _stated(VLLM_46861)


# flashinfer-ai/flashinfer#3344 (cache_samples/wild/flashinfer-3344-thor-sm110a-sm100f-kernel-names-prose)
FI_3344 = [
    "On NVIDIA Jetson Thor (`compute capability (11, 0)`, CUDA 13.0), loading a hybrid Mamba/Gated-DeltaNet model such as `Qwen/Qwen3.5-27B-FP8` or any Qwen3-Next variant through vLLM crashes during the model's first forward pass. The visible failure is a `CUBLAS_STATUS_EXECUTION_FAILED` on a plain BF16 `torch.nn.functional.linear` call, but the underlying cause is a kernel-coverage gap in flashinfer: ",
    "",
    "When the dispatcher selects an sm100f cubin on Thor, the cubin's device-side architecture check fails, prints `\"This kernel only supports sm100f.\"` once per thread (hundreds of times in the log), no-ops the launch, and leaves the CUDA context in a faulted state. The next CUDA call — typically an unrelated cuBLAS matmul — surfaces the failure.",
]


def test_status_names_and_quoted_failures_of_prose_are_stated_as_written():
    stated = _stated(FI_3344)
    assert "error: 'CUBLAS_STATUS_EXECUTION_FAILED' (line 1)" in stated
    assert "error: 'This kernel only supports sm100f.' (line 3)" in stated
    assert "versions: CUDA 13.0 (line 1)" in stated


# vllm-project/vllm#34470 (cache_samples/wild/vllm-34470-jetson-thor-sm110a-collect-env): collect_env's columns
VLLM_34470 = [
    "PyTorch version              : 2.10.0+cu130",
    "Is debug build               : False",
    "CUDA used to build PyTorch   : 13.0",
    "CUDA runtime version         : 13.0.48",
    "GPU models and configuration : GPU 0: NVIDIA Thor",
    "Nvidia driver version        : 580.00",
]


def test_versions_are_echoed_as_written_and_a_build_line_is_not_a_pytorch_version():
    stated = _stated(VLLM_34470)
    assert "PyTorch 2.10.0+cu130 (line 1)" in stated
    assert "13.0.48 (line 4)" in stated and "580.00" in stated
    assert "PyTorch 13.0" not in stated
    assert "GPUs named: NVIDIA Thor (line 5)" in stated


# flashinfer-ai/flashinfer#3134 (cache_samples/wild/flashinfer-3134-sm110-thor-unsupported-tile-jit-path)
FI_3134 = [
    "```",
    "RuntimeError: Unsupported tile shape config 256256128 for MoE gemm.",
    "  at flashinfer/.../moe_gemm_template_dispatch_tma_ws.h:486",
    "```",
    "",
    "Cache path is `~/.cache/flashinfer/0.6.8/110a/cached_ops/fused_moe_100/fused_moe_100.so`, so on SM110 the JIT falls back to the SM100 MoE cubin and this time the **tile-selection dispatcher** rejects `(256, 256, 128)`, one dispatch level up from the cluster-shape rejection you hit (`dispatchM",
]


def test_a_tile_written_as_a_tuple_is_shown_in_x_notation_with_its_words_and_the_file_line_kept():
    stated = _stated(FI_3134)
    assert "tiles: 256x256x128 (written '(256, 256, 128)') (line 6)" in stated
    assert "moe_gemm_template_dispatch_tma_ws.h:486 (line 3)" in stated
    assert "error: 'RuntimeError: Unsupported tile shape config 256256128 for MoE gemm.' (line 2)" in stated
    assert "fused_moe_100" in stated


# NVIDIA/cutlass#3144 (cache_samples/wild/cutlass-3144-gb10-moe-grouped-gemm-smem-102400)
CUTLASS_3144 = [
    "MoE grouped GEMM with FP4 (`__nv_fp4_e2m1`), tile `CtaShape128x256x64B`:",
    "",
    "```",
    "MoE grouped GEMM requires 102400 bytes shared memory but device supports 101376",
    "(cutlass_kernel_file_gemm_grouped_sm120_M128_BS_group2.generated.cu:39)",
    "```",
    "",
    "102400 bytes (100 KiB) vs 101376 bytes (99 KiB) -- exactly 1 KiB over.",
]


def test_a_kernel_file_keeps_its_line_number_and_the_bytes_are_stated():
    stated = _stated(CUTLASS_3144)
    assert "cutlass_kernel_file_gemm_grouped_sm120_M128_BS_group2.generated.cu:39 (line 5)" in stated
    assert "102400 bytes (line 4)" in stated and "101376" in stated
    assert "sm120 (in a kernel name, line 5)" in stated


# sgl-project/sglang#17494 (cache_samples/wild/sglang-17494-sm120-w4a8-moe-cut-traceback-no-error-line)
SGLANG_17494 = [
    "```",
    "    hidden_states, residual = layer(",
    "                              ^^^^^^",
    '  File "/opt/app/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1775, in _wrapped_call_impl',
    "    return self._call_impl(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/opt/app/.venv/lib/python3.12/site-packages/sglang/srt/models/deepseek_v2.py", line 2410, in forward',
    "    hidden_states = self.mlp(",
    "                    ^^^^^^^^^",
    '  File "/opt/app/.venv/lib/python3.12/site-packages/sglang/srt/models/deepseek_v2.py", line 569, in forward',
    "    return self.forward_normal(",
    "           ^^^^^^^^^^^^^^^^^^^^",
    '  File "/opt/app/.venv/lib/python3.12/site-packages/sglang/srt/models/deepseek_v2.py", line 667, in forward_normal',
]


def test_a_cut_traceback_names_its_frames_and_where_it_is_cut():
    stated = _stated(SGLANG_17494)
    assert ("traceback frames, outermost first (the paste is cut after the last frame: no exception line follows): "
            "deepseek_v2.py:2410 in forward -> deepseek_v2.py:569 in forward -> deepseek_v2.py:667 in forward_normal") in stated
    assert "module.py" not in stated  # (torch's module plumbing is not the application's frames)


# www.stepcodex.com (cache_samples/wild/blog-stepcodex-sm120-kv-cache-nvfp4-first-request-crash): a page kept as one line
STEPCODEX = [
    "File \".../vllm/v1/attention/backends/flashinfer.py\", line 1170, in build prefill_wrapper.plan(...) File \".../flashinfer/prefill.py\", line 1859, in plan kv_data_type = canonicalize_torch_dtype(kv_data_type) File \".../flashinfer/utils.py\", line 254, in canonicalize_torch_dtype return getattr(torch, dtype) AttributeError: module 'torch' has no attribute 'nvfp4'",
]


def test_frames_glued_on_one_line_are_each_named_and_the_exception_after_them_is_kept():
    stated = _stated(STEPCODEX)
    assert "flashinfer.py:1170 in build -> prefill.py:1859 in plan -> utils.py:254 in canonicalize_torch_dtype" in stated
    assert "error: 'AttributeError: module 'torch' has no attribute 'nvfp4'' (line 1)" in stated


# vllm-project/vllm#58031 (cache_samples/wild/vllm-58031-gb300-sm103-fp4-moe-autotune-crawls-gb10-in-passing)
VLLM_58031 = [
    "Same symptom on a second GB300 (SM103) with a different model, plus timings that may help size the fix.",
    "",
    "- `--moe-backend marlin` (+ `VLLM_USE_DEEP_GEMM=0`): autotune **9 s** (\"Saved 0 configs\"), same model, same box, serves correctly. That matches what the public GB10 serves use.",
]


def test_a_gpu_named_in_a_contrast_is_mentioned_not_this_machine():
    stated = _stated(VLLM_58031)
    assert "GPUs named: GB300 (line 1)" in stated
    assert "mentioned, not as this machine: GB10 (in a contrast, line 3)" in stated
    assert "arch tokens named: SM103 (line 1)" in stated


def test_every_human_view_and_the_json_carry_the_stated_facts():
    res = _result(FLASHQLA_4)
    want = "Failed to set the allowed dynamic shared memory size to 196608 [192 KB]"
    md = markdown.format_inspect(res).replace("\\[", "[").replace("\\]", "]")  # (Markdown escapes)
    assert "## Stated in the text" in md and want in md.split("## Stated in the text", 1)[1]
    rep = report.format_report(res, report.ReportContext()).replace("\\[", "[").replace("\\]", "]")  # (Markdown escapes)
    assert "## Stated in the text" in rep and want in rep.split("## Stated in the text", 1)[1]
    assert "196608 (line 4)" in rep.split("## Stated in the text", 1)[1]
    doc = json.loads(json_inspect(res))
    (inp,) = doc["inputs"]
    errs = [x for x in inp["literals"] if x["kind"] == "error"]
    assert errs[0]["value"].endswith(want) and errs[0]["line"] == 3 and errs[0]["how"] == "stated"


# flashinfer-ai/flashinfer#3427 (cache_samples/wild/flashinfer-3427-b200-bf16-moe-ima-kernel-family-prose)
FI_3427 = [
    "Important caveat: this is only the pattern we observed, not proof that this kernel family is inherently broken. We are filing this to ask for help interpreting the coredump and narrowing down the root cause.",
]


def test_the_authors_caveat_about_a_cause_is_kept():
    assert ("the author's caveat: 'Important caveat: this is only the pattern we observed, not proof that this kernel "
            "family is inherently broken. ...' (line 1)") in _stated(FI_3427)


# sgl-project/sglang#39807 (cache_samples/wild/sglang-39807-sm120-sm121-nvfp4-runner-selection-prose)
SGLANG_39807 = [
    "Serving an NVFP4 MoE checkpoint on an RTX PRO 6000 (SM120) fails before the first token.",
]


def test_a_gpu_named_without_its_vendor_in_prose_is_stated():
    stated = _stated(SGLANG_39807)
    assert "GPUs named: RTX PRO 6000 (line 1)" in stated and "arch tokens named: SM120 (line 1)" in stated


# flashinfer-ai/flashinfer#3437 (cache_samples/wild/flashinfer-3437-rtx5090-sm120-no-tuned-config-counts-table)
FI_3437 = [
    "| FlashInfer | `No tuned config` + `tactic=-1` per run | Notes |",
    "|---|---|---|",
    "| **0.6.12** | **57 / 57 / 57** | reproducible across 3 runs |",
    "| **0.6.8.post1** (control) | **0 / 0 / 0** | same vLLM + serve flags |",
    "| **0.6.13rc1** | **0** | micro + serving startup confirm fix |",
    "",
    "This matches the root cause described here (`CublasFp8GemmRunner.get_cache_key_extras` including dynamic `M`).",
]


def test_a_markdown_table_is_said_as_text_row_by_row():
    stated = _stated(FI_3437)
    assert ("a table (line 1): 3 row(s) under 'FlashInfer | `No tuned config` + `tactic=-1` per run | Notes': "
            "0.6.12 | 57 / 57 / 57 | reproducible across 3 runs; 0.6.8.post1 (control) | 0 / 0 / 0 | same vLLM + serve flags; "
            "0.6.13rc1 | 0 | micro + serving startup confirm fix") in stated
    assert "CublasFp8GemmRunner (line 7)" in stated


# Dao-AILab-style TMA dump quoted in soulx-ai/FlashTalk#9 (cache_samples/wild/soulx-flashtalk-9-h20-fa3-tma-descriptor-999)
SOULX_9 = [
    "globalDim      (128,257,40,1,1)",
    "globalStrides  (2,10240,256,0,0)",
    "boxDim         (64,176,1,1,1)",
    "elementStrides (1,1,1,1,1)",
]


def test_a_tma_dump_states_its_box_dims():
    assert "TMA boxDim: boxDim (64,176,1,1,1) (line 3)" in _stated(SOULX_9)


# vllm-project/vllm#48093 (cache_samples/wild/vllm-48093-gb200-gemma4-mtp-cuda-graph-capture-elided-traceback)
VLLM_48093 = [
    "(EngineCore pid=83108) ERROR 07-21 00:00:54 [core.py:1330] EngineCore failed to start.",
    "",
    "<...>",
    "",
    '(EngineCore pid=83108) ERROR 07-21 00:00:54 [core.py:1330]   File ".../vllm/v1/attention/backends/flashinfer.py", line 2214, in forward',
    "(EngineCore pid=83108) ERROR 07-21 00:00:54 [core.py:1330]     trtllm_batch_decode_with_kv_cache(",
]


def test_the_authors_elision_is_kept_visible_and_a_loggers_location_is_no_file():
    stated = _stated(VLLM_48093)
    assert "the author's elisions (lines left out of the paste): '<...>' (line 3)" in stated
    assert "trtllm_batch_decode_with_kv_cache (line 6)" in stated
    assert "core.py:1330" not in stated  # (vLLM's logger location on every line)


# NVIDIA/TensorRT-LLM#11368 (cache_samples/wild/trtllm-11368-gb10-sm121-fp4-cutlass-error-internal-table)
TRTLLM_11368 = [
    "**Problem**: `fp4_gemm_template.h` routes SM121 to the SM120 path (line ~378: `mSm == 120 || mSm == 121`), but both SM120 tile configs (128×128×256B and 256×128×128B) need >99 KiB SMEM. GB10 only has 99 KiB vs B200's ~228 KiB.",
]


def test_cutlass_tile_names_with_their_b_suffix_are_tiles():
    stated = _stated(TRTLLM_11368)
    assert "tiles: 128×128×256B (line 1); 256×128×128B (line 1)" in stated
    assert "mentioned, not as this machine: B200 (in a contrast, line 1)" in stated
    assert "256 B" not in stated and "99 KiB (line 1)" in stated  # (the tile name's "256B" is no byte count)
    assert "no failure" not in _stated(["[TensorRT-LLM][ERROR] Error Internal no error"])  # (a status text, not the author)


# NVIDIA/TensorRT-LLM#14575 (cache_samples/wild/trtllm-14575-gb10-sm121a-mtp-resolved-prose)
TRTLLM_14575 = [
    "- `speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}` — engine reaches `Application startup complete`, no `ptxas`/`.rs` error, generation correct.",
]


def test_a_server_ready_line_the_text_quotes_is_stated():
    assert "start-up lines: Application startup complete (line 1)" in _stated(TRTLLM_14575)


# sgl-project/sglang#39807 (cache_samples/wild/sglang-39807-sm120-sm121-nvfp4-runner-selection-prose): wrapped prose
SGLANG_39807_RUNNER = [
    "1. **NVFP4 MoE runner selection** — `create_moe_runner()` sent every device with",
    "   compute capability >= 10.0 to `FLASHINFER_TRTLLM`, whose NVFP4 path is",
    "   SM100-only, so SM120 reached the `NotImplementedError` at the end of the same",
]


def test_an_exception_type_and_a_backend_named_in_code_spans_are_stated():
    stated = _stated(SGLANG_39807_RUNNER)
    assert "error: 'NotImplementedError (named in a code span)' (line 3)" in stated
    assert "FLASHINFER_TRTLLM (line 2)" in stated and "create_moe_runner (line 1)" in stated


# LMCache/LMCache#2853 (cache_samples/wild/lmcache-2853-rtx-pro-5000-sm120-typical-errors-prose): an error quoted bare
LMCACHE_2853 = ["", "cannot import name 'LMCacheEngineMetadata' from 'lmcache.config'"]


def test_a_python_error_quoted_without_its_type_is_stated():
    assert "error: 'cannot import name 'LMCacheEngineMetadata' from 'lmcache.config'' (line 2)" in _stated(LMCACHE_2853)


# NVIDIA/TensorRT-LLM#10679 (cache_samples/wild/trtllm-10679-h100-fp8-moe-autotuner-choose-one-prose): a Markdown auto-link
TRTLLM_10679 = ['File ".../tensorrt_llm/_torch/custom_ops/trtllm_gen_custom_[ops.py](http://ops.py)", line 748, in fp8_block_scale_moe_runner']


def test_a_frame_whose_path_markdown_turned_into_a_link_is_named_as_written_before():
    assert "trtllm_gen_custom_ops.py:748 in fp8_block_scale_moe_runner" in _stated(TRTLLM_10679)


def test_an_exception_is_raised_in_the_innermost_frame_of_flashinfers_own_package():
    (ev,) = [e for e in _result(STEPCODEX).events if e.kind == "exception"]
    assert ev.fact("raised_in") == "utils.py:254 in canonicalize_torch_dtype"  # (not vLLM's backends/flashinfer.py)


# sgl-project/sglang#29562 (cache_samples/wild/sglang-29562-sm120-nvfp4-autotune-cache-paths-exception)
SGLANG_29562 = ["[2026-06-28 13:36:54 TP2] Running FlashInfer autotune with cache: /root/.cache/sglang/flashinfer/autotune/0.6.12/sm120/88ed2caa135f6803/rank_tp2_pp0_dp0.json"]


def test_a_cache_paths_arch_folder_is_the_arch_token_not_its_last_component():
    stated = _stated(SGLANG_29562)
    assert "arch tokens named: sm120 (in cache path /autotune/0.6.12/sm120/" in stated and "rank_tp2_pp0_dp0 (in" not in stated


# sgl-project/sglang#4382 (cache_samples/wild/sglang-4382-tma-descriptor-999-cute-make-tma-copy-desc): a CuTe template dump
SGLANG_4382_SHAPE = ["TShape = cute::tuple<cute::C<64>, cute::C<128>, cute::C<1> >"]


def test_a_cute_tile_shape_of_a_template_dump_is_a_tile():
    assert "tiles: 64x128x1 (written 'TShape = cute::...<64, 128, 1>') (line 1)" in _stated(SGLANG_4382_SHAPE)


# vllm-project/vllm#30163 (cache_samples/wild/vllm-30163-gb10-fp4-gemm-run-error-internal): errors of earlier attempts
VLLM_30163 = [
    "- **Error:** `FlashInfer kernels unavailable for ModelOptNvFp4FusedMoE on current platform`",
    "- **Error:** `ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'`",
]


def test_every_error_a_ticket_quotes_in_a_code_span_is_stated():
    stated = _stated(VLLM_30163)
    assert "error: 'FlashInfer kernels unavailable for ModelOptNvFp4FusedMoE on current platform' (line 1)" in stated
    assert "error: 'ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'' (line 2)" in stated


# the whole of vllm-project/vllm#46861's quoted text (cache_samples/wild/vllm-46861-gb200-aarch64-trtllm-moe-accelerator-error)
VLLM_46861_WHOLE = [
    "| Field | Value |",
    "|-------|-------|",
    "| Arch | **aarch64** / NVIDIA Grace |",
    "| GPU | NVIDIA B200 / GB200 |",
    "| vLLM image | `vllm/vllm-openai:latest` (arm64 build), vLLM v0.23.0 |",
    "| Model | `Qwen/Qwen3.6-35B-A3B`, bf16 — hybrid Mamba2/GatedDeltaNet + attention MoE (A3B = \\~3B active) |",
    "| Offending flag | `--moe-backend flashinfer_trtllm` |",
    "| Reproduces on x86_64? | **No** — `flashinfer_trtllm` runs fine on(x86) |",
    "",
    "### 🐛 Describe the bug",
    "",
    "On aarch64 / NVIDIA Grace (B200/GB200), launching `Qwen/Qwen3.6-35B-A3B` (bf16) with `--moe-backend flashinfer_trtllm` crashes during engine-core init: the flashinfer fused-MoE autotune step faults inside cudagraph capture while tuning `flashinfer::trtllm_bf16_moe`, raising `torch.AcceleratorError: CUDA error: an illegal memory access was encountered`. The same config and image boot and serve correctly on x86_64, so this is arch-specific. Workaround is `--moe-backend triton` (or unset to let vLLM auto-select).",
]


def test_a_ticket_that_places_the_crash_in_engine_core_init_gives_the_lead_its_stage():
    # (readers/logs/ticket.py's prose stage: "crashes during engine-core init", "faults inside cudagraph capture")
    # (the lead says the stage with the ticket's words and line: run_verdicts' "as the ticket says")
    assert "; at warm-up (CUDA-graph capture at start-up), as the ticket says: 'during engine-core init'" \
        in _lead(VLLM_46861_WHOLE)
    stated = _stated(VLLM_46861_WHOLE)
    assert "Offending flag | `--moe-backend flashinfer_trtllm`" in stated  # (the ticket's table, said as text)


# guoqingbao/xinfer#486 (cache_samples/wild/xinfer-486-rtx-pro-5000-sm120-decode-hang-no-error)
XINFER_486 = ["- Decode then **hangs indefinitely**: GPU pegged at 100% utilization, no token produced for >8 minutes, server stops responding (client `ReadTimeout` after 120 s and after 300 s on a second attempt with `enable_thinking=false`). No panic, no error log."]


def test_the_texts_own_word_that_nothing_failed_is_stated():
    assert "where it says no failure: 'No panic, no error log' (line 1)" in _stated(XINFER_486)


# vllm-project/vllm#48093 (cache_samples/wild/vllm-48093-gb200-gemma4-mtp-cuda-graph-capture-elided-traceback)
VLLM_48093_CAPTURE = [
    "Capturing prefill CUDA graphs (PIECEWISE): 100%|...| 51/51 [00:00<00:00, 103.74it/s]",
    "Capturing prefill CUDA graphs (FULL):   0%|          | 0/48 [00:00<?, ?it/s]",
]


def test_a_cuda_graph_capture_bar_keeps_its_last_state_and_a_library_named_is_stated():
    stated = _stated(VLLM_48093_CAPTURE)
    assert "Capturing prefill CUDA graphs (PIECEWISE): 51/51 (its last state here) (line 1)" in stated
    assert "Capturing prefill CUDA graphs (FULL): 0/48 (its last state here) (line 2)" in stated
    assert "ops, kernels and runners: FA3 (line 1)" in _stated(["Below are FA3-related error messages, which appear to be TMA-related issues."])


# vllm-project/vllm#46083 (cache_samples/wild/vllm-46083-b200-dp2-ep-trtllm-bf16-moe-autotune-coredump)
VLLM_46083 = ["**Workaround (not a root fix):** merged in #45002 on 2026-06-09 — adds `--no-enable-flashinfer-autotune` to `tests/evals/gsm8k/configs/Qwen3.5-35B-A3B-DEP2.yaml` so CI skips the crashing autotune path."]
# vllm-project/vllm#32109 (cache_samples/wild/vllm-32109-sm120-glm47-fp8-no-compiled-cutlass-scaled-mm)
VLLM_32109 = ["No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100"]


def test_a_flag_named_in_a_code_span_and_an_error_quoted_bare_are_stated():
    assert "flags named: --no-enable-flashinfer-autotune (line 1)" in _stated(VLLM_46083)
    assert ("error: 'No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100' (line 1)"
            in _stated(VLLM_32109))


# vllm-project/vllm#50705 (cache_samples/wild/vllm-50705-sm120-cuda-lt-12.9-device-capability-startup-log)
VLLM_50705 = ["(EngineCore pid=4140) Failed to get device capability: SM 12.x requires CUDA >= 12.9."]


def test_a_logged_failed_to_message_is_an_error_stated():
    assert "error: 'Failed to get device capability: SM 12.x requires CUDA >= 12.9.' (line 1)" in _stated(VLLM_50705)


# flashinfer-ai/flashinfer#2065 (cache_samples/wild/flashinfer-2065-gb10-moe-fp4-illegal-instruction)
FI_2065 = ["I am attempting to run FP4 MoE on spark using vLLM and SGLang, with flashinfer_cutlass selected as the MoE operator. No errors occur during the capture phase, but the following error occurs randomly during replay:"]


def test_a_no_failure_statement_keeps_its_scope():
    assert "where it says no failure: 'No errors occur during the capture phase' (line 1)" in _stated(FI_2065)


# sgl-project/sglang#25563 (cache_samples/wild/sglang-25563-b300-sm103-draft-graph-capture-sm100f-kernel): a fenced
# message its author broke over indented lines, the kernel's name among them
SGLANG_25563 = [
    "```",
    "Exception: Capture cuda graph failed: Error in function 'run' at",
    "  /workspace/csrc/trtllm_batched_gemm_runner.cu:276:",
    "  Error occurred when running GEMM! (numBatches: 256, GemmMNK: 128 1024 6144,",
    "  Kernel: bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6_et128x8_m128x8x16",
    "          _c1x1x1_16dp256b_rM_BN_transOut_schPd2x1x2x3_bN_ldgsts_ldgstsSf",
    "          _rgTma_clmp_swiGlu_dynB_sm100f)",
    "```",
]


def test_a_fenced_message_broken_over_indented_lines_is_one_error_and_its_kernel_one_name():
    stated = _stated(SGLANG_25563)
    kernel = "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6_et128x8_m128x8x16_c1x1x1_16dp256b_rM_BN_transOut_schPd2x1x2x3_bN_ldgsts_ldgstsSf_rgTma_clmp_swiGlu_dynB_sm100f"
    assert ("error: 'Exception: Capture cuda graph failed: Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:276: "
            "Error occurred when running GEMM! (numBatches: 256, GemmMNK: 128 1024 6144, Kernel: " + kernel + ")' (line 2)") in stated
    assert f"{kernel} (line 2)" in stated and "; _rgTma" not in stated


# flashinfer-ai/flashinfer#3344's first seven lines, as the ticket has them
FI_3344_HEAD = [
    "# flashinfer 0.6.x trtllm-gen GEMM runners only ship `_sm100f` kernel names — FP8 hybrid models (Qwen3-Next / Qwen3.5) crash on Jetson Thor (sm110a)",
    "",
    "## Summary",
    "",
    "On NVIDIA Jetson Thor (`compute capability (11, 0)`, CUDA 13.0), loading a hybrid Mamba/Gated-DeltaNet model such as `Qwen/Qwen3.5-27B-FP8` or any Qwen3-Next variant through vLLM crashes during the model's first forward pass. The visible failure is a `CUBLAS_STATUS_EXECUTION_FAILED` on a plain BF16 `torch.nn.functional.linear` call, but the underlying cause is a kernel-coverage gap in flashinfer: the trtllm-gen GEMM dispatcher only knows about `_sm100f` (datacenter Blackwell, B100/B200/GB200) kernel names, and `flashinfer-cubin` ships only `sm100f.cubin` binaries — there are no sm110 (Jetson Thor) cubins.",
    "",
    "When the dispatcher selects an sm100f cubin on Thor, the cubin's device-side architecture check fails, prints `\"This kernel only supports sm100f.\"` once per thread (hundreds of times in the log), no-ops the launch, and leaves the CUDA context in a faulted state. The next CUDA call — typically an unrelated cuBLAS matmul — surfaces the failure.",
]


def test_a_long_failure_sentence_of_a_ticket_is_cut_at_a_word_never_mid_word():
    items = list(logs.parse_lines(enumerate(FI_3344_HEAD, 1), "t.md", ReadContext().environment()))
    (inp,) = [i for i in items if isinstance(i, InputFacts)]
    # a quote is a sentence of its line (whole when it nearly fits), or cut at a word and marked with what it left out
    assert any(len(FI_3344_HEAD[(f.line or 1) - 1]) > len(str(f.value)) + 40 for f in inp.says_fail), \
        "flashinfer-3344's long prose lines are longer than a quote"
    for f in inp.says_fail:
        head = re.sub(r" \.\.\. \[\d+ more words?\]$", "", str(f.value))
        line = FI_3344_HEAD[(f.line or 1) - 1]
        at = line.find(head)
        assert at >= 0 and (at + len(head) == len(line) or not line[at + len(head)].isalnum())  # (ends where a word ends)


def test_a_ticket_written_with_bold_labels_is_a_ticket_its_error_stated_and_placed():
    # flashinfer-4157's "**Symptom:** engine warmup crashes with ..." is a person's words, not a log line
    res = _result(FI_4157)
    assert "at warm-up" in res.verdicts[0].text and "(the ticket states it at line 1" in res.verdicts[0].text
    assert all(e.how == "stated" for e in res.verdicts[0].evidence)
