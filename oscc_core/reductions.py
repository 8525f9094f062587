"""Fixed-order sums, bitwise identical on every CPU.

numpy's `.sum(axis=...)` and BLAS products (`a @ ones`) choose their
summation order by CPU (SIMD width, kernel), so their last bit differs
between machines.  Iterative algorithms amplify such a bit: a CFR+ regret
that lands on the other side of zero changes the policy by percent after a
few hundred iterations.  Adding the columns one after the other in index
order is an elementwise operation, and IEEE elementwise arithmetic rounds the
same everywhere.
"""
from __future__ import annotations

import numpy as np


def sum_last_axis(a: np.ndarray) -> np.ndarray:
    """a.sum(axis=-1), computed as a[..., 0] + a[..., 1] + ... in that order (same units as a)."""
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1], dtype=a.dtype)
    total = a[..., 0].copy()
    for column in range(1, a.shape[-1]):
        total += a[..., column]
    return total
