"""The relations the paper states for this chapter's tables, evaluated on our estimates and resolved by our
paired bootstrap (`reporting.claims.Relation`).

Every arm's quantities come as [R+1] arrays: index 0 the estimate, indices 1..R the replicates of one
stratified bootstrap that resamples the same groups for every arm and every update setting
(`bootstrap.Resampled`), so the difference of two arms' arrays is a paired bootstrap of their difference.
A relation *holds* on the estimates; it is *resolved* when the 95% percentile interval of every paired
difference it involves lies on the stated side of 0 (for an ordering of four arms: each of the three
consecutive differences), and unresolved otherwise.
"""
from __future__ import annotations

from itertools import pairwise

import numpy as np

from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.engine.arms import STATED_BELOW
from oscc_core.reporting.claims import Relation


def _difference_low(a: np.ndarray, b: np.ndarray) -> float:
    """Lower end of the 95% interval of the paired difference a - b."""
    return estimate(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).low


def ordering(text: str, values: dict[str, np.ndarray], order) -> Relation:
    """`order[0] > order[1] > ...` (e.g. independent > root_only > continuation_only > full): holds on the
    estimates, resolved when every consecutive paired difference's interval lies above 0."""
    holds = all(values[a][0] > values[b][0] for a, b in pairwise(order))
    resolved = all(_difference_low(values[a], values[b]) > 0 for a, b in pairwise(order))
    return Relation(text, holds, resolved)


def stated(text: str, values: dict[str, np.ndarray]) -> Relation:
    """The relation the paper states for the four fixed arms (`engine.arms.STATED_BELOW`: both partial arms below
    independent, full below both): holds on the estimates, resolved when every pair's paired difference has its
    interval wholly above 0."""
    holds = all(values[a][0] < values[b][0] for a, b in STATED_BELOW)
    resolved = all(_difference_low(values[b], values[a]) > 0 for a, b in STATED_BELOW)
    return Relation(text, holds, resolved)


def lowest(text: str, values: dict[str, np.ndarray], arm: str, others) -> Relation:
    """`arm` below every arm of `others` (the paper's bold minimum): holds on the estimates, resolved when the
    paired difference with each other arm has an interval wholly below 0."""
    holds = all(values[arm][0] < values[o][0] for o in others)
    resolved = all(_difference_low(values[o], values[arm]) > 0 for o in others)
    return Relation(text, holds, resolved)


def above(text: str, value: np.ndarray, reference: np.ndarray) -> Relation:
    """`value > reference` for two paired arrays (e.g. a stress row's update variance over the control's)."""
    return ordering(text, {"value": value, "reference": reference}, ("value", "reference"))


def zero(text: str, values: np.ndarray) -> Relation:
    """A quantity the paper states is exactly 0 (the zero-clipping control): holds when the estimate is 0,
    resolved when the whole interval is [0, 0] (no replicate departs from 0)."""
    est = estimate(values)
    return Relation(text, est.value == 0, est.low == 0 and est.high == 0)
