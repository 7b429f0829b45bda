"""docs/guide.md's table of the JSON `inputs[]` keys says every key the writer gives, and no other.

The keys come from the writer itself (`InputFacts.to_jsonable`, which writes every key whatever the text
held: `null` or `[]` where it said nothing), so a key added to the JSON without a line in the guide fails
here: a fact that only the JSON holds must at least be findable in the docs."""

from __future__ import annotations

import re
from pathlib import Path

from tiletune.core.events import InputFacts

ROOT = Path(__file__).resolve().parents[1]


def _documented_keys() -> set[str]:
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = text.split("#### In the JSON: `inputs[]`", 1)[1].split("\n###", 1)[0]
    keys: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            keys.update(re.findall(r"`([a-z_]+)`", first_cell))
    return keys


def test_every_inputs_key_the_json_writes_is_in_the_guide_and_no_other():
    written = set(InputFacts(source="x").to_jsonable())
    documented = _documented_keys()
    assert written - documented == set(), f"JSON inputs[] keys missing from docs/guide.md: {sorted(written - documented)}"
    assert documented - written == set(), f"docs/guide.md names keys the JSON does not write: {sorted(documented - written)}"
