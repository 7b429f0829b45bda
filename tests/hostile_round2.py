"""The second hostile-input campaign's cases (issue 24), one class per item of the issue.

Each case builds its inputs from the bundled samples (mutated: a cut, a name, a value), runs the
real CLI in a fresh process (or, where a cut position is swept, the reader in this process), and
says whether it found a defect. `tests/test_hostile_round2.py` runs the fast cases in CI;
the campaign script under bench/hostile_round2/ runs them all, the slow ones too (memory on big
inputs, the report's time, never-ending input), and writes the counts per class.

A case is a function `(tmp: Path) -> list[Finding]`; a finding with `defect=True` is one defect of
its class. Nothing here asserts time: slow cases return the figures they measured.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"
CACHE = SAMPLES / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"
SMALL = SAMPLES / "v1" / "sm120-rtx5090-0.6.8-fp4-3part.json"
DEBUG_LOG = SAMPLES / "logs" / "sm120_0.6.17_warmup_debug.log"
LEDGER = SAMPLES / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
V2STORE = SAMPLES / "v2store"
JIT = SAMPLES / "jit"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
ENV.pop("TILETUNE_GPU_FILE", None)

# Names a report must never print: the host, the user, folders and paths in error texts.
HOST, USER = "gpu-node-7", "alicesmith"
SECRET_FOLDERS = ("acme-zebra4", "zebrafarm", "zebra farm", "quagga", "okapi")
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@dataclass(frozen=True)
class Finding:
    cls: str  # "1".."11" (the items)
    case: str
    defect: bool
    detail: str = ""


@dataclass(frozen=True)
class Case:
    cls: str
    name: str
    fn: Callable[[Path], list[Finding]]
    fast: bool = True  # runs in CI (tests/test_hostile_round2.py)


CASES: list[Case] = []


def case(cls: str, *, fast: bool = True) -> Callable:
    def wrap(fn: Callable[[Path], list[Finding]]) -> Callable[[Path], list[Finding]]:
        CASES.append(Case(cls, fn.__name__, fn, fast))
        return fn
    return wrap


def tiletune(*args: str, stdin: Optional[bytes] = None, env: Optional[dict] = None, timeout: float = 300,
             cwd: Optional[Path] = None, stdin_file: object = None) -> subprocess.CompletedProcess:
    """`python -m tiletune ARGS` in a fresh process (bytes out)."""
    kw: dict = {"input": stdin} if stdin is not None else {"stdin": stdin_file if stdin_file is not None else subprocess.DEVNULL}
    return subprocess.run([sys.executable, "-m", "tiletune", *args], capture_output=True, env={**ENV, **(env or {})},
                          timeout=timeout, cwd=cwd, **kw)


def crashed(p: subprocess.CompletedProcess) -> bool:
    err = p.stderr.decode(errors="replace")
    return "Traceback" in err or "tiletune bug" in err or p.returncode not in (0, 1, 2)


def one_line_refusal(p: subprocess.CompletedProcess, must: str = "") -> bool:
    """Exit 2, no traceback, a message on stderr (containing `must`)."""
    err = p.stderr.decode(errors="replace")
    return p.returncode == 2 and not crashed(p) and must.lower() in err.lower()


# --- report with pictures, texts recorded ---------------------------------------------------------

# Runs the CLI with the host name faked and every text matplotlib draws recorded (the PNG's labels,
# ticks and titles), appended to $TEXTS_OUT as JSON lines as they are drawn (the CLI may leave
# through os._exit, so nothing waits for the process's end).
_RECORDER = r"""
import json, os, socket, sys
socket.gethostname = lambda: os.environ["FAKE_HOST"]
socket.getfqdn = lambda name="": os.environ["FAKE_HOST"]
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.text as mt
    _draw = mt.Text.draw
    def draw(self, renderer):
        with open(os.environ["TEXTS_OUT"], "a") as f:
            f.write(json.dumps(self.get_text()) + "\n")
        return _draw(self, renderer)
    mt.Text.draw = draw
