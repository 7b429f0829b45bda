"""The report's JSON is written in pieces (formats.report.iter_report_json): the same text as the
whole document encoded at once (but for how an entry's floats are spelled: msgspec's 1e16 and
0.00001 for json's 1e+16 and 1e-05), so a big cache's report never holds its JSON tree (issue 24
item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec

from tests.readers.big_caches import make_cache
from tiletune.analysis.pipeline import inspect
from tiletune.formats import report
from tiletune.formats.json_out import iter_inspect_values
from tiletune.formats.redact import Redactor
from tiletune.formats.strict_json import dumps
from tiletune.readers.interface import ReadContext

SAMPLES = Path(__file__).resolve().parents[2] / "cache_samples"
CTX = report.ReportContext(paths=("runs",), generated_at="2026-12-05 12:00 UTC")


# a string (kept as it is) or a number with a fraction or an exponent (spelled as Python spells it)
_FLOAT = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?[eE][-+]?\d+|-?\d+\.\d+')


def _floats_spelled_alike(text: str) -> str:
    return _FLOAT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else repr(float(m.group(0))), text)


def _same_text(streamed: str, whole: str) -> bool:
    return _floats_spelled_alike(streamed) == _floats_spelled_alike(whole)


def _whole(result, redact=None) -> str:  # noqa: ANN001
    """The report as one tree encoded once (what format_report_json wrote before it streamed)."""
    doc = report.report_dict(result, CTX)
    return dumps(doc if redact is None else report._redacted_tree(doc, redact), indent=1, ensure_ascii=False) + "\n"


def test_streamed_report_json_is_the_whole_document(tmp_path: Path) -> None:
    # more entries than one chunk, a log with failures, a TRT-LLM cache holding Infinity (written as null)
    make_cache(2100, tmp_path / "big.json")
    inputs = [tmp_path / "big.json", SAMPLES / "logs" / "sm120_0.6.17_warmup_debug.log", SAMPLES / "trtllm" / "autotuner_cache.json",
              SAMPLES / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"]
    result = inspect(inputs, ReadContext())
    assert len(result.entries) > 2000 and result.failures
    redactor = Redactor([str(tmp_path)], host_names=["gpu-node-7"], user_names=["alicesmith"])
    for redact in (None, redactor):
        streamed = report.format_report_json(result, CTX, redact=redact)
        assert _same_text(streamed, _whole(result, redact))
        doc = json.loads(streamed)
        assert len(doc["inspect"]["entries"]) == len(result.entries)
    assert str(tmp_path) not in report.format_report_json(result, CTX, redact=redactor)


def test_an_empty_result_streams_the_same() -> None:
    result = inspect([SAMPLES / "logs" / "sm120_0.6.17_warmup_debug.log"], ReadContext())
    streamed = report.format_report_json(result, CTX)
    assert _same_text(streamed, _whole(result))


def test_inspect_values_in_pieces_make_the_whole_document(tmp_path: Path) -> None:
    from tiletune.formats.json_out import inspect_dict

    make_cache(2500, tmp_path / "c.json")
    result = inspect([tmp_path / "c.json"], ReadContext())
    pieces = list(iter_inspect_values(result))
    assert [k for k, _ in pieces] == ["entries", "entries", "rest"]
    rest = pieces[-1][1]
    rest["entries"] = [e for k, v in pieces[:-1] for e in msgspec.json.decode(v)]
    assert rest == inspect_dict(result)


def test_non_finite_numbers_stream_as_the_whole_document_writes_them() -> None:
    from tests.formats.test_json_strict import _odd_result

    result = _odd_result()
    streamed = report.format_report_json(result, CTX)
    assert _same_text(streamed, _whole(result))
    assert json.loads(streamed)["notes"]  # (NaN and Infinity written as null, and said)


def test_float_spellings_are_told_apart_only_by_spelling() -> None:
    assert _same_text('{"a": 1e16, "b": "1e+16", "c": 0.00001}', '{"a": 1e+16, "b": "1e+16", "c": 1e-05}')
    assert not _same_text('{"a": 1e16}', '{"a": 1e+15}') and not _same_text('{"b": "1e16"}', '{"b": "1e+16"}')
    assert not _same_text('{"a": 1,"b": 2}', '{"a": 1, "b": 2}')
