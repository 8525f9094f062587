"""Paired audits: coupling arms collected at one root with one seed, and their estimates.

A *paired audit* collects several coupling arms at one root with the same
seed (so group g has the same root in every arm), computes each arm's branch
means and covariance from exact integer sums, the exact values by
enumeration (``exact.arm_moments``) and a paired root bootstrap
(``stats.paired_bootstrap``) that resamples the groups of all arms jointly.
Units: means in chips, variances and covariances in chips^2, ratios
unitless, reductions in percent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from oscc_core.engine.collector import Collection, collect
from oscc_core.exact.arm_moments import Moments, arm_moments
from oscc_core.games import LEDUC, get_game
from oscc_core.method import stats
from oscc_core.method.stats import Estimate, contrast_pair, estimate_from_replicates
from oscc_core.method.strata import card_class

#: The two arms of the paper's main table, in its order: the reference and the coupled arm.
HEADLINE_ARMS = ("independent", "full")


@dataclass
class PairedAudit:
    """Arms collected at one root with one seed, paired by group.

    ``scale`` converts summed budget-k returns to per-rollout means (1/k):
    means are multiplied by it and (co)variances by its square, so rows with
    different budgets are on the same chips scale; ratios do not change.
    """

    root: str
    actions: list[str]
    pair: tuple[int, int]
    groups: int
    valid: int
    budget: int
    mean: dict[str, np.ndarray]
    cov: dict[str, np.ndarray]
    exact: dict[str, Moments]
    boot: stats.BootstrapMoments
    collections: dict[str, Collection] = field(default_factory=dict)
    scale: float = 1.0
    emitted: dict[str, tuple[int, int]] | None = None   # arm -> (valid, groups) where there is no one collection

    def emitted_counts(self, arm: str) -> tuple[int, int]:
        """(groups that pass every audit predicate, groups collected) of one arm."""
        if self.emitted is not None:
            return self.emitted[arm]
        s = self.collections[arm].summary()
        return s["valid_groups"], s["groups"]

    @property
    def pair_names(self) -> tuple[str, str]:
        return self.actions[self.pair[0]], self.actions[self.pair[1]]

    def contrast_var(self, arm: str) -> Estimate:
        """Var(R_i - R_j) in chips^2 for the reported pair."""
        i, j = self.pair
        s2 = self.scale ** 2
        return estimate_from_replicates(stats.contrast_var(self.cov[arm], i, j) * s2,
                                        self.boot.contrast_var(arm, i, j) * s2,
                                        self.exact[arm].contrast_var(i, j) * s2)

    def contrast_sd(self, arm: str) -> Estimate:
        """SD of the contrast (chips); its interval is the square root of the variance interval."""
        v = self.contrast_var(arm)
        i, j = self.pair
        reps = np.sqrt(self.boot.contrast_var(arm, i, j)) * self.scale
        return Estimate(math.sqrt(v.value), math.sqrt(v.low), math.sqrt(v.high), math.sqrt(v.exact),
                        stats.bootstrap_se(reps))

    def contrast_mean(self, arm: str) -> Estimate:
        """E[R_i - R_j] in chips."""
        i, j = self.pair
        m = self.mean[arm]
        reps = (self.boot.mean[arm][:, i] - self.boot.mean[arm][:, j]) * self.scale
        return estimate_from_replicates((m[i] - m[j]) * self.scale, reps,
                                        self.exact[arm].contrast_mean(i, j) * self.scale)

    def covariance(self, arm: str) -> Estimate:
        """Cov(R_i, R_j) in chips^2."""
        i, j = self.pair
        s2 = self.scale ** 2
        return estimate_from_replicates(self.cov[arm][i, j] * s2, self.boot.covariance(arm, i, j) * s2,
                                        self.exact[arm].cov[i, j] * s2)

    def branch_mean(self, arm: str, branch: int) -> Estimate:
        """E[R_branch] in chips."""
        return estimate_from_replicates(self.mean[arm][branch] * self.scale,
                                        self.boot.mean[arm][:, branch] * self.scale,
                                        self.exact[arm].mean[branch] * self.scale)

    def ratio(self, numerator: str = "full", denominator: str = "independent") -> Estimate:
        """Contrast-variance ratio numerator / denominator (unitless)."""
        i, j = self.pair
        value = stats.contrast_var(self.cov[numerator], i, j) / stats.contrast_var(self.cov[denominator], i, j)
        ex = self.exact[numerator].contrast_var(i, j) / self.exact[denominator].contrast_var(i, j)
        return estimate_from_replicates(value, self.boot.variance_ratio(numerator, denominator, i, j), ex)

    def reduction(self, numerator: str = "full", denominator: str = "independent") -> Estimate:
        """Variance reduction 100 (1 - ratio), percent; interval from the ratio's replicates."""
        r = self.ratio(numerator, denominator)
        i, j = self.pair
        reps = 100 * (1 - self.boot.variance_ratio(numerator, denominator, i, j))
        return estimate_from_replicates(100 * (1 - r.value), reps, 100 * (1 - r.exact))

    def difference(self, quantity: str, arm: str, other: str) -> Estimate:
        """`quantity` ("contrast_var" or "covariance") of `arm` minus that of `other`, chips^2, with the
        percentile interval of the paired replicates (both arms resampled with the same groups)."""
        if quantity not in ("contrast_var", "covariance"):
            raise ValueError(f"quantity must be 'contrast_var' or 'covariance', got {quantity!r}.")
        a, b = getattr(self, quantity)(arm), getattr(self, quantity)(other)
        i, j = self.pair
        reps = (getattr(self.boot, quantity)(arm, i, j) - getattr(self.boot, quantity)(other, i, j)) * self.scale ** 2
        return estimate_from_replicates(a.value - b.value, reps, a.exact - b.exact)

    def equivalence(self, branch: int, margin: float, arm: str = "full", reference: str = "independent") -> dict:
        """Marginal equivalence of one branch mean: arm minus reference, TOST at 90% and 95% interval (chips)."""
        diff = (self.mean[arm][branch] - self.mean[reference][branch]) * self.scale
        out = stats.equivalence_test(diff, self.boot.mean_difference(arm, reference, branch) * self.scale, margin)
        out["exact"] = float(self.exact[arm].mean[branch] - self.exact[reference].mean[branch]) * self.scale
        out["branch"] = self.actions[branch]
        return out