except ImportError:
    pass
from tiletune.cli import main
sys.argv = ["tiletune", *sys.argv[1:]]
main()
"""


def report_recorded(tmp: Path, args: list[str], cwd: Path, env: Optional[dict] = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    texts = tmp / f"texts-{len(list(tmp.glob('texts-*')))}.json"
    p = subprocess.run([sys.executable, "-c", _RECORDER, "report", *args], capture_output=True, cwd=cwd, timeout=600,
                       env={**ENV, "FAKE_HOST": HOST, "USER": USER, "LOGNAME": USER, "TEXTS_OUT": str(texts), **(env or {})},
                       stdin=subprocess.DEVNULL)
    drawn = [json.loads(line) for line in texts.read_text().splitlines()] if texts.exists() else []
    return p, drawn


def _leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    low = text.lower()
    return [s for s in secrets if s.lower() in low]


@case("1")
def picture_labels_redacted(tmp: Path) -> list[Finding]:
    """The issue's reproduction: two folders named after the host and the user, report -o with pictures."""
    for d in ("runs/gpu-node-7", "runs/alicesmith-box"):
        (tmp / d).mkdir(parents=True)
        shutil.copy(CACHE, tmp / d / "c.json")
    (tmp / "out").mkdir()  # (tiletune creates no folders)
    p, drawn = report_recorded(tmp, ["runs/gpu-node-7", "runs/alicesmith-box", "-o", "out/r.md"], cwd=tmp)
    md = (tmp / "out" / "r.md").read_text() if (tmp / "out" / "r.md").exists() else ""
    out = []
    out.append(Finding("1", "png-labels", bool(_leaks("\n".join(drawn), (HOST, USER))) or not drawn,
                       f"{len(drawn)} texts drawn; leaked: {_leaks(chr(10).join(drawn), (HOST, USER))}"))
    out.append(Finding("1", "markdown-names", bool(_leaks(md, (HOST, USER))) or p.returncode != 0,
                       f"exit {p.returncode}; leaked: {_leaks(md, (HOST, USER))}"))
    return out


@case("1")
def group_labels_redacted(tmp: Path) -> list[Finding]:
    """Source groups whose labels are relative paths (folders that differ below a shared root)."""
    a = tmp / "data" / "acme-zebra4" / "deeper"
    b = tmp / "home" / USER / ".cache"
    for d in (a, b):
        d.mkdir(parents=True)
        shutil.copy(CACHE, d / "c.json")
    shutil.copy(DEBUG_LOG, a / "warmup.log")
    findings = []
    for fmt in ("markdown", "json"):
        p = tiletune("report", str(a), str(b), "--format", fmt, "--no-plot", env={"USER": USER, "LOGNAME": USER}, cwd=tmp)
        text = p.stdout.decode(errors="replace")
        leaked = _leaks(text, ("acme-zebra4", USER, "home/"))
        findings.append(Finding("1", f"group-labels-{fmt}", bool(leaked) or crashed(p), f"exit {p.returncode}; leaked: {leaked}"))
    return findings


ERROR_PATHS = (
    "while loading file:///srv/zebrafarm/model.bin",
    "cache_dir:/srv/zebrafarm/cache",
    "PATH=/usr/bin:/opt/quagga/bin",
    "open('/srv/zebra farm/weights a.bin')",
    "at [/srv/okapi[3]/x.json] and (/srv/quagga (copy)/y.json)",
    r"C:\Users\zebrafarm\AppData\tiletune.json",
    "~zebrafarm/.cache/flashinfer",
)


