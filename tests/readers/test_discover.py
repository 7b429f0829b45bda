"""discover(): the default places and environment variables, and what was searched."""

from __future__ import annotations

from tiletune.readers.discover import discover


def test_nothing_found_says_where_it_looked(tmp_path):
    d = discover(env={}, home=tmp_path)
    assert d.paths == ()
    text = "\n".join(d.searched)
    assert str(tmp_path / ".cache" / "vllm" / "flashinfer_autotune_cache") in text
    assert str(tmp_path / ".cache" / "sglang" / "flashinfer" / "autotune") in text
    assert str(tmp_path / ".cache" / "flashinfer" / "autotune") in text
    assert "TLLM_AUTOTUNER_CACHE_PATH" in text and "(absent)" in text


def test_defaults_under_home(tmp_path):
    for rel in (".cache/vllm/flashinfer_autotune_cache", ".cache/sglang/flashinfer/autotune",
                ".cache/flashinfer/autotune", ".cache/flashinfer/0.6.14/120a/cached_ops"):
        (tmp_path / rel).mkdir(parents=True)
    d = discover(env={}, home=tmp_path)
    assert set(d.paths) == {
        tmp_path / ".cache/vllm/flashinfer_autotune_cache",
        tmp_path / ".cache/sglang/flashinfer/autotune",
        tmp_path / ".cache/flashinfer/autotune",
        tmp_path / ".cache/flashinfer/0.6.14/120a",  # the JIT workspace, not the autotune dir
    }


def test_environment_variables_win(tmp_path):
    env = {
        "FLASHINFER_AUTOTUNE_CACHE_DIR": str(tmp_path / "fi-store"),
        "FLASHINFER_WORKSPACE_BASE": str(tmp_path / "base"),
        "FLASHINFER_TACTICS_BLOCKLIST": str(tmp_path / "block.json"),
        "VLLM_CACHE_ROOT": str(tmp_path / "vroot"),
        "VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR": str(tmp_path / "vfi"),
        "SGLANG_CACHE_DIR": str(tmp_path / "sg"),
        "TLLM_AUTOTUNER_CACHE_PATH": str(tmp_path / "t" / "cache.json"),
    }
    for rel in ("fi-store", "base/.cache/flashinfer/0.7.2.post1/90a", "vroot/flashinfer_autotune_cache", "vfi",
                "sg/flashinfer/autotune", "t"):
        (tmp_path / rel).mkdir(parents=True)
    for rel in ("block.json", "t/cache.json", "t/cache.rank0.json", "t/cache.rank1.json"):
        (tmp_path / rel).write_text("{}")
    (tmp_path / ".cache/vllm/flashinfer_autotune_cache").mkdir(parents=True)  # default, shadowed by VLLM_CACHE_ROOT
    d = discover(env=env, home=tmp_path)
    assert set(d.paths) == {
        tmp_path / "fi-store", tmp_path / "base/.cache/flashinfer/0.7.2.post1/90a", tmp_path / "block.json",
        tmp_path / "vroot/flashinfer_autotune_cache", tmp_path / "vfi", tmp_path / "sg/flashinfer/autotune",
        tmp_path / "t/cache.json", tmp_path / "t/cache.rank0.json", tmp_path / "t/cache.rank1.json",
    }
    assert any(s.startswith("VLLM_CACHE_ROOT:") for s in d.searched)


def test_discovered_paths_read_end_to_end(tmp_path, sample):
    import shutil

    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    shutil.copytree(sample("layouts/sglang"), tmp_path / ".cache" / "sglang")
    d = discover(env={}, home=tmp_path)
    out = read_inputs(d.paths, ReadContext())
    assert out.problems == () and {r.rank for r in out.records} >= {"tp0_pp0_dp0", "tp1_pp0_dp0"}
