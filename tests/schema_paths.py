"""Walking the generated JSON Schemas (tools/schemas.py) in tests."""

from __future__ import annotations


def schema_node(schema: dict, *path: str) -> dict:
    """The sub-schema at `path` (property names; arrays step into their items), following the
    generated schemas' `$ref`s into `$defs`: `schema_node(s, "entries", "decode")`."""
    def deref(node: dict) -> dict:
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        if "anyOf" in node:  # Optional[X]: the X
            node = deref(next(n for n in node["anyOf"] if n.get("type") != "null"))
        return node
    node = deref(schema)
    for name in path:
        node = deref(node)
        if node.get("type") == "array":
            node = deref(node["items"])
        node = deref(node["properties"][name])
    return node
