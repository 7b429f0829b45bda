"""The wild corpus (cache_samples/wild/) checked as data: provenance, schema and self-consistency.

These tests check the corpus itself, not tiletune's reading of it (the log-reader tests do that):
every artifact has a complete artifact.json whose source is a public https page, uses only the
shared event vocabulary, quotes clues that really are in its text, counts the event lines it
claims, carries a hand-written `expected.view` (what the person's default view must say first),
sits on one side of the by-source split recorded in SPLIT.json, and is listed in the corpus README.
Nothing here runs tiletune: held-out artifacts must not be read by it during development.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

WILD = Path(__file__).resolve().parents[2] / "cache_samples" / "wild"

# The shared event vocabulary (the corpus README repeats it); fatal kinds are the ones that end a run.
EVENT_KINDS = {
    "runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "oom_fallback",
    "tactics_skipped", "tactic_failed", "tactic_profiled", "config_cache_hit", "configs_saved",
    "configs_loaded", "autotune_cache_path", "tuning_progress", "version_banner", "cache_fragment", "exception",
    # added with issue 23 (the README's vocabulary table says what each one is)
    "no_valid_config", "fallback_tactic", "memory_error", "engine_failed",
}
FATAL_KINDS = {"runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "exception",
               "memory_error", "engine_failed"}
SOURCE_KINDS = {"issue", "pr", "comment", "blog", "forum", "file"}
AUTHOR_ROLES = {"user", "maintainer"}
SOURCE_KEYS = {"url", "kind", "repo", "number", "date", "author_role"}
STATED_KEYS = {"gpu", "arch", "flashinfer", "engine", "cuda", "driver", "model"}
EXPECTED_KEYS = {"arch", "flashinfer_version", "fatal", "leads_with", "events", "entries", "view"}
# expected.view: what the default `tiletune inspect FILE` view must say first (README, "The person's view")
VIEW_KEYS = {"first_sentence", "must_say", "must_not_say", "ended_by", "stage", "arch"}
VIEW_STAGES = {"warm-up", "serving", "unknown"}
ARCH_CLUE_KINDS = {"literal token", "gpu line of this machine", "inferred"}
# round one's held-out side was judged and released (SPLIT.json "round_one"); the current held-out sets are
# rounds two and three, whose artifacts come only from source groups the corpus did not hold before
HELD_OUT_SIDES = ("held_out_2", "held_out_3")
SPLIT_SIDES = {"working", *HELD_OUT_SIDES}
EVENT_KEYS = {"kind", "count", "op", "runner", "detail"}
ENTRY_KEYS = {"op", "runner", "tactic", "status"}
ENTRY_STATUSES = {"chosen", "failed", "ok", "profiled", "skipped", "fallback"}
# Lines whose number in the text must equal the sum of the counts of one event kind.
COUNTED_MARKERS = {
    "tactics_skipped": re.compile(r"Skipped \d+ unsupported tactic"),
    "tma_descriptor_failed": re.compile(r"Failed to initialize the TMA descriptor"),
    "oom_fallback": re.compile(r"OOM detected, falling back"),
    "autotune_cache_path": re.compile(r"(?:Running FlashInfer autotune with cache|Using FlashInfer autotune cache file): "),
    "configs_saved": re.compile(r"\[Autotuner\]: Saved \d+ configs"),
    "configs_loaded": re.compile(r"\[Autotuner\]: Loaded \d+ configs"),
    "config_cache_hit": re.compile(r"Config cache hit for "),
}
MAX_ARTIFACT_BYTES = 64 * 1024

SLUGS = sorted(p.name for p in WILD.iterdir() if p.is_dir()) if WILD.is_dir() else []


def _doc(slug: str) -> dict:
    return json.loads((WILD / slug / "artifact.json").read_text(encoding="utf-8"))


def _artifact_files(slug: str) -> list[Path]:
    return sorted(p for p in (WILD / slug).iterdir() if p.is_file() and p.name != "artifact.json")


def _text(slug: str) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in _artifact_files(slug))


# cache_samples/ is swept by tests/readers/test_problem_severity.py, whose frozen wording rule reads
# these words in a problem message (which names the directory) as a data loss
SEVERITY_WORDS = ("skipped", "could not", "cannot", "unusable", "read error", "invalid", "not a ", "is not ", "expected")


def test_slugs_are_plain_and_hold_no_severity_words():
    for slug in SLUGS:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*", slug), slug
        assert not any(w in slug for w in SEVERITY_WORDS), slug


def test_corpus_has_enough_artifacts():
    # issue 23: at least 90 artifacts, at least 43 of them added by that issue
    assert len(SLUGS) >= 90, f"cache_samples/wild/ holds only {len(SLUGS)} artifacts"
    added = _split()["added_by_issue_23"]
    assert len(added) >= 43 and set(added) <= set(SLUGS), len(added)


@pytest.mark.parametrize("slug", SLUGS)
def test_artifact_json_has_the_schema(slug):
    doc = _doc(slug)
    assert set(doc) == {"source", "stated", "trimmed", "holds", "expected"}
    assert set(doc["source"]) == SOURCE_KEYS and set(doc["stated"]) == STATED_KEYS
    src = doc["source"]
    assert src["kind"] in SOURCE_KINDS and src["author_role"] in AUTHOR_ROLES
    assert src["date"] is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", src["date"])
    assert doc["trimmed"] is None or (isinstance(doc["trimmed"], str) and doc["trimmed"].strip())
    assert isinstance(doc["holds"], str) and doc["holds"].strip()
    ex = doc["expected"]
    assert set(ex) == EXPECTED_KEYS
    assert isinstance(ex["fatal"], bool) and isinstance(ex["leads_with"], str) and ex["leads_with"].strip()
    for fact in ("arch", "flashinfer_version"):
        assert set(ex[fact]) == {"value", "clue"}
        # a fact without a clue is a guess; a clue without a fact says nothing
        assert (ex[fact]["value"] is None) == (ex[fact]["clue"] is None), fact
    if ex["arch"]["value"] is not None:
        assert re.fullmatch(r"sm\d{2,3}[af]?", ex["arch"]["value"])


@pytest.mark.parametrize("slug", SLUGS)
def test_source_is_a_public_https_page_of_the_named_repo(slug):
    src = _doc(slug)["source"]
    url = src["url"]
    assert url.startswith("https://"), url
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)/(issues|pull)/(\d+)(#[\w-]+)?", url)
    if m:  # a GitHub thread: the repo and number must be the URL's
        assert src["repo"] == m.group(1) and src["number"] == int(m.group(3)), (url, src["repo"], src["number"])
        assert (m.group(2) == "pull") == (src["kind"] == "pr") or src["kind"] == "comment"
        return
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)/blob/[0-9a-f]{40}/\S+", url)
    if m:  # a file of a public repository, pinned to a commit
        assert src["kind"] == "file" and src["repo"] == m.group(1) and src["number"] is None, (url, src)
    else:
        assert src["kind"] in ("blog", "forum"), f"{url} is neither a GitHub thread nor a pinned file; kind must be blog or forum"
        assert src["repo"] is None and src["number"] is None, src


@pytest.mark.parametrize("slug", SLUGS)
def test_events_and_entries_use_the_vocabulary(slug):
    ex = _doc(slug)["expected"]
    assert ex["events"] or ex["entries"] or ex["view"]["must_say"], "an artifact with nothing expected says nothing"
    for ev in ex["events"]:
        assert set(ev) == EVENT_KEYS, ev
        assert ev["kind"] in EVENT_KINDS, ev["kind"]
        assert isinstance(ev["count"], int) and ev["count"] >= 1
        assert isinstance(ev["detail"], dict)
    for en in ex["entries"]:
        assert set(en) == ENTRY_KEYS, en
        assert en["status"] in ENTRY_STATUSES
        assert en["tactic"] is None or isinstance(en["tactic"], (int, list, str))
    # an event that ends a run (unless the text says it did not) makes the artifact fatal; a
    # fatal artifact may lack one when the excerpt stops before the exception's own line
    for ev in ex["events"]:
        if ev["kind"] in FATAL_KINDS - {"tma_descriptor_failed"} and ev["detail"].get("fatal_here", True):
            assert ex["fatal"], f"{ev['kind']} ends a run, but expected.fatal is false"


@pytest.mark.parametrize("slug", SLUGS)
def test_artifact_files_are_small_nonempty_text_without_local_paths(slug):
    files = _artifact_files(slug)
    assert files, f"{slug} has no artifact file beside artifact.json"
    for p in [*files, WILD / slug / "artifact.json"]:
        raw = p.read_bytes()
        assert raw.strip(), f"{p.name} is empty"
        assert len(raw) <= MAX_ARTIFACT_BYTES, f"{p.name} is {len(raw)} bytes"
        assert b"\x00" not in raw
        text = raw.decode("utf-8")
        assert "/work/" not in text, f"{p.name} names a path of this machine"


@pytest.mark.parametrize("slug", SLUGS)
def test_clues_are_quoted_from_the_text(slug):
    ex, text = _doc(slug)["expected"], _text(slug)
    for fact in ("arch", "flashinfer_version"):
        clue = ex[fact]["clue"]
        if clue is not None:
            assert clue in text, f"{fact} clue {clue!r} is not in the artifact text"


@pytest.mark.parametrize("slug", SLUGS)
def test_event_counts_match_the_marker_lines(slug):
    ex, text = _doc(slug)["expected"], _text(slug)
    for kind, marker in COUNTED_MARKERS.items():
        # an event a ticket states in words (detail.stated_in_prose) has no log line to count
        claimed = sum(ev["count"] for ev in ex["events"] if ev["kind"] == kind and not ev["detail"].get("stated_in_prose"))
        assert claimed == len(marker.findall(text)), (kind, claimed, len(marker.findall(text)))


@pytest.mark.parametrize("slug", SLUGS)
def test_view_expectation_is_complete_and_quotes_the_text(slug):
    doc, text = _doc(slug), _text(slug)
    view = doc["expected"]["view"]
    assert set(view) == VIEW_KEYS, sorted(view)
    assert isinstance(view["first_sentence"], str) and view["first_sentence"].strip()
    for key in ("must_say", "must_not_say"):
        items = view[key]
        assert isinstance(items, list) and items, key
        assert all(isinstance(i, str) and i.strip() for i in items), key
    assert view["stage"] in VIEW_STAGES, view["stage"]
    # what ended the run is quoted from the text, never paraphrased
    assert view["ended_by"] is None or (isinstance(view["ended_by"], str) and view["ended_by"] in text), view["ended_by"]
    arch = view["arch"]
    assert set(arch) == {"value", "clue", "kind"}, arch
    assert (arch["value"] is None) == (arch["clue"] is None) == (arch["kind"] is None), arch
    if arch["value"] is not None:
        assert re.fullmatch(r"sm\d{2,3}[af]?", arch["value"]), arch
        assert arch["kind"] in ARCH_CLUE_KINDS, arch
        assert arch["clue"] in text, f"view arch clue {arch['clue']!r} is not in the artifact text"
    # one reading of the text: the view names the same arch as the JSON-level expectation
    assert arch["value"] == doc["expected"]["arch"]["value"], (arch["value"], doc["expected"]["arch"]["value"])
    # a view that names no end must not belong to an artifact said to show one, and the reverse is allowed
    # (a text can show that a run ended without quoting the error: then `must_say` says so)
    if view["ended_by"] is not None:
        assert doc["expected"]["fatal"], "ended_by names an error but expected.fatal is false"


def _split() -> dict:
    return json.loads((WILD / "SPLIT.json").read_text(encoding="utf-8"))


def test_split_covers_every_artifact_once_by_source_with_a_quarter_held_out():
    split = _split()
    assert split["rule"].strip() and re.fullmatch(r"\d{4}-\d{2}-\d{2}", split["date"])
    sides = split["sides"]
    assert set(sides) == set(SLUGS), (sorted(set(SLUGS) - set(sides)), sorted(set(sides) - set(SLUGS)))
    assert set(sides.values()) <= SPLIT_SIDES
    # by source: every group lies wholly on one side, and the groups partition the corpus
    seen: list[str] = []
    for name, group in split["groups"].items():
        assert group["side"] in SPLIT_SIDES, name
        assert group["slugs"] and all(sides[s] == group["side"] for s in group["slugs"]), name
        if group["read_by_tests"]:  # an artifact another test reads by name has been read: it cannot be held out
            assert group["side"] == "working", name
        seen += group["slugs"]
    assert sorted(seen) == sorted(SLUGS), "a slug is in no group or in two"
    per_side = {h: sum(side == h for side in sides.values()) for h in HELD_OUT_SIDES}
    held = sum(per_side.values())
    assert held >= 0.25 * len(sides), f"only {held} of {len(sides)} artifacts are held out"
    assert split["counts"] == {"artifacts": len(sides), **per_side, "working": len(sides) - held,
                               "groups": len(split["groups"])}
    for h in HELD_OUT_SIDES:
        assert sorted(split[f"added_for_{h}"]) == sorted(s for s, side in sides.items() if side == h), h


def test_round_one_split_is_kept_and_released():
    # round one's held-out artifacts were judged and their misses published: they are working now, and the
    # record of that split (its rule, counts, groups and slugs) stays in SPLIT.json
    split = _split()
    one = split["round_one"]
    assert one["rule"].strip() and one["counts"]["held_out"] == len(one["held_out"]) == 35
    for slug in one["held_out"]:
        assert split["sides"][slug] == "working", slug
    for name in one["held_out_groups"]:
        group = split["groups"][name]
        assert group["side"] == "working" and group["released"].strip(), name
    assert sorted(s for g in one["held_out_groups"] for s in split["groups"][g]["slugs"]) == sorted(one["held_out"])


def test_held_out_sets_share_no_source_with_the_working_side_or_each_other():
    # each held-out round is new sources only: no thread, downstream repository or web site of it also holds
    # a working artifact or an artifact of the other held-out round
    sides = _split()["sides"]

    def source(slug: str) -> str:
        src = _doc(slug)["source"]
        if src["repo"] is None:
            return re.sub(r"^https://([^/]+)/.*$", r"\1", src["url"])
        upstream = src["repo"] in {"flashinfer-ai/flashinfer", "vllm-project/vllm", "sgl-project/sglang",
                                   "NVIDIA/TensorRT-LLM", "NVIDIA/cutlass"}
        return f"{src['repo']}#{src['number']}" if upstream else src["repo"]

    by_side = {side: {source(s) for s in SLUGS if sides[s] == side} for side in SPLIT_SIDES}
    for h in HELD_OUT_SIDES:
        others = set().union(*(srcs for side, srcs in by_side.items() if side != h))
        assert by_side[h] and not by_side[h] & others, (h, sorted(by_side[h] & others))


def test_one_source_thread_or_repository_is_one_group():
    # the artifacts of one upstream thread, or of one downstream repository, never straddle the split
    sides = _split()["sides"]
    by_source: dict[str, set[str]] = {}
    for slug in SLUGS:
        src = _doc(slug)["source"]
        if src["repo"] is None:
            continue
        upstream = src["repo"] in {"flashinfer-ai/flashinfer", "vllm-project/vllm", "sgl-project/sglang",
                                   "NVIDIA/TensorRT-LLM", "NVIDIA/cutlass"}
        key = f"{src['repo']}#{src['number']}" if upstream and src["number"] is not None else src["repo"]
        by_source.setdefault(key, set()).add(sides[slug])
    assert all(len(s) == 1 for s in by_source.values()), {k: v for k, v in by_source.items() if len(v) > 1}


def test_readme_table_lists_every_slug_and_only_those():
    readme = (WILD / "README.md").read_text(encoding="utf-8")
    assert "## The artifacts" in readme
    readme = readme.split("## The artifacts", 1)[1]
    listed = set(re.findall(r"^\| `([a-z0-9][a-z0-9.-]*)` \|", readme, flags=re.M))
    assert listed == set(SLUGS), (sorted(set(SLUGS) - listed), sorted(listed - set(SLUGS)))
