"""Suggested commands are complete, shell-quoted and never wrapped (issue 25, item 9).

Before, inspect's "next for ..." retry command dropped the user's --arch / --flashinfer-version
and was wrapped over three lines, so pasting its first line ran a bare `tiletune retry`. Here the
command is taken from the output, split as a shell would, and run.
"""

from __future__ import annotations

import shlex
import shutil

LOG = "logs/sm120_0.6.17_warmup_debug.log"  # names no release: --flashinfer-version decides the decode


def _commands(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith("tiletune retry ")]


def test_the_retry_command_keeps_the_reading_flags_and_runs_as_printed(run, sample, tmp_path):
    res = run("inspect", sample(LOG), "--arch", "sm120", "--flashinfer-version", "0.6.17")
    (cmd,) = _commands(res.output)
    args = shlex.split(cmd)
    assert args[args.index("--arch") + 1] == "sm120"
    assert args[args.index("--flashinfer-version") + 1] == "0.6.17"
    assert args[args.index("--tactic") + 1] == "6,7,8,9"
    # the line is the whole command: it runs (without a GPU: --no-run) and selects the 4 failures.
    # (The log names no GPU, so the blocklist is "." - a folder where retry names the file after the
    # GPU it ran on; with no GPU and no attempt here there is none to name it after.)
    assert args[-2:] == ["--blocklist", "."]
    out = run(*args[1:-2], "--no-run", "--ledger", tmp_path / "l.jsonl")
    assert out.exit_code == 0 and "4 target(s) selected" in out.output, out.output


def test_a_path_with_spaces_is_quoted_and_the_line_is_never_wrapped(run, sample, tmp_path):
    odd = tmp_path / "my logs" / "warm up.log"
    odd.parent.mkdir()
    shutil.copy(sample(LOG), odd)
    for fmt in ("table", "markdown"):
        res = run("inspect", odd, "--flashinfer-version", "0.6.17", "-f", fmt)
        (cmd,) = _commands(res.output)
        assert shlex.split(cmd)[2] == str(odd) and shlex.split(cmd)[-2:] == ["--blocklist", "."], cmd
    md = run("inspect", odd, "--flashinfer-version", "0.6.17", "-f", "markdown").output
    assert "```sh" in md  # a code block: nothing escaped inside it


def test_the_blocklist_is_named_as_flashinfer_names_it(run, sample):
    res = run("inspect", sample("ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"))
    (cmd,) = _commands(res.output)
    assert cmd.endswith("--blocklist tactics_NVIDIA_H200.json")


def _reproduce_block(report: str) -> list[str]:
    block = report.split("## Reproduce", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def test_the_reports_commands_keep_every_path_as_written_and_name_each_tactic_once(run, sample, tmp_path):
    # Before: the report's Reproduce block squeezed double spaces out of the whole line (a quoted
    # path with two spaces became another path), left -o's name unquoted, and wrote one retry per
    # failure row: the H200 ledger's tactic 0, failing four ways, four times, while tactic 3 fell
    # past the cap of eight.
    odd = tmp_path / "two  spaces" / "h200 ledger.jsonl"
    odd.parent.mkdir()
    shutil.copy(sample("ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"), odd)
    out = tmp_path / "my  report.md"
    res = run("report", odd, "--no-redact", "-o", out)
    assert res.exit_code == 0, res.output
    lines = _reproduce_block(out.read_text(encoding="utf-8"))
    report_cmd = shlex.split(next(ln for ln in lines if ln.startswith("tiletune report ")))
    assert report_cmd[2] == str(odd) and report_cmd[report_cmd.index("-o") + 1] == out.name
    (retry,) = [shlex.split(ln, comments=True) for ln in lines if ln.startswith("tiletune retry ")]
    assert retry[2] == str(odd)
    tactics = retry[retry.index("--tactic") + 1].split(",")
    assert sorted(tactics, key=int) == ["0", "1", "2", "3", "99", "150"]
    # as pasted (without a GPU: --no-run) it selects what failed
    done = run(*retry[1:], "--no-run", "--ledger", tmp_path / "l.jsonl")
    assert done.exit_code == 0 and "target(s) selected" in done.output, done.output
