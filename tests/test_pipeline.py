"""The inspect pipeline end to end on real readers, decode, catalogs and the real model.

What it proves: entries are modelled at the top of their M bucket on the right GPU (named in the
input, else the arch's default SKU, said so), the model runs once per distinct case, failures
from several inputs aggregate with counts, a later retry pass is noted, never-tried tiles come
from the shipped catalogs, and discovery with nothing found is not an error.
"""

from __future__ import annotations

import pytest

from tiletune import model
from tiletune.analysis.model_port import ModelPort
from tiletune.analysis.pipeline import build, inspect
from tiletune.core.errors import ModelError
from tiletune.core.records import CatalogRef, Decoded, Entry, Environment, Problem, Status, TileConfig, TuningRecord
from tiletune.readers.interface import ReadContext

GPU = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
ENV = Environment(flashinfer_version="0.6.14", arch="sm120", gpu=GPU)
REF = CatalogRef("0.6.14", "sm120", "fp4_gemm", "CutlassFp4GemmRunner", "x", size=32)
T128 = TileConfig((128, 128, 256))


def _entry(status, tactic, m_range, *, source="a.json", error=None, count=1, env=ENV, tile=T128):
    r = TuningRecord(source=source, source_kind="log", op="fp4_gemm", runner="CutlassFp4GemmRunner", tactic=tactic,
                     status=status, env=env, error=error, count=count)
    p = Problem(m=m_range[1], n=7168, k=4608, m_range=m_range, dtype_a="nvfp4", dtype_b="nvfp4", dtype_out="bf16")
    return Entry(r, p, Decoded(tile, REF, tactic))


class CountingPort(ModelPort):
    """The real model, counting how often it is actually asked (not a stand-in: it delegates)."""

    calls = 0

    def __init__(self) -> None:
        def analyze(*a, **k):
            CountingPort.calls += 1
            return model.analyze(*a, **k)

        super().__init__(None, find=model.find, default_for_arch=model.default_for_arch, analyze=analyze)


def test_modelled_at_top_of_bucket_once_per_case():
    CountingPort.calls = 0
    ents = [_entry(Status.CHOSEN, 3, (9, 16), source=f"rank{i}.json") for i in range(5)]  # same case on 5 ranks
    ents.append(_entry(Status.CHOSEN, 3, (129, 256)))
    res = build(ents, model=CountingPort())
    assert CountingPort.calls == 2
    a = res.entries[0].analysis
    assert a is not None and a.m_evaluated == 16 and res.entries[-1].analysis.m_evaluated == 256
    # DESIGN.md fact (CUTLASS 4.5): NVFP4 SM120 128x128x256 -> 2 stages, 83,968 B, fits 101,376 B
    assert (a.smem.stages, a.smem.shared_storage_bytes, a.smem.limit_bytes, a.smem.verdict) == (2, 83_968, 101_376, "fits")
    assert a.bound == "memory" and a.time_expected_s and 0 < a.efficiency_compute < 1
    (g,) = res.gpus
    assert g.how == "named in the inputs" and "RTX PRO 6000" in g.gpu and "Server" in g.gpu


def test_failures_aggregate_across_inputs_and_evidence_wins():
    t256 = TileConfig((256, 128, 128))
    err = "[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal"
    ents = [
        _entry(Status.CHOSEN, 3, (9, 16)),
        _entry(Status.FAILED, 24, (9, 16), source="a.log", error=err, count=10, tile=t256),
        _entry(Status.FAILED, 24, (17, 32), source="b.log", error=err, count=6, tile=t256),
        _entry(Status.PASSED, 24, (9, 16), source="ledger.jsonl", tile=t256),
    ]
    res = build(ents)
    (f,) = res.failures
    assert (f.count, f.sources, f.passed_later) == (16, ("a.log", "b.log"), True)
    # the model says 256x128x128 NVFP4 fits (3 stages, 93,184 B) yet it failed: not blamed on smem
    assert f.analysis is not None and f.analysis.smem.shared_storage_bytes == 93_184 and f.analysis.smem.verdict == "fits"
    assert f.reason.model_disagrees and "not explained by shared memory" in f.reason.summary
    (v,) = res.verdicts
    assert "256x128x128 failed 16 times (Error Internal; not explained by shared memory)" in v.text
    assert "passed on retry" in v.text


