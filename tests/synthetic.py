"""Synthetic inspect inputs shared by the format and report tests.

Built from hand-made records (not from tiletune's catalogs or readers) so the formatters are
tested on their own. The model numbers are the CUTLASS-derived figures of
research/hardware-perf-model.md 2.3 and 2.7, fed through `ModelPort` as recorded values so the
golden files do not move whenever the model is recalibrated; the real model is exercised in
tests/test_pipeline.py and tests/test_cli_inspect.py.
"""

from __future__ import annotations

from msgspec import structs

from tiletune.analysis.model_port import ModelPort
from tiletune.core.records import CatalogRef, Decoded, Entry, Environment, Problem, Status, TileConfig, TuningRecord, Undecoded
from tiletune.model import gpus
from tiletune.model.perf import estimate, stated_notes

GPU = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
ENV = Environment(flashinfer_version="0.6.14", arch="sm120", gpu=GPU, cuda_version="12.9",
                  arch_source="metadata.gpu", version_source="metadata",
                  metadata=(("cublas_version", "12.9.1"), ("cuda_version", "12.9"), ("flashinfer_version", "0.6.14"), ("gpu", GPU)))
REF = CatalogRef("0.6.14", "sm120", "fp4_gemm", "CutlassFp4GemmRunner", "csrc/fp4_gemm_cutlass_sm120.cu", size=32)
T128 = TileConfig((128, 128, 256), name="CtaShape128x128x128B")
T256 = TileConfig((256, 128, 128), name="CtaShape256x128x64B")

# Recorded model values, NVFP4 on SM120 (hardware-perf-model.md 2.3, CUTLASS 4.5):
#   128x128x256: 2 stages, 83,968 B; 256x128x128: 3 stages, 93,184 B; limit 101,376 B.
# Intensity for M=16, N=7168, K=4608 (2.7): 2*16*7168*4608 FLOP / ~18.8 MB = ~56 FLOP/B.
SMEM = {(128, 128, 256): (83_968, 2), (256, 128, 128): (93_184, 3)}


def model_result(problem=None, config=T128, spec=None, *, dtype="nvfp4", arch="sm120", smem=None, **fields):
    """A real `ModelResult` (the model run on `spec`, default the RTX PRO 6000 Server as SPEC names
    it) with recorded values put in: `smem` maps SmemFit fields, `fields` ModelResult fields."""
    e = estimate(problem or problem_at(16), config, spec or SPEC, dtype=dtype, arch=arch)
    if smem:
        fields["smem"] = structs.replace(e.smem, **smem)
    return structs.replace(e, **fields)


def recorded_model(problem, config, spec, *, dtype, arch, l2=None):
    smem, stages = SMEM[config.tile]
    flops = 2.0 * problem.m * problem.n * problem.k
    return model_result(
        problem, config, spec, dtype=dtype, arch=arch, note_facts=stated_notes(()),
        smem=dict(shared_storage_bytes=smem, limit_bytes=101_376, stages=stages, verdict="fits", notes=()),
        intensity_problem=56.0 if problem.m == 16 else 3.6, intensity_tile=85.3, bound="memory",
        time_floor_s=10.5e-6, time_expected_s=16.0e-6, time_low_s=12.0e-6, time_high_s=25.0e-6,
        efficiency_compute=flops / 16.0e-6 / 1.87e15, efficiency_roofline=10.5 / 16.0, flops=flops,
        peak_dense=1.87e15, peak_sparse=3.74e15, bandwidth=1.792e12, ctas=56, sms=188,
    )


# the real spec under the name the recorded figures use
SPEC = structs.replace(gpus.find("RTX PRO 6000 Blackwell Server Edition"), name="RTX PRO 6000 Blackwell Server Edition")


def port():
    return ModelPort(None, find=lambda name: SPEC, default_for_arch=lambda arch: SPEC, analyze=recorded_model)


def rec(source, status, tactic, *, error=None, count=1, kind="flashinfer-v1", op="fp4_gemm", runner="CutlassFp4GemmRunner"):
    return TuningRecord(source=source, source_kind=kind, op=op, runner=runner, tactic=tactic, status=status,
                        env=ENV, error=error, count=count)


def problem(m, lo, hi):
    return Problem(m=m, n=7168, k=4608, m_range=(lo, hi), dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")


def problem_at(m):
    return Problem(m=m, n=7168, k=4608, dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")


ERR = "[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal"


def synthetic_entries():
    # one server's run: its cache and two warm-up logs in one folder (tiletune.analysis.source_groups)
    cache, log_a, log_b = "/data/alice/warmup/fp4.json", "/data/alice/warmup/warmup-a.log", "/data/alice/warmup/warmup-b.log"
    ents = [
        Entry(rec(cache, Status.CHOSEN, 3), problem(1, 1, 1), Decoded(T128, REF, 3)),
        Entry(rec(cache, Status.CHOSEN, 3), problem(16, 9, 16), Decoded(T128, REF, 3)),
        Entry(rec(cache, Status.CHOSEN, 3), problem(256, 129, 256), Decoded(T128, REF, 3)),
        # 10 + 6 failures of the same tactic in two logs: one failure row with count 16
        Entry(rec(log_a, Status.FAILED, 7, error=ERR, count=10, kind="log"), problem(16, 9, 16), Decoded(T256, REF, 7)),
        Entry(rec(log_b, Status.FAILED, 7, error=ERR, count=6, kind="log"), problem(16, 9, 16), Decoded(T256, REF, 7)),
        # an index the catalog does not have: shown with the reason, never guessed
        Entry(rec(cache, Status.CHOSEN, 40), problem(512, 257, 512),
              Undecoded("flashinfer 0.6.14 sm120 fp4_gemm/CutlassFp4GemmRunner catalog has 32 configs (indices 0..31); index 40 out of range")),
        Entry(rec(cache, Status.CHOSEN, 0, op="fp8_gemm", runner="CublasFp8GemmRunner"), problem(16, 9, 16),
              Undecoded("cuBLASLt algorithm index: no CUTLASS tile", not_a_cutlass_tactic=True)),
    ]
    sources = [(cache, "flashinfer-v1"), (log_a, "log"), (log_b, "log")]
    return ents, sources
