"""Readers say themselves whether an InputProblem loses data (`loses_data`), instead of the
pipeline guessing it from the message's words.

Three checks: (1) on every sample in cache_samples/ (bad/ included) the field agrees with the old
wording rule, except for the cases listed in DISAGREEMENTS, each with why; (2) every note and every
disagreement a reader can produce, built in tmp_path, carries the severity its meaning calls for;
(3) through the CLI, a note-only input exits 0 and a lossy input exits 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from wild_split import is_held_out, working_wild

from tiletune.core.records import InputProblem
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()
SAMPLES = Path(__file__).resolve().parents[2] / "cache_samples"

# The rule pipeline.loses_data() used before readers set the field, frozen here (not imported) so
# this check keeps its meaning once the pipeline reads `problem.loses_data` instead.
_OLD_LOSS_WORDS = ("skipped", "could not", "cannot", "unusable", "read error", "invalid", "not a ", "is not ", "expected")


def old_wording_rule(p: InputProblem) -> bool:
    # the words are looked for in the message, not in the input's name (a corpus directory may be
    # called "...-invalid-argument")
    return p.fatal or any(w in p.message.replace(p.source, "").lower() for w in _OLD_LOSS_WORDS)


# Messages where the wording guessed "note" but something in the input is thrown away (the
# readers' reading wins). Each pattern matches the message after "<path>: ".
DISAGREEMENTS = {
    # v1 cache: `_metadata` present but not an object. What the file put there is discarded (unlike
    # a missing `_metadata`, which loses nothing); the wording missed it because "not an object"
    # does not contain "not a ". The blocklist's and the v2 manifest's same case were losses already.
    r"_metadata is a \w+, not an object; ignored$": "the file's _metadata is discarded",
    # TRT-LLM cache: `metadata` present but not an object (was reported as "no metadata object",
    # a note, the same as a missing one); now its own message, and a loss for the same reason.
    r"metadata is a JSON \w+, not an object; ignored, GPU unknown$": "the file's metadata is discarded",
    # v2 store: a manifest.json over the JSON size limit is never read; the limit message has no
    # loss word, while every other unusable-manifest message (invalid JSON, binary, ...) has one.
    r"MiB JSON file is over tiletune's .*; environment unknown$": "the store's manifest is not read",
    # JIT workspace: past MAX_MODULES module directories the rest are never read.
    r"\d+ entries, reading the first \d+$": "the modules past the cap are not read",
}


def disagreement(p: InputProblem) -> str | None:
    """The DISAGREEMENTS pattern this problem's message matches, if any."""
    text = p.message.split(": ", 1)[1] if ": " in p.message else p.message
    hits = [pat for pat in DISAGREEMENTS if re.search(pat, text)]
    assert len(hits) <= 1, (p.message, hits)
    return hits[0] if hits else None


def sample_problems() -> list[InputProblem]:
    """Every problem the readers report on cache_samples/: each top-level directory walked, and
    every file and directory below it named on its own (a named file reports what a walk skips)."""
    paths = [p for p in sorted(SAMPLES.iterdir()) if p.is_dir() and p.name not in ("__pycache__", "wild")]
    paths += working_wild()  # the wild corpus's held-out artifacts are never read (wild_split)
    paths += [p for p in sorted(SAMPLES.rglob("*")) if "__pycache__" not in p.parts and not p.name.endswith((".py", ".md"))
              and not is_held_out(p) and p.name != "SPLIT.json"]
    problems = []
    for p in paths:
        problems.extend(read_inputs([p], CTX).problems)
    return problems


@pytest.fixture(scope="module")
def problems_on_samples() -> list[InputProblem]:
    return sample_problems()


def test_samples_agree_with_the_old_wording_except_the_listed_cases(problems_on_samples):
    assert len(problems_on_samples) > 20  # the sweep really reached the samples
    seen_disagreements = set()
    for p in problems_on_samples:
        assert isinstance(p.loses_data, bool), p
        assert p.loses_data or not p.fatal, f"a fatal problem always loses data: {p}"
        pat = disagreement(p)
        if pat is None:
            assert p.loses_data == old_wording_rule(p), p
        else:
            seen_disagreements.add(pat)
            assert p.loses_data and not old_wording_rule(p), p
    # the samples hold notes, losses and one listed disagreement (bad/metadata-not-object.json)
    assert any(not p.loses_data for p in problems_on_samples)
    assert any(p.loses_data and not p.fatal for p in problems_on_samples)
    assert seen_disagreements == {r"_metadata is a \w+, not an object; ignored$"}