@case("1")
def error_text_paths_redacted(tmp: Path) -> list[Finding]:
    """Paths inside error texts of a log: after ':' or '/', a PATH list, spaces, brackets, Windows, ~user."""
    findings = []
    for i, frag in enumerate(ERROR_PATHS):
        text = DEBUG_LOG.read_text().replace("Error: Error Internal", f"Error: Error Internal {frag}")
        log = tmp / f"warmup{i}.log"
        log.write_text(text)
        for fmt in ("markdown", "json"):
            p = tiletune("report", str(log), "--format", fmt, "--no-plot", "--full", cwd=tmp)
            leaked = _leaks(p.stdout.decode(errors="replace"), SECRET_FOLDERS)
            findings.append(Finding("1", f"error-path-{i}-{fmt}", bool(leaked) or crashed(p), f"{frag!r}: leaked {leaked}"))
    return findings


@case("11")
def no_live_tags(tmp: Path) -> list[Finding]:
    """Redaction tokens (<dir1>, <user>, <host>) must be escaped text in Markdown, never an HTML tag."""
    d = tmp / USER / "runs"
    d.mkdir(parents=True)
    shutil.copy(LEDGER, d / "ledger.jsonl")
    shutil.copy(CACHE, d / "c.json")
    p = tiletune("report", str(d / "ledger.jsonl"), str(d / "c.json"), "--full", env={"USER": USER, "LOGNAME": USER}, cwd=tmp)
    md = p.stdout.decode(errors="replace")
    # outside code spans and fences, a bare <dir1> / <user> / <host> is a tag GitHub drops
    prose = re.sub(r"```.*?```", "", md, flags=re.S)
    prose = re.sub(r"(`+).*?\1", "", prose)
    live = re.findall(r"<(?:dir\d+|user|host)>", prose)
    return [Finding("11", "redaction-tokens-escaped", bool(live) or crashed(p), f"{len(live)} live tags")]


# --- class 2: report -o never falls over on a name or a number ------------------------------------

MATH = "$\\foo{$"


def _gpu_file(tmp: Path, **override: object) -> Path:
    from tiletune.model import gpus

    builtin = json.loads((Path(gpus.__file__).parent / "data" / "gpus.json").read_text())
    g = dict(next(g for g in builtin["gpus"] if g["key"] == "rtx-pro-6000-server"))
    g.update(override)
    g["key"] = "hostile-gpu"
    g["names"] = []
    path = tmp / f"gpus-{len(list(tmp.glob('gpus-*')))}.json"
    path.write_text(json.dumps({"schema": "tiletune.gpus/1", "gpus": [g]}, allow_nan=True).replace('"@INF@"', "Infinity")
                    .replace('"@NAN@"', "NaN"))
    return path


@case("2")
def report_survives_names_and_numbers(tmp: Path) -> list[Finding]:
    findings = []
    d = tmp / MATH
    d.mkdir()
    shutil.copy(CACHE, d / "c.json")
    shutil.copy(DEBUG_LOG, d / "warmup.log")
    (tmp / "o1").mkdir()
    p = tiletune("report", str(d), "-o", str(tmp / "o1" / "r.md"))
    findings.append(Finding("2", "math-in-folder", crashed(p) or not (tmp / "o1" / "r.md").exists(), f"exit {p.returncode}"))
    cases = {"math-in-gpu-name": {"name": f"GPU {MATH}"}, "infinite-bandwidth": {"mem_bw_gbps": "@INF@"},
             "huge-bandwidth": {"mem_bw_gbps": 1e308}, "huge-peak": {"peaks_tflops": {"fp4": {"dense": 1e308}}}}
    for i, (name, over) in enumerate(cases.items()):
        gf = _gpu_file(tmp, **over)
        out = tmp / f"o{i + 2}" / "r.md"
        out.parent.mkdir()
        p = tiletune("report", str(CACHE), "--gpu", "hostile-gpu", "-o", str(out), env={"TILETUNE_GPU_FILE": str(gf)})
        ok = (p.returncode == 0 and out.exists()) or one_line_refusal(p, "gpu")
        findings.append(Finding("2", name, not ok, f"exit {p.returncode}: {p.stderr.decode(errors='replace')[-200:]!r}"))
    return findings


