"""Property-based fuzzing of every reader and of the CLI end to end (issue 13).

Each target gets inputs hypothesis builds from the real formats (v1/v2/TensorRT-LLM caches,
blocklists, ledger lines, DEBUG log lines, cache keys) with hostile values mixed in: deep
nesting, huge and non-finite numbers, wrong types at every level, control characters and
terminal escapes, Markdown/HTML, truncations and byte flips of the real samples. The property is
always the same: no exception escapes other than the project's input-problem type (ReaderError,
or KeyParseError for the key parser), no problem is the readers' last-resort "a tiletune bug"
line, the CLI prints no traceback and exits 0 or 2.

The budget is fixed so CI stays short: derandomized (the same cases every run), `MAX_EXAMPLES`
per target (env TILETUNE_FUZZ_EXAMPLES overrides it; bench/fuzz_campaign runs many more).
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tiletune.core.errors import ReaderError
from tiletune.core.records import InputProblem, TuningRecord
from tiletune.readers import blocklist, flashinfer_v1, flashinfer_v2, keyparse, ledger, logs, read_inputs, trtllm
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"
MAX_EXAMPLES = int(os.environ.get("TILETUNE_FUZZ_EXAMPLES", "40"))
# No shrinking phase: a failure is reported as generated (the campaign script shrinks), so a
# failing CI run takes no longer than a passing one.
FUZZ = settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.large_base_example])
CTX = ReadContext()
LAST_RESORT = "a tiletune bug"

# --- hostile building blocks ----------------------------------------------------------------------

HOSTILE_TEXT = st.sampled_from([
    "", " ", "\x00", "\x1b[2J\x1b[31m", "\x1b]0;pwned\x07", "\x9b31m", "\r", "\ufeff", "\u202e",
    "```", "``</details><h1>x</h1>``", "<img src=x onerror=alert(1)>", "[l](https://evil.example/)", "@alice",
    "'", '"', "\\", "((((", "))))", "(", ")", ",", "nan", "inf", "-1", "9" * 5000, "torch.bfloat16", "None",
])
TEXT = st.one_of(st.text(max_size=30), HOSTILE_TEXT)
BIG_INTS = st.sampled_from([2**63, -(2**63), 10**39, 10**40, 10**41, 10**400])
NUMBER = st.one_of(st.integers(-5, 300), BIG_INTS, st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([1e308, 1e-320, -0.0]))
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER, TEXT)
JSONISH = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)


def deep(n: int) -> str:
    return "[" * n + "]" * n


def dumps(value) -> str:
    """JSON text as Python (and so FlashInfer) writes it: NaN/Infinity bare, huge ints in full."""
    return json.dumps(value, ensure_ascii=False)


def json_text(value_strategy):
    """JSON text of a value, sometimes with a deep array, a 5,000-digit number or a truncation spliced in."""
    splices = st.sampled_from([None, deep(70), deep(1200), "9" * 5000, "1e999", "-Infinity", "NaN"])
    return st.tuples(value_strategy, splices, st.integers(0, 3), st.floats(0, 1)).map(_splice)


def _splice(args) -> str:
    value, splice, mode, where = args
    text = dumps(value)
    if splice is not None and '"__X__"' in text:
        text = text.replace('"__X__"', splice, 1)
    if mode == 3 and len(text) > 2:  # a truncated file
        text = text[: int(len(text) * where)]
    return text


DIMS = st.lists(st.one_of(st.integers(-1, 1 << 20), BIG_INTS), min_size=0, max_size=3)
KEY_TUPLE = st.tuples(st.one_of(st.sampled_from(["fp4_gemm", "mxfp8_gemm", "fp8_gemm", "bf16_gemm", "trtllm::fused_moe::gemm1"]), TEXT),
                      st.one_of(st.sampled_from(["CutlassFp4GemmRunner", "CutlassMxfp8GemmRunner", "CublasFp8GemmRunner", "MoERunner"]), TEXT),
                      st.lists(DIMS, max_size=6))
EXTRAS = st.sampled_from(["", ", ()", ", (torch.bfloat16,)", ", (ActivationType.Swiglu, 8)", ", (" * 80, ", '\x1b[31m'"])


@st.composite
def key_text(draw) -> str:
    op, runner, shapes = draw(KEY_TUPLE)
    body = "(" + ", ".join("(" + ", ".join(map(str, d)) + ("," if len(d) == 1 else "") + ")" for d in shapes) + ("," if len(shapes) == 1 else "") + ")"
    text = f"({op!r}, {runner!r}, {body}{draw(EXTRAS)})"
    cut = draw(st.one_of(st.none(), st.integers(0, len(text))))
    return text if cut is None else text[:cut]


TACTIC = st.one_of(st.integers(-2, 200), BIG_INTS, st.lists(st.integers(0, 40), max_size=3), JSONISH, st.just("__X__"))
POLICY = st.one_of(st.just(["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]), JSONISH)


@st.composite
def v1_cache(draw):
    meta = draw(st.one_of(st.just({"flashinfer_version": "0.6.14", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}),
                          st.dictionaries(st.sampled_from(["flashinfer_version", "gpu", "cuda_version", "x"]), SCALAR), JSONISH))
    doc = {"_metadata": meta}
    for _ in range(draw(st.integers(0, 4))):
        value = draw(st.one_of(st.tuples(st.sampled_from(["CutlassFp4GemmRunner", "X"]), TACTIC).map(list),
                               st.tuples(st.just("CutlassFp4GemmRunner"), TACTIC, POLICY).map(list), JSONISH))
        doc[draw(st.one_of(key_text(), TEXT))] = value
    if draw(st.booleans()):
        doc["_records"] = draw(st.one_of(JSONISH, st.just({"trtllm_moe_da": {'{"custom_op": "x"}': {"bodies": [{"tile_n": 8, "tactic": "__X__"}]}}})))
    return doc


@st.composite
def trtllm_cache(draw):
    entry = st.fixed_dictionaries({"runner_id": st.one_of(st.integers(0, 3), JSONISH), "tactic": st.one_of(TACTIC, TEXT),
                                   "min_time": st.one_of(NUMBER, JSONISH)})
    key = st.builds(lambda op, shapes: f"({op!r}, 'MoERunner', \"('MoERunner', 0)\", {shapes})",
                    TEXT, key_text().map(lambda k: k[k.find("(("):] if "((" in k else k))
    section = st.dictionaries(st.one_of(key, TEXT), st.one_of(entry, JSONISH), max_size=4)
    meta = st.one_of(st.just({"lib_version": "1.2.0", "device_name": "NVIDIA GB200", "device_capability": [10, 0]}), JSONISH)
    return draw(st.one_of(st.fixed_dictionaries({"metadata": meta, "cache_data": section}),
                          st.fixed_dictionaries({"metadata": meta, "rank_0": section, "rank_x": JSONISH})))


@st.composite
def blocklist_doc(draw):
    runner_keys = st.one_of(st.sampled_from(["fp4_gemm::CutlassFp4GemmRunner", "::", "a::"]), TEXT)
    invalid = st.one_of(st.dictionaries(runner_keys, st.one_of(st.lists(TACTIC, max_size=4), JSONISH), max_size=3), JSONISH)
    return {"_metadata": draw(st.one_of(st.just({"gpu": "*"}), JSONISH)), "invalid_tactics": draw(invalid)}


REAL_LEDGER_LINE = json.loads((SAMPLES / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl").read_text().splitlines()[0])


@st.composite
def ledger_line(draw) -> str:
    line = dict(REAL_LEDGER_LINE)
    for _ in range(draw(st.integers(0, 4))):
        field = draw(st.sampled_from(sorted(line) + ["problem.m", "env.gpu", "config"]))
        value = draw(st.one_of(JSONISH, st.just("__X__")))
        if "." in field:
            outer, inner = field.split(".")
            line[outer] = dict(line[outer]) if isinstance(line.get(outer), dict) else {}
            line[outer][inner] = value
        elif draw(st.booleans()):
            line[field] = value
        else:
            line.pop(field, None)
    return draw(json_text(st.just(line))).replace("\n", " ")


_HEAD = "2026-08-03 10:00:12,085 - DEBUG - autotuner.py:1914 - flashinfer.jit: [Autotuner]: "
LOG_TEMPLATES = [
    _HEAD + "profiling <{runner} object at 0x7f> {tactic}, shapes={shapes}, avg_time {time}",
    "2026-08-03 10:00:12,085 - INFO - autotuner.py:829 - flashinfer.jit: [Autotuner]: Autotuning process starts ...",
    _HEAD.replace("DEBUG", "WARNING") + "Skipping tactic {runner} {tactic}, due to failure while profiling: {text}",
    "2026-08-03 10:00:12,091 - INFO - autotuner.py:1 - flashinfer.jit: [Autotuner]: Skipped {tactic} unsupported tactic(s) for {text}",
    "[AutoTuner]: Tuning {text}: {tactic}/2 [00:00<?, ?profile/s]",
    "2026-08-03 10:00:12,091 - DEBUG - flashinfer.jit: [Autotuner]: chosen runner {tactic}, tactic {tactic} for {text}",
    "RuntimeError: [FlashInfer] Failed to initialize cutlass TMA WS GEMM: {text}",
    "CUDA error: an illegal memory access was encountered {text}",
    "GEMM requires {tactic} bytes of shared memory, device supports {time}",
    "2026-08-03 10:00:13,000 - INFO - flashinfer.jit: Running FlashInfer autotune with cache {text}",
]


@st.composite
def log_text(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        template = draw(st.sampled_from(LOG_TEMPLATES))
        lines.append(template.format(runner=draw(st.one_of(st.just("CutlassFp4GemmRunner"), TEXT)),
                                     tactic=draw(st.one_of(st.integers(-1, 300), BIG_INTS, TEXT)),
                                     shapes=draw(st.one_of(key_text(), TEXT)), time=draw(st.one_of(NUMBER, TEXT)),
                                     text=draw(TEXT)))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n" * 3]))


# --- the properties -------------------------------------------------------------------------------

def _consume(module, path: Path) -> list:
    """Everything `module.read` yields; only ReaderError (the project's input-problem type) may escape."""
    try:
        items = list(module.read(path, CTX))
    except ReaderError:
        return []
    for item in items:
        assert isinstance(item, (TuningRecord, InputProblem)) or type(item).__module__ == "tiletune.core.events", type(item)
        if isinstance(item, InputProblem):
            assert LAST_RESORT not in item.message and "\n" not in item.message
    return items


def _read_all(path: Path) -> None:
    out = read_inputs([path], CTX)
    bugs = [p.message for p in out.problems if LAST_RESORT in p.message]
    assert not bugs, bugs


def _write(tmp_path_factory, name: str, text) -> Path:
    p = tmp_path_factory.mktemp("fuzz") / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return p


@FUZZ
@given(text=json_text(v1_cache()))
def test_v1_reader(tmp_path_factory, text):
    p = _write(tmp_path_factory, "cache.json", text)
    _consume(flashinfer_v1, p)
    _read_all(p)


@FUZZ
@given(entries=st.lists(json_text(st.one_of(
    st.fixed_dictionaries({"key": st.one_of(key_text(), JSONISH), "runner": st.one_of(st.just("CutlassFp4GemmRunner"), JSONISH),
                           "tactic": TACTIC, "profiling_policy": POLICY, "key_fields": JSONISH}), JSONISH)), max_size=3),
       manifest=json_text(st.one_of(st.just({"flashinfer_version": "0.7.2", "cache_schema": "v2"}), JSONISH)))
def test_v2_store(tmp_path_factory, entries, manifest):
    store = tmp_path_factory.mktemp("fuzz") / "v2" / "0123456789abcdef"
    (store / "entries").mkdir(parents=True)
    (store / "manifest.json").write_text(manifest)
    for i, text in enumerate(entries):
        (store / "entries" / f"{i:024x}.json").write_text(text)
    _consume(flashinfer_v2, store)
    _read_all(store.parent.parent)


@FUZZ
@given(text=json_text(trtllm_cache()))
def test_trtllm_reader(tmp_path_factory, text):
    p = _write(tmp_path_factory, "autotuner_cache.rank0.json", text)
    _consume(trtllm, p)
    _read_all(p)


@FUZZ
@given(text=json_text(blocklist_doc()))
def test_blocklist_reader(tmp_path_factory, text):
    p = _write(tmp_path_factory, "tactics.json", text)
    _consume(blocklist, p)
    _read_all(p)


@FUZZ
@given(lines=st.lists(ledger_line(), min_size=1, max_size=4), torn=st.booleans())
def test_ledger_reader_and_resume(tmp_path_factory, lines, torn):
    from tiletune.tuner import resume
    from tiletune.tuner.ledger import Ledger

    p = _write(tmp_path_factory, "ledger.jsonl", "\n".join(lines) + ("" if torn else "\n"))
    _consume(ledger, p)
    _read_all(p)
    contents = Ledger(p).load()
    resume.finished(contents, REAL_LEDGER_LINE["env_id"])
    for a in contents.attempts:  # what --blocklist / --pin-cache read from each usable line
        resume.line_identity(a)
        problem = a.get("problem") or {}
        assert all(isinstance(problem[k], int) for k in ("m", "n", "k")) if problem else True


@FUZZ
@given(text=log_text())
def test_log_reader(tmp_path_factory, text):
    p = _write(tmp_path_factory, "server.log", text)
    _consume(logs, p)
    _read_all(p)


@FUZZ
@given(text=st.one_of(key_text(), TEXT, st.text(alphabet=string.printable, max_size=200)))
def test_keyparse(text):
    try:
        parsed = keyparse.parse_key(text)
    except keyparse.KeyParseError:
        return
    assert isinstance(parsed.op, str) and isinstance(parsed.shapes, tuple)
    for shape in parsed.shapes:  # numbers a key hands on are bounded
        for d in shape if isinstance(shape, tuple) else ():
            assert not isinstance(d, int) or abs(d) < 10**41


_SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".log", ".txt")
                       and p.stat().st_size < 200_000)


