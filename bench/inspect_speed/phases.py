"""Where `tiletune inspect` spends its CPU time, stage by stage (CPU seconds and shares).

    python3 bench/inspect_speed/phases.py                       # every workload, best of 3
    python3 bench/inspect_speed/phases.py --workloads fp4-distinct-50k --runs 5

run.py says how far each command is from its goal; this says which stage to work on. Each run is a
fresh child process that times, with `time.process_time()`, the stages `tiletune inspect FILE`
goes through: imports (the CLI, the pipeline and both formatters), reading the file, decoding
every record, the model (`ModelPort.analyze_entries`), the rest of the analysis (failures,
never-tried tiles, verdicts: `pipeline.build` on the warm port, minus its memoised per-entry
pass), and each format (JSON, the terminal table). Not counted: interpreter start and the command line's parsing (run.py
counts them). Each figure is the minimum over --runs, in CPU seconds of this machine (printed
beside its machine line) and as a share of the JSON command's stages; the table column is the
terminal table's format stage, for comparison with the JSON one. The in-process `json.load` of
the same file is printed too (run.py's ratios divide by a whole `python -c 'json.load(...)'`
child, interpreter start included, so they are not comparable with it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "readers"))  # the workload generators run.py and the tests read

from big_caches import make_cache, make_fp4_distinct, make_fp4_terse  # noqa: E402

WORKLOADS = {
    "mixed-2k": (make_cache, 2000),
    "mixed-50k": (make_cache, 50000),
    "fp4-distinct-2k": (make_fp4_distinct, 2000),
    "fp4-distinct-50k": (make_fp4_distinct, 50000),
    "fp4-terse-50k": (make_fp4_terse, 50000),  # issue 21's hardest ratio (values [runner, tactic] only)
}
STAGES = ("imports", "read", "decode", "model", "analysis", "json", "table")

# The child: times each stage of one inspect in this process and prints them as JSON.
CHILD = r"""
import gc, json, sys, time
gc.disable()  # as the CLI runs every inspecting command (cli_core.gc_paused): stages measured as it runs them
from pathlib import Path
cpu = time.process_time
t = cpu()
try:  # the layered layout (core/, analysis/, cli/): what a plain `tiletune inspect FILE` imports
    import tiletune.cli.output  # noqa: F401
    from tiletune.analysis import pipeline
    from tiletune.analysis.model_port import ModelPort
except ImportError:  # an older tree (before the layout moves)
    try:  # since round 5: launch.py, without typer
        import tiletune.launch, tiletune.cli_core  # noqa: E401, F401
    except ImportError:  # older still: the typer CLI
        import tiletune.cli  # noqa: F401
    from tiletune import pipeline
    from tiletune.model_adapter import ModelPort
from tiletune.decode import decode_all
from tiletune.formats import json_out, table
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext
out = {"imports": cpu() - t}
path = Path(sys.argv[1])
t = cpu(); o = read_inputs([path], ReadContext()); out["read"] = cpu() - t
t = cpu(); entries = decode_all(o.records); out["decode"] = cpu() - t
port = ModelPort.default(None)
t = cpu(); port.inputs_name(pipeline._gpu_named_per_arch(entries)); port.analyze_entries(entries); model = cpu() - t
out["model"] = model
t = cpu(); port.analyze_entries(entries); again = cpu() - t  # the per-entry pass alone, every case memoised
t = cpu()  # the whole analysis on the warm port, less that pass: failures, never-tried tiles, verdicts
res = pipeline.build(entries, events=o.events, inputs=o.inputs, problems=o.problems, sources=o.sources, model=port)
out["analysis"] = max(0.0, cpu() - t - again)
t = cpu(); sum(len(c) for c in json_out.iter_inspect(res)); out["json"] = cpu() - t  # (text or bytes chunks, consumed)
t = cpu(); table.format_inspect(res); out["table"] = cpu() - t
t = cpu(); json.load(open(path)); out["json.load"] = cpu() - t
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    print(f"Command: python3 bench/inspect_speed/phases.py --runs {args.runs} --workloads {' '.join(args.workloads)}")
    print(f"Machine: CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the start; CPU seconds, minimum of {args.runs} run(s).\n")
    json_path = [s for s in STAGES if s != "table"]
    print("| workload | " + " | ".join(STAGES) + " | JSON command's stages | json.load in process |")
    print("|---|" + "---:|" * (len(STAGES) + 2))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.workloads:
            make, n = WORKLOADS[name]
            path = Path(tmp) / f"{name}.json"
            make(n, path)
            runs = []
            for _ in range(args.runs):
                got = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                                     env=env, cwd=REPO, check=True)
                runs.append(json.loads(got.stdout))
            best = {k: min(r[k] for r in runs) for k in runs[0]}
            total = sum(best[s] for s in json_path)
            cells = [f"{best[s]:.3f} ({best[s] / total:.0%})" for s in STAGES]
            print(f"| {name} | " + " | ".join(cells) + f" | {total:.3f} | {best['json.load']:.3f} |")
    print("\n(percentages: share of the JSON command's stages; the table's format stage is shown against the same sum)")


if __name__ == "__main__":
    main()