def test_default_gpu_for_arch_is_said_and_gpu_flag_checked():
    env = Environment(flashinfer_version="0.6.14", arch="sm120")  # no GPU name in the input
    res = build([_entry(Status.CHOSEN, 3, (1, 1), env=env)])
    (g,) = res.gpus
    assert g.how.startswith("default for sm120") and "--gpu" in g.how
    with pytest.raises(ModelError):
        build([_entry(Status.CHOSEN, 3, (1, 1))], gpu="no such gpu 9000")
    res = build([_entry(Status.CHOSEN, 3, (1, 1))], gpu="H200")
    assert res.gpus[0].how == "--gpu" and any("some entries are sm120" in n for n in res.notes)


def test_unknown_arch_is_not_modelled_and_says_why():
    env = Environment(flashinfer_version="0.6.14")
    res = build([_entry(Status.CHOSEN, 3, (1, 1), env=env)])
    ae = res.entries[0]
    assert ae.analysis is None and "--arch" in ae.analysis_note


def test_real_sample_end_to_end(sample):
    res = inspect([sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json")], ReadContext())
    assert res.exit_code == 0 and not res.problems
    fp4 = [ae for ae in res.entries if ae.record.runner == "CutlassFp4GemmRunner"]
    assert fp4 and all(ae.config is not None for ae in fp4)
    assert all(ae.analysis is not None for ae in fp4)
    # never-tried tiles come from the shipped 0.6.14 sm120 fp4 catalog: tried + not tried = catalog size
    nt = [n for n in res.not_tried if n.op == "fp4_gemm"]
    assert nt and all(n.tried + len(n.tactics) == n.catalog.size for n in nt)
    assert all(n.evidence == "winners only" for n in nt)
    assert {v.op for v in res.verdicts} >= {"fp4_gemm"}


def test_bad_input_keeps_the_rest_and_exits_2(sample, tmp_path):
    res = inspect([sample("bad/truncated.json"), sample("real/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json")], ReadContext())
    assert res.exit_code == 2 and res.entries
    assert any("truncated.json" in p.message for p in res.problems)


def test_nothing_discovered_is_not_an_error(tmp_path):
    res = inspect([], ReadContext(), env={}, home=tmp_path)
    assert res.discovered and not res.entries and res.exit_code == 0
    assert any(str(tmp_path) in s for s in res.searched)


def test_jit_module_not_built_explains_a_failure():
    env = ENV
    nb = TuningRecord(source="ws", source_kind="jit-workspace", op="trtllm::fused_moe", runner="", tactic=None,
                      status=Status.NOT_BUILT, env=env, detail=(("module", "fused_moe_120"),))
    failed = TuningRecord(source="w.log", source_kind="log", op="trtllm::fused_moe::gemm1", runner="MoERunner", tactic=4,
                          status=Status.FAILED, env=env, error="RuntimeError: something went wrong")
    from tiletune.core.records import Undecoded

    res = build([Entry(nb, None, Undecoded("JIT module record")), Entry(failed, None, Undecoded("ambiguous"))])
    (f,) = res.failures
    assert f.reason.kind == "not_instantiated" and "fused_moe_120" in f.reason.summary
    assert any("fused_moe_120 never finished building" in v.text for v in res.verdicts)


def test_exit_status_losses_vs_notes(sample):
    # a key that does not parse loses an entry: exit 2; a note that loses nothing does not
    bad = inspect([sample("bad/bad-key.json")], ReadContext())
    assert bad.exit_code == 2 and bad.problems and not any(p.fatal for p in bad.problems)
    noted = inspect([sample("bad/no-metadata.json")], ReadContext())
    assert noted.problems and noted.exit_code == 0
    assert inspect([sample("v1")], ReadContext()).exit_code == 0


def test_log_without_gpu_is_modelled_on_the_gpu_its_cache_names(sample):
    # the demo's JIT log names no GPU; the cache saved by the same run names the RTX PRO 6000
    # Server: every sm120 entry, the log's too, is modelled on it (one choice, not two)
    from tiletune.analysis.pipeline import inspect
    from tiletune.readers.interface import ReadContext

    result = inspect([sample("demo")], ReadContext())
    assert [(c.arch, c.gpu, c.how) for c in result.gpus] == [
        ("sm120", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "named in the inputs")
    ]


def test_memoised_decodes_tell_equal_values_of_different_types_apart(tmp_path):
    # decode's and ops' memos are keyed by value, and 1 == True in Python: a key's tactic `true`
    # once decoded as tactic 1 when a tactic 1 came first (alone it is refused), and fused-MoE
    # extras with use_mxfp8_act_scaling True took the dtypes of an earlier key's 1 (which is not
    # True: no mxfp8 activations). Each key must say what it says alone, whatever came first.
    import json as json_mod

    from tiletune.decode import decode
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    shapes = "((16, 2048), (2048, 4096), (-1, 256), (256, 4096), (), (0,), (-1, 4096), (0,), (0,), (-1,))"
    moe_shapes = "((16, 4096), (8, 2816, 2048), (0,), (8, 4096, 1408), (0,))"
    mx = ("(torch.bfloat16, torch.uint8, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, {}, False, "
          "False, True, 3, False, True)")  # the 20 fields; {}: use_mxfp8_act_scaling
    doc = {
        "_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
        f"('fp4_gemm', 'CutlassFp4GemmRunner', {shapes}, ())": ["CutlassFp4GemmRunner", 1],
        f"('fp4_gemm', 'CutlassFp4GemmRunner', {shapes.replace('(16, 2048)', '(32, 2048)')}, ())":
            ["CutlassFp4GemmRunner", True],
        f"('trtllm::fused_moe::gemm1', 'MoERunner', {moe_shapes}, {mx.format('1')})": ["MoERunner", 1],
        f"('trtllm::fused_moe::gemm1', 'MoERunner', {moe_shapes.replace('(16, 4096)', '(32, 4096)')}, "
        f"{mx.format('True')})": ["MoERunner", 1],
    }
    path = tmp_path / "typed.json"
    path.write_text(json_mod.dumps(doc))
    fp4_one, fp4_true, moe_one, moe_true = (decode(r) for r in read_inputs([path], ReadContext()).records)
    assert isinstance(fp4_one.decode, Decoded) and fp4_one.config is not None
    assert not isinstance(fp4_true.decode, Decoded) and "not an integer" in fp4_true.decode.reason
    assert moe_one.problem.dtype_a == "bf16" and moe_true.problem.dtype_a == "mxfp8"


def test_batched_model_pass_matches_entry_by_entry():
    # ModelPort.analyze_entries models the cases it has not seen in batches (one estimate_cases
    # call per config, GPU, dtype and arch): every entry gets what the plain path
    # (_analyze_entry, one case at a time on a fresh port) gives it, in order, across repeated
    # cases, two tiles, two GPUs, L2 states, an entry with no config, a bad size inside a batch (the
    # batch is then modelled case by case) and a dtype the arch lacks (a whole batch refused)
    from tiletune.analysis.model_port import _analyze_entry

    t256 = TileConfig((256, 128, 128))
    h200 = Environment(flashinfer_version="0.6.14", arch="sm90", gpu="NVIDIA H200")
    ents = []
    for i, m_range in enumerate([(1, 1), (2, 2), (3, 4), (9, 16), (9, 16), (129, 256), (8193, 16384)]):
        ents.append(_entry(Status.CHOSEN, 3, m_range, source=f"rank{i % 2}.json"))
        ents.append(_entry(Status.FAILED, 24, m_range, tile=t256, error="Error Internal"))
        ents.append(_entry(Status.CHOSEN, 3, m_range, env=h200))  # nvfp4 on sm90: refused, with the reason
    r = TuningRecord(source="odd.json", source_kind="log", op="fp4_gemm", runner="CutlassFp4GemmRunner", tactic=3,
                     status=Status.CHOSEN, env=ENV)
    ents.insert(4, Entry(r, Problem(m=16, n=7168, k=0, m_range=(9, 16), dtype_a="nvfp4", dtype_b="nvfp4"),
                         Decoded(T128, REF, 3)))  # k=0: the model refuses this case only
    ents.insert(7, Entry(r, Problem(m=16, n=7168, k=4608, dtype_a="nvfp4"), None))  # no decode, no config
    ents.insert(9, Entry(r, Problem(m=16, n=7168, k=4608, m_range=(9, 16)), Decoded(T128, REF, 3)))  # no dtype

    batched = ModelPort.default(None).analyze_entries(ents)
    plain = [_analyze_entry(e, ModelPort.default(None)) for e in ents]
    assert len(batched) == len(plain) == len(ents)
    for got, want in zip(batched, plain):
        assert got.entry is want.entry and got.analysis_note == want.analysis_note
        assert got.analysis == want.analysis
    notes = [a.analysis_note for a in batched]
    assert sum(a.analysis is not None for a in batched) == 14
    assert any(n and "k=0" in n for n in notes) and any(n and "not decoded" in n for n in notes)
    assert sum(bool(n) and n.startswith("model:") for n in notes) == 8  # 7 nvfp4-on-H200 cases + k=0
