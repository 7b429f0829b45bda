"""The FlashInfer engine's parent side and runner table, on CPU.

What runs where (worker.arch_refusal / jit_modules), the --shape targets for the new ops, and
`prepare` against a real child process that answers jit-status the way the worker does on an
H200 (the worker's own refusal and module functions, evaluated for SM90 with no torch), so the
refusal-before-build path and the "not built, not allowed" stop are exercised end to end.
"""

import json
import stat
import sys
from pathlib import Path

import pytest

from tiletune.cli.commands.retry import RetryOptions, collect_targets
from tiletune.core.errors import TunerError, UsageError
from tiletune.core.records import Environment, Status, TuningRecord
from tiletune.decode.problems import problem_for
from tiletune.tuner import worker
from tiletune.tuner.flashinfer_engine import FlashInferEngine
from tiletune.tuner.targets import explicit_targets, parse_shape


def test_blackwell_only_runners_are_refused_on_sm90_with_one_line():
    for op, runner in (("fp4_gemm", "CutlassFp4GemmRunner"), ("mxfp8_gemm", "CutlassMxfp8GemmRunner")):
        why = worker.arch_refusal(op, runner, 9, 0, "NVIDIA H200")
        assert why and "\n" not in why and "SM90" in why and "nothing built" in why
        assert worker.arch_refusal(op, runner, 12, 0) is None
        assert worker.arch_refusal(op, runner, 10, 0) is None


def test_bf16_runners_run_on_hopper_but_tinygemm_not_on_ampere():
    assert worker.arch_refusal("bf16_gemm", "CublasltBf16GemmRunner", 9, 0) is None
    assert worker.arch_refusal("bf16_gemm", "CublasltBf16GemmRunner", 8, 0) is None
    assert worker.arch_refusal("bf16_gemm", "TinyGemmBf16GemmRunner", 9, 0) is None
    assert "SM80" in worker.arch_refusal("bf16_gemm", "TinyGemmBf16GemmRunner", 8, 0)
    assert "cannot run" in worker.arch_refusal("bf16_gemm", "CudnnBf16GemmRunner", 9, 0)


@pytest.mark.parametrize("cc,cuda,want", [
    ((10, 0), "13.0", ("fp4_gemm_cutlass", "fp4_quantization_100")),
    ((10, 3), "13.0", ("fp4_gemm_cutlass_sm103", "fp4_quantization_103")),
    ((12, 0), "13.0", ("fp4_gemm_cutlass_sm120", "fp4_quantization_120f")),
    ((12, 0), "12.8", ("fp4_gemm_cutlass_sm120", "fp4_quantization_120")),
])
def test_fp4_modules_follow_flashinfers_per_arch_choice(cc, cuda, want):
    assert worker.jit_modules("fp4_gemm", "CutlassFp4GemmRunner", *cc, cuda) == want


def test_module_names_per_runner():
    assert worker.jit_modules("bf16_gemm", "CublasltBf16GemmRunner", 9, 0) == ("mm_bf16_cublaslt",)
    assert worker.jit_modules("bf16_gemm", "TinyGemmBf16GemmRunner", 9, 0) == ("tinygemm2",)
    assert worker.jit_modules("mxfp8_gemm", "CutlassMxfp8GemmRunner", 12, 0) == ("mxfp8_gemm_cutlass_sm120", "mxfp8_quantization_sm100")


@pytest.mark.parametrize("op,shape,problem", [
    ("bf16_gemm", "128x4096x2048", (128, 4096, 2048)),
    ("fp4_gemm", "16x7168x4608", (16, 7168, 4608)),
    ("mxfp8_gemm", "8x4096x4096", (8, 4096, 4096)),
])
def test_command_line_targets_decode_back_to_their_problem(op, shape, problem):
    """The key shapes written for a --shape target decode (tiletune.decode.problems) to the same M, N, K."""
    opts = RetryOptions(ops=[op], tactic="0-1", shapes=[shape])
    targets, *_ = collect_targets(opts, {"compute_capability": "9.0", "flashinfer": "0.7.2.post1"})
    assert [t.tactic for t in targets] == [0, 1]
    t = targets[0]
    assert t.runner == {"bf16_gemm": "CublasltBf16GemmRunner", "fp4_gemm": "CutlassFp4GemmRunner",
                        "mxfp8_gemm": "CutlassMxfp8GemmRunner"}[op]
    assert t.problem.dtype_a == {"bf16_gemm": "bfloat16", "fp4_gemm": "nvfp4", "mxfp8_gemm": "mxfp8"}[op]
    rec = TuningRecord(source="test", source_kind="ledger", op=op, runner=t.runner, shapes=t.shapes, extras=(), tactic=0,
                       status=Status.PASSED, env=Environment(flashinfer_version="0.7.2.post1"))
    p, why = problem_for(rec)
    assert why is None and (p.m, p.n, p.k) == problem


def test_unknown_op_with_shape_names_the_known_defaults():
    with pytest.raises(UsageError, match="bf16_gemm -> CublasltBf16GemmRunner"):
        collect_targets(RetryOptions(ops=["moe"], tactic="0", shapes=["1x2x3"]), {})


# -- prepare() against a real child answering like the worker on an H200 ---------------------------