# --- class 3: the tile map PNG is bounded ---------------------------------------------------------


def many_shapes_cache(path: Path, rows: int) -> None:
    """A v1 cache of `rows` distinct (N, K) fp4 GEMMs (one M bucket each): `rows` rows in the tile map."""
    keys = {}
    for i in range(rows):
        n, k = 256 + 64 * i, 4096
        shapes = ((8, k // 2), (k // 2, n), (-1, k // 16), (k // 16, n), (), (0,), (-1, n), (0,), (0,), (-1,))
        keys[str(("fp4_gemm", "CutlassFp4GemmRunner", shapes))[:-1] + ", ())"] = ["CutlassFp4GemmRunner", i % 16]
    meta = json.loads(CACHE.read_text())["_metadata"]
    path.write_text(json.dumps({"_metadata": meta, **dict(sorted(keys.items()))}, indent=2))


def png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def _tile_map_case(tmp: Path, rows: int) -> list[Finding]:
    cache = tmp / "many.json"
    many_shapes_cache(cache, rows)
    t0 = time.perf_counter()
    (tmp / "out").mkdir()
    p = tiletune("report", str(cache), "-o", str(tmp / "out" / "r.md"), timeout=900)
    wall = time.perf_counter() - t0
    pngs = sorted((tmp / "out").glob("*tilemap*.png"))
    if not pngs:
        return [Finding("3", f"tile-map-{rows}", True, f"exit {p.returncode}, no tile map PNG ({wall:.1f} s)")]
    w, h = png_size(pngs[0].read_bytes())
    md = (tmp / "out" / "r.md").read_text()
    said = "left out" in md.split("## Tile map", 1)[-1] if rows > 100 else True
    return [Finding("3", f"tile-map-{rows}", h > 4000 or w > 4000 or not said or crashed(p),
                    f"{w} x {h} px, {wall:.1f} s, exit {p.returncode}, left-out said: {said}")]


@case("3")
def tile_map_bounded_300(tmp: Path) -> list[Finding]:
    return _tile_map_case(tmp, 300)


@case("3", fast=False)
def tile_map_bounded_10000(tmp: Path) -> list[Finding]:
    return _tile_map_case(tmp, 10_000)


# --- class 4: one hostile value never sinks the run -----------------------------------------------


def _good_input_kept(p: subprocess.CompletedProcess) -> bool:
    """The good cache beside the hostile input is still reported (its op in the JSON)."""
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return False
    return any(e.get("source", "").endswith(SMALL.name) for e in doc.get("entries", []))


@case("4")
def one_value_does_not_sink(tmp: Path) -> list[Finding]:
    findings = []
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    p = tiletune("inspect", "-", str(SMALL), "-f", "json", stdin=deep)
    findings.append(Finding("4", "stdin-deep", not (one_line_refusal(p) and _good_input_kept(p)), f"exit {p.returncode}"))
    doc = json.loads(SMALL.read_text())
    doc["_metadata"]["flashinfer_version"] = "0." + "9" * 5000
    big = tmp / "bigversion.json"
    big.write_text(json.dumps(doc))
    p = tiletune("inspect", str(big), str(SMALL), "-f", "json")
    findings.append(Finding("4", "metadata-version-digits", crashed(p) or not _good_input_kept(p), f"exit {p.returncode}"))
    store = tmp / "store"
    shutil.copytree(V2STORE, store)
    manifest = next(store.rglob("manifest.json"))
    m = json.loads(manifest.read_text())
    m["flashinfer_version"] = "0.7." + "9" * 5000
    manifest.write_text(json.dumps(m))
    p = tiletune("inspect", str(store), str(SMALL), "-f", "json")
    findings.append(Finding("4", "manifest-version-digits", crashed(p) or not _good_input_kept(p), f"exit {p.returncode}"))
    # stdin closed (not just empty): `tiletune inspect - GOOD <&-`
    p = subprocess.run([sys.executable, "-m", "tiletune", "inspect", "-", str(SMALL), "-f", "json"], capture_output=True,
                       env=ENV, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0), timeout=120)
    findings.append(Finding("4", "stdin-closed", crashed(p) or not _good_input_kept(p) or p.returncode != 2, f"exit {p.returncode}"))
    for name, args in (("m-superscript", ["--m", "\u00b2"]), ("m-100k-digits", ["--m", "1" * 100_000]),
                       ("m-negative", ["--m", "-3"]),
                       ("version-4400-digits", ["--flashinfer-version", "0." + "1" * 4400])):
        p = tiletune("inspect", str(SMALL), *args)
        err = p.stderr.decode(errors="replace")
        findings.append(Finding("4", f"flag-{name}", not one_line_refusal(p) or len(err) > 600, f"exit {p.returncode}: {err[:120]!r}"))
    return findings


# --- class 7: a cut file says it lost data --------------------------------------------------------


def entry_cuts(text: str) -> list[int]:
    """Byte offsets just after each complete entry of an indented v1 cache (`],` line ends) and
    after its metadata object: where a cut leaves well-formed entries and loses the rest."""
    cuts = [m.end() for m in re.finditer(r"\]\s*,", text)] + [m.start(1) for m in re.finditer(r"\](\s*),", text)]
    cuts += [m.end() for m in re.finditer(r"\}\s*,", text)] + [m.start(1) for m in re.finditer(r"\}(\s*),", text)]
    return sorted(set(cuts))


def _cut_loses(path: Path) -> tuple[bool, str]:
    """(whether reading `path` reports lost data, the first problem's message)."""
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    out = read_inputs([path], ReadContext())
    lost = [p for p in out.problems if p.loses_data]
    return bool(lost), (lost or out.problems or [None])[0].message if (lost or out.problems) else "no problem reported"


@case("7")
def truncation_after_entries(tmp: Path) -> list[Finding]:
    """Every bundled v1 cache cut after each entry (and after its metadata): the reader must say data was lost."""
    findings = []
    for sample in sorted((SAMPLES / "v1").glob("*.json")):
        text = sample.read_text()
        bad = []
        cuts = entry_cuts(text)
        for off in cuts:
            cut = tmp / sample.name
            cut.write_text(text[:off])
            lost, msg = _cut_loses(cut)
            if not lost:
                bad.append((off, msg))
        findings.append(Finding("7", f"cut-{sample.stem}", bool(bad),
                                f"{len(bad)} of {len(cuts)} cuts reported as no loss" + (f"; e.g. at {bad[0][0]}: {bad[0][1]}" if bad else "")))
    p = tiletune("inspect", "-", stdin=CACHE.read_bytes()[:456])
    findings.append(Finding("7", "stdin-head-456", p.returncode != 2, f"exit {p.returncode}"))
    return findings


@case("7", fast=False)
def truncation_every_byte(tmp: Path) -> list[Finding]:
    """Every byte offset of every bundled v1 cache: a cut must never read as whole."""
    findings = []
    for sample in sorted((SAMPLES / "v1").glob("*.json")):
        data = sample.read_bytes()
        end = len(data.rstrip())
        bad = []
        for off in range(1, end):
            cut = tmp / sample.name
            cut.write_bytes(data[:off])
            lost, msg = _cut_loses(cut)
            if not lost:
                bad.append((off, msg))
        findings.append(Finding("7", f"every-byte-{sample.stem}", bool(bad), f"{len(bad)} of {end - 1} cuts read as whole"))
    return findings


# --- class 8: stdin named twice -------------------------------------------------------------------


@case("8")
def stdin_named_twice(tmp: Path) -> list[Finding]:
    findings = []
    for name, args in (("diff - -", ["diff", "-", "-"]), ("diff --old - X -", ["diff", "--old", "-", str(SMALL), "-"]),
                       ("inspect - -", ["inspect", "-", "-"])):
        p = tiletune(*args, stdin=CACHE.read_bytes())
        findings.append(Finding("8", name, not one_line_refusal(p, "stdin"), f"exit {p.returncode}: {p.stderr.decode(errors='replace')[:160]!r}"))
    return findings


# --- class 9: never-ending input ------------------------------------------------------------------


@case("9")
def line_limit_applies(tmp: Path) -> list[Finding]:
    """A text input of more lines than the limit stops at the limit and says the rest was not read."""
    log = tmp / "short-lines.log"
    log.write_bytes(DEBUG_LOG.read_bytes() + b"y\n" * 300_000)
    p = tiletune("inspect", str(log), env={"TILETUNE_MAX_LINES": "100000"})
    p2 = tiletune("inspect", "-", env={"TILETUNE_MAX_LINES": "100000"}, stdin=log.read_bytes())
    return [Finding("9", "named-file-line-limit", not one_line_refusal(p, "lines"), f"exit {p.returncode}: {p.stderr[:200]!r}"),
            Finding("9", "stdin-line-limit", not one_line_refusal(p2, "lines"), f"exit {p2.returncode}: {p2.stderr[:200]!r}")]


@case("9", fast=False)
def yes_on_stdin(tmp: Path) -> list[Finding]:
    t0 = time.perf_counter()
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        p = tiletune("inspect", "-", stdin_file=yes.stdout, timeout=600)
    except subprocess.TimeoutExpired:
        return [Finding("9", "yes-stdin", True, "still reading after 600 s (stopped there)")]
    finally:
        yes.kill()
        yes.wait()
    wall = time.perf_counter() - t0
    return [Finding("9", "yes-stdin", wall > 60 or not one_line_refusal(p), f"{wall:.1f} s, exit {p.returncode}")]


@case("9", fast=False)
def gigabyte_of_short_lines(tmp: Path) -> list[Finding]:
    log = tmp / "y.log"
    with open(log, "wb") as f:
        block = b"y\n" * (1 << 20)
        for _ in range(512):
            f.write(block)
    t0 = time.perf_counter()
    cpu0 = _children_cpu()
    try:
        p = tiletune("inspect", str(log), timeout=600)
    except subprocess.TimeoutExpired:
        return [Finding("9", "1GB-short-lines", True, "still reading after 600 s (stopped there)")]
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    # judged on CPU seconds: on a shared machine the wall time says more about the others' load
    return [Finding("9", "1GB-short-lines", cpu > 120 or crashed(p) or p.returncode != 2,
                    f"{cpu:.1f} s CPU ({wall:.1f} s wall), exit {p.returncode}")]


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# --- class 10: the richer of two routes to one file -----------------------------------------------


@case("10")
def symlink_to_workspace_log(tmp: Path) -> list[Finding]:
    root = tmp / "server"
    shutil.copytree(JIT, root / "jit")
    log = next((root / "jit").rglob("flashinfer_jit.log"))
    (root / "latest.log").symlink_to(log)
    base = tiletune("inspect", str(root / "jit"), "-f", "json")
    both = tiletune("inspect", str(root), "-f", "json")

    def facts(p: subprocess.CompletedProcess) -> tuple:
        doc = json.loads(p.stdout)
        rows = doc.get("entries", []) + doc.get("failures", [])
        return (sorted({(f.get("arch"), f.get("flashinfer_version")) for f in rows}, key=str),
                sum(1 for f in rows if f.get("config")))
    try:
        b, w = facts(base), facts(both)
    except ValueError:
        return [Finding("10", "latest.log-symlink", True, "no JSON")]
    return [Finding("10", "latest.log-symlink", w != b, f"workspace alone {b}; with the symlink beside it {w}")]


# --- class 11: the smaller ones -------------------------------------------------------------------


@case("11")
def stdin_output_is_input(tmp: Path) -> list[Finding]:
    c = tmp / "c.json"
    shutil.copy(CACHE, c)
    before = c.read_bytes()
    with open(c, "rb") as f:
        p = tiletune("inspect", "-", "-o", str(c), "-f", "json", stdin_file=f)
    return [Finding("11", "stdin-then-o-same-file", c.read_bytes() != before or not one_line_refusal(p), f"exit {p.returncode}")]


_KILL_MID_WRITE = r"""
import os, signal, sys
from pathlib import Path
from tiletune.core.fileio import write_atomic
try:  # the CLI's process policy (absent before issue 24: then the signal's default action)
    from tiletune.cli.process import exit_cleanly_on_signals
    exit_cleanly_on_signals()
except ImportError:
    pass
def chunks():
    yield "a" * 1000
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))
    yield "b" * 1000
write_atomic(Path(sys.argv[1]), chunks())
"""


def _default_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@case("11")
def signal_mid_write(tmp: Path) -> list[Finding]:
    findings = []
    for sig in ("SIGTERM", "SIGHUP"):
        out = tmp / sig / "r.md"
        out.parent.mkdir()
        # (the signal's default action restored first: under `nohup` SIGHUP is ignored, and tiletune rightly
        # leaves an ignored signal ignored, so the write would finish and the case would read it as a leak)
        p = subprocess.run([sys.executable, "-c", _KILL_MID_WRITE, str(out), sig], capture_output=True, env=ENV, timeout=60,
                           preexec_fn=_default_signals)
        left = [x.name for x in out.parent.iterdir()]
        findings.append(Finding("11", f"{sig}-mid-write", bool(left), f"exit {p.returncode}; left: {left}"))
    return findings


@case("11", fast=False)
def signal_during_report(tmp: Path) -> list[Finding]:
    """The real CLI: SIGTERM at several moments while `inspect -o` writes a 20,000-entry JSON."""
    big = tmp / "big.json"
    _big_cache(big, 20_000)
    findings = []
    left_total = []
    for delay in (0.6, 0.9, 1.2, 1.6, 2.2):
        out = tmp / f"d{delay}" / "o.json"
        out.parent.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "tiletune", "inspect", str(big), "-f", "json", "-o", str(out)],
                                env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_default_signals)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        left_total += [x.name for x in out.parent.iterdir() if x.name.endswith(".tmp")]
    findings.append(Finding("11", "SIGTERM-during-inspect-o", bool(left_total), f"temp files left: {left_total}"))
    return findings


