"""Inside bench/ray_local/run.sh's namespaces: start a Ray head and a worker on 127.0.0.1 with `ray start`,
run `tiletune retry --engine cutlass --ray` twice (the second resumes), write what happened to OUT_DIR.

- the head declares the custom resource `tiletune_build` and no GPU: every CUTLASS build is a CPU task
  there (tiletune/tuner/ray_runner.py BUILD_RESOURCE), each distinct kernel built once with nvcc;
- the worker declares num_gpus=1, so Ray schedules the attempts (one task per target) there and pins
  CUDA_VISIBLE_DEVICES. THIS MACHINE HAS NO GPU: the declared GPU does not exist, so each attempt runs
  the built binary, which finds no CUDA device and says so (diagnosis engine_error). The builds, the
  scheduling, the streaming into the local ledger and the resume are real; no kernel time is.
Writes OUT_DIR/ledger.jsonl, run1/run2 stderr and stdout, ray_status.txt, summary.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PORT = "26379"


def ray_cli(*args: str) -> str:
    ray = str(Path(sys.executable).with_name("ray"))
    r = subprocess.run([ray, *args], capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise SystemExit(f"ray {' '.join(args)}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r.stdout + r.stderr


def redact(out: Path, root: Path) -> None:
    """Tracked files name no path of the machine: the checkout becomes relative, OUT_DIR stays OUT_DIR."""
    for f in sorted(out.iterdir()):
        if f.is_file():
            text = f.read_text()
            new = text.replace(str(root) + "/", "").replace(str(out), "OUT_DIR")
            if new != text:
                f.write_text(new)


def main() -> int:
    out = Path(sys.argv[1])
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats"]
    ray_cli("start", "--head", f"--port={PORT}", "--num-cpus=2", "--num-gpus=0", '--resources={"tiletune_build": 2}',
            "--include-dashboard=false", *common)
    ray_cli("start", f"--address=127.0.0.1:{PORT}", "--num-cpus=1", "--num-gpus=1", *common)
    address = f"127.0.0.1:{PORT}"
    for _ in range(60):
        status = ray_cli("status", f"--address={address}")
        if status.count("node_") >= 2:
            break
        time.sleep(1)
    (out / "ray_status.txt").write_text(status)
    import ray

    ray.init(address=address, log_to_driver=False)
    nodes = [{"node_id": n["NodeID"], "address": n["NodeManagerAddress"], "resources": n["Resources"]} for n in ray.nodes()]
    ray.shutdown()
    ledger = out / "ledger.jsonl"
    if ledger.exists():
        ledger.unlink()
    # a cache FlashInfer 0.7.4's own AutoTuner wrote (tests/data/engine_loaders; fp4_gemm on an sm100 GPU name):
    # tactics 1 and 4 at every M bucket they won = 5 attempts, 2 distinct CUTLASS kernels to build
    root = Path(__file__).resolve().parents[2]
    cache = root / "tests/data/engine_loaders/synced/vllm/autotune_configs_dp0_rank0.json"
    cmd = [sys.executable, "-m", "tiletune", "retry", str(cache), "--all", "--tactic", "1,4", "--engine", "cutlass",
           "--ray", address, "--ledger", str(ledger), "--format", "json"]
    summary: dict = {"ray": ray.__version__, "nodes": nodes, "runs": [],
                     "command": " ".join(["tiletune", *cmd[3:]]).replace(str(out), "OUT_DIR").replace(str(root) + "/", "")}
    for name in ("run1", "run2"):
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        (out / f"{name}.stderr.txt").write_text(r.stderr)
        (out / f"{name}.stdout.json").write_text(r.stdout)
        summary["runs"].append({"name": name, "exit_status": r.returncode, "wall_s": round(time.monotonic() - t0, 1),
                                "ledger_lines": len(ledger.read_text().splitlines()) if ledger.exists() else 0})
    lines = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()] if ledger.exists() else []
    summary["attempts"] = [{"key": a["key"], "diagnosis": a["diagnosis"], "message": a["message"][:200],
                            "build_node": (a.get("env") or {}).get("build_node"),
                            "build_seconds": (a.get("env") or {}).get("build_seconds"),
                            "attempt_node": (a.get("env") or {}).get("ray_node_id"),
                            "cuda_visible_devices": (a.get("env") or {}).get("cuda_visible_devices")} for a in lines]
    summary["substituted"] = "paths: the checkout's prefix removed, the output directory written OUT_DIR (redact())"
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    redact(out, root)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
