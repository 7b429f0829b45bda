"""`tiletune deploy`'s result as text or JSON (schema tiletune.deploy/1). Computes nothing."""

from __future__ import annotations

import json

from tiletune.tuner.deploy import Seeded


def render_text(s: Seeded) -> str:
    if s.layout == "trtllm":
        return "\n".join(s.settings) + "\n"
    if s.layout == "flashinfer-v2":
        lines = [f"wrote FlashInfer's managed v2 store {s.directory}: a manifest and {s.entries} entries from {s.source}, "
                 "as autotune_v2 publishes them"]
        if s.check_headline:
            lines.append(f"tiletune check on what was written: {s.check_headline}")
        return "\n".join(lines + list(s.settings)) + "\n"
    lines = [f"wrote {len(s.files)} rank file(s) of {s.layout} into {s.directory}: the same {s.entries}-entry table "
             f"({s.source}) in each, so every rank's file has the same fingerprint and content"]
    if s.rank_bound_keys:
        lines.append(f"note: {s.rank_bound_keys} key(s) carry the tuning rank's tp/ep/cluster rank (FlashInfer 0.6.18rc2-0.7.1 "
                     "fused MoE): they hit only on a rank with those indices")
    if s.check_headline:
        lines.append(f"tiletune check on what was written: {s.check_headline}")
    lines += list(s.settings)
    return "\n".join(lines) + "\n"


def to_json(s: Seeded) -> str:
    import msgspec

    return json.dumps({"schema": "tiletune.deploy/1", **msgspec.to_builtins(s)}, indent=1) + "\n"
