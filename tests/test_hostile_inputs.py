"""Hostile inputs (issue 13): one bad value never crashes the run, and no special file is ever read.

Each case is one the fuzzing campaign on 3d96422 found: a traceback (RecursionError, ValueError
past Python's 4,300-digit limit, OverflowError, AttributeError/KeyError on a ledger field of the
wrong type) that stopped the whole run, or a FIFO / device where a regular file was expected,
which hung or read until memory ran out. Now: one line naming the input, exit status 2, and the
good input beside it is still reported.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext
from tiletune.tuner import resume
from tiletune.tuner.ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent
GOOD = ROOT / "cache_samples" / "v1" / "sm120-rtx5090-0.6.8-fp4-3part.json"
TRTLLM = ROOT / "cache_samples" / "trtllm" / "autotuner_cache.json"
LEDGER = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
V2STORE = ROOT / "cache_samples" / "v2store"
KEY = ("('fp4_gemm', 'CutlassFp4GemmRunner', ((1, 2048), (2048, 14336), (-1, 256), (256, 14336), (), (0,), "
       "(-1, 14336), (0,), (0,), (-1,)))")
META = {"flashinfer_version": "0.6.8", "gpu": "NVIDIA GeForce RTX 5090"}
DEEP = "[" * 600 + "]" * 600


def _v1(tactic_text: str, key: str = KEY) -> str:
    return json.dumps({"_metadata": META, key: ["CutlassFp4GemmRunner", 0]}).replace(" 0]}", f" {tactic_text}]}}")


def _trtllm(old: str, new: str) -> str:
    text = TRTLLM.read_text()
    assert old in text
    return text.replace(old, new, 1)


def _first_min_time() -> str:
    """The text of the first min_time value TensorRT-LLM's writer stored in the sample (e.g. 0.019400000000000972)."""
    m = re.search(r'"min_time": ([0-9.eE+-]+)', TRTLLM.read_text())
    assert m is not None
    return m.group(0)


