"""Coupling selection: OSCC-Select with the Theorem 1 certificate, RV-Select and Oracle-Select.

OSCC-Select works on one stratum at a time.  For every candidate arm it has
n calibration blocks, each giving an unbiased score X_k of the gain
J(independent) - J(candidate) (gradient-noise units), clipped to [-B, B].
Hoeffding's inequality with a union bound over the M declared
candidate-stratum pairs gives the simultaneous lower bound

    L = mean(X) - r_n,    r_n = B * sqrt(2 log(2M / delta) / n).

A candidate is eligible when its safety certificate holds and L > 0; the
selector picks the eligible arm with the smallest estimated objective (ties
broken by the fixed arm order) and falls back to independent when none is
eligible.  A true gain d > 2 r_n is certified on the same event, so
n > 8 B^2 log(2M / delta) / d^2 blocks suffice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oscc_core.method.policy_gradient import mean_pairwise_contrast_variance

ARM_ORDER = ("independent", "root_only", "continuation_only", "full")
FALLBACK = "independent"


def hoeffding_radius(n_blocks: int, bound: float, n_comparisons: int, delta: float) -> float:
    """r_n = B sqrt(2 log(2M/delta) / n): half-width of the simultaneous bound."""
    return bound * math.sqrt(2.0 * math.log(2.0 * n_comparisons / delta) / n_blocks)


def sufficient_blocks(bound: float, n_comparisons: int, delta: float, gain: float) -> float:
    """n > 8 B^2 log(2M/delta) / d^2 blocks certify a true gain d with probability >= 1 - delta."""
    return 8.0 * bound ** 2 * math.log(2.0 * n_comparisons / delta) / gain ** 2


@dataclass(frozen=True)
class Certificate:
    """One candidate's gain certificate in one stratum."""

    arm: str
    blocks: int
    mean_gain: float          # mean clipped score, gradient-noise units
    lower_bound: float        # mean_gain - r_n
    clipped_scores: int       # how many scores hit +-B
    safe: bool
    certified: bool


def certify(scores, arm: str, bound: float, n_comparisons: int, delta: float, safe: bool = True) -> Certificate:
    """Clip block scores to [-B, B] and apply the Hoeffding + union-bound certificate."""
    x = np.asarray(scores, dtype=np.float64)
    clipped = np.clip(x, -bound, bound)
    lower = float(clipped.mean()) - hoeffding_radius(len(x), bound, n_comparisons, delta)
    return Certificate(arm, len(x), float(clipped.mean()), lower, int((np.abs(x) >= bound).sum()),
                       bool(safe), bool(safe and lower > 0))


def oscc_select(certificates: list[Certificate], objective: dict[str, float]) -> str:
    """The certified arm with the smallest estimated objective, else the independent fallback."""
    eligible = [c.arm for c in certificates if c.certified and c.arm != FALLBACK]
    if not eligible:
        return FALLBACK
    return min(eligible, key=lambda arm: (objective[arm], ARM_ORDER.index(arm)))


def rv_select(covariances: dict[str, np.ndarray]) -> str:
    """Return-variance selection: the arm with the smallest mean pairwise contrast variance."""
    return min(covariances, key=lambda arm: (mean_pairwise_contrast_variance(covariances[arm]),
                                             ARM_ORDER.index(arm)))


def oracle_select(exact_objective: dict[str, float]) -> str:
    """The arm with the smallest exact objective (ties by arm order)."""
    return min(exact_objective, key=lambda arm: (exact_objective[arm], ARM_ORDER.index(arm)))
