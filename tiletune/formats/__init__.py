"""The output layer: every command's result becomes text here, and only here.

`FORMATTERS` names, per command, the renderer of each --format it offers (see interface.py);
commands and the CLI call `render(command, result, fmt)`. Formatters read finished results
(`tiletune.analysis.results`, the model's and the tuner's types) and compute nothing.
"""

from __future__ import annotations

from typing import Any

from tiletune.formats.interface import Formatter, Rendered

FORMATTERS: dict[str, Formatter] = {
    f.command: f
    for f in (
        Formatter("inspect", {"table": "table:format_inspect", "json": "json_out:iter_inspect",
                              "markdown": "markdown:format_inspect"}),
        Formatter("diff", {"table": "diff_out:format_table", "json": "diff_out:format_json",
                           "markdown": "diff_out:format_markdown"}),
        Formatter("catalog", {"table": "catalog:render_table", "json": "catalog:render_json",
                              "markdown": "catalog:render_markdown"}),
        Formatter("retry", {"table": "retry:render_table", "json": "retry:render_json",
                            "markdown": "retry:render_markdown"}),
        Formatter("model", {"table": "model_view:answer_table", "json": "model_view:answer_json",
                            "markdown": "model_view:answer_markdown"}),
        Formatter("gpus", {"table": "model_view:gpu_table_text", "json": "model_view:gpu_table_json"}),
        Formatter("doctor", {"table": "doctor:render_text", "json": "doctor:to_json", "markdown": "doctor:render_markdown"}),
        Formatter("deploy", {"table": "deploy:render_text", "json": "deploy:to_json"}),
        Formatter("fleet", {"table": "fleet:render_text", "json": "fleet:to_json", "markdown": "fleet:render_markdown"}),
        Formatter("check", {"table": "check:render_text", "json": "check:to_json", "markdown": "check:render_markdown"}),
    )
}


def render(command: str, result: Any, fmt: str, **view: Any) -> Rendered:
    """`result` of `command` in format `fmt` (UsageError when the command does not write that format);
    `view` holds the command's view options (see Formatter.render)."""
    return FORMATTERS[command].render(result, fmt, **view)


def render_text(command: str, result: Any, fmt: str, **view: Any) -> str:
    """`render`, as one string."""
    return FORMATTERS[command].render_text(result, fmt, **view)


__all__ = ["FORMATTERS", "Formatter", "Rendered", "render", "render_text"]
