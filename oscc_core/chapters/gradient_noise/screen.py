"""The scalar clipped-surrogate screen: short learning runs of the root policy on frozen-continuation returns.

Reports per run the root-law-weighted change of P(Call | I) (a probability),
the number of batch gradients and how many were finite and non-zero, the
clip-selected (group, action, epoch) terms and the range of the ratios seen.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oscc_core.chapters.gradient_noise.geometry import Geometry
from oscc_core.chapters.gradient_noise.transfer import arm_data
from oscc_core.engine.collector import collect
from oscc_core.learning.surrogate import tabular_batch_gradient
from oscc_core.method.policy_gradient import softmax

#: The two arms the paper's screen compares (paired = full coupling).
SCREEN_ARMS = ("independent", "full")


@dataclass
class ScreenResult:
    """One (seed, arm) run of the screen."""

    seed: int
    arm: str
    delta_p: float                 # root-law-weighted change of P(Call) at the root information states
    gradients: int                 # batch gradients evaluated (iterations x epochs)
    finite_nonzero: int            # of which finite and not all zero
    clipped_terms: int             # clip-selected (group, action, epoch) terms
    terms: int
    ratio_range: tuple[float, float]


def scalar_screen(geom: Geometry, arm: str, seed: int, iterations: int, groups: int, epochs: int,
                  learning_rate: float, epsilon: float, device="cpu", split: str = "train") -> ScreenResult:
    """A short clipped-surrogate learning run of the root policy on frozen-continuation returns.

    The root policy theta_I starts at log pi0(I).  Iteration t takes the next
    `groups` comparison groups of a collection (split ``train``, run `seed`),
    freezes the behaviour policy at the current theta, and takes `epochs`
    gradient-ascent steps of size `learning_rate` on the batch mean of the
    groups' clipped surrogates (each group moves only its own I's logits).
    Only the root policy learns, so the continuation, and with it the law of
    the returns, is fixed: one collection of iterations x groups groups
    serves the whole run.
    """
    col = collect(geom.game, geom.root.history, arm, iterations * groups, seed, continuation=geom.continuation,
                  device=device, split=split)
    d = arm_data(geom, col)
    n_info, m = geom.probs.shape
    call = geom.actions.index("Call")
    theta = np.log(geom.probs).copy()
    start = softmax(theta)[:, call]
    n_grad = n_ok = clipped = 0
    lo, hi = math.inf, -math.inf
    for t in range(iterations):
        rows = slice(t * groups, (t + 1) * groups)
        info, r = d.info[rows], d.returns[rows].astype(np.float64)
        behaviour = softmax(theta)[info]
        for _ in range(epochs):
            batch, active, ratio = tabular_batch_gradient(theta, info, behaviour, r, epsilon)
            lo, hi = min(lo, float(ratio.min())), max(hi, float(ratio.max()))
            n_grad += 1
            n_ok += int(np.isfinite(batch).all() and np.abs(batch).sum() > 0)
            clipped += int((~active).sum())
            theta = theta + learning_rate * batch
    delta = float(geom.weight @ (softmax(theta)[:, call] - start))
    return ScreenResult(seed, arm, delta, n_grad, n_ok, clipped, iterations * groups * m * epochs, (lo, hi))


def run_screen(geom: Geometry, seeds, iterations: int, groups: int, epochs: int, learning_rate: float,
               epsilon: float, device="cpu") -> list[ScreenResult]:
    """The screen for every seed, independent then full at each seed."""
    return [scalar_screen(geom, a, s, iterations, groups, epochs, learning_rate, epsilon, device)
            for s in seeds for a in SCREEN_ARMS]
