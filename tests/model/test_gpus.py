"""The GPU table: every SKU of research 1.3, sourced numbers, dense vs sparse, name matching, user files."""

import json

import pytest

from tiletune.core.errors import ModelError
from tiletune.model import gpus

EXPECTED_KEYS = {"a100-sxm4-80gb", "a10", "rtx-3090", "l40s", "rtx-4090", "h100-sxm5", "h100-pcie", "h200-sxm", "h20",
                 "b200", "gb200", "b300", "gb300", "rtx-pro-6000-ws", "rtx-pro-6000-server", "rtx-pro-6000-maxq",
                 "rtx-5090", "gb10"}


def test_every_research_sku_is_there_with_sources():
    t = gpus.table()
    assert {g.key for g in t.gpus} == EXPECTED_KEYS
    for g in t.gpus:
        assert g.sms > 0 and g.mem_bw_bytes_per_s > 0 and g.smem_per_block_optin > 0 and g.smem_per_sm > g.smem_per_block_optin
        src = dict(g.sources)
        for f in ("sms", "boost_clock_mhz", "mem_bw_gbps", "l2_bytes", "smem"):
            assert src.get(f), (g.key, f)
        for kind, p in g.peaks:
            if p is not None:
                assert p.source and p.quoted in ("dense", "sparse") and p.dense > 0, (g.key, kind)


@pytest.mark.parametrize("name,key", [
    ("NVIDIA H200", "h200-sxm"), ("NVIDIA H100 80GB HBM3", "h100-sxm5"), ("NVIDIA GeForce RTX 5090", "rtx-5090"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-ws"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000-maxq"),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"), ("NVIDIA B200", "b200"), ("NVIDIA GB10", "gb10"), ("rtx5090", "rtx-5090"),
    ("h200-sxm", "h200-sxm"),
])
def test_find_matches_smi_and_flashinfer_names(name, key):
    assert gpus.find(name).key == key


def test_unknown_gpu_lists_close_entries():
    with pytest.raises(ModelError) as e:
        gpus.find("RTX PRO 6000")
    msg = str(e.value)
    assert "close entries" in msg and "Server Edition" in msg and "Workstation Edition" in msg and "\n" not in msg
    with pytest.raises(ModelError, match="close entries: .*H100"):
        gpus.find("H100 SXM4")


def test_rtx_pro_6000_server_fp4_dense_vs_sparse():
    p = gpus.find("RTX PRO 6000 Server").peak("fp4")
    assert p.dense == pytest.approx(1871e12) and p.sparse == pytest.approx(3742e12) and p.quoted == "sparse"
    assert "3.7" in p.source or "3.7" in (p.note or "")
    # dense = SMs x clock x 4096 FLOP/clk/SM (research 1.2) to within 0.1 %
    g = gpus.find("RTX PRO 6000 Server")
    assert g.sms * g.boost_clock_hz * 4096 == pytest.approx(p.dense, rel=1e-3)


def test_b300_sparse_is_not_twice_dense():
    p = gpus.find("B300").peak("fp4")
    assert p.dense == pytest.approx(14000e12) and p.sparse == pytest.approx(18000e12) and p.quoted == "dense"


def test_defaults_and_dtype_mapping():
    assert gpus.default_for_arch("sm120").name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert gpus.default_for_arch("sm_90a").key == "h200-sxm"
    with pytest.raises(ModelError, match="no fp4"):
        gpus.find("H200").peak_for_dtype("nvfp4")
    assert gpus.find("H200").peak_for_dtype("fp8").dense == pytest.approx(1979e12)
    assert gpus.find("RTX 5090").peak_for_dtype("bf16").dense == pytest.approx(209.5e12)  # GeForce half rate


def test_user_file_adds_and_overrides(tmp_path, monkeypatch):
    f = tmp_path / "mine.json"
    f.write_text(json.dumps({"gpus": [
        {"key": "h200-sxm", "name": "NVIDIA H200", "arch": "sm90", "sms": 132, "mem_bw_gbps": 4000,
         "smem_per_block_optin": 232448, "smem_per_sm": 233472, "peaks_tflops": {"bf16": {"dense": 700, "quoted": "dense", "source": "my lab"}}},
        {"key": "my-l4", "name": "NVIDIA L4", "arch": "sm89", "sms": 58, "mem_bw_gbps": 300,
         "smem_per_block_optin": 101376, "smem_per_sm": 102400, "peaks_tflops": {"fp8": {"dense": 242, "sparse": 485}}},
    ]}))
    monkeypatch.setenv(gpus.GPU_FILE_ENV, str(f))
    assert gpus.find("NVIDIA L4").sms == 58
    h = gpus.find("H200")
    assert h.mem_bw_bytes_per_s == 4000e9 and h.origin == str(f) and h.peak("fp8") is None


@pytest.mark.parametrize("content,msg", [("{not json", "invalid JSON"), ('{"gpus": 3}', "'gpus' list"),
                                          ('{"gpus": [{"key": "x", "name": "X", "arch": "sm999"}]}', "arch"),
                                          ('{"gpus": [{"key": "x", "name": "X", "arch": "sm90"}]}', "missing field")])
def test_bad_user_file_is_one_line_error_naming_the_file(tmp_path, content, msg):
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(ModelError, match=msg) as e:
        gpus.find("H200", str(f))
    assert str(f) in str(e.value) and "\n" not in str(e.value)


def test_the_max_clock_is_called_measured_only_where_it_was():
    """The SM clock a result runs at says how the table knows it: the H200's and B300's were read by
    nvidia-smi (measured); the RTX 5090's is inferred from a published TF32 speed-up (clock_source)."""
    from tiletune.model import perf

    table = gpus.table()
    basis = {g.key: perf.max_clock_basis(g) for g in table.gpus if g.max_clock_hz}
    assert basis["h200-sxm"] == "measured"
    assert basis["b300"] == "measured"
    assert basis["rtx-5090"] == "inferred"
    rtx = next(g for g in table.gpus if g.key == "rtx-5090")
    clock, what = perf._clock(rtx, None)
    assert clock == rtx.max_clock_hz
    assert "inferred" in what and "measured" not in what
