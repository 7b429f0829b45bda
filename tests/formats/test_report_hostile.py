"""Reports go into GitHub issues: nothing from the inputs may become Markdown or HTML, reach the
terminal as an escape sequence, leak a path, user or host name, or make the report too long.

The injection cases are the ones the fuzzing campaign on 3d96422 found (issue 13 item 3): a newline
and ``` in a path or a ledger `op` closed the code fence and an `<img>` after it became raw HTML;
error text with two backticks produced live `</details>` and `<h1>`; links, images and @mentions
passed through. The rendered HTML is checked with markdown-it (CommonMark + GFM tables, raw HTML
on, as GitHub allows some), so what is asserted is what a reader would see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from wild_split import samples_mirror, without_held_out

from tiletune.analysis.pipeline import inspect
from tiletune.cli.commands import report as report_files
from tiletune.formats import markdown as md
from tiletune.formats import report
from tiletune.formats.redact import Redactor
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "cache_samples"
GOOD = SAMPLES / "v1" / "sm120-rtx5090-0.6.8-fp4-3part.json"
LEDGER = SAMPLES / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"

EVIL = ("x\n```\n<img src=x onerror=alert(1)> ``</details><h1>pwned</h1>`` [link](https://evil.example/) "
        "![i](https://evil.example/i.png) @alice www.evil.example \x1b]0;title\x07\x1b[2J")


def _html(text: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


def _hostile_inputs(tmp_path: Path) -> list[Path]:
    d = tmp_path / "in ``` dir\n<img src=y>"
    d.mkdir()
    cache = d / "cache.json"
    cache.write_text(GOOD.read_text().replace("CutlassFp4GemmRunner", "Runner" + EVIL.replace("\n", " ").replace('"', "'"), 1))
    line = json.loads(LEDGER.read_text().splitlines()[0])
    line.update(op=EVIL, passed=False, diagnosis="crashed", message=EVIL, runner="R" + EVIL)
    led = d / "ledger.jsonl"
    led.write_text(json.dumps(line) + "\n")
    return [cache, led]


@pytest.mark.parametrize("full", [False, True])
def test_nothing_from_the_inputs_renders_as_markdown_or_html(tmp_path, full):
    paths = _hostile_inputs(tmp_path)
    result = inspect(paths, ReadContext())
    ctx = report.ReportContext(paths=tuple(str(p) for p in paths))
    text = report.format_report(result, ctx, full=full)
    assert "pwned" in text  # the hostile text is there, as text
    html = _html(text)
    for tag in ("<img", "<a ", "<h1>pwned"):
        assert tag not in html, tag
    assert html.count("<h1") == 1  # the report's title
    # only the report's own folds: every <details> opened is closed, none comes from the inputs
    assert html.count("<details") == html.count("</details>") == text.count("<details>")
    assert "\x1b" not in text and "\x07" not in text
    # mentions and bare URLs are unlinked outside code (GitHub links neither inside code)
    assert not re.search(r"@alice|https://evil|www\.evil", re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S))
    # the fenced Reproduce block is closed by its own fence only
    fence = re.search(r"^(`{3,})bash$", text, re.M).group(1)
    block = text.split(fence + "bash\n", 1)[1]
    assert block.index("\n" + fence + "\n") > 0 and max(map(len, re.findall("`+", block.split("\n" + fence + "\n")[0]))) < len(fence)


def test_cell_and_code_escape_every_construct():
    assert md.cell("<b>&amp;</b>") == "&lt;b&gt;&amp;amp;&lt;/b&gt;"
    assert md.cell("a|b [x](y) `c` *d* _e_ ~f~") == "a\\|b \\[x\\](y) \\`c\\` \\*d\\* \\_e\\_ \\~f\\~"
    assert md.cell("# title") == "\\# title" and md.cell("- item") == "\\- item" and md.cell("0.6.14") == "0.6.14"
    assert md.cell("fp4_gemm") == "fp4_gemm"  # intraword underscores never emphasise: left alone
    assert md.code("a `` b") == "``` a `` b ```"
    assert md.code_block(["```", "~~~"]).startswith("````\n")
    assert "\x1b" not in md.cell("\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\")


def test_terminal_escapes_never_reach_the_terminal(run, tmp_path):
    cache = tmp_path / "c.json"
    cache.write_text(GOOD.read_text().replace("CutlassFp4GemmRunner", "R\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m", 1))
    bad = tmp_path / "bad.json"
    bad.write_text('{"_metadata": {}, "(\'op\\u001b[31m\', 1)": ["x", 1]}')
    for fmt in ("table", "markdown", "json"):
        res = run("inspect", cache, bad, "--format", fmt)
        assert res.exit_code in (0, 2)
        for stream in (res.stdout, res.stderr):
            assert "\x1b" not in stream and "\x07" not in stream and "\x9b" not in stream, fmt


# --- redaction ------------------------------------------------------------------------------------

def test_redact_paths_of_any_shape_and_short_names_in_any_case():
    """A simulated user 'Al' (2 characters) on host 'GPUBOX7' whose home is /home/Al."""
    r = Redactor(["/data/my runs/Al cache/v1.json", "runs/al/x.json", "rel dir"], host_names=["GPUBOX7", "gpubox7.corp.example"],
                 user_names=["Al"], home="/home/Al")
    text = ("read /data/my runs/Al cache/v1.json and runs/al/x.json and rel dir/y.log; /home/Al/.cache/flashinfer/al-cache.json "
            "on gpubox7.corp.example (GpuBox7), log cache_AL.log and /srv/gpubox7/al/z.json; a tile for all of them")
    out = r(text)
    assert out == ("read <dir3>/v1.json and <dir2>/x.json and <dir1>/y.log; ~/.cache/flashinfer/<user>-cache.json "
                   "on <host> (<host>), log cache_<user>.log and <dir4>/z.json; a tile for all of them")
    assert not re.search(r"(?i)gpubox|/data|/srv|\bal\b", out.replace("all", ""))


def test_generic_account_names_are_not_redacted_in_prose(monkeypatch):
    """Running as root (a container, CI) must not turn "root cause" into "<user> cause"; a real user
    name still goes, and the home folder is still folded into ~."""
    from tiletune.formats.redact import local_identity

    monkeypatch.setenv("USER", "root")
    monkeypatch.setenv("LOGNAME", "alice")
    monkeypatch.setenv("HOME", "/root")
    hosts, users, home = local_identity()
    assert "root" not in users and "alice" in users
    out = Redactor(host_names=hosts, user_names=users, home=home)("root cause: /root/logs/x.log by Alice")
    assert out.startswith("root cause: ~/logs/x.log by <user>"), out


def test_redact_names_inside_escaped_markdown():
    r = Redactor(["/data/x_/[y]/c.json"], user_names=["alice"], host_names=[])
    assert r(md.cell("/data/x_/[y]/c.json alice_x")) == "<dir1>/c.json <user>_x"


def test_report_redacts_by_default_and_no_redact_keeps(run, tmp_path):
    d = tmp_path / "my runs"
    d.mkdir()
    cache = d / "cache.json"
    cache.write_text(GOOD.read_text())
    res = run("report", cache, "--no-plot")
    assert res.exit_code == 0 and str(d) not in res.stdout and "<dir1>/cache.json" in res.stdout
    res = run("report", cache, "--no-plot", "--no-redact")
    assert str(cache) in res.stdout


# --- fitting a ticket -----------------------------------------------------------------------------

GITHUB_BODY_LIMIT = 65_536


def _dirs() -> list[Path]:
    return [SAMPLES, *sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "__pycache__")]


def _inputs(path: Path) -> list[str]:
    """The directory as inputs, the wild corpus's held-out artifacts left out (wild_split)."""
    return [str(p) for p in without_held_out(path)]