def test_every_problem_names_its_input(problems_on_samples):
    for p in problems_on_samples:
        assert p.message.startswith(p.source) or p.message.split(": ", 1)[0].startswith(p.source), p


# --- every note and every disagreement, built where no sample has it ----------------------------

V1_META = {"flashinfer_version": "0.6.14", "gpu": "NVIDIA H200"}
V1_KEY = "('fp8_gemm', 'CutlassFp8GemmRunner', ((16, 4096), (4096, 4096)), ())"


def _write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def _v2_store(root: Path, manifest) -> Path:
    store = root / "v2" / "0123456789abcdef"
    (store / "entries").mkdir(parents=True)
    if manifest is not None:
        _write(store / "manifest.json", manifest)
    return store


def _workspace(root: Path, arch_dir: str, modules: int) -> Path:
    ws = root / "flashinfer" / "0.7.2.post1" / arch_dir
    for i in range(modules):
        (ws / "cached_ops" / f"gemm{i}").mkdir(parents=True)
    return ws


def _v1_records(tmp: Path, records) -> Path:
    return _write(tmp / "c.json", {"_metadata": V1_META, V1_KEY: ["CutlassFp8GemmRunner", 3], "_records": records})


# (id, builder(tmp_path) -> path to read, message fragment, loses_data)
CASES = [
    ("v1-empty-cache", lambda t: _write(t / "c.json", {"_metadata": V1_META}), "no cache entries (only _metadata)", False),
    ("v1-records-not-object", lambda t: _v1_records(t, [1]), "_records is a JSON array, expected an object; ignored", True),
    ("v1-namespace-not-object", lambda t: _v1_records(t, {"ns": 3}), "_records.ns is not an object; ignored", True),
    ("v1-metadata-list", lambda t: _write(t / "c.json", {"_metadata": [1], V1_KEY: ["R", 3]}),
     "_metadata is a list, not an object; ignored", True),
    ("v2-entry-without-manifest", lambda t: _write(_v2_store(t, None) / "entries" / "e.json", {"key": V1_KEY, "runner": "R", "tactic": 3}),
     "no manifest.json; FlashInfer version and GPU unknown", False),
    ("v2-manifest-invalid", lambda t: _v2_store(t, "{"), "invalid JSON at line 1 column 2", True),
    ("v2-manifest-list", lambda t: _v2_store(t, []), "manifest.json: not a JSON object; ignored", True),
    ("v2-schema-v3", lambda t: _v2_store(t, {"cache_schema": "v3"}), "cache_schema 'v3' (tiletune knows v2); read as v2", False),
    ("v2-no-entries", lambda t: _v2_store(t, {"cache_schema": "v2"}), "managed store has no entries", False),
    ("trtllm-no-metadata", lambda t: _write(t / "autotuner_cache.json", {"cache_data": {}}), "no metadata object; GPU unknown", False),
    ("trtllm-metadata-list", lambda t: _write(t / "autotuner_cache.json", {"metadata": [], "cache_data": {}}),
     "metadata is a JSON array, not an object; ignored, GPU unknown", True),
    ("trtllm-no-entries", lambda t: _write(t / "autotuner_cache.json", {"metadata": {}, "cache_data": {}}), "no cache entries", False),
    ("trtllm-section-list", lambda t: _write(t / "autotuner_cache.json", {"metadata": {}, "cache_data": {}, "rank_1": []}),
     "section 'rank_1' is a JSON array, expected an object", True),
    ("blocklist-metadata-str", lambda t: _write(t / "b.json", {"_metadata": "x", "invalid_tactics": {}}),
     '"_metadata" is not an object; environment unknown', True),
    ("log-without-autotuner-lines", lambda t: _write(t / "flashinfer_jit.log", "hello\nworld\n"),
     "nothing tiletune reads: looked for FlashInfer autotuner lines", False),
    ("directory-with-nothing", lambda t: _write(t / "d" / "readme.txt", "nothing here").parent,
     "no cache, log or blocklist found in this directory", False),
    ("jit-several-archs", lambda t: _workspace(t, "90a_100a", 1), "workspace built for several archs (90a_100a)", False),
]


