"""keyparse: FlashInfer / TRT-LLM cache keys are parsed exactly, without eval, and in linear time.

Linear time is shown by counting work (regex_steps.py), never by timing: speed is bench/'s job.
"""

from __future__ import annotations

import pytest
from regex_steps import Counting

from tiletune.readers import keyparse
from tiletune.readers.keyparse import KeyParseError, KeyParser, Name, _exact, parse_general, parse_key, parse_literal

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


@pytest.fixture
def regex_work(monkeypatch):
    """Every regex the key parser runs, wrapped to count a backtracking matcher's steps; returns
    a function giving the total so far."""
    counters = []
    for name in ("_KEY_LAYOUT", "_FRONT_LAYOUT", "_TAIL_LAYOUT", "_INSIDE_BAD", "_BARE_NAME", "_TOKEN"):
        counters.append(Counting(getattr(keyparse, name)))
        monkeypatch.setattr(keyparse, name, counters[-1])
    consts = tuple((Counting(pattern), repl) for pattern, repl in keyparse._CONSTS)
    counters += [c for c, _ in consts]
    monkeypatch.setattr(keyparse, "_CONSTS", consts)
    return lambda: sum(c.steps for c in counters)


def _work_per_size(regex_work, family, sizes=(250, 500, 1000, 2000)):
    """Regex steps to parse family(n) for growing n (the parse may fail: garbled keys do)."""
    counts = []
    for n in sizes:
        before = regex_work()
        try:
            KeyParser().parse(family(n))
        except KeyParseError:
            pass
        counts.append(regex_work() - before)
    return counts


def _assert_linear(counts, sizes=(250, 500, 1000, 2000)):
    # doubling the input may at most (about) double the work: quadratic work would quadruple it
    growth = [b / a for a, b in zip(counts, counts[1:])]
    assert all(g <= 2.2 for g in growth), f"regex steps {counts} for sizes {sizes}: growth {growth}"


GARBLED = {
    "unclosed parens": lambda n: "(" * n + "{",
    "only open parens": lambda n: "(" * n,
    "deep nesting": lambda n: "('a', 'b', " + "(" * n + "1" + ")" * n + ")",
    "numbers then junk": lambda n: "1 " * n + "{",
}


@pytest.mark.parametrize("family", GARBLED.values(), ids=GARBLED.keys())
def test_garbled_keys_fail_cleanly_in_linear_work(family, regex_work):
    # a depth limit (no RecursionError) and regexes whose work grows linearly with the key
    with pytest.raises(KeyParseError):
        parse_key(family(5000))
    _assert_linear(_work_per_size(regex_work, family))


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


@pytest.mark.parametrize("text", [
    "('op', 'R', ((0,,), (3, 4)), ())",  # two trailing commas: not a tuple literal
    "('op', 'R', ((16, 2048), (2048, 4096,,)), ())",
])
def test_structural_path_refuses_what_the_exact_parser_refuses(text):
    # the fast path once stripped every trailing comma, so it read shapes the general parser
    # refuses ("unexpected ','"): the same text must get the same answer on either path
    with pytest.raises(KeyParseError):
        parse_general(text)
    with pytest.raises(KeyParseError):
        KeyParser().parse(text)


@pytest.mark.parametrize("text", [
    "('op', 'R', ((0,), (3, 4)), ())", "('op', 'R', ((0, 10), (100, 4)), ())", "('op', 'R', ((-0, 0), (3, 4)), ())",
])
def test_structural_path_still_reads_zeros_and_one_tuples(text):
    v = _exact(text)
    assert KeyParser().parse(text).shapes == v[2]


LONG_GARBLED = {
    "unclosed shape": lambda n: "('a', 'b', ((" + "1, " * n + ")",
    "many shapes then junk": lambda n: "('a', 'b', ((1), " + "(2), " * n + "x",
    "closing parens": lambda n: "('a', 'b', ((1, 2)), " + ")" * n,
    "valid, many shapes": lambda n: "('a', 'b', ((1, 2)" + ", (3, 4)" * n + "), (torch.bfloat16, 8))",
}