FAKE_WORKER = r'''
import json, os, sys
sys.path.insert(0, os.environ["TT_ROOT"])
from tiletune.tuner.worker import arch_refusal, jit_modules
spec = json.load(open(sys.argv[-1]))
built = set(filter(None, os.environ.get("FAKE_BUILT", "").split(",")))
log = os.environ["FAKE_LOG"]
with open(log, "a") as f:
    f.write(spec["mode"] + " " + json.dumps(spec.get("pairs") or spec.get("modules")) + "\n")
if spec["mode"] == "jit-status":
    mods, refused = {}, {}
    for op, runner in spec["pairs"]:
        why = arch_refusal(op, runner, 9, 0, "NVIDIA H200")
        if why:
            refused[op + "|" + runner] = why
            continue
        for m in jit_modules(op, runner, 9, 0):
            mods[m] = {"compiled": m in built, "path": "/ws/cached_ops/%s/%s.so" % (m, m)}
    res = {"ok": True, "modules": mods, "refused": refused}
else:
    res = {"ok": True, "modules": {m: {"built_s": 1.0, "path": "x"} for m in spec["modules"]}}
json.dump(res, open(spec["result_file"], "w"))
'''


@pytest.fixture()
def fake_python(tmp_path, monkeypatch):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("TT_ROOT", str(Path(__file__).resolve().parents[2]))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log"))
    return exe, tmp_path / "log"


def _targets(op, runner):
    return explicit_targets(op=op, runner=runner, tactics=[0], shapes=[parse_shape("16x4096x4096")],
                            dtype_in="x", dtype_out="bfloat16")


def test_prepare_refuses_fp4_on_sm90_without_building(fake_python, monkeypatch):
    exe, log = fake_python
    eng = FlashInferEngine(python=str(exe))
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)
    eng.prepare(_targets("fp4_gemm", "CutlassFp4GemmRunner"), jobs=1)
    assert "SM90" in eng.jit_report["refused"]["fp4_gemm|CutlassFp4GemmRunner"]
    assert eng.jit_report["status"] == {}
    assert [ln.split()[0] for ln in log.read_text().splitlines()] == ["jit-status"]  # no jit-build


def test_prepare_stops_when_a_module_is_missing_and_building_is_not_allowed(fake_python, monkeypatch):
    exe, log = fake_python
    monkeypatch.setenv("FAKE_BUILT", "gemm")
    eng = FlashInferEngine(python=str(exe))
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)
    with pytest.raises(TunerError, match="'mm_bf16_cublaslt'.*--allow-jit-build"):
        eng.prepare(_targets("bf16_gemm", "CublasltBf16GemmRunner") + _targets("fp8_gemm", "CublasFp8GemmRunner"), jobs=1)
    eng = FlashInferEngine(python=str(exe), allow_jit_build=True)
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)
    eng.prepare(_targets("bf16_gemm", "CublasltBf16GemmRunner"), jobs=1)
    assert list(eng.jit_report["built"]) == ["mm_bf16_cublaslt"]
    assert log.read_text().splitlines()[-1] == 'jit-build ["mm_bf16_cublaslt"]'


def test_prepare_leaves_no_scratch_behind(fake_python, monkeypatch, tmp_path):
    """jit-status / jit-build ran in tiletune-jit-* directories that 3d96422 never removed."""
    import tempfile

    exe, log = fake_python
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    eng = FlashInferEngine(python=str(exe), allow_jit_build=True)
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)
    eng.prepare(_targets("bf16_gemm", "CublasltBf16GemmRunner"), jobs=1)
    assert [ln.split()[0] for ln in log.read_text().splitlines()] == ["jit-status", "jit-build"]
    assert list(tmp.iterdir()) == []


# -- the real two-GPU H200 ledger (bench/retry_h200_x2) ----------------------------------------------

H200_X2 = Path(__file__).resolve().parents[2] / "tests" / "data" / "retry_h200_x2" / "ledger.jsonl"


def test_h200_x2_ledger_ran_one_worker_per_gpu():
    rows = [json.loads(line) for line in H200_X2.read_text().splitlines() if line.strip()]
    fp8 = [r for r in rows if r["op"] == "fp8_gemm"]
    by_gpu = {}
    for r in fp8:
        by_gpu.setdefault(r["env"]["cuda_visible_devices"], set()).add(r["env"]["gpu_uuid"])
    assert sorted(by_gpu) == ["0", "1"]
    assert all(len(u) == 1 for u in by_gpu.values()) and by_gpu["0"] != by_gpu["1"]  # two physical GPUs
    assert all(r["passed"] and r["time_s"] > 0 for r in fp8)


def test_h200_x2_ledger_exports_only_real_failures(tmp_path):
    from tiletune.cli.commands.retry import retry

    out = tmp_path / "block.json"
    opts = RetryOptions(ledger=H200_X2, no_run=True, ops=["bf16_gemm"], tactic="0", shapes=["1x1x1"], blocklist=out)
    retry(opts, progress=None, env={"compute_capability": "9.0"})
    block = json.loads(out.read_text())["invalid_tactics"]
    # the runner's own out-of-range refusal and tinygemm's single tactic; the fp4/mxfp8 refusals on
    # SM90 are engine_error (tiletune did not run them), so they are no evidence against a tactic
    assert block == {"bf16_gemm::CublasltBf16GemmRunner": [150], "bf16_gemm::TinyGemmBf16GemmRunner": [1]}
