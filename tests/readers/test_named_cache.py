"""A log and the cache it saved: the log takes the cache's release, arch and GPU, labelled inferred.

The files are FlashInfer 0.7.4's own, written on an H200 (cache_samples/h200_074, bench/h200_074).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiletune.analysis.pipeline import inspect as _inspect
from tiletune.readers.interface import ReadContext

H200 = Path(__file__).resolve().parents[2] / "cache_samples" / "h200_074"
CACHE, LOG = "fp8_gemm_cache_074.json", "autotune_074_debug.log"


def inspect(paths):
    return _inspect(paths, ReadContext())


def _envs(result, kind):
    return {(e.record.env.flashinfer_version, e.record.env.arch, e.record.env.gpu, e.record.env.version_source)
            for e in result.entries if e.record.source_kind == kind}


def test_the_log_takes_the_release_arch_and_gpu_of_the_cache_it_saved():
    r = inspect([str(H200 / CACHE), str(H200 / LOG)])
    (env,) = _envs(r, "log")
    assert env[:3] == ("0.7.4", "sm90", "NVIDIA H200")
    assert env[3].startswith("inferred:") and CACHE in env[3] and ":86 saved" in env[3]
    (facts,) = [i for i in r.inputs if i.source.endswith(LOG)]
    assert facts.flashinfer_version.how == "inferred" and facts.flashinfer_version.line == 86
    notes = [p.message for p in r.problems if not p.fatal]
    assert any("inferred from" in n and CACHE in n for n in notes)


def test_copied_together_the_files_still_pair_by_name(tmp_path):
    for f in (CACHE, LOG):
        shutil.copy(H200 / f, tmp_path / f)
    r = inspect([str(tmp_path)])
    (env,) = _envs(r, "log")
    assert env[:2] == ("0.7.4", "sm90")


@pytest.mark.parametrize("layout", ["other folder", "other name"])
def test_no_pairing_without_the_named_file(tmp_path, layout):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(H200 / LOG, tmp_path / "a" / LOG)
    cache = tmp_path / ("b" if layout == "other folder" else "a") / (CACHE if layout == "other folder" else "renamed.json")
    shutil.copy(H200 / CACHE, cache)
    r = inspect([str(tmp_path / "a" / LOG), str(cache)])
    assert _envs(r, "log") == {(None, None, None, None)}
