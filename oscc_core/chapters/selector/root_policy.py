"""The root policy whose gradient the comparison groups estimate, at every information state of one root.

A root policy pi(. | I) is a probability vector over the root's legal
actions at each root information state I (dimensionless); its softmax
Jacobian G(I) = diag(pi) - pi pi^T (per unit logit) turns the branch-return
covariance (chips^2) into gradient noise (chips^2 per unit logit^2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.engine.roots import build_root
from oscc_core.games import LEDUC, get_game
from oscc_core.method.policy_gradient import policy_jacobian
from oscc_core.method.root_policy import root_policy_probs
from oscc_core.policy import resolve_policy
from oscc_core.reporting.params import ParameterError


@dataclass(frozen=True)
class RootPolicy:
    """The policy whose gradient is estimated, at every information state of one root."""

    label: str
    actions: list[str]
    probs: dict[str, np.ndarray]       # infostate string -> probabilities over the root's legal actions
    floored: int = 0                   # entries raised to the probability floor (then renormalised)
    short_label: str = ""              # a table's row label (the probabilities alone), when shorter than `label`

    @property
    def short(self) -> str:
        """The label a table row shows: `short_label` when there is one, else `label`."""
        return self.short_label or self.label

    def jacobian(self, infostate: str) -> np.ndarray:
        """G(I) = diag(pi) - pi pi^T at one information state [m, m]."""
        return policy_jacobian(self.probs[infostate])

    def common_probs(self) -> tuple[float, ...] | None:
        """The probabilities when they are the same at every information state, else None."""
        rows = {tuple(p) for p in self.probs.values()}
        return next(iter(rows)) if len(rows) == 1 else None

    def g1_norm2(self) -> float | None:
        """||g_1||^2 (per unit logit^2) when the root has two actions and the policy is the same at every
        information state; there N(Gamma; I) = ||g_1||^2 Var(R_1 - R_2 | I).  None otherwise."""
        probs = list(self.probs.values())
        if len(self.actions) != 2 or any(not np.allclose(p, probs[0]) for p in probs):
            return None
        g = policy_jacobian(probs[0])
        return float(g[:, 0] @ g[:, 0])


def resolve_root_policy(name: str, value, root: str, continuation, cfr_iterations: int, *, floor: float,
                        game: str = LEDUC) -> RootPolicy:
    """'uniform', 'cfr_plus' or a list of probabilities over the root's legal actions (same at every I).

    CFR+ probabilities below `floor` (a softmax cannot represent 0: its logit
    would be -inf) are raised to the floor and renormalised; the count is kept
    in ``floored``.  A list must have one positive entry per legal action and
    sum to 1 (within 1e-9) or a ParameterError names `name`.
    """
    g = get_game(game)
    r = build_root(g, root, resolve_policy(g, continuation))
    infos = sorted({(int(o), int(p)) for o, p in r.situations[:, :2].tolist()})
    strings = [g.information_state_string(r.player, o, p, r.node) for o, p in infos]
    m = len(r.actions)
    if isinstance(value, str) and value == "uniform":
        return RootPolicy("uniform", r.action_names, {s: np.full(m, 1.0 / m) for s in strings})
    if isinstance(value, str) and value == "cfr_plus":
        probs, floored = root_policy_probs(value, r, infos, cfr_iterations, floor, name)
        return RootPolicy(f"CFR+ ({cfr_iterations} it.)", r.action_names, dict(zip(strings, probs)), floored)
    if isinstance(value, (list, tuple)) and len(value) == m and \
            all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        p = np.asarray(value, dtype=np.float64)
        if np.all(p > 0) and abs(p.sum() - 1.0) <= 1e-9:
            label = "[" + ", ".join(f"{a} {x:g}" for a, x in zip(r.action_names, p)) + "]"
            short = "(" + ", ".join(f"{x:g}" for x in p) + ")"
            return RootPolicy(label, r.action_names, {s: p.copy() for s in strings}, short_label=short)
    raise ParameterError(f"{name} must be 'uniform', 'cfr_plus' or a list of {m} positive probabilities summing to 1 "
                         f"over the legal actions {r.action_names} at root {root!r}, got {value!r}.")