@pytest.mark.parametrize("builder, fragment, loses", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_reader_note_and_loss(tmp_path, builder, fragment, loses):
    out = read_inputs([builder(tmp_path)], CTX)
    (p,) = [p for p in out.problems if fragment in p.message]
    assert not p.fatal and p.loses_data is loses, p
    # where the wording and the reader disagree, the case is listed with its reason
    assert (disagreement(p) is not None) == (loses != old_wording_rule(p)), p


def test_oversized_manifest_loses_the_environment(tmp_path, monkeypatch):
    store = _v2_store(tmp_path, {"cache_schema": "v2", "pad": "x" * 20000})
    monkeypatch.setenv("TILETUNE_MAX_JSON_MB", "0.01")  # 10 KiB
    (p,) = [p for p in read_inputs([store], CTX).problems if "manifest.json" in p.message]
    assert "over tiletune's" in p.message and p.message.endswith("; environment unknown")
    assert not p.fatal and p.loses_data and not old_wording_rule(p)
    assert disagreement(p) is not None


def test_modules_past_the_cap_are_a_loss(tmp_path, monkeypatch):
    from tiletune.readers import jit_workspace

    monkeypatch.setattr(jit_workspace, "MAX_MODULES", 2)  # the real cap is 2,000 directories
    ws = _workspace(tmp_path, "100a", 3)
    (p,) = [p for p in read_inputs([ws], CTX).problems if "entries, reading the first" in p.message]
    assert p.message == f"{ws / 'cached_ops'}: 3 entries, reading the first 2"
    assert not p.fatal and p.loses_data and not old_wording_rule(p)
    assert disagreement(p) is not None


def test_dangling_store_entry_is_a_loss(tmp_path):
    # an entry file that cannot be read (here a dangling link; as root, permissions cannot stage it)
    store = _v2_store(tmp_path, {"cache_schema": "v2"})
    (store / "entries" / "aaaa.json").symlink_to(tmp_path / "gone.json")
    (p,) = [p for p in read_inputs([store], CTX).problems if "aaaa.json" in p.message]
    assert "skipped" in p.message and not p.fatal and p.loses_data


# --- exit status through the CLI ------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """Every test here runs without the server cache variables (conftest.no_server_env)."""


def _json_problems(r) -> list[dict]:
    return json.loads(r.stdout)["problems"]


@pytest.mark.parametrize("name", ["bad/no-metadata.json", "bad/odd-metadata.json", "v1/sm90-h200-0.6.18-moe-bf16-records.json"])
def test_note_only_input_exits_0(run, sample, name):
    r = run("inspect", sample(name), "--format", "json")
    assert r.exit_code == 0, r.output
    problems = _json_problems(r)
    assert problems and all(p["loses_data"] is False and p["fatal"] is False for p in problems)
    assert "tiletune: note: " in r.stderr


def test_note_only_input_built_here_exits_0(run, tmp_path):
    cache = _write(tmp_path / "c.json", {"_metadata": V1_META})  # a valid cache with no entries
    r = run("inspect", cache)
    assert r.exit_code == 0, r.output
    assert "Notes on the inputs (nothing lost)" in r.output and "no cache entries" in r.output


@pytest.mark.parametrize("name", ["bad/bad-key.json", "bad/bad-value.json", "bad/v2-corrupt"])
def test_lossy_input_exits_2(run, sample, name):
    r = run("inspect", sample(name), "--format", "json")
    assert r.exit_code == 2, r.output
    problems = _json_problems(r)
    assert any(p["loses_data"] is True and p["fatal"] is False for p in problems)
    assert doc_has_entries(r)  # the rest was still read and printed


def doc_has_entries(r) -> bool:
    return bool(json.loads(r.stdout)["entries"])


def test_note_and_loss_together_exit_2(run, sample):
    r = run("inspect", sample("bad/no-metadata.json"), sample("bad/bad-key.json"))
    assert r.exit_code == 2, r.output


def test_discarded_metadata_exits_2(run, sample):
    r = run("inspect", sample("bad/metadata-not-object.json"), "--format", "json")
    assert [p["loses_data"] for p in _json_problems(r)] == [True]
    assert r.exit_code == 2, r.output
