"""Pooling comparison groups over several roots: the root weights, the groups each root gets, the pooled moments.

A pooled audit draws its comparison groups at several roots (decision
points).  Its law is a mixture: a group's root is h with probability w_h,
then its situation is drawn from h's root law.  The branch returns
(R_1, R_2) of a group therefore have the mixture moments

    mean = sum_h w_h m_h,
    cov  = sum_h w_h (C_h + (m_h - mean)(m_h - mean)^T),

with m_h and C_h the mean vector and covariance at root h: the moments of
the pooled set of all groups, each group counted once (`mixture_moments`).
The root weights (`root_weights`) are either each root's share of the
decisions that hands played by the behaviour policy visit ("visits") or equal
("uniform").  Each root gets a floor of groups and the rest in proportion to
its weight (`allocate`); the pooled estimate uses the weights, not the
counts, so the allocation changes precision only.  Units: returns in chips, covariances in
chips^2.
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.roots import reach_probability

#: How the roots of a pooled audit are weighted: by the visits of hands played by the behaviour policy, or equally.
WEIGHTINGS = ("visits", "uniform")


def root_weights(game, histories, behaviour_table: np.ndarray, weighting: str) -> np.ndarray:
    """[H] weights (summing to one) of the roots `histories` under `weighting`.

    "visits": root h weighs P(a hand played by the behaviour policy reaches h) / sum over the roots, i.e. the
    share of h among the roots' visits (a root ID of the pooled audit is a decision such a hand reaches);
    "uniform": every root 1 / H.  A root the behaviour policy never reaches is refused (ValueError).
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}.")
    histories = list(histories)
    if not histories:
        raise ValueError("root_weights needs at least one root.")
    reach = np.array([reach_probability(game, h, behaviour_table) for h in histories])
    if (reach <= 0).any():
        never = [h for h, r in zip(histories, reach) if r <= 0]
        raise ValueError(f"the behaviour policy never reaches the roots {never}; leave them out of the pool.")
    raw = reach if weighting == "visits" else np.ones(len(histories))
    return raw / raw.sum()


def allocate(total: int, weights: np.ndarray, floor: int) -> np.ndarray:
    """[H] groups per root, summing to `total`: `floor` each (so every root has a bootstrap of its own), the rest
    in proportion to the weights by largest remainders (ties to the earlier root)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or not len(w) or (w < 0).any() or not np.isclose(w.sum(), 1.0, rtol=0, atol=1e-12):
        raise ValueError("weights must be a non-empty vector of non-negative numbers summing to one.")
    if isinstance(total, bool) or not isinstance(total, (int, np.integer)) or total < floor * len(w):
        raise ValueError(f"total must be an integer >= {floor * len(w)} ({floor} groups for each of {len(w)} "
                         f"roots), got {total!r}.")
    share = (int(total) - floor * len(w)) * w
    out = np.floor(share).astype(np.int64)
    left = int(total) - floor * len(w) - int(out.sum())
    order = np.argsort(-(share - out), kind="stable")
    out[order[:left]] += 1
    return out + int(floor)


def mixture_moments(weights: np.ndarray, means: np.ndarray, covs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean [..., B] and covariance [..., B, B] of the mixture of H components.

    weights [H] (summing to one), means [..., H, B], covs [..., H, B, B]; leading axes (e.g. bootstrap
    replicates) are carried through.
    """
    w = np.asarray(weights, dtype=np.float64)
    m, c = np.asarray(means, dtype=np.float64), np.asarray(covs, dtype=np.float64)
    if m.shape[-2] != len(w) or c.shape[-3] != len(w):
        raise ValueError(f"means and covs need one component per weight ({len(w)}), got {m.shape} and {c.shape}.")
    mean = np.einsum("h,...hb->...b", w, m)
    dev = m - mean[..., None, :]
    cov = np.einsum("h,...hij->...ij", w, c) + np.einsum("h,...hi,...hj->...ij", w, dev, dev)
    return mean, cov
