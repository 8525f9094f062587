"""The root's gradient geometry: information states, their weights, the root policy, Jacobians and exact moments.

A comparison group fixes a root information state I of the acting player
(own card and, in round two, the public card) drawn by the root law, plays
every legal root action once and records the branch returns R (chips).

* Root policy pi0(. | I): the tabular softmax policy differentiated at each
  I, also the frozen behaviour policy of the clipped surrogate.  It is
  resolved by `method.root_policy.root_policy_probs` with an explicit
  probability floor (CFR+ probabilities below it are raised to it, because a
  softmax has no zero and the ratio pi / pi0 needs pi0 > 0).
* G(I) = [g_1 .. g_m], g_i = d pi0(a_i | I) / d theta_I (`policy_jacobian`).
* Noise trace N = sum_I w(I) tr(G(I) Sigma(I) G(I)^T) (chips^2 per logit^2),
  Sigma(I) the covariance of the branch returns given I.  Exact values use
  the root-law weights w(I) and `exact.arm_moments(..., where=I)`.  Estimates
  weight the per-state traces by `state_weights`: the root law
  (``"root_law"``) or the states' empirical frequencies in the sample
  (``"empirical"``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.roots import Root, build_root
from oscc_core.exact.arm_moments import Moments, arm_moments
from oscc_core.games import LEDUC, get_game
from oscc_core.method.policy_gradient import policy_jacobian
from oscc_core.method.root_policy import root_policy_probs
from oscc_core.method.stats import contrast_pair
from oscc_core.method.strata import card_class
from oscc_core.policy import resolve_policy
from oscc_core.reporting.params import ParameterError

#: How estimated per-state noise is weighted: by the root law, or by each state's share of the sample's groups.
WEIGHTINGS = ("root_law", "empirical")


@dataclass
class Geometry:
    """Root information states, their root-law weights, the root policy and its Jacobians.

    infos    [(own card, public card or -1)] in sorted order
    weight   [nI] root-law probability of each information state
    probs    [nI, m] root (behaviour) policy pi0
    jac      [nI, m, m] G(I) (column i = g_i)
    exact    arm -> [Moments per information state] (exact conditional moments)
    pooled   arm -> Moments over the whole root law
    floored  CFR+ root-policy entries raised to the floor
    """

    root: Root
    continuation: object
    root_policy: str
    infos: list[tuple[int, int]]
    weight: np.ndarray
    probs: np.ndarray
    jac: np.ndarray
    exact: dict[str, list[Moments]]
    pooled: dict[str, Moments]
    floored: int = 0

    @property
    def game(self) -> str:
        return self.root.game.name

    @property
    def actions(self) -> list[str]:
        return self.root.action_names

    @property
    def pair(self) -> tuple[int, int]:
        return contrast_pair(self.actions)

    @property
    def stratum(self) -> np.ndarray:
        """[nI] own-card class (0 J, 1 Q, 2 K) of each information state."""
        return np.array([card_class(own) for own, _ in self.infos])

    def info_index(self, own, public) -> np.ndarray:
        """Index into `infos` of each group's (own card, public card); ValueError on an unknown pair."""
        own = np.asarray(own, dtype=np.int64)
        public = np.asarray(public, dtype=np.int64)
        n_cards = self.root.game.num_cards
        lookup = np.full((n_cards, n_cards + 1), -1, dtype=np.int64)
        for i, (o, p) in enumerate(self.infos):
            lookup[o, p + 1] = i
        out = lookup[own, public + 1]
        if (out < 0).any():
            raise ValueError("a group's information state is not a root information state of this geometry.")
        return out

    def gram(self) -> np.ndarray:
        """[nI, m, m] <g_i, g_j> per information state."""
        return np.einsum("nki,nkj->nij", self.jac, self.jac)

    def noise_per_info(self, covs) -> np.ndarray:
        """[.., nI] tr(G Sigma G^T) for covariances [.., nI, m, m]."""
        return np.einsum("nij,...nij->...n", self.gram(), np.asarray(covs))

    def exact_noise(self, arm: str, per_info: bool = False):
        """Exact N(arm) = sum_I w(I) tr(G Sigma G^T) with root-law weights (or the [nI] per-I values)."""
        v = self.noise_per_info(np.stack([m.cov for m in self.exact[arm]]))
        return v if per_info else float(self.weight @ v)

    def exact_conditional_contrast_var(self, arm: str) -> float:
        i, j = self.pair
        return float(sum(w * m.contrast_var(i, j) for w, m in zip(self.weight, self.exact[arm])))

    def exact_contrast_var(self, arm: str) -> float:
        i, j = self.pair
        return self.pooled[arm].contrast_var(i, j)

    def exact_composite(self, selection: dict[int, str]) -> tuple[float, float]:
        """Exact (noise trace, pooled contrast variance) when stratum z uses arm selection[z]."""
        i, j = self.pair
        strata = self.stratum
        noise, within = 0.0, 0.0
        for k, (w, z) in enumerate(zip(self.weight, strata)):
            m = self.exact[selection[int(z)]][k]
            noise += w * self.noise_per_info(m.cov[None])[0]
            within += w * m.contrast_var(i, j)
        # pooled Var(D) = E[Var(D | I)] + Var(E[D | I]); the conditional means are the same in every arm
        means = np.array([m.contrast_mean(i, j) for m in self.exact["independent"]])
        between = float(self.weight @ (means - self.weight @ means) ** 2)
        return float(noise), float(within + between)