@FUZZ
@given(index=st.integers(0, len(_SAMPLE_FILES) - 1), edits=st.lists(st.tuples(st.floats(0, 1), st.binary(max_size=8)), max_size=4),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_byte_mutations_of_the_real_samples(tmp_path_factory, index, edits, cut):
    src = _SAMPLE_FILES[index]
    data = bytearray(src.read_bytes())
    for where, junk in edits:
        i = int(where * len(data))
        data[i:i + len(junk)] = junk
    if cut is not None:
        data = data[: int(cut * len(data))]
    _read_all(_write(tmp_path_factory, src.name, bytes(data)))


CLI_INPUT = st.one_of(json_text(v1_cache()), json_text(trtllm_cache()), json_text(blocklist_doc()), log_text(),
                      st.lists(ledger_line(), min_size=1, max_size=3).map("\n".join))


@settings(FUZZ, max_examples=max(MAX_EXAMPLES // 3, 4))
@given(texts=st.lists(CLI_INPUT, min_size=1, max_size=2),
       command=st.sampled_from([("inspect",), ("inspect", "-f", "json"), ("inspect", "-f", "markdown"), ("report", "--no-plot"),
                                ("report", "-f", "json", "--no-plot")]))
def test_cli_end_to_end(tmp_path_factory, texts, command):
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    d = tmp_path_factory.mktemp("cli")
    names = ["cache.json", "autotuner_cache.json", "tactics.json", "server.log", "ledger.jsonl"]
    paths = []
    for i, text in enumerate(texts):
        p = d / f"{i}-{names[i % len(names)]}"
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
        paths.append(str(p))
    good = str(SAMPLES / "v1" / "sm120-rtx5090-0.6.8-fp4-3part.json")
    res = CliRunner().invoke(app, [command[0], *paths, good, *command[1:]])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output and LAST_RESORT not in res.output
    assert "\x1b" not in res.stdout
    if command == ("inspect", "-f", "json"):  # the good input beside the fuzzed ones is reported
        doc = json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
        assert any(e["source"] == good for e in doc["entries"])


def test_the_budget_is_fixed():
    """The suite is a fixed set of cases (derandomized, no example database), not a search that grows."""
    assert FUZZ.derandomize and FUZZ.database is None and FUZZ.max_examples == MAX_EXAMPLES
    assert Phase.shrink not in FUZZ.phases
