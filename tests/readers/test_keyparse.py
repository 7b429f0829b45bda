"""keyparse: FlashInfer / TRT-LLM cache keys are parsed exactly, without eval, and fast."""

from __future__ import annotations

import time

import pytest

from tiletune.readers.keyparse import KeyParseError, KeyParser, Name, _exact, parse_key, parse_literal

REAL_KEY = (  # from the real 0.7.2.post1 H200 cache in cache_samples/real/
    "('fp8_gemm', 'CublasFp8GemmRunner', ((1, 1, 4096), (1, 4096, 4096), (), (), (1, -1, 4096), (-1,)), "
    "(torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16))"
)


def test_real_four_part_key_with_dtypes():
    pk = parse_key(REAL_KEY)
    assert pk.op == "fp8_gemm" and pk.runner == "CublasFp8GemmRunner"
    assert pk.shapes == ((1, 1, 4096), (1, 4096, 4096), (), (), (1, -1, 4096), (-1,))
    assert pk.extras == ("torch.float8_e4m3fn", "torch.float8_e4m3fn", "torch.bfloat16")
    assert all(isinstance(x, Name) for x in pk.extras)  # bare names, not quoted strings


def test_three_part_key_has_no_extras():
    pk = parse_key("('fp4_gemm', 'CutlassFp4GemmRunner', ((128, 3584), (3584, 4608), (-1, 448), (), (0,), (-1,)))")
    assert pk.extras is None
    assert pk.shapes[3] == () and pk.shapes[4] == (0,) and pk.shapes[5] == (-1,)


def test_sglang_34629_moe_key_empty_extras():
    pk = parse_key("('trtllm::fused_moe::gemm1', 'MoERunner', ((1, 2560), (512, 1280, 160), (0,), (512, 2560, 40), (0,)), ())")
    assert pk.op == "trtllm::fused_moe::gemm1" and pk.extras == ()
    assert pk.shapes[1] == (512, 1280, 160)


def test_constants_enums_negative_and_one_tuples():
    pk = parse_key("('op', 'R', ((8,), (-1, -2)), (torch.bfloat16, True, False, None, ActivationType.Swiglu, 3, -7, 1.5, 'sm120', (8,), ()))")
    assert pk.shapes == ((8,), (-1, -2))
    x = pk.extras
    assert x[1] is True and x[2] is False and x[3] is None
    assert isinstance(x[4], Name) and x[4] == "ActivationType.Swiglu"
    assert x[5:8] == (3, -7, 1.5)
    assert x[8] == "sm120" and not isinstance(x[8], Name)
    assert x[9] == (8,) and x[10] == ()


def test_fast_and_exact_paths_agree():
    keys = [REAL_KEY, "('a', 'B', ((1, 2),), (True, None, torch.int8))", "('x', 'Y', (), ())"]
    for k in keys:
        assert parse_literal(k) == _exact(k)


def test_strings_with_quotes_and_commas_use_the_exact_parser():
    pk = parse_key("('op, with (parens)', \"it's\", ((1,),), ('a\\'b',))")
    assert pk.op == "op, with (parens)" and pk.runner == "it's" and pk.extras == ("a'b",)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("('fp4_gemm', 'R', ((8, 2048), (2048, 4096)", "unclosed"),
        ("not a key at all", "trailing text"),
        ("('only', 'two')", "3- or 4-element"),
        ("(1, 'R', ((1,),))", "quoted strings"),
        ("('op', 'R', 5)", "shape profile"),
        ("('op', 'R', ((1,),)) + 1", "unexpected character"),
        ("__import__('os').system('true')", "unexpected"),
    ],
)
def test_bad_keys_raise_keyparseerror(text, reason):
    with pytest.raises(KeyParseError, match=reason):
        parse_key(text)


def test_50k_keys_fast_path_agrees_with_exact_parser():
    keys = []
    for i in range(50_000):
        m = 1 << (i % 14)
        n = (2048, 4096, 7168, 10240)[i % 4]
        if i % 3 == 0:
            keys.append(f"('fp4_gemm', 'CutlassFp4GemmRunner', (({m}, {n // 2}), ({n // 2}, {n + i % 7}), (-1, {n // 16}), (), (0,), (-1, {n}), (0,), (0,), (-1,)), ())")  # noqa: E501 - a real key's layout, one key per line
        elif i % 3 == 1:
            keys.append(f"('trtllm::fused_moe::gemm1', 'MoERunner', (({m}, 2048), (128, {1536 + i % 11}, 2048), (0,), (128, 2048, 768), (0,)), "
                        "(torch.bfloat16, torch.bfloat16, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, False, False, False, True, 3, False, True))")  # noqa: E501 - a real key's layout, one key per line
        else:
            keys.append(f"('fp8_gemm', 'CublasFp8GemmRunner', ((1, {m}, {n}), (1, {n}, {4096 + i % 5}), (), (), (1, -1, 4096), (-1,)), (torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16))")  # noqa: E501 - a real key's layout, one key per line
    parser = KeyParser()
    parsed = [parser.parse(k) for k in keys]  # speed: bench/bench_inspect.py prints it
    assert len(parsed) == 50_000 and parsed[1].extras[3] == 8
    # spot-check the memoised fast path against the exact parser
    for k, p in list(zip(keys, parsed))[::997]:
        v = _exact(k)
        assert (p.op, p.runner, p.shapes, p.extras) == (v[0], v[1], v[2], v[3])


@pytest.mark.parametrize(
    "text",
    ["(" * 30 + "{", "(" * 5000, "('a', 'b', " + "(" * 2000 + "1" + ")" * 2000 + ")", "1 " * 5000 + "{"],
)
def test_garbled_keys_fail_fast_and_cleanly(text):
    # linear-time checks (no regex backtracking) and a depth limit (no RecursionError)
    t0 = time.process_time()
    with pytest.raises(KeyParseError):
        parse_key(text)
    assert time.process_time() - t0 < 0.5


@pytest.mark.parametrize("text", [
    "('op', 'R', ((1, 2), (3, 4)))",  # 3-part
    "('op', 'R', ((1, 2),), ())",  # a one-shape profile (the general parser's case)
    "('op', 'R', ((-1, 2), (), (0,), (5, -7, 9)), ())",
    "('op', 'R', ((1,2),(3,4)), (1, 2))",  # no spaces
    "('op', 'R', ((1, 2), (3, (4, 5))), ())",  # nested shape
    "('op', 'R', ((1, 2), (3, 4)), ('a\\'b', \"c\\\\d\", torch.bfloat16))",  # quotes and escapes in the extras
    "('op', 'R', ((1, 2), (3, 4)), 7)",  # a bare extra
    "('op\"x', 'R', ((1, 2),), ())",
    "('op', 'R', ((1, 2), (3, 4)), (True, None, ActivationType.Swiglu, 1.5, -2))",
])
def test_structural_path_agrees_with_exact_parser(text):
    v = _exact(text)
    p = KeyParser().parse(text)
    assert (p.op, p.runner, p.shapes) == (v[0], v[1], v[2])
    want_extras = None if len(v) == 3 else (v[3] if isinstance(v[3], tuple) else (v[3],))
    assert p.extras == want_extras


def test_structural_regex_stays_linear_on_long_garbled_keys():
    for text in ["('a', 'b', ((" + "1, " * 200_000 + ")", "('a', 'b', ((1), " + "(2), " * 100_000 + "x",
                 "('a', 'b', ((1, 2)), " + ")" * 200_000]:
        t0 = time.process_time()
        try:
            KeyParser().parse(text)
        except KeyParseError:
            pass
        assert time.process_time() - t0 < 0.5
