"""Write the shipped JSON Schemas from the output types (the Structs are the contract's one source).

    python3 -m tools.schemas            # rewrite tiletune/schemas/*.schema.json
    python3 -m tools.schemas --check    # exit 1, naming each file, when a shipped file is not what the types say

`tiletune inspect --format json` prints a `tiletune.formats.inspect_doc.InspectDoc`; `tiletune diff
--format json` a `tiletune.formats.diff_out.DiffDoc`. msgspec writes each schema from the type
(field names, types, nullability, the docstrings and `Meta` descriptions); this adds the document's
identity. tests/formats/test_schemas.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tiletune" / "schemas"


def documents() -> dict[str, dict[str, Any]]:
    """file name -> schema, from the types."""
    from tiletune.formats.diff_out import DiffDoc
    from tiletune.formats.inspect_doc import InspectDoc

    heads = {
        "inspect.schema.json": (InspectDoc, {
            "$id": "https://github.com/tiletune/tiletune/schemas/inspect.schema.json",
            "title": "tiletune inspect output (tiletune.inspect/1)",
            "description": ("What `tiletune inspect --format json` prints. Contract fields (DESIGN.md) keep their "
                            "names and meanings; extra fields may be added. Generated from "
                            "tiletune.formats.inspect_doc.InspectDoc by tools/schemas.py."),
        }),
        "diff.schema.json": (DiffDoc, {
            "$id": "tiletune.diff/1",
            "title": "tiletune diff --format json",
            "description": ("Two warm-ups compared in tile terms. Entries are matched by (arch, op, runner, problem "
                            "bucket incl. MoE experts and top-k); failures by (arch, op, runner, config). Across "
                            "FlashInfer releases configs are compared, never tactic numbers. Exit status 0 when "
                            "changes is empty, 1 when not, 2 when an input was unusable. Generated from "
                            "tiletune.formats.diff_out.DiffDoc by tools/schemas.py."),
        }),
    }
    out = {}
    for name, (kind, head) in heads.items():
        generated = msgspec.json.schema(kind)
        out[name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **head, **generated}
    return out


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    stale = []
    for name, schema in documents().items():
        path = OUT / name
        want = text(schema)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != want:
                stale.append(name)
        else:
            path.write_text(want, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for name in stale:
        print(f"tiletune/schemas/{name} is not what the types say: run python3 -m tools.schemas", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