@pytest.mark.parametrize("path", _dirs(), ids=lambda p: p.name)
def test_every_sample_directory_report_fits_a_github_issue(run, path, tmp_path):
    # cache_samples/ and its wild corpus each as one directory, as a user passes them (the held-out
    # artifacts left out through a mirror of symbolic links), not as 125 working artifacts one by one
    mirror = samples_mirror(tmp_path) if path in (SAMPLES, SAMPLES / "wild") else None
    inputs = _inputs(path) if mirror is None else [str(mirror if path == SAMPLES else mirror / "wild")]
    res = run("report", *inputs, "--no-plot")
    assert res.exit_code in (0, 2) and res.stdout.startswith("# tiletune report")
    assert len(res.stdout) < GITHUB_BODY_LIMIT
    assert max(map(len, res.stdout.splitlines())) <= report.MAX_LINE
    # no crash (evidence lines may quote a log's "hit an exception: Traceback (most recent call last):")
    assert not any(line.startswith("Traceback") for line in res.output.splitlines())


def test_capped_report_says_what_was_left_out_and_how_to_get_it_all(run, tmp_path):
    samples = samples_mirror(tmp_path)  # (the wild corpus's held-out artifacts are never read)
    full = run("report", samples, "--no-plot", "--full", "-o", tmp_path / "full.md")
    capped = run("report", samples, "--no-plot")
    full_text = (tmp_path / "full.md").read_text()
    assert full.exit_code == capped.exit_code and len(full_text) > GITHUB_BODY_LIMIT > len(capped.stdout)
    assert re.search(r"_\d+ more .* left out to fit a GitHub issue; the full report \(attach it as a file\): "
                     r"`tiletune report <dir1> --full -o report-full\.md`_", capped.stdout)
    # the fused-MoE 'ambiguous' reasons fold like every long list
    section = capped.stdout.split("### sm120 trtllm::fused_moe::gemm1")[1].split("###")[0]
    assert "<details>" in section and "ambiguous" in section


