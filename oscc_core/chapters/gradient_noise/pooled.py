"""The cost frontier's contrast variances read on the all-roots pool: the paper's reading of a contrast variance.

The paper prints one contrast variance per arm on its matched-cost frontier (independent sampling's among them)
and, as its headline, the same quantity over "all roots": a weighted summary over every root ID, each
group counted once.  So the frontier's contrast variances are read here in two ways, fixed before looking at
any number:

* ``POOLED_READING``, the paper's reading: every Leduc decision point where check and bet (Call and Raise) are
  both legal and that the continuation reaches (`method.pooling.pool_histories`), each weighted as
  `method.pooling.root_weights` says, each collecting its share of the groups with a seed of its own
  (`method.pooling.root_seed`, at least `MIN_ROOT_GROUPS` groups), the Call and Raise moments pooled by the
  mixture formula (`method.pooling.mixture_moments`), with a paired bootstrap stratified by root and exact
  values pooled the same way.  With the same seed, groups, weighting and continuation these are the groups of
  the covariance chapter's all-roots audit, so the fixed arms' numbers are the same;
* `one_root_reading` (a sensitivity reading): the frontier's own root alone, at the matched budget.

OSCC-Select on the pool: at every root a group takes the returns of the arm its own-card class selects (the
selection certified at the frontier's root: our OSCC-Select is calibrated there, and a class is the only stratum
it knows).  A contrast variance per group does not depend on the budget, only its interval does: the pool uses
its own groups, not a matched-cost prefix.  Units: chips^2.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from oscc_core.chapters.gradient_noise.arms import SELECT
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.collector import collect
from oscc_core.exact.arm_moments import arm_moments, infostate_moments
from oscc_core.games import LEDUC
from oscc_core.method import pooling, stats
from oscc_core.method.stats import Estimate
from oscc_core.method.strata import card_class
from oscc_core.policy import resolve_policy

#: The paper's reading of a contrast variance, and the name of the sensitivity reading at one root.
POOLED_READING = "all roots pooled"
#: Fewest groups a root of the pool gets (its own paired bootstrap needs a few).
MIN_ROOT_GROUPS = 100
#: Bootstrap purpose of a root of the pool (the covariance chapter's, so that the replicates are the same).
PURPOSE = "pooled/{root}"


def one_root_reading(root: str) -> str:
    """The sensitivity reading at one root: ``root '' alone``."""
    return f"root {root!r} alone"


def min_groups(continuation, game: str = LEDUC) -> int:
    """Fewest groups the pool accepts: `MIN_ROOT_GROUPS` at each of its roots."""
    return MIN_ROOT_GROUPS * len(pooling.pool_histories(continuation, game))


@dataclass
class PooledContrast:
    """The pool's contrast variance Var(R_Call - R_Raise) per arm (OSCC-Select included).

    histories  the roots, in the tree's order;  weights [H] their weights;  groups [H] their groups per arm
    values     arm -> [R+1] pooled contrast variance: the estimate, then the bootstrap replicates (replicate r of
               every root forms pooled replicate r; the same resampled groups for every arm, so paired)
    exact      arm -> the exact pooled contrast variance
    """

    histories: list[str]
    weights: np.ndarray
    groups: np.ndarray
    weighting: str
    values: dict[str, np.ndarray]
    exact: dict[str, float]

    def contrast_var(self, arm: str) -> Estimate:
        """The pooled contrast variance of `arm` (chips^2), its 95% percentile interval and exact value."""
        v = self.values[arm]
        return stats.estimate_from_replicates(float(v[0]), v[1:], self.exact[arm])

    def record(self) -> dict:
        """The results file's record: the roots with weights and groups, each arm's estimate."""
        return {"reading": POOLED_READING, "weighting": self.weighting, "groups": int(self.groups.sum()),
                "roots": [{"root": h, "weight": float(w), "groups": int(n)}
                          for h, w, n in zip(self.histories, self.weights, self.groups)],
                "contrast_var": {a: self.contrast_var(a).as_dict() for a in self.values}}


def contrast_var(cov: np.ndarray) -> np.ndarray:
    """Var(R_0 - R_1) of covariances [..., 2, 2]."""
    return cov[..., 0, 0] + cov[..., 1, 1] - 2 * cov[..., 0, 1]


def composite_returns(returns: dict[str, torch.Tensor], own_card: torch.Tensor,
                      selection: dict[int, str]) -> torch.Tensor:
    """OSCC-Select's returns at one root: for a group whose acting player's card is of class z, the returns of
    the arm `selection[z]` (independent sampling for a class the selection does not name)."""
    out = returns["independent"].clone()
    classes = torch.div(own_card, 2, rounding_mode="floor")
    for z, arm in selection.items():
        rows = classes == int(z)
        out[rows] = returns[arm][rows]
    return out


def exact_composite(game: str, root: str, continuation, selection: dict[int, str]) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean [B] and covariance [B, B] of OSCC-Select's returns at `root`: the mixture over the acting
    player's information states of the selected arm's conditional moments."""
    states = infostate_moments(game, root, continuation)
    w = np.array([s.weight for s in states])
    arms = [selection.get(card_class(s.own_card), "independent") for s in states]
    means = np.stack([s.moments[a].mean for s, a in zip(states, arms)])
    covs = np.stack([s.moments[a].cov for s, a in zip(states, arms)])
    return pooling.mixture_moments(w / w.sum(), means, covs)


