"""Bad input: one clear line naming the file (and key), the rest still read, nothing written.

One sample per failure mode lives in cache_samples/bad/ (see cache_samples/README.md); the
cases that cannot be committed (unreadable file, 1 GiB cache, broken link, huge directory,
symlink loop) are built in tmp_path.
"""

from __future__ import annotations

import os

import pytest

from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext

CTX = ReadContext()


@pytest.mark.parametrize(
    "name, fatal, expected",
    [
        # the entries before the cut are recovered line by line; what followed it is lost (exit 2)
        ("truncated.json", False, "invalid JSON at line 26 column 3: Unterminated string starting at (the file ends early: truncated?)"),
        ("wrong-type.json", True, "top level is a JSON array, expected an object of cache entries"),
        ("empty.json", True, "empty file, nothing to read"),
        ("binary.json", True, "binary file"),
        # text with nothing tiletune reads is no bad input: a note saying what was looked for (exit 0)
        ("notes.txt", False, "nothing tiletune reads: looked for FlashInfer autotuner lines"),
        ("bad-key.json", False, "cannot parse it (unclosed '('); entry skipped"),
        ("bad-value.json", False, "is not [runner, tactic, ...] (a runner name, then a tactic); entry skipped"),
        ("no-metadata.json", False, "no _metadata: FlashInfer version and GPU are unknown"),
        ("odd-metadata.json", False, "_metadata.flashinfer_version is 'unknown'; version unknown"),
        ("metadata-not-object.json", False, "_metadata is a str, not an object; ignored"),
    ],
)
def test_one_line_per_bad_file(sample, name, fatal, expected):
    path = sample(f"bad/{name}")
    out = read_inputs([path], CTX)
    assert out.problems, "expected a problem"
    p = out.problems[0]
    assert p.fatal is fatal
    assert p.message.startswith(str(path) + ": ") and "\n" not in p.message
    assert expected in p.message


def test_bad_key_names_the_key_and_keeps_the_rest(sample):
    out = read_inputs([sample("bad/bad-key.json")], CTX)
    msgs = [p.message for p in out.problems]
    assert len(msgs) == 2 and any("'not a key at all'" in m for m in msgs)
    assert len(out.records) == 7  # the good entries (buckets 1..64)


def test_unknown_op_is_kept(sample):
    out = read_inputs([sample("bad/unknown-op.json")], CTX)
    assert out.problems == ()
    assert any(r.op == "fp16_frobnicate" and r.runner == "FrobnicatorRunner" for r in out.records)


