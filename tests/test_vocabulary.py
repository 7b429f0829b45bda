"""The shared words agree with each other: every dense GEMM op has one operand dtype, and it is
a dtype the model takes (event verdicts and the CUTLASS engine both read this one table)."""

from tiletune.core.vocabulary import BITS, DENSE_GEMM_OPERAND_DTYPE, DENSE_GEMM_OPS, INPUT_DTYPES


def test_each_dense_gemm_op_has_one_operand_dtype_the_model_takes():
    assert tuple(DENSE_GEMM_OPERAND_DTYPE) == DENSE_GEMM_OPS
    assert all(d in INPUT_DTYPES and d in BITS for d in DENSE_GEMM_OPERAND_DTYPE.values())
