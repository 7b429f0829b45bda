"""--reproducer that writes nothing is exit 2 with the reason and the fix (issue 25, item 8).

Before: with no CUTLASS headers, and on the `--shape ... --arch sm120 --flashinfer-version 0.6.17`
route ("no decoded CUTLASS tile": explicit targets were never decoded), retry wrote nothing and
exited 0. Writing a folder compiles nothing: a CUTLASS tree holding only its version header stands
in for the headers, as in tests/kernels/test_kernel_identity.py.
"""

from __future__ import annotations

from tiletune.tuner import cutlass_toolchain as toolchain

SHAPE = ("--op", "fp4_gemm", "--tactic", "3", "--shape", "128x4096x4096")


def _no_headers(monkeypatch, tmp_path):
    monkeypatch.setattr(toolchain, "cutlass_candidates", lambda: [])


def _version_only_headers(monkeypatch, tmp_path):
    inc = tmp_path / "cutlass" / "include" / "cutlass"
    inc.mkdir(parents=True)
    (inc / "version.h").write_text("#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 5\n#define CUTLASS_PATCH 0\n")
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(tmp_path / "cutlass"))


def test_no_headers_is_exit_2_naming_the_fix(run, sample, tmp_path, monkeypatch):
    _no_headers(monkeypatch, tmp_path)
    out = tmp_path / "repro"
    res = run("retry", sample("demo"), "--no-run", "--reproducer", out, "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 2, res.output
    assert "nothing written" in res.output and "kernels/get_cutlass.sh" in res.output
    assert "TILETUNE_CUTLASS_DIR" in res.output and not out.exists()


def test_a_command_line_tactic_is_decoded_for_its_release_and_written(run, tmp_path, monkeypatch):
    _version_only_headers(monkeypatch, tmp_path)
    out = tmp_path / "repro"
    res = run("retry", *SHAPE, "--arch", "sm120", "--flashinfer-version", "0.6.17", "--no-run", "--reproducer", out,
              "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 0, res.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    assert (folder / "build.sh").is_file() and "wrote" in res.output


def test_without_a_release_no_tile_is_known_and_nothing_is_written(run, tmp_path, monkeypatch):
    _version_only_headers(monkeypatch, tmp_path)
    out = tmp_path / "repro"
    res = run("retry", *SHAPE, "--no-run", "--reproducer", out, "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 2 and "--flashinfer-version" in res.output and not out.exists()
