"""The learners' exp (`oscc_core.fixed_math`): accurate, and the same bits in every engine.

Accuracy is checked against the C library's exp (an independent implementation); bit equality between
the numba kernel, the torch tensor version and the plain-Python source; and the compiled kernel is checked
for fused multiply-adds, which would make its rounding depend on the code generator.
"""
import math

import numba
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from oscc_core import fixed_math
from oscc_core.fixed_math import exp_array, exp_rows, exp_scalar, exp_tensor

ARGUMENTS = st.floats(min_value=-800.0, max_value=709.0, allow_nan=False)


def ulps(a: float, b: float) -> int:
    """Distance in units in the last place between two non-negative doubles."""
    return abs(int(np.float64(a).view(np.int64)) - int(np.float64(b).view(np.int64)))


@settings(max_examples=400, deadline=None)
@given(ARGUMENTS)
def test_exp_is_within_two_units_in_the_last_place_of_the_c_library(x):
    assert ulps(exp_scalar(x), math.exp(x)) <= 2


@settings(max_examples=200, deadline=None)
@given(st.lists(ARGUMENTS, min_size=1, max_size=40))
def test_torch_numba_and_plain_python_give_the_same_bits(xs):
    x = np.array(xs, dtype=np.float64)
    kernel = exp_array(x)
    tensor = exp_tensor(torch.from_numpy(x)).numpy()
    python = np.array([exp_scalar.py_func(v) for v in xs])
    assert np.array_equal(kernel.view(np.int64), tensor.view(np.int64))
    assert np.array_equal(kernel.view(np.int64), python.view(np.int64))


@pytest.mark.parametrize("x, expected", [(0.0, 1.0), (-0.0, 1.0), (-np.inf, 0.0), (-746.0, 0.0)])
def test_exp_takes_its_exact_values_at_the_ends(x, expected):
    assert exp_scalar(x) == expected
    assert exp_tensor(torch.tensor([x], dtype=torch.float64)).item() == expected


def test_exp_rounds_into_the_subnormal_range_like_the_c_library():
    x = np.linspace(-745.0, -708.5, 2001)
    got = exp_array(x)
    assert all(ulps(g, math.exp(v)) <= 2 for g, v in zip(got, x))
    assert got.min() > 0.0


def test_exp_of_a_whole_row_ignores_rows_past_the_count():
    x = np.full((3, 2), -1.0)
    out = np.full((3, 2), 7.0)
    exp_rows(x, 2, out)
    assert np.all(out[:2] == exp_scalar(-1.0)) and np.all(out[2] == 7.0)


def test_the_compiled_kernel_has_no_fused_multiply_add():
    fresh = numba.njit(exp_rows.py_func)      # compiled here: numba cannot show the assembly of cached code
    fresh(np.zeros((1, 1)), 1, np.zeros((1, 1)))
    assembly = "\n".join(fresh.inspect_asm().values()).lower()
    assert "vfmadd" not in assembly and "vfnmadd" not in assembly and "vfmsub" not in assembly


def test_exp_tensor_refuses_float32_in_one_sentence():
    with pytest.raises(TypeError, match="float64"):
        exp_tensor(torch.zeros(2, dtype=torch.float32))


def test_taylor_coefficients_are_the_reciprocal_factorials_from_13_down_to_2():
    assert fixed_math.TAYLOR == tuple(1.0 / math.factorial(n) for n in range(13, 1, -1))
