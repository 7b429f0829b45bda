"""`tiletune deploy TABLE --layout vllm|sglang --ranks N -o DIR`: one tuned table seeded into every rank's
file (tuner/deploy.py), optionally checked against a target (`--env`, analysis/check.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from msgspec import structs

from tiletune.tuner.deploy import Seeded


def run_deploy(table: Path, out_dir: Path, layout: str, ranks: int, pp: int, dp: int, skip_ops: Sequence[str],
               env_file: Optional[Path], measure: Sequence[str] = ()) -> Seeded:
    from tiletune.tuner.deploy import seed, seed_v2, trtllm

    if layout == "trtllm":
        return trtllm(table)
    if layout == "flashinfer-v2":
        seeded = seed_v2(table, out_dir, measure, skip_ops)
        check_dir = Path(seeded.directory)
    else:
        seeded = seed(table, out_dir, layout, ranks, pp=pp, dp=dp, skip_ops=skip_ops)
        check_dir = out_dir
    if env_file is not None:
        from tiletune.cli.commands.check import run_check
        from tiletune.formats.check import headline

        result = run_check([check_dir], env_file, None, ranks)
        seeded = structs.replace(seeded, check_headline=headline(result))
    return seeded