def geometry(root_history: str, continuation, root_policy, cfr_iterations: int, floor: float,
             game: str = LEDUC) -> Geometry:
    """Root information states, root-law weights, root policy (CFR+ floored at `floor`), Jacobians, exact moments."""
    g = get_game(game)
    root = build_root(g, root_history, resolve_policy(g, continuation))
    keys = [tuple(x) for x in root.situations[:, :2].tolist()]
    infos = sorted(set(keys))
    weight = np.array([sum(w for k, w in zip(keys, root.weight) if k == i) for i in infos])
    weight = weight / weight.sum()
    try:
        probs, floored = root_policy_probs(root_policy, root, infos, cfr_iterations, floor)
    except ValueError as e:
        raise ParameterError(str(e)) from None
    jac = np.stack([policy_jacobian(p) for p in probs])
    exact = {a: [] for a in PAPER_ARMS}
    for own, pub in infos:
        mom = arm_moments(g, root_history, continuation,
                          where=lambda s, o=own, p=pub: (s[:, 0] == o) & (s[:, 1] == p))
        for a in PAPER_ARMS:
            exact[a].append(mom[a])
    pooled = arm_moments(g, root_history, continuation)
    label = root_policy if isinstance(root_policy, str) else "fixed " + str([round(p, 6) for p in root_policy])
    return Geometry(root=root, continuation=continuation, root_policy=label, infos=infos, weight=weight,
                    probs=probs, jac=jac, exact=exact, pooled={a: pooled[a] for a in PAPER_ARMS}, floored=floored)


def state_weights(geom: Geometry, info: np.ndarray, weights: str) -> np.ndarray:
    """[nI] weights of the per-state noise estimates of groups at states `info` [n].

    "root_law": the root-law probability of each state (`geom.weight`);
    "empirical": each state's share n_I / n of the groups.
    """
    if weights == "root_law":
        return geom.weight
    if weights == "empirical":
        counts = np.bincount(np.asarray(info), minlength=len(geom.infos))
        return counts / counts.sum()
    raise ValueError(f"weights must be one of {list(WEIGHTINGS)}, got {weights!r}.")


def lag_direction(geom: Geometry) -> np.ndarray:
    """[nI, m] unit vector of the exact expected policy gradient G(I) E[R | I] at pi0 (zero if it vanishes)."""
    means = np.stack([m.mean for m in geom.exact["independent"]])
    d = np.einsum("nki,ni->nk", geom.jac, means)
    norm = np.linalg.norm(d, axis=1, keepdims=True)
    return np.where(norm > 0, d / np.where(norm > 0, norm, 1.0), 0.0)