def test_one_bad_input_does_not_stop_the_others(sample, tmp_path):
    out = read_inputs([sample("bad/truncated.json"), tmp_path / "missing.json", sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json")], CTX)
    assert [(p.fatal, p.loses_data) for p in out.problems] == [(False, True), (True, True)]
    assert out.problems[1].message == f"{tmp_path / 'missing.json'}: no such file or directory"
    assert len(out.records) == 40 + 4  # the good cache, and the 4 entries before the truncated file's cut


def test_broken_symlink(tmp_path):
    link = tmp_path / "cache.json"
    link.symlink_to(tmp_path / "gone.json")
    out = read_inputs([link], CTX)
    assert out.problems[0].message == f"{link}: broken symbolic link"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file(tmp_path, sample):
    p = tmp_path / "cache.json"
    p.write_bytes(sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json").read_bytes())
    p.chmod(0)
    try:
        out = read_inputs([p], CTX)
    finally:
        p.chmod(0o644)
    assert out.problems[0].message == f"{p}: cannot read it (permission denied)" and out.problems[0].fatal


def test_unreadable_file_as_root_via_directory(tmp_path):
    # even when permissions cannot be tested (root), an unlistable path must not raise
    out = read_inputs([tmp_path], CTX)
    assert out.records == () and "no cache, log or blocklist found" in out.problems[0].message


def _proc_io(field: str) -> int:
    """This process's I/O counter from /proc/self/io (Linux): rchar = bytes read, syscr = read calls."""
    try:
        with open("/proc/self/io") as f:
            return int(next(ln.split()[1] for ln in f if ln.startswith(field + ":")))
    except (OSError, StopIteration):
        pytest.skip("no /proc/self/io here to count reads with")


def _bytes_read() -> int:
    return _proc_io("rchar")


def _read_calls() -> int:
    return _proc_io("syscr")


def test_1_gib_cache_is_refused_without_reading_it(tmp_path):
    p = tmp_path / "huge.json"
    with open(p, "wb") as f:  # sparse: 1 GiB on paper, a few bytes on disk
        f.write(b'{\n  "_metadata": {"flashinfer_version": "0.6.14", "gpu": "NVIDIA B200"},\n  "(\'fp4_gemm\', ')
        f.truncate(1 << 30)
    before = _bytes_read()
    out = read_inputs([p], CTX)
    assert _bytes_read() - before < 64 << 20  # the 1 GiB was not read (work counted, not timed)
    (problem,) = out.problems
    assert problem.fatal and problem.message.startswith(f"{p}: 1024 MiB JSON file is over tiletune's 256 MiB limit")
    assert "TILETUNE_MAX_JSON_MB" in problem.message


def test_limit_is_configurable(tmp_path, sample, monkeypatch):
    p = sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json")
    monkeypatch.setenv("TILETUNE_MAX_JSON_MB", "0.001")
    out = read_inputs([p], CTX)
    assert out.records == () and "over tiletune's 0.001 MiB limit" in out.problems[0].message


def test_thousands_of_unrelated_files_and_a_symlink_loop(tmp_path, sample):
    junk = tmp_path / "junk"
    for i in range(40):
        d = junk / f"d{i}"
        d.mkdir(parents=True)
        for j in range(100):  # 4,000 files: object files, unrelated JSON, text
            ext = (".o", ".json", ".txt", ".so")[j % 4]
            (d / f"f{j}{ext}").write_text('{"model_type": "llama"}' if ext == ".json" else "x" * 64)
    deep = junk / "d7" / "sglang" / "flashinfer" / "autotune" / "0.6.14" / "sm120" / "abcd"
    deep.mkdir(parents=True)
    (deep / "rank_tp0_pp0_dp0.json").write_bytes(sample("v1/sm120-rtxpro6000-0.6.12-fp4-3part.json").read_bytes())
    (junk / "d3" / "loop").symlink_to(junk, target_is_directory=True)  # a loop back to the top
    before = _read_calls()
    out = read_inputs([junk], CTX)
    calls = _read_calls() - before
    assert calls <= 2 * 4_000, f"{calls} read calls walking 4,000 unrelated files"  # at most a sniff each
    assert [k for _, k in out.sources] == ["sglang"]
    assert len(out.records) == 16 and {r.rank for r in out.records} == {"tp0_pp0_dp0"}


def test_inputs_are_not_modified(sample):
    paths = sorted(p for p in (sample("bad")).rglob("*") if p.is_file())
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in paths}
    read_inputs([sample("bad")] + paths, CTX)
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in paths} == before
    assert sorted(p for p in sample("bad").rglob("*") if p.is_file()) == paths  # nothing new written


def test_same_input_twice_is_read_once(sample):
    f = sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json")
    out = read_inputs([f, f.parent, f], CTX)
    assert [s for s, _ in out.sources].count(str(f)) == 1
    assert len([r for r in out.records if r.source == str(f)]) == 40


def test_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "cache.json"
    os.mkfifo(fifo)
    out = read_inputs([fifo, "/dev/null"], CTX)
    assert [p.message for p in out.problems] == [f"{fifo}: not a regular file or directory", "/dev/null: not a regular file or directory"]


def test_sources_list_only_inputs_that_were_used(sample):
    good, bad = sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json"), sample("bad/truncated.json")
    out = read_inputs([bad, good, bad.parent / "notes.txt"], CTX)
    # the truncated cache is used (its entries before the cut); a text with nothing tiletune reads was
    # read too (it is an input, with a note), never "0 inputs"
    assert out.sources == ((str(bad), "flashinfer-v1"), (str(good), "flashinfer-v1"), (str(bad.parent / "notes.txt"), "log"))


NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root to drop to an unprivileged user, and a system python3")
def test_permission_denied_for_real(sample):
    """Run read_inputs as user 'nobody' so permissions really apply (root reads everything)."""
    import json
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="tiletune-perm-", dir="/tmp"))
    try:
        base.chmod(0o755)
        (base / "locked.json").write_bytes(sample("v1/sm120-rtx5090-0.6.8-fp4-3part.json").read_bytes())
        (base / "locked.json").chmod(0)
        (base / "closed").mkdir()
        (base / "closed" / "c.json").write_text("{}")
        (base / "closed").chmod(0)
        repo = Path(__file__).resolve().parents[2]
        # tiletune's core dependency msgspec, copied where 'nobody' can read it (this interpreter's
        # site-packages may sit under /root); the system python has the same ABI in CI and here
        import msgspec

        deps = base / "deps"
        shutil.copytree(Path(msgspec.__file__).parent, deps / "msgspec")
        for d in (deps, *deps.rglob("*")):
            d.chmod(0o755 if d.is_dir() else 0o644)
        code = ("import json, sys; from tiletune.readers import read_inputs; from tiletune.readers.interface import ReadContext; "
                "o = read_inputs(sys.argv[1:], ReadContext()); print(json.dumps([[p.message, p.fatal] for p in o.problems]))")
        args = [str(base / "locked.json"), str(base / "closed"), str(base / "closed" / "c.json")]
        # system python: the pyenv interpreter lives under /root, which 'nobody' cannot enter
        r = subprocess.run(["/usr/bin/python3", "-c", code, *args], capture_output=True, text=True, cwd="/tmp",
                           env={"PYTHONPATH": f"{repo}:{deps}", "PATH": "/usr/bin:/bin"}, user=NOBODY, timeout=60)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == [
            [f"{args[0]}: cannot read it (permission denied)", True],
            [f"{args[1]}: cannot list it (permission denied)", True],
            [f"{args[2]}: cannot reach it (permission denied on a parent directory)", True],
        ]
    finally:
        (base / "closed").chmod(0o755)
        shutil.rmtree(base)