def _big_cache(path: Path, n: int) -> None:
    from tests.readers.big_caches import make_fp4_distinct

    make_fp4_distinct(n, path)


@case("11")
def bidi_neutralised(tmp: Path) -> list[Finding]:
    doc = json.loads(CACHE.read_text())
    doc["_metadata"]["gpu"] = f"NVIDIA RTX PRO 6000 {BIDI}evil"
    c = tmp / "bidi.json"
    c.write_text(json.dumps(doc, ensure_ascii=False))
    log = tmp / "bidi.log"
    log.write_text(DEBUG_LOG.read_text().replace("Error: Error Internal", f"Error: Error Internal {BIDI}x"))
    findings = []
    for args in (["inspect"], ["inspect", "-f", "markdown"], ["inspect", "-f", "json"], ["inspect", "--all"], ["report", "--no-plot"],
                 ["report", "-f", "json", "--no-plot"]):
        p = tiletune(*args, str(c), str(log))
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        raw = [hex(ord(ch)) for ch in BIDI if ch in out]
        findings.append(Finding("11", f"bidi-{' '.join(args)}", bool(raw), f"raw: {raw}"))
    return findings


@case("11")
def nan_in_gpu_file(tmp: Path) -> list[Finding]:
    gf = _gpu_file(tmp, mem_bw_gbps="@NAN@")
    p = tiletune("inspect", str(CACHE), "--gpu", "hostile-gpu", env={"TILETUNE_GPU_FILE": str(gf)})
    return [Finding("11", "nan-bandwidth", not one_line_refusal(p, "gpu"), f"exit {p.returncode}: {p.stderr[:200]!r}")]


