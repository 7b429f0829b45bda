"""tools/l2_policy.py reads an op's cold-L2 setting from how its choose_one call gets its config.
The source text below is written for this test (the forms the tool follows), not copied."""

from tools.l2_policy import calls, scan

SOURCE = '''
COLD_CFG = TuningConfig(
    use_cuda_graph=True,
    use_cold_l2_cache=True,
)
WARM_CFG = TuningConfig(use_cuda_graph=True)
DERIVED = replace(COLD_CFG, use_cuda_graph=False)


def pick(x):
    cfg = COLD_CFG if x else WARM_CFG
    return tuner.choose_one("op_mixed", runners, cfg, inputs)


def cold_call():
    return tuner.choose_one(custom_op="op_derived", runners=runners, tuning_config=DERIVED, inputs=inputs)


def inline_call():
    config = runner.make_config(inputs, use_cold_l2_cache=True)
    return tuner.choose_one("op_inline", [runner], config, inputs)


def by_name(custom_op: str = "op_var"):
    return tuner.choose_one(custom_op, runners, WARM_CFG, inputs)
'''


def test_each_call_form():
    assert dict(calls(SOURCE)) == {"op_mixed": "mixed", "op_derived": "cold", "op_inline": "cold", "op_var": "warm"}


def test_an_op_called_warm_and_cold_is_mixed():
    twice = SOURCE + '''

def again():
    return tuner.choose_one("op_var", runners, COLD_CFG, inputs)
'''
    assert scan({"flashinfer/gemm/gemm_base.py": twice})["op_var"] == "mixed"