def class_cards(rank: int, game: str = LEDUC) -> list[int]:
    """The card ids of one own-card class (``method.strata.card_class``)."""
    return [c for c in range(get_game(game).num_cards) if card_class(c) == rank]


def _valid_returns(cols: dict[str, Collection], keep: torch.Tensor | None) -> tuple[dict, int]:
    ok = torch.ones_like(next(iter(cols.values())).codes, dtype=torch.bool)
    for c in cols.values():
        ok &= c.codes == 0
    if keep is not None:
        ok &= keep
    return {a: c.returns[ok] for a, c in cols.items()}, int(ok.sum())


def collect_arms(root: str, arms, n_groups: int, seed: int, continuation, device: str, budget: int = 1,
                 game: str = LEDUC) -> dict:
    """One `collect` per arm at the same root and seed (the arms are paired by group id)."""
    return {a: collect(game, root, a, n_groups, seed, continuation=continuation, device=device, budget=budget)
            for a in arms}


def paired_audit(root: str, arms, n_groups: int, seed: int, continuation, device: str, n_bootstrap: int,
                 purpose: str, budget: int = 1, own_class: int | None = None,
                 collections: dict[str, Collection] | None = None, per_rollout: bool = False,
                 game: str = LEDUC) -> PairedAudit:
    """Collect (or reuse) paired arms at `root` and estimate their moments with a paired bootstrap.

    own_class    restrict to groups whose acting player holds this rank (0 J, 1 Q, 2 K);
                 the exact values are then conditioned on the same stratum
    per_rollout  report means and (co)variances of the per-rollout average (divide by the budget)
    """
    cols = collections if collections is not None else collect_arms(root, arms, n_groups, seed, continuation,
                                                                     device, budget, game)
    cols = {a: cols[a] for a in arms}
    first = next(iter(cols.values()))
    keep = where = None
    if own_class is not None:
        cards = class_cards(own_class, game)
        keep = torch.isin(first.own_card, torch.tensor(cards, device=first.own_card.device))

        def where(s):     # situations [S, 3]: own card first
            return np.isin(s[:, 0], cards)
    returns, valid = _valid_returns(cols, keep)
    mean, cov = {}, {}
    for a, r in returns.items():
        mean[a], cov[a] = stats.sample_moments(r)
    exact = arm_moments(game, root, continuation, budget=budget, where=where)
    boot = stats.paired_bootstrap(returns, n_bootstrap, seed, purpose)
    groups = len(first.codes) if keep is None else int(keep.sum())
    return PairedAudit(root=root, actions=list(first.actions), pair=contrast_pair(list(first.actions)),
                       groups=groups, valid=valid, budget=budget, mean=mean, cov=cov, exact=exact, boot=boot,
                       collections=cols, scale=1.0 / budget if per_rollout else 1.0)