HOSTILE_FILES = {
    # name: (content, what the one line says)
    "deep.json": ('{"_metadata": {}, "x": ' + "[" * 1200 + "]" * 1200 + "}", "nested too deeply"),
    "deep-tactic.json": (_v1(DEEP), "nested more than 64 levels"),
    "digits-tactic.json": (_v1("9" * 5000), "integer of 5,000 digits"),
    "digits-dimension.json": (_v1("0", KEY.replace("2048", "9" * 5000, 1)), "a number of 5,000 characters"),
    "trtllm-digits.json": (_trtllm('"runner_id": 0', '"runner_id": ' + "1" * 5000), "integer of 5,000 digits"),
    "trtllm-min-time.json": (_trtllm(_first_min_time(), '"min_time": 1' + "0" * 400), "integer of 401 digits"),
    "blocklist-digits.json": (json.dumps({"invalid_tactics": {"fp4_gemm::CutlassFp4GemmRunner": [1, 2]}})
                              .replace("[1,", "[" + "1" * 5000 + ","), "integer of 5,000 digits"),
    "blocklist-deep.json": (json.dumps({"invalid_tactics": {"fp4_gemm::CutlassFp4GemmRunner": [1, 0]}})
                            .replace(", 0]", ", " + DEEP + "]"), "nested more than 64 levels"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_one_bad_value_is_one_line_and_the_good_input_beside_it_is_reported(run, tmp_path, name):
    content, fragment = HOSTILE_FILES[name]
    bad = tmp_path / name
    bad.write_text(content)
    res = run("inspect", bad, GOOD, "--format", "json")
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 2
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    assert any(e["source"] == str(GOOD) for e in doc["entries"])  # the good input is still there
    lines = [ln for ln in res.stderr.splitlines() if str(bad) in ln]
    assert lines and any(fragment in ln for ln in lines), res.stderr
    assert "Traceback" not in res.output


def test_trtllm_min_time_beyond_float_range_is_not_timed():
    """1e999 is what Python's json makes inf; TRT-LLM writes Infinity for the never-timed fallback."""
    text = _trtllm(_first_min_time(), '"min_time": 1e999')
    p = Path(os.environ.get("TMPDIR", "/tmp")) / f"tiletune-test-{os.getpid()}-trt.json"
    try:
        p.write_text(text)
        out = read_inputs([p], ReadContext())
    finally:
        p.unlink()
    assert out.records and not any(pr.loses_data for pr in out.problems)


def _ledger_lines() -> list[dict]:
    return [json.loads(x) for x in LEDGER.read_text().splitlines()]


def _failed_line(**changes) -> dict:
    a = dict(_ledger_lines()[0], passed=False, diagnosis="crashed", message="boom")
    a.update(changes)
    return a


@pytest.mark.parametrize("changes, fragment", [
    ({"env": "a string"}, "field 'env' is a string"),
    ({"arch": ["sm90"]}, "field 'arch' is an array"),
    ({"problem": {"m": 1, "k": 2}}, "problem.n is missing"),
    ({"problem": {"m": 1, "n": "2", "k": 2}}, "problem.n is a string"),
    ({"env": {"gpu": ["H200"]}}, "env.gpu is an array"),
    ({"times_s": [1, "x"]}, "times_s holds"),
    ({"op": 7}, "field 'op' is a number"),
], ids=["env-str", "arch-list", "problem-no-n", "problem-n-str", "env-gpu-list", "times-str", "op-int"])
def test_ledger_field_of_the_wrong_type_skips_that_line_only(run, tmp_path, changes, fragment):
    led = tmp_path / "l.jsonl"
    led.write_text(json.dumps(_ledger_lines()[1]) + "\n" + json.dumps(_failed_line(**changes)) + "\n")
    res = run("inspect", led, "--format", "json")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{led}:2: {fragment}" in res.stderr
    assert len(json.loads(res.stdout)["entries"]) == 1  # line 1 is still read
    bl = tmp_path / "bl.json"
    res = run("retry", led, "--ledger", led, "--no-run", "--blocklist", bl)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code in (0, 2) and bl.exists() and fragment in res.stderr


@pytest.mark.parametrize("raw, fragment", [
    (json.dumps(_failed_line()).replace('"tactic": 0', '"tactic": ' + "[" * 900 + "]" * 900), "JSON nested"),
    (json.dumps(_failed_line()).replace('"tactic": 0', '"tactic": ' + "7" * 5000), "integer of 5,000 digits"),
], ids=["deep", "digits"])
def test_resume_skips_deep_and_5000_digit_lines(tmp_path, raw, fragment):
    led = tmp_path / "l.jsonl"
    led.write_text(json.dumps(_ledger_lines()[1]) + "\n" + raw + "\n")
    contents = Ledger(led).load()
    assert len(contents.attempts) == 1 and fragment in contents.problems[0] and contents.problems[0].startswith(f"{led}:2: ")
    assert len(resume.finished(contents, _ledger_lines()[1]["env_id"])) == 1


def test_bounded_loads_limits():
    assert bounded_input.loads("[" * 64 + "]" * 64, "x") is not None
    with pytest.raises(ReaderError, match="nested more than 64"):
        bounded_input.loads("[" * 65 + "]" * 65, "x")
    assert bounded_input.loads('{"k": "' + "[" * 500 + '"}', "x") == {"k": "[" * 500}  # brackets inside strings do not count
    assert bounded_input.loads('["\\"[[[", ' + "[" * 60 + "]" * 60 + "]", "x")[0] == '"[[['
    assert bounded_input.loads("1" * 40, "x") == int("1" * 40)
    with pytest.raises(ReaderError, match="integer of 41 digits"):
        bounded_input.loads("[" + "1" * 41 + "]", "x")
    assert bounded_input.loads('["' + "1" * 100 + '"]', "x") == ["1" * 100]  # digits inside a string are text


def test_utf16_and_bom_caches_are_read(tmp_path):
    text = GOOD.read_text()
    for name, data in (("bom.json", b"\xef\xbb\xbf" + text.encode()), ("utf16.json", text.encode("utf-16")),
                       ("utf16le.json", text.encode("utf-16-le")), ("utf16be.json", text.encode("utf-16-be"))):
        p = tmp_path / name
        p.write_bytes(data)
        out = read_inputs([p], ReadContext())
        assert len(out.records) == len(read_inputs([GOOD], ReadContext()).records), (name, out.problems)


def test_walk_limit_is_reported(tmp_path):
    d = tmp_path
    for i in range(45):
        d = d / f"d{i}"
    d.mkdir(parents=True)
    (d / "cache.json").write_text(GOOD.read_text())
    out = read_inputs([tmp_path], ReadContext())
    assert not out.records
    assert any("directories deep; not walked further" in p.message for p in out.problems)


def test_an_unexpected_error_in_one_reader_is_one_line_and_the_rest_is_read(run, tmp_path, monkeypatch):
    """The last resort: whatever a reader did not expect becomes a problem of that input alone."""
    from tiletune.readers import trtllm

    def boom(path, ctx):
        raise ZeroDivisionError("a bug")
        yield  # pragma: no cover

    monkeypatch.setattr(trtllm, "read", boom)
    res = run("inspect", TRTLLM, GOOD, "--format", "json")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{TRTLLM}: could not be read: unexpected ZeroDivisionError (a bug)" in res.stderr
    assert any(e["source"] == str(GOOD) for e in json.loads(res.stdout)["entries"])


def test_an_unexpected_error_after_reading_is_one_line_exit_2(run, monkeypatch):
    from tiletune.formats import json_out

    def boom(result, **view):
        raise RecursionError("deep")
        yield  # pragma: no cover

    monkeypatch.setattr(json_out, "iter_inspect", boom)
    res = run("inspect", GOOD, "--format", "json")
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"tiletune: {GOOD}: unexpected RecursionError (deep); a tiletune bug, please report it"]


# --- special files: run in a child with a time limit, so a regression fails instead of hanging -------

def _tiletune(*args: object, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        return subprocess.run([sys.executable, "-m", "tiletune", *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:  # a hang is the failure this guards against, not a speed goal
        pytest.fail(f"tiletune {' '.join(map(str, args))} hung on a special file")


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "fifo.json"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_gpu_file_must_be_a_regular_file(special, fifo):
    path = fifo if special == "fifo" else Path(special)
    res = _tiletune("gpus", "--gpu-file", path)
    assert res.returncode == 2 and res.stderr.startswith(f"tiletune: {path}: is a ") and "not a regular file" in res.stderr
    assert "Traceback" not in res.stderr


def test_ledger_must_be_a_regular_file(fifo):
    res = _tiletune("retry", GOOD, "--ledger", fifo, "--no-run", "--blocklist", fifo.parent / "bl.json")
    assert res.returncode == 2 and f"{fifo}: is a FIFO (named pipe), not a regular file" in res.stderr


def test_fifo_in_a_v2_store_is_skipped(tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(V2STORE, store)
    entries = next(store.rglob("entries"))
    n = len(list(entries.glob("*.json")))
    os.mkfifo(entries / "ffff.json")
    res = _tiletune("inspect", store, "--format", "json")
    assert res.returncode == 2 and "ffff.json: is a FIFO (named pipe), not a regular file" in res.stderr
    assert len(json.loads(res.stdout)["entries"]) >= n


def test_fifo_ninja_log_in_a_jit_workspace_is_not_read(tmp_path):
    import shutil

    ws = tmp_path / "jit"
    shutil.copytree(ROOT / "cache_samples" / "jit", ws)
    log = next(ws.rglob(".ninja_log"))
    log.unlink()
    os.mkfifo(log)
    res = _tiletune("inspect", ws, "--format", "json")
    assert res.returncode in (0, 2) and "Traceback" not in res.stderr
    assert json.loads(res.stdout)["entries"]


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_named_special_files_are_refused(special, fifo):
    path = fifo if special == "fifo" else Path(special)
    res = _tiletune("inspect", path, GOOD, "--format", "json")
    assert res.returncode == 2 and str(path) in res.stderr and json.loads(res.stdout)["entries"]


def test_open_input_refuses_devices_and_fifos(fifo):
    for p, kind in ((fifo, r"a FIFO \(named pipe\)"), (Path("/dev/zero"), "a character device")):
        with pytest.raises(ReaderError, match=f"is {kind}, not a regular file"):
            bounded_input.read_input(p, limit=1 << 20)
    with pytest.raises(ReaderError, match="limit"):
        bounded_input.read_input(GOOD, limit=10)


def test_read_input_reads_all_of_a_file_longer_than_its_size_says():
    # read_input asks for the size fstat gives plus one byte, then reads on (up to the limit) when
    # that byte came: a file that grew while read, or one whose size says 0 (Linux /proc files)
    p = Path("/proc/self/maps")
    if not p.is_file() or os.stat(p).st_size != 0:
        pytest.skip("needs a Linux /proc file, whose size reads 0")
    data = bounded_input.read_input(p, limit=1 << 24)
    assert len(data) > 100 and data.endswith(b"\n") and data.count(b"\n") == len(data.splitlines())
    with pytest.raises(ReaderError, match="grew past"):
        bounded_input.read_input(p, limit=100)
    assert bounded_input.read_input(GOOD, limit=1 << 24) == GOOD.read_bytes()


# --- strict JSON, capped ranges -------------------------------------------------------------------

def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"bare {name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def test_json_output_has_no_nan_or_infinity(run, tmp_path):
    doc = json.loads(GOOD.read_text())
    keys = [k for k in doc if k != "_metadata"]
    doc[keys[0]] = ["CutlassFp4GemmRunner", float("nan")]
    doc[keys[1]] = ["CutlassFp4GemmRunner", 3, ["cuda_graph_profile_replays", float("inf"), "l2_cache_policy", "cold"]]
    cache = tmp_path / "nan.json"
    cache.write_text(json.dumps(doc))  # Python writes bare NaN / Infinity, as FlashInfer's json.dump would
    assert "NaN" in cache.read_text()
    res = run("inspect", cache, "--format", "json")
    out = _strict(res.stdout)
    assert any(e["tactic"] is None for e in out["entries"])
    assert any("written as null" in n for n in out["notes"])
    res = run("report", cache, "--format", "json", "--no-plot")
    assert any("written as null" in n for n in _strict(res.stdout)["notes"])


@pytest.mark.parametrize("spec, fragment", [
    ("0-1000000000000", "names 1,000,000,000,001 tactics; at most 100,000"),
    ("1-" + "9" * 5000, "numbers over 18 digits"),
    ("9" * 5000, "over 18 digits"),
])
def test_tactic_ranges_are_capped(run, spec, fragment):
    res = run("retry", GOOD, "--tactic", spec, "--no-run")
    assert res.exit_code == 2 and fragment in res.stderr and "Traceback" not in res.output


def test_long_digit_run_prefilter_matches_the_regex():
    # bounded_input.has_long_digit_run (translate + one substring search) says what rb"\d{41}" says
    import random
    import re

    from tiletune.core.bounded_input import MAX_INT_DIGITS, has_long_digit_run

    plain = re.compile(rb"\d{%d}" % (MAX_INT_DIGITS + 1))
    rng = random.Random(3)
    alphabet = b"0123456789" * 6 + b' ,.-+eE[]{}":x\n\xd9\xa0\xef\xbc\x91'  # with non-ASCII digit bytes (UTF-8)
    cases = [b"", b"1" * MAX_INT_DIGITS, b"1" * (MAX_INT_DIGITS + 1), b"x" + b"9" * (MAX_INT_DIGITS + 1) + b"x",
             b"1" * MAX_INT_DIGITS + b"." + b"1" * MAX_INT_DIGITS, "\u0661".encode() * 50]
    for _ in range(400):
        n = rng.choice((10, 100, 1000))
        cases.append(bytes(rng.choice(alphabet) for _ in range(n)))
        cases.append(b"a" + b"7" * rng.randrange(MAX_INT_DIGITS - 2, MAX_INT_DIGITS + 3) + b"b")
    assert {has_long_digit_run(c) for c in cases} == {True, False}
    for c in cases:
        assert has_long_digit_run(c) == bool(plain.search(c)), c


def test_depth_check_matches_the_plain_one_and_the_parsed_depth():
    # bounded_input._depth_over drops adjacent quote pairs before the string regex; it must say what the
    # regex alone said (strings full of brackets, quotes and backslashes included), and refuse
    # exactly the values nested deeper than the limit
    import random
    import re

    from tiletune.core.bounded_input import _NOT_STRUCTURE, _depth_over

    string = re.compile(rb'"[^"]*"')

    def plain(text: bytes, limit: int) -> bool:
        b = text.translate(None, _NOT_STRUCTURE)
        if b.count(b"[") + b.count(b"{") <= limit:
            return False
        b = string.sub(b"", b.replace(b"\\\\", b"").replace(b'\\"', b"").replace(b"\\", b""))
        b = b.translate(bytes.maketrans(b"{}", b"[]"))
        for _ in range(limit):
            if not b:
                return False
            b = b.replace(b"[]", b"")
        return bool(b)

    def depth(v) -> int:
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        return 0

    rng = random.Random(7)
    chars = '[]{}"\\ab, '

    def value(d: int):
        roll = rng.random()
        if d > 12 or roll < 0.3:
            return "".join(rng.choice(chars) for _ in range(rng.randrange(4))) if rng.random() < 0.7 else rng.randrange(9)
        if roll < 0.65:
            return [value(d + 1) for _ in range(rng.randrange(4))]
        return {"".join(rng.choice(chars) for _ in range(rng.randrange(3))): value(d + 1) for _ in range(rng.randrange(4))}

    seen = set()
    for _ in range(1500):
        v = value(0)
        text = json.dumps(v, indent=rng.choice((None, 2))).encode()
        for limit in (0, 1, 2, 3, 5, 8):
            got = _depth_over(text, limit)
            assert got == plain(text, limit), (text, limit)
            assert got == (depth(v) > limit), (text, limit)
            seen.add(got)
    assert seen == {True, False}


@pytest.mark.parametrize("opener,closer", [("[", "]"), ("{\"a\":", "}")])
def test_alternating_brackets_count_one_level_each(tmp_path, opener, closer):
    # {"a":[{"a":[ ... ]}]} nested MAX_DEPTH + 1 deep is refused, MAX_DEPTH deep is read (the check
    # once peeled a `[` and a `{` level in one pass, letting up to twice the limit through)
    from tiletune.core.bounded_input import MAX_DEPTH, loads

    def nested(levels: int) -> str:
        kinds = [(opener, closer), ("[", "]")]
        text = "1"
        for i in range(levels):
            o, c = kinds[i % 2]
            text = f"{o}{text}{c}"
        return text

    assert loads(nested(MAX_DEPTH), "ok.json") is not None
    with pytest.raises(ReaderError, match=f"nested more than {MAX_DEPTH} levels"):
        loads(nested(MAX_DEPTH + 1), "deep.json")
