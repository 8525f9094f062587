"""Stratified paired bootstrap of per-group columns within root information states.

Sums of per-group columns (returns in chips, update vectors in chips per
logit, clipped-term counts) and of their outer products, for the sample and
each replicate, give unbiased within-state covariances [R+1, nI, d, d] in
squared column units.
"""
from __future__ import annotations

import numpy as np

from oscc_core.method import stats
from oscc_core.method.stats import Estimate


class Resampled:
    """Per-information-state sums of several per-group columns, for the sample and each bootstrap replicate.

    Replicate 0 is the sample itself; replicates 1..R resample the groups of
    each information state with replacement (counter-based streams of
    ``stats.resample_counts``, one purpose per information state), the same
    multiset for every column, so arms collected with one seed stay paired.
    Stratum sizes are fixed (a stratified bootstrap), because the estimators
    weight information states by their root-law probability.
    """

    def __init__(self, info: np.ndarray, n_info: int, columns: dict[str, np.ndarray], squares: set[str],
                 n_bootstrap: int, seed: int, purpose: str, max_elements: int = 1 << 22) -> None:
        info = np.asarray(info)
        self.names = list(columns)
        self.width = {k: (v.shape[1] if v.ndim == 2 else 1) for k, v in columns.items()}
        self.squares = set(squares)
        self.n = np.bincount(info, minlength=n_info)
        if (self.n < 2).any():
            raise ValueError(f"every root information state needs at least two groups; got {self.n.tolist()}. "
                             "Increase the number of groups.")
        feats, slots, col = [], {}, 0
        for k in self.names:
            x = columns[k].reshape(len(info), -1).astype(np.float64)
            d = x.shape[1]
            parts = [x] + ([np.einsum("ni,nj->nij", x, x).reshape(len(x), d * d)] if k in self.squares else [])
            f = np.concatenate(parts, axis=1)
            slots[k] = (col, d)
            col += f.shape[1]
            feats.append(f)
        x = np.concatenate(feats, axis=1)
        self.slots = slots
        r = n_bootstrap + 1
        self.sums = np.zeros((r, n_info, x.shape[1]))
        for s in range(n_info):
            idx = np.flatnonzero(info == s)
            xs = x[idx]
            self.sums[0, s] = xs.sum(0)
            step = max(1, max_elements // len(idx))
            for start in range(0, n_bootstrap, step):
                reps = np.arange(start, min(start + step, n_bootstrap))
                w = stats.resample_counts(len(idx), reps, seed, f"{purpose}/info{s}").numpy().astype(np.float64)
                self.sums[1 + reps, s] = w @ xs
        self.replicates = n_bootstrap

    def total(self, name: str) -> np.ndarray:
        """[R+1, nI, d] sums of the column."""
        c, d = self.slots[name]
        return self.sums[:, :, c:c + d]

    def cov(self, name: str) -> np.ndarray:
        """[R+1, nI, d, d] unbiased covariance within each information state."""
        c, d = self.slots[name]
        s1 = self.sums[:, :, c:c + d]
        s2 = self.sums[:, :, c + d:c + d + d * d].reshape(*s1.shape[:2], d, d)
        n = self.n[None, :, None, None]
        return (s2 - np.einsum("rni,rnj->rnij", s1, s1) / n) / (n - 1)

    def pooled_cov(self, name: str) -> np.ndarray:
        """[R+1, d, d] unbiased covariance over all groups (information states pooled)."""
        c, d = self.slots[name]
        s1 = self.sums[:, :, c:c + d].sum(1)
        s2 = self.sums[:, :, c + d:c + d + d * d].sum(1).reshape(-1, d, d)
        n = self.n.sum()
        return (s2 - np.einsum("ri,rj->rij", s1, s1) / n) / (n - 1)


def estimate(values: np.ndarray, exact: float | None = None) -> Estimate:
    """Estimate from [R+1] values: index 0 the point estimate, the rest bootstrap replicates."""
    v = np.asarray(values, dtype=np.float64)
    return stats.estimate_from_replicates(v[0], v[1:], exact)