def test_a_report_of_a_hundred_inputs_named_one_by_one_keeps_its_lines_short(run, tmp_path):
    # 125 inputs named one by one: the command that writes the full report no longer fits a line, so
    # the left-out notes say what to add to the command under Reproduce instead of quoting it
    inputs = []
    for i in range(125):
        cache = tmp_path / f"host-{i:03d}" / "autotune_cache.json"
        cache.parent.mkdir()
        cache.write_bytes((SAMPLES / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json").read_bytes())
        inputs.append(str(cache))
    res = run("report", *inputs, "--no-plot")
    assert res.exit_code == 0 and len(res.stdout) < GITHUB_BODY_LIMIT
    assert max(map(len, res.stdout.splitlines())) <= report.MAX_LINE
    assert re.search(r"_\d+ more .* left out to fit a GitHub issue; the full report \(attach it as a file\): the "
                     r"`tiletune report` command under Reproduce with `--full -o report-full\.md`_", res.stdout)


def test_pictures_to_upload_are_listed_and_install_hints_stay_out_of_the_ticket(tmp_path, monkeypatch):
    from tiletune.formats import roofline

    result = inspect([SAMPLES / "demo"], ReadContext())
    files = report_files.render_files(result, output=tmp_path / "t.md", as_json=False, plot=True, redact_names=False,
                                paths=["cache_samples/demo"], gpu=None)
    pngs = sorted(p.name for p in files if p is not None and p.suffix == ".png")
    assert pngs and all(f"- `{name}`" in files[tmp_path / "t.md"] for name in pngs)
    monkeypatch.setattr(roofline, "matplotlib_available", lambda: False)
    notices: list[str] = []
    files = report_files.render_files(result, output=tmp_path / "t.md", as_json=False, plot=True, redact_names=False,
                                paths=["cache_samples/demo"], gpu=None, notices=notices)
    assert "tiletune[plot]" not in files[tmp_path / "t.md"] and any("pip install 'tiletune[plot]'" in n for n in notices)
