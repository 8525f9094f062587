"""exp with fixed rounding: the same bits on every CPU, in every engine.

Library exponentials are not reproducible: which last bit `exp` returns
depends on the implementation a library picks for the CPU (numpy's AVX-512
exp differs from the C library's in about 4% of float64 arguments, torch
uses its own vector code, a GPU its own).  A learner whose trajectory is
chaotic turns that one unit in the last place into a different result
within 1e5 physical calls.  The learners therefore take every exponential
from `exp_scalar` (numba kernels, plain Python) or `exp_tensor` (torch, any
device), which compute

    k = floor(x / ln 2 + 1/2),  r = (x - k ln2_hi) - k ln2_lo,
    exp(x) = p(r) * 2**k1 * 2**k2,  k1 = floor(k / 2), k2 = k - k1,

with p the degree-13 Taylor polynomial of exp at 0 in Horner form.  Only
IEEE basic operations (+, -, *, floor, a power of two built exactly) occur,
each rounded on its own (no fused multiply-add: the numba kernels are
checked for it) and in one fixed order, so the result is a pure function of
the argument's bits.  Accuracy: within 2 units in the last place of the true
exp on [-745, 709] (tested against the C library); 0 below -745.2 and for
-inf, as the true exp rounds there.

The split of 2**k into two factors keeps both normal, so a result in the
subnormal range is rounded once, by the last multiplication.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import torch

from oscc_core import kernel_cache

kernel_cache.configure()     # before the first `cache=True`: one cache directory per version of the kernels

#: 1 / ln 2, rounded to double.
INV_LN2 = 1.4426950408889634
#: ln 2 split (Cody and Waite): LN2_HI has 32 significant bits, so k * LN2_HI is exact for |k| < 2**21.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
#: Below this the true exp rounds to 0 (half the smallest subnormal, 2**-1075, is exp(-745.13...)).
UNDERFLOW = -745.2
#: Above this exp overflows float64; arguments are clamped there (the learners only take x <= 0).
OVERFLOW = 709.78
#: Taylor coefficients 1/n! for n = 13 down to 2 (Horner order); the last two steps add r and 1.
TAYLOR = tuple(1.0 / math.factorial(n) for n in range(13, 1, -1))


@numba.njit(cache=True, inline="always")
def product(a, b):
    """a * b, rounded once.  Every product that a sum then takes goes through here: on the GPU
    (`learning.fused_cuda`) this becomes libdevice's `dmul_rn`, which the CUDA compiler never fuses with the
    sum into one FMA (a fused multiply-add rounds once where the CPU rounds twice)."""
    return a * b


@numba.njit(cache=True, inline="always")
def exp_scalar(x):
    """exp(x) of one float64 with fixed rounding (module docstring); plain Python gives the same bits."""
    if not x > UNDERFLOW:                      # also -inf and nan (nan never reaches the learners)
        return 0.0
    if x > OVERFLOW:
        x = OVERFLOW
    k = math.floor(product(x, INV_LN2) + 0.5)
    r = (x - product(k, LN2_HI)) - product(k, LN2_LO)
    p = TAYLOR[0]
    for c in TAYLOR[1:]:
        p = product(p, r) + c
    p = product(p, r) + 1.0
    p = product(p, r) + 1.0
    k1 = math.floor(k * 0.5)
    return p * math.ldexp(1.0, int(k1)) * math.ldexp(1.0, int(k - k1))


@numba.njit(cache=True)
def exp_rows(x, count, out):
    """out[i, :] = exp_scalar(x[i, :]) for the first `count` rows of 2-D float64 arrays."""
    for i in range(count):
        for j in range(x.shape[1]):
            out[i, j] = exp_scalar(x[i, j])


def _power_of_two(k: torch.Tensor) -> torch.Tensor:
    """2.0 ** k for integer-valued float64 k in [-1022, 1023], built from its bits (exact)."""
    return ((k.to(torch.int64) + 1023) << 52).view(torch.float64)


def exp_tensor(x: torch.Tensor) -> torch.Tensor:
    """exp of a float64 tensor, elementwise, bit for bit `exp_scalar` (one torch operation per IEEE step)."""
    if x.dtype != torch.float64:
        raise TypeError(f"exp_tensor takes float64 tensors, got {x.dtype}.")
    under = ~(x > UNDERFLOW)
    xc = torch.clamp(torch.where(under, torch.zeros_like(x), x), max=OVERFLOW)
    k = torch.floor(xc * INV_LN2 + 0.5)
    r = (xc - k * LN2_HI) - k * LN2_LO
    p = torch.full_like(xc, TAYLOR[0])
    for c in TAYLOR[1:]:
        p = p * r + c
    p = p * r + 1.0
    p = p * r + 1.0
    k1 = torch.floor(k * 0.5)
    out = p * _power_of_two(k1) * _power_of_two(k - k1)
    return torch.where(under, torch.zeros_like(out), out)


def exp_array(x: np.ndarray) -> np.ndarray:
    """exp of a float64 numpy array with fixed rounding (a copy; any shape)."""
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1)
    out = np.empty_like(flat)
    exp_rows(flat, 1, out)
    return out.reshape(np.shape(x))