@case("11")
def binary_on_stdin(tmp: Path) -> list[Finding]:
    data = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4
    f = tmp / "bin.log"
    f.write_bytes(data)
    as_file = tiletune("inspect", str(f))
    on_stdin = tiletune("inspect", "-", stdin=data)
    return [Finding("11", "binary-stdin-like-file", as_file.returncode != on_stdin.returncode or on_stdin.returncode != 2,
                    f"file exit {as_file.returncode}, stdin exit {on_stdin.returncode}")]


@case("11")
def repeated_m(tmp: Path) -> list[Finding]:
    p = tiletune("inspect", str(CACHE), "--m", "12", "--m", "13")
    text = p.stdout.decode(errors="replace")
    both = "  M 12 -> " in text and "  M 13 -> " in text
    return [Finding("11", "--m-twice", not (one_line_refusal(p, "--m") or (p.returncode == 0 and both)), f"exit {p.returncode}")]


@case("11")
def output_fifo(tmp: Path) -> list[Finding]:
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    try:
        p = tiletune("inspect", str(SMALL), "-o", str(fifo), timeout=30)
        return [Finding("11", "-o-fifo-without-reader", not one_line_refusal(p), f"exit {p.returncode}")]
    except subprocess.TimeoutExpired:
        return [Finding("11", "-o-fifo-without-reader", True, "blocked for 30 s")]