def _root_part(game: str, root: str, n: int, seed: int, continuation, device, n_bootstrap: int,
               selection: dict[int, str]) -> dict:
    """One root's Call and Raise moments per arm: sample (mean [2], cov [2, 2]), replicates ([R, 2], [R, 2, 2]) and
    exact (mean [2], cov [2, 2])."""
    run = pooling.root_seed(seed, root)
    cols = {a: collect(game, root, a, n, run, continuation=continuation, device=device) for a in PAPER_ARMS}
    first = cols["independent"]
    ok = torch.ones_like(first.codes, dtype=torch.bool)
    for c in cols.values():
        ok &= c.codes == 0
        if not torch.equal(c.own_card, first.own_card):
            raise AssertionError(f"root {root!r}: arms collected with one seed drew different root cards.")
    returns = {a: c.returns[ok] for a, c in cols.items()}
    returns[SELECT] = composite_returns(returns, first.own_card[ok], selection)
    idx = [first.actions.index(name) for name in pooling.CONTRAST]
    sub = np.ix_(idx, idx)
    boot = stats.paired_bootstrap(returns, n_bootstrap, run, PURPOSE.format(root=root))
    exact = {a: (m.mean, m.cov) for a, m in arm_moments(game, root, continuation).items() if a in PAPER_ARMS}
    exact[SELECT] = exact_composite(game, root, continuation, selection)
    out = {}
    for a, r in returns.items():
        mean, cov = stats.sample_moments(r)
        out[a] = (mean[idx], cov[sub], boot.mean[a][:, idx], boot.cov[a][:, idx][:, :, idx],
                  exact[a][0][idx], exact[a][1][sub])
    return out


def pooled_contrast(selection: dict[int, str], n_groups: int, seed: int, continuation, device, n_bootstrap: int,
                    weighting: str = "visits", game: str = LEDUC) -> PooledContrast:
    """The all-roots pool of every paper arm and OSCC-Select (`selection`: own-card class -> arm): `n_groups` groups
    per arm over the roots, split by their weights (`method.pooling.allocate`), pooled as the module says."""
    table = resolve_policy(game, continuation)
    histories = pooling.pool_histories(continuation, game)
    weights = pooling.root_weights(game, histories, table, weighting)
    groups = pooling.allocate(n_groups, weights, MIN_ROOT_GROUPS)
    parts = [_root_part(game, h, int(n), seed, continuation, device, n_bootstrap, selection)
             for h, n in zip(histories, groups)]
    values, exact = {}, {}
    for a in parts[0]:
        m, c, bm, bc, em, ec = (np.stack(x) for x in zip(*(p[a] for p in parts)))
        _, cov = pooling.mixture_moments(weights, m, c)
        _, boot_cov = pooling.mixture_moments(weights, bm.swapaxes(0, 1), bc.swapaxes(0, 1))
        _, ex_cov = pooling.mixture_moments(weights, em, ec)
        values[a] = np.concatenate([[contrast_var(cov)], contrast_var(boot_cov)])
        exact[a] = float(contrast_var(ex_cov))
    return PooledContrast(histories, weights, groups, weighting, values, exact)