@pytest.mark.parametrize("family", LONG_GARBLED.values(), ids=LONG_GARBLED.keys())
def test_structural_regex_stays_linear_on_long_garbled_keys(family, regex_work):
    counts = _work_per_size(regex_work, family)
    assert counts[0] > 250  # the count is real work, not zero
    _assert_linear(counts)


def test_the_step_counter_sees_quadratic_backtracking():
    """The counter itself: a pattern known to backtrack quadratically is reported as such."""
    import re

    bad = Counting(re.compile(r"x*y"))  # searched in x...x: every start position rescans the rest
    counts = []
    for n in (50, 100, 200):
        before = bad.steps
        bad.search("x" * n)
        counts.append(bad.steps - before)
    assert counts[2] / counts[1] > 3.5


def _plain_structural(text):
    """The structural path as one whole-key match (the reference `KeyParser.split` is pinned to):
    (op, runner, shapes, extras), None for "use the general parser", or KeyParseError."""
    mt = keyparse._KEY_LAYOUT.fullmatch(text)
    if mt is None:
        return None
    op, runner, first_text, rest_text, etext = mt.groups()
    pieces = [first_text] + (rest_text[3:-1].split("), (") if rest_text else [])
    shapes = []
    for p in pieces:
        body = p[:-1] if p.endswith(",") else p  # one trailing comma, after an element
        if p and not body:
            return None
        if keyparse._LONG_NUMBER.search(body):
            return None
        try:
            shapes.append(tuple(int(x) for x in body.split(",")) if body else ())
        except ValueError:
            return None
    extras = None
    if etext is not None:
        value = parse_literal(etext)
        extras = value if isinstance(value, tuple) else (value,)
    return op, runner, tuple(shapes), extras


def _sample_keys():
    """Every key-like text in cache_samples/ (the wild corpus included): keys and values of each JSON
    file that start with "(", and in every file each "('" up to each ")" after it (whole keys, keys
    cut short, keys with a log line's tail)."""
    import json
    from pathlib import Path

    out = set()
    root = Path(__file__).resolve().parents[2] / "cache_samples"
    for f in sorted(root.rglob("*")):
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if f.suffix == ".json":
            try:
                stack = [json.loads(text)]
            except ValueError:
                stack = []
            while stack:
                v = stack.pop()
                items = list(v.items()) if isinstance(v, dict) else [(None, x) for x in v] if isinstance(v, list) else []
                for k, x in items:
                    for s in (k, x):
                        if isinstance(s, str) and s.startswith("("):
                            out.add(s)
                    if isinstance(x, (dict, list)):
                        stack.append(x)
        for line in text.splitlines():
            start = line.find("('")
            while start >= 0:
                end = line.find(")", start)
                while 0 <= end < start + 600:
                    out.add(line[start:end + 1])
                    end = line.find(")", end + 1)
                start = line.find("('", start + 1)
    return sorted(out)


def _mutations(keys, rng):
    """Hostile edits of real keys: a character swapped for one that matters to the layout, a cut
    point doubled or moved, long numbers, quotes and escapes in the op or runner."""
    specials = "'\"\\(),[] -0123456789_.x\n"
    out = []
    for k in rng.sample(keys, min(len(keys), 700)):
        for _ in range(3):
            i = rng.randrange(len(k))
            out.append(k[:i] + rng.choice(specials) + k[i + 1:])
            out.append(k[:i] + rng.choice(specials) + k[i:])
            out.append(k[:i] + k[i + 1:])
        out.append(k.replace(", ((", ", (((", 1))
        out.append(k.replace(", ((", ", ((", 1).replace("'", "', ((x", 1))
        out.append(k.replace("1", "1" * 45, 1))
        out.append(k.replace("', '", "\\', '", 1))
        out.append(k.replace(")", ", )", 1))
    return out