def _ledger_attempts(path: Path) -> tuple[int, int, list[str]]:
    from tiletune.readers import read_inputs
    from tiletune.readers.interface import ReadContext

    out = read_inputs([path], ReadContext())
    return len(out.records), sum(p.loses_data for p in out.problems), [p.message for p in out.problems]


@case("11")
def ledger_encodings(tmp: Path) -> list[Finding]:
    base, _, _ = _ledger_attempts(LEDGER)
    text = LEDGER.read_text()
    findings = []
    for name, data in (("bom", b"\xef\xbb\xbf" + text.encode()), ("utf-16", text.encode("utf-16")),
                       ("utf-16-le-no-bom", text.encode("utf-16-le"))):
        p = tmp / f"{name}.jsonl"
        p.write_bytes(data)
        n, lost, msgs = _ledger_attempts(p)
        findings.append(Finding("11", f"ledger-{name}", n != base or lost, f"{n} of {base} attempts, {lost} losses"))
    lines = text.encode().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"passed"', b'"pa\xffssed"', 1)
    p = tmp / "badutf8.jsonl"
    p.write_bytes(b"".join(lines))
    n, lost, msgs = _ledger_attempts(p)
    findings.append(Finding("11", "ledger-invalid-utf8", not lost, f"{n} attempts, losses reported: {lost}"))
    return findings


@case("11")
def torn_ledger_then_append(tmp: Path) -> list[Finding]:
    """A ledger whose last line was torn (a crash mid-write), then resumed: the resumed run appends the
    attempt again (on a line of its own); nothing is lost, so reading it must not exit 2 for ever."""
    from tiletune.core.fileio import append_line_durable

    led = tmp / "torn.jsonl"
    lines = LEDGER.read_text().splitlines()
    led.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    append_line_durable(led, lines[-1])
    n, lost, msgs = _ledger_attempts(led)
    base, _, _ = _ledger_attempts(LEDGER)
    return [Finding("11", "torn-then-append", n != base or lost > 0, f"{n} of {base} attempts read, {lost} losses; {msgs[:1]}")]
