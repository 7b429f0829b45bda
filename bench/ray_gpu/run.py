"""`retry --ray` with the CUTLASS engine on a Ray cluster whose attempts run on a real GPU (issue 27).

    python3 bench/ray_gpu/run.py OUT_DIR [--smoke]

Starts a Ray head (CPUs for builds, the custom resource `tiletune_build`, no GPU) and a second Ray
node (`--num-gpus=1`) on 127.0.0.1 with `ray start`, then runs tiletune's Ray driver
(`tiletune.tuner.ray_runner.run_retry_ray`, what `tiletune retry --ray ADDRESS` calls) twice over
the same targets: the second run must resume from the ledger and attempt nothing. Then `ray
status`, `tiletune inspect LEDGER` (the human view of what the attempts recorded), nvidia-smi and
the versions. Writes OUT_DIR/: ledger.jsonl, run1/run2 stdout+stderr, ray_status.txt,
inspect.txt, env.txt, summary.json.

Why run_retry_ray and not the `tiletune retry` command line: no FlashInfer cache has SM90 CUTLASS
tactics the CUTLASS engine can rebuild (FlashInfer's SM90 dense GEMMs are cuBLAS; its SM90 CUTLASS
kernels are the grouped fused-MoE ones, and kernels/ has no grouped SM90 reproducer), so the
command line selects no SM90 target this engine can build. The targets are tiles of the SM90 grid
that already ran on an H200 without Ray (tests/kernels/h200_grid_targets.py,
bench/cutlass_sm90_grid): same RetryTarget objects, same engine, same driver function the command
line calls after selecting its targets.

--smoke (for a machine without nvcc or GPU): one target whose build tiletune refuses before nvcc (a
grouped SM90 problem), so the run checks Ray's install, scheduling, ledger and resume in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORT = "26379"
ADDRESS = f"127.0.0.1:{PORT}"
BUILD_SLOTS = int(os.environ.get("RAYGPU_BUILD_SLOTS", "8"))


def targets(smoke: bool):
    sys.path.insert(0, str(ROOT / "tests/kernels"))
    from h200_grid_targets import target  # the grid's own target builder

    from tiletune.core.records import Problem

    if smoke:
        t = target("smoke-bf16-grouped-sm90", "sm90", "bf16", (128, 128, 64), expect="engine_error")
        from msgspec import structs

        return [structs.replace(t, problem=Problem(m=128, n=4096, k=4096, experts=8, top_k=2))]
    return [
        # 5 distinct kernels (5 builds); 8 targets
        target("bf16-128x256x64-c1x1-cooperative", "sm90", "bf16", (128, 256, 64)),
        target("bf16-128x256x64-c1x1-cooperative-8192", "sm90", "bf16", (128, 256, 64), m=8192, n=8192, k=8192),
        target("fp8-128x128x128-c1x1-cooperative", "sm90", "fp8", (128, 128, 128)),
        target("fp8-128x128x128-c1x1-cooperative-8192", "sm90", "fp8", (128, 128, 128), m=8192, n=8192, k=8192),
        target("bf16-128x128x64-c1x1-cooperative", "sm90", "bf16", (128, 128, 64)),
        target("bf16-128x128x64-k4100", "sm90", "bf16", (128, 128, 64), k=4100, expect="can_implement"),
        target("bf16-128x256x64-8stages", "sm90", "bf16", (128, 256, 64), stages=8, expect="smem_over_limit"),
        target("bf16-256x256x128-auto", "sm90", "bf16", (256, 256, 128), expect="compile_error"),
    ]


def drive(ledger: Path, smoke: bool) -> int:
    """One `retry --ray` run over the targets, as the command line runs it after selecting them."""
    from tiletune.tuner.ray_runner import run_retry_ray

    only = os.environ.get("RAYGPU_ONLY")  # a key prefix: a local check of one real build
    chosen = [t for t in targets(smoke) if not only or t.key.startswith(only)]
    run = run_retry_ray(chosen, "cutlass", ledger, address=ADDRESS, options={}, timeout_s=120.0,
                        progress=sys.stderr)
    print(json.dumps({"env_id": run.env_id, "attempted": len(run.attempts), "skipped": len(run.skipped),
                      "diagnoses": {a.target.key: a.diagnosis.value for a in run.attempts}}, indent=1))
    return 0


def ray_cli(*args: str, check: bool = True) -> str:
    code = "import sys; sys.argv[0] = 'ray'; from ray.scripts.scripts import main; sys.exit(main())"
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    if check and r.returncode:
        raise SystemExit(f"ray {' '.join(args)}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return r.stdout + r.stderr


def sh(cmd: str) -> str:
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    return f"$ {cmd}\n{r.stdout}{r.stderr}(exit {r.returncode})\n"


def redact(out: Path) -> None:
    """The files name no path of the machine: the checkout becomes relative, OUT_DIR stays OUT_DIR, the
    folder Ray was unpacked into SITE, the interpreter PYTHON."""
    import ray

    site = str(Path(ray.__file__).resolve().parents[1])
    for f in sorted(out.iterdir()):
        if f.is_file():
            text = f.read_text(errors="replace")
            new = (text.replace(str(ROOT) + "/", "").replace(str(out), "OUT_DIR").replace(site, "SITE")
                   .replace(sys.executable, "PYTHON"))
            if new != text:
                f.write_text(new)


def main() -> int:
    if sys.argv[1] == "--drive":
        return drive(Path(sys.argv[2]), "--smoke" in sys.argv)
    out = Path(sys.argv[1]).resolve()
    smoke = "--smoke" in sys.argv
    out.mkdir(parents=True, exist_ok=True)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # 2 GB object store per node: the binaries (a few MB each) are all it holds; /dev/shm may be small
    common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats", "--object-store-memory=2000000000"]
    t0 = time.monotonic()
    log = [ray_cli("start", "--head", f"--port={PORT}", f"--num-cpus={BUILD_SLOTS}", "--num-gpus=0",
                   json.dumps({"tiletune_build": BUILD_SLOTS}).join(["--resources=", ""]), "--include-dashboard=false",
                   *common)]
    log.append(ray_cli("start", f"--address={ADDRESS}", "--num-cpus=2", "--num-gpus=1", *common))
    status = ""
    for _ in range(60):
        status = ray_cli("status", f"--address={ADDRESS}", check=False)
        if status.count("node_") >= 2:
            break
        time.sleep(1)
    (out / "ray_start.txt").write_text("\n".join(log) + f"\nstarted in {time.monotonic() - t0:.1f} s\n")
    import ray

    ray.init(address=ADDRESS, log_to_driver=False)
    nodes = [{"node_id": n["NodeID"], "resources": n["Resources"]} for n in ray.nodes()]
    ray.shutdown()
    ledger = out / "ledger.jsonl"
    if ledger.exists():
        ledger.unlink()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--drive", str(ledger)] + (["--smoke"] if smoke else [])
    summary: dict = {"ray": ray.__version__, "python": sys.version.split()[0], "nodes": nodes, "runs": [],
                     "command": "python3 bench/ray_gpu/run.py OUT_DIR" + (" --smoke" if smoke else "")}
    for name in ("run1", "run2"):
        t1 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        (out / f"{name}.stderr.txt").write_text(r.stderr)
        (out / f"{name}.stdout.json").write_text(r.stdout)
        summary["runs"].append({"name": name, "exit_status": r.returncode, "wall_s": round(time.monotonic() - t1, 1),
                                "ledger_lines": len(ledger.read_text().splitlines()) if ledger.exists() else 0})
        print(f"{name}: exit {r.returncode}, {summary['runs'][-1]['wall_s']} s", flush=True)
    (out / "ray_status.txt").write_text(ray_cli("status", f"--address={ADDRESS}", check=False))
    lines = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()] if ledger.exists() else []
    summary["attempts"] = [
        {"key": a["key"], "diagnosis": a["diagnosis"], "message": a["message"][:300], "time_s": a.get("time_s"),
         "tflops": a.get("tflops"), "rel_error": a.get("rel_error"), "smem_bytes": a.get("smem_bytes"),
         "duration_s": a.get("duration_s"),
         **{k: (a.get("env") or {}).get(k) for k in ("gpu", "device", "build_node", "build_seconds", "ray_node_id",
                                                     "cuda_visible_devices", "driver", "nvcc", "cutlass")}}
        for a in lines]
    tt = f"{sys.executable} -m tiletune"
    (out / "inspect.txt").write_text(sh(f"{tt} inspect {ledger}"))
    (out / "env.txt").write_text(sh("nvidia-smi") + sh("nvcc --version") + sh(f"{sys.executable} -m pip list 2>/dev/null")
                                 + sh(f"{sys.executable} -c 'import ray, msgspec, sys; print(sys.version, ray.__file__, ray.__version__)'"))
    summary["substituted"] = ("paths: the checkout's prefix removed, the output directory written OUT_DIR, Ray's "
                              "unpacked site folder SITE, the interpreter PYTHON (redact())")
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    ray_cli("stop", check=False)
    redact(out)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