def test_split_matches_the_whole_key_layout_and_the_general_parser():
    # KeyParser.split (three memoised pieces) gives what the whole-key regex gave, on every key of the
    # samples and the wild corpus and on hostile edits of them, each parser fresh and warm; and what
    # it reads, the general parser reads the same way (every sample key; of the edits, those it reads)
    import random

    keys = _sample_keys()
    assert len(keys) > 400
    cases = keys + _mutations(keys, random.Random(11)) + [
        "", "(", ", ((", ")", "('a', 'b', ((", "('a', 'b', (()", "('a', 'b', (())", "('a', 'b', (()))", "('a', 'b', ((), ())",
        "('a', 'b', ((1, 2)), ", "('a', 'b', ((1, 2)), x)", "('a', 'b', ((1, 2)), ())x", "('a', 'b', ((1_0, 2)))",
        "('a', 'b', ((\u0661, 2)))", "('a, ((b', 'c', ((1, 2)))", "('a', 'b, ((c', ((1, 2)))", "('a', 'b', ((1, 2)), (3,)))",
        "('a', 'b', ((007, -0), ( 1 ,2 ), (3,)))", "('a', 'b', ((1, 2)), (torch.bfloat16, 'x, ((y'))",
        "('a', 'b', ((1, 2), (3, 4)),\n())", "('a', 'b', ((1, 2)), (1, 2)) + ((3, 4))",
    ]
    warm = keyparse.KeyParser()
    kinds = set()
    for text in cases * 2:  # the second round meets every piece in the warm parser's memos
        try:
            want = _plain_structural(text)
        except KeyParseError as e:
            want = ("raises", str(e))
        for parser in (warm, keyparse.KeyParser()):
            try:
                got = parser.split(text)
            except KeyParseError as e:
                got = ("raises", str(e))
            assert got == want, text
        kinds.add("none" if want is None else want[0] if want[0] == "raises" else "read")
        if want is not None and want[0] != "raises":
            assert tuple(parser.parse(text)) == want
            try:
                general = keyparse.parse_general(text)
            except KeyParseError:  # where the structural layout is more lenient than the general parser
                assert text not in keys, text
                continue
            assert tuple(general) == want, text
    assert kinds == {"none", "raises", "read"}


def test_split_reuses_the_key_befores_front_only_where_it_is_this_keys():
    # KeyParser.split takes the key before's front when the key starts with it and its ")": in
    # sorted order (as FlashInfer writes a file), in reverse and shuffled, over real keys, the big
    # caches' keys and keys built to start with the key before's front but differ after it, every
    # split equals the whole-key reference; op and runner are one object per text
    import json
    import random
    import tempfile
    from pathlib import Path

    from big_caches import make_cache, make_fp4_distinct

    keys = _sample_keys()
    with tempfile.TemporaryDirectory() as d:
        for make in (make_cache, make_fp4_distinct):
            make(1500, Path(d) / "c.json")
            keys += [k for k in json.loads((Path(d) / "c.json").read_text()) if not k.startswith("_")]
    tricky = []
    for k in keys[::7]:
        cut = k.find(")")
        if cut > 0:
            tricky += [k, k[:cut + 1], k[:cut + 1] + ")", k[:cut + 1] + ", (1, 2)), ())", k[:cut + 1] + "x", k[:cut] + ", 3)" + k[cut + 1:],
                       k[:cut] + "))" + k[cut + 1:], k[:cut + 1] + k[cut + 1:].replace(")", "", 1)]
    rng = random.Random(5)
    shuffled = keys + tricky
    rng.shuffle(shuffled)
    seen = 0
    for order in (sorted(keys), sorted(keys, reverse=True), tricky, shuffled):
        parser = keyparse.KeyParser()
        names: dict = {}
        for text in order:
            try:
                want = _plain_structural(text)
            except KeyParseError as e:
                want = ("raises", str(e))
            try:
                got = parser.split(text)
            except KeyParseError as e:
                got = ("raises", str(e))
            assert got == want, text
            if got is not None and got[0] != "raises":
                seen += 1
                for name in got[:2]:
                    assert names.setdefault(name, name) is name, text
    assert seen > 5000
