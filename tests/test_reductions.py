"""Fixed-order sums: the CFR+ trajectory must not depend on the CPU's summation order."""
import numpy as np

from oscc_core.reductions import sum_last_axis


def test_rows_are_summed_left_to_right_bit_for_bit():
    rows = np.random.default_rng(7).normal(size=(200, 3)) * 10.0 ** np.arange(-8, 8, 5.5)
    left_to_right = [(r[0] + r[1]) + r[2] for r in rows.tolist()]   # plain Python floats, one order
    assert sum_last_axis(rows).tolist() == left_to_right


def test_leading_axes_are_kept():
    a = np.arange(24, dtype=np.float64).reshape(2, 4, 3)
    assert sum_last_axis(a).tolist() == [[3.0, 12.0, 21.0, 30.0], [39.0, 48.0, 57.0, 66.0]]
