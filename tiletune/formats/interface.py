"""The formatter interface: one `Formatter` per command, mapping each --format it offers to the
function that renders the command's result in that format.

A renderer takes the command's finished result and returns text: one string, or string chunks
written as they come (inspect's JSON for a big cache). It computes nothing. Renderers are named
as "module:function" inside tiletune.formats and imported on use, so a command loads only the
formatting code of the format it prints.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable, Mapping, Union, cast

from msgspec import Struct

from tiletune.core.errors import UsageError

Rendered = Union[str, Iterable[str], Iterable[bytes]]  # (bytes: UTF-8 chunks, the JSON writer's)


class Formatter(Struct, frozen=True, gc=False):
    """How one command's result is written: format name -> "module:function" in tiletune.formats."""

    command: str
    renderers: Mapping[str, str]

    @property
    def formats(self) -> tuple[str, ...]:
        return tuple(self.renderers)

    def renderer(self, fmt: str) -> Callable[[Any], Rendered]:
        target = self.renderers.get(fmt)
        if target is None:
            raise UsageError(f"--format {fmt}: tiletune {self.command} writes {' or '.join(self.renderers)}")
        module, _, name = target.partition(":")
        return cast(Callable[[Any], Rendered], getattr(importlib.import_module(f"tiletune.formats.{module}"), name))

    def render(self, result: Any, fmt: str, **view: Any) -> Rendered:
        """`view`: the command's view options (inspect: all_rows, runtime_m, width, colour); every renderer
        of a command that has them accepts them, and a format that shows everything ignores them."""
        return self.renderer(fmt)(result, **view) if view else self.renderer(fmt)(result)

    def render_text(self, result: Any, fmt: str, **view: Any) -> str:
        """`render`, joined into one string (for results that are never big)."""
        out = self.render(result, fmt, **view)
        if isinstance(out, str):
            return out
        return "".join(c.decode("utf-8", "surrogatepass") if isinstance(c, (bytes, bytearray)) else c for c in out)
