"""Render a tiletune Markdown report the way GitHub shows it, and screenshot it (development tool).

    python3 tools/render_report.py report.md --png docs/screenshots/report.png [--open-details] [--height 2400]

Markdown -> HTML with markdown-it-py's GitHub-flavoured preset ("gfm-like": pipe tables,
strikethrough, autolinks, raw HTML such as <details>), wrapped in a page styled like GitHub's
issue view (980 px column, system font, bordered tables, zebra rows), then headless Chromium
takes the screenshot. Images in the report are linked relatively, so the page is written beside
the report. Needs: pip install markdown-it-py linkify-it-py; apt-get install chromium.
Not a test dependency.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# A small stand-in for GitHub's markdown CSS (written for this tool, values picked by eye).
CSS = """
body { margin: 0; background: #ffffff; }
.markdown-body { box-sizing: border-box; max-width: 980px; margin: 0 auto; padding: 32px 45px;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  font-size: 14px; line-height: 1.5; color: #1f2328; word-wrap: break-word; }
.markdown-body h1, .markdown-body h2 { padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; }
.markdown-body h1 { font-size: 2em; margin: .67em 0 16px; }
.markdown-body h2 { font-size: 1.5em; margin: 24px 0 16px; }
.markdown-body h3 { font-size: 1.25em; margin: 24px 0 16px; }
.markdown-body p, .markdown-body ul, .markdown-body table, .markdown-body pre, .markdown-body details { margin: 0 0 16px; }
.markdown-body ul { padding-left: 2em; }
.markdown-body code { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace;
  font-size: 85%; padding: .2em .4em; background: rgba(129,139,152,.12); border-radius: 6px; }
.markdown-body pre { padding: 16px; overflow: auto; font-size: 85%; line-height: 1.45; background: #f6f8fa; border-radius: 6px; }
.markdown-body pre code { padding: 0; background: transparent; font-size: 100%; white-space: pre; }
.markdown-body table { border-spacing: 0; border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: auto; }
.markdown-body th, .markdown-body td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body img { max-width: 100%; }
.markdown-body summary { cursor: pointer; }
.markdown-body sub { color: #59636e; }
"""


def render_html(markdown_text: str, title: str, open_details: bool) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("gfm-like").render(markdown_text)
    if open_details:
        body = re.sub(r"<details>", "<details open>", body)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{CSS}</style></head><body><article class='markdown-body'>{body}</article></body></html>"
    )


def screenshot(html_path: Path, png: Path, width: int, height: int) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        sys.exit("chromium not found: apt-get install chromium")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}",
            f"--screenshot={png.resolve()}", html_path.resolve().as_uri(),
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def trim(png: Path, crop: str | None) -> None:
    """Cut the blank space below the page's end (the window is taller than the page), then crop."""
    from PIL import Image, ImageChops

    img = Image.open(png).convert("RGB")
    box = ImageChops.difference(img, Image.new("RGB", img.size, (255, 255, 255))).getbbox()
    if box:
        img = img.crop((0, 0, img.width, min(img.height, box[3] + 32)))
    if crop:
        top, bottom = (int(x) for x in crop.split(":"))
        img = img.crop((0, top, img.width, min(bottom, img.height)))
    img.save(png, optimize=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--png", type=Path, required=True)
    ap.add_argument("--width", type=int, default=1012)
    ap.add_argument("--height", type=int, default=2400)
    ap.add_argument("--open-details", action="store_true", help="expand every <details> fold")
    ap.add_argument("--crop", metavar="TOP:BOTTOM", help="keep only these pixel rows (after trimming the blank page end)")
    args = ap.parse_args()
    html = render_html(args.report.read_text(encoding="utf-8"), args.report.name, args.open_details)
    page = args.report.parent / f".{args.report.stem}.render.html"  # beside the report: relative images resolve
    page.write_text(html, encoding="utf-8")
    try:
        args.png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, args.png, args.width, args.height)
    finally:
        page.unlink(missing_ok=True)
    trim(args.png, args.crop)
    print(args.png)


if __name__ == "__main__":
    main()
