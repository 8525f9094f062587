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

The roots of the book's all-roots pool are the decision points where check and
bet (Call and Raise) are both legal (`contrast_roots`) and that the behaviour
policy reaches (`pool_histories`); each root collects its groups with a seed of
its own (`root_seed`), so two roots share no random numbers.  Every chapter that
reads a contrast variance on the all-roots pool uses these three, so its pool is
the same set of groups.
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine import rng
from oscc_core.engine.roots import decision_histories, parse_root, reach_probability
from oscc_core.games import LEDUC, get_game
from oscc_core.policy import resolve_policy

#: The branches every root of the all-roots pool contributes: the paper's check and bet.
CONTRAST = ("Call", "Raise")
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


def contrast_roots(game: str = LEDUC) -> list[str]:
    """Every decision point of `game` where Call and Raise are both legal, in the tree's order."""
    g = get_game(game)
    out = []
    for history in decision_histories(g):
        legal = {g.action_names[a] for a in np.flatnonzero(g.tree.legal[parse_root(g, history)])}
        if set(CONTRAST) <= legal:
            out.append(history)
    return out


def pool_histories(continuation, game: str = LEDUC) -> list[str]:
    """The roots of the all-roots pool: every root of `contrast_roots` that the continuation (the behaviour policy)
    reaches; a root it never reaches has no root IDs."""
    table = resolve_policy(game, continuation)
    return [h for h in contrast_roots(game) if reach_probability(game, h, table) > 0]


def root_seed(seed: int, history: str) -> int:
    """The run seed of one root of the pool: a 63-bit hash of the run's seed and the root's history, so that the
    groups of two roots share no random numbers."""
    return rng.tag(f"oscc/pooled-root/{int(seed)}/{history}") >> 1
