"""The root policy pi0: the policy at a root's information states whose gradient is estimated.

A root policy is 'uniform', 'cfr_plus' (the CFR+ average policy) or a list
of probabilities over the root's legal actions, the same at every
information state.  A softmax cannot represent a zero probability (its logit
would be -inf), so CFR+ probabilities below a floor are raised to it and the
row renormalised; the floor is an explicit argument because the chapters
that use it state different ones.
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.engine.roots import Root
from oscc_core.exact.cfr import cfr_plus
from oscc_core.policy import resolve_policy

NAMED_ROOT_POLICIES = ("uniform", "cfr_plus")


def check_root_policy(name: str, value) -> "str | list[float]":
    """'uniform', 'cfr_plus' or a non-empty list of positive probabilities summing to one (ValueError if not)."""
    if isinstance(value, str):
        if value in NAMED_ROOT_POLICIES:
            return value
        raise ValueError(f"{name} must be 'uniform', 'cfr_plus' or a list of probabilities, got {value!r}.")
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) for p in value):
        probs = [float(p) for p in value]
        if min(probs) > 0 and abs(sum(probs) - 1) <= 1e-9:
            return probs
    raise ValueError(f"{name} must be 'uniform', 'cfr_plus' or a list of positive probabilities "
                     f"summing to 1 (one per legal root action), got {value!r}.")


def floor_probabilities(probs: np.ndarray, floor: float) -> tuple[np.ndarray, int]:
    """Rows of `probs` [.., m] with entries below `floor` raised to it and renormalised; and how many were raised."""
    probs = np.asarray(probs, dtype=np.float64)
    floored = int((probs < floor).sum())
    probs = np.maximum(probs, floor)
    return probs / probs.sum(axis=-1, keepdims=True), floored


def root_policy_probs(value, root: Root, infos, cfr_iterations: int, floor: float,
                      name: str = "root_policy") -> tuple[np.ndarray, int]:
    """[len(infos), m] pi0 over the root's legal actions at each (own card, public card) in `infos`.

    Returns the probabilities and the number of CFR+ entries raised to `floor`
    (0 for 'uniform' and for a list, which must have one entry per legal action).
    """
    m = len(root.actions)
    if isinstance(value, str) and value == "uniform":
        return np.full((len(infos), m), 1.0 / m), 0
    if isinstance(value, str) and value == "cfr_plus":
        game = root.game
        table = resolve_policy(game, cfr_plus(game, cfr_iterations))
        ids = game.infostates.index_table[root.node, [o for o, _ in infos], [p + 1 for _, p in infos]]
        return floor_probabilities(table[ids][:, list(root.actions)], floor)
    probs = np.asarray(value, dtype=np.float64)
    if probs.shape != (m,):
        raise ValueError(f"{name} lists {probs.size} probabilities but the root has {m} legal actions "
                         f"({', '.join(root.action_names)}).")
    return np.tile(probs, (len(infos), 1)), 0
