"""Exact per-stratum objectives at one root, from enumerated branch-return moments.

For a stratum z (a set of root information states I with root-law weights
w_I) and an arm Gamma: the noise J(Gamma; z) = sum_I w_I tr(G(I) Sigma(I)
G(I)^T) / sum_I w_I (chips^2 per unit logit^2, "noise units"), the pooled
covariance of the branch returns (chips^2) and its mean pairwise contrast
variance (chips^2).  Oracle-Select's choice is the arm with the smallest
exact objective.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.chance_maps import MAPS
from oscc_core.exact.arm_moments import infostate_moments
from oscc_core.games import LEDUC
from oscc_core.method.policy_gradient import mean_pairwise_contrast_variance, noise_trace
from oscc_core.method.selectors import FALLBACK, oracle_select, rv_select
from oscc_core.method.strata import CARD_CLASSES, stratum_of

from .root_policy import RootPolicy

CANDIDATES = tuple(a for a in PAPER_ARMS if a != FALLBACK)     # root_only, continuation_only, full


@dataclass
class ExactRoot:
    """Exact per-information-state moments of every arm at one root under one continuation map."""

    root: str
    continuation_map: str
    actions: list[str]
    infos: list                         # exact.arm_moments.InfostateMoments

    def strata(self) -> list[str]:
        return sorted({stratum_of(i.own_card) for i in self.infos}, key=CARD_CLASSES.index)

    def _members(self, stratum: str | None):
        return [i for i in self.infos if stratum is None or stratum_of(i.own_card) == stratum]

    def stratum_weight(self, stratum: str | None) -> float:
        """Root-law probability of the stratum (None: the whole root, 1)."""
        return float(sum(i.weight for i in self._members(stratum)))

    def noise(self, arm: str, policy: RootPolicy, stratum: str | None = None) -> float:
        """J(arm; z) = sum_I w_I tr(G Sigma(I) G^T) / sum_I w_I over the stratum (None: the whole root)."""
        members = self._members(stratum)
        w = np.array([i.weight for i in members])
        vals = [noise_trace(policy.jacobian(i.infostate), i.moments[arm].cov) for i in members]
        return float(np.dot(w, vals) / w.sum())

    def moments(self, arm: str, stratum: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pooled mean and covariance of the branch returns over the stratum (mixture of the I's)."""
        members = self._members(stratum)
        w = np.array([i.weight for i in members])
        w = w / w.sum()
        means = np.array([i.moments[arm].mean for i in members])
        second = sum(wi * (i.moments[arm].cov + np.outer(i.moments[arm].mean, i.moments[arm].mean))
                     for wi, i in zip(w, members))
        mean = w @ means
        return mean, second - np.outer(mean, mean)

    def mpcv(self, arm: str, stratum: str | None = None) -> float:
        """Mean pairwise contrast variance of the pooled covariance (RV-Select's criterion)."""
        return mean_pairwise_contrast_variance(self.moments(arm, stratum)[1])

    def conditional_cov(self, arm: str, i: int, j: int, stratum: str | None = None) -> float:
        """E_I Cov(R_i, R_j | I) over the stratum: the part of the covariance a coupling can change."""
        members = self._members(stratum)
        w = np.array([m.weight for m in members])
        return float(np.dot(w, [m.moments[arm].cov[i, j] for m in members]) / w.sum())


def exact_root(root: str, continuation="uniform", continuation_map: str = "semantic",
               game: str = LEDUC) -> ExactRoot:
    """Enumerated moments of every arm at `root` under one continuation map."""
    infos = infostate_moments(game, root, continuation, continuation_map=continuation_map)
    return ExactRoot(root, continuation_map, list(infos[0].moments["full"].actions), infos)


def exact_roots(root: str, continuation, game: str = LEDUC) -> dict[str, ExactRoot]:
    """map name -> ExactRoot, for every continuation map (semantic, relabelled, antithetic)."""
    return {mp: exact_root(root, continuation, mp, game) for mp in MAPS}


def exact_selection(exact: ExactRoot, policy: RootPolicy, lam: float = 0.0, cost: dict | None = None) -> dict:
    """Oracle-Select per stratum: the arm with the smallest exact J (+ lambda * cost per group)."""
    out = {}
    for z in exact.strata():
        objective = {a: exact.noise(a, policy, z) + lam * (0.0 if cost is None else cost[a][z]) for a in PAPER_ARMS}
        out[z] = oracle_select(objective)
    return out


def exact_rv_selection(exact: ExactRoot) -> dict:
    """RV-Select's choice per stratum if it knew the exact pooled covariances."""
    return {z: rv_select({a: exact.moments(a, z)[1] for a in PAPER_ARMS}) for z in exact.strata()}


def exact_gains(exact: ExactRoot, policy: RootPolicy) -> dict:
    """stratum -> candidate -> J(independent; z) - J(candidate; z), exact (noise units)."""
    return {z: {a: exact.noise(FALLBACK, policy, z) - exact.noise(a, policy, z) for a in CANDIDATES}
            for z in exact.strata()}
