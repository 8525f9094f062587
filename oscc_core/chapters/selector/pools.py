"""Monte-Carlo pools: every paper arm collected at one root, map, split and seed, paired by group id.

Returns are in chips; draws count the physical uniforms a group consumed.
From a pool this module computes the per-group gain scores
X_g = ||G(I_g) R_g^ind||^2 - ||G(I_g) R_g^Gamma||^2 (- lambda (C_g^Gamma - C_g^ind))
and estimated noise traces (noise units: chips^2 per unit logit^2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.roots import build_root
from oscc_core.games import LEDUC, get_game
from oscc_core.method.policy_gradient import noise_trace
from oscc_core.method.selectors import FALLBACK
from oscc_core.method.strata import CARD_CLASSES, card_class
from oscc_core.policy import resolve_policy

from .exact_root import CANDIDATES, ExactRoot
from .root_policy import RootPolicy

#: How information states are weighted inside an estimated noise trace: by their sample frequency n_I / n
#: ("empirical", this chapter's choice) or by their root-law probability w_I ("root_law", chapter 3's choice).
NOISE_WEIGHTS = ("empirical", "root_law")
#: The weighting in words, for the notebook's text.
NOISE_WEIGHT_TEXT = {"empirical": "its share of the groups evaluated", "root_law": "its root-law probability"}


def stratum_mask(own_card: np.ndarray, stratum: str) -> np.ndarray:
    """Which entries of an array of own-card ids fall in `stratum` (method.strata's card classes)."""
    classes = np.array([card_class(c) for c in range(int(own_card.max(initial=0)) + 1)])
    return classes[own_card] == CARD_CLASSES.index(stratum)


@dataclass
class Pool:
    """All four paper arms collected at one root, map, split and seed (paired by group id)."""

    root: str
    continuation_map: str
    split: str
    returns: dict[str, np.ndarray]     # arm -> [N, m] float64 chips
    draws: dict[str, np.ndarray]       # arm -> [N] physical draws per group
    own_card: np.ndarray               # [N]
    public_card: np.ndarray            # [N]
    valid: np.ndarray                  # [N] bool: valid in every arm
    physical_draws: dict[str, dict]    # arm -> totals by category

    @property
    def n(self) -> int:
        return len(self.own_card)

    def in_stratum(self, stratum: str) -> np.ndarray:
        """[N] bool: the group's own card is in `stratum` (valid or not)."""
        return stratum_mask(self.own_card, stratum)

    def stratum_index(self, stratum: str) -> np.ndarray:
        """Group ids (in id order) of the valid groups whose own card is in `stratum`."""
        return np.flatnonzero(self.valid & self.in_stratum(stratum))


def collect_pool(root: str, n_groups: int, seed: int, continuation, device: str, continuation_map: str = "semantic",
                 split: str = "calibration", game: str = LEDUC) -> Pool:
    """Collect `n_groups` groups of every paper arm with one seed (so group g shares its root draw)."""
    cols = {a: collect(game, root, a, n_groups, seed, continuation=continuation, device=device, split=split,
                       continuation_map=continuation_map, keep_draws=True) for a in PAPER_ARMS}
    first = cols[FALLBACK]
    valid = np.ones(n_groups, dtype=bool)
    for c in cols.values():
        valid &= c.codes.numpy() == 0
    return Pool(root, continuation_map, split, {a: c.returns.double().numpy() for a, c in cols.items()},
                {a: c.group_draws.numpy() for a, c in cols.items()}, first.own_card.numpy(),
                first.public_card.numpy(), valid, {a: dict(c.physical_draws) for a, c in cols.items()})


def pool_size_for(root: str, continuation, groups_per_stratum: int, repetitions: int, margin: float = 1.08,
                  game: str = LEDUC) -> int:
    """Groups to collect so that every stratum holds `repetitions` disjoint ranges of `groups_per_stratum`."""
    r = build_root(game, root, resolve_policy(get_game(game), continuation))
    own = r.situations[:, 0].astype(np.int64)
    p = min(float(r.weight[stratum_mask(own, z)].sum()) for z in CARD_CLASSES if stratum_mask(own, z).any())
    need = groups_per_stratum * repetitions / p
    return math.ceil(need * margin + 10 * math.sqrt(need))


def info_ids(pool: Pool, exact: ExactRoot) -> np.ndarray:
    """[N] index into `exact.infos` of each group's root information state."""
    lookup = {(i.own_card, i.public_card): k for k, i in enumerate(exact.infos)}
    return np.array([lookup[(o, p)] for o, p in zip(pool.own_card.tolist(), pool.public_card.tolist())])


def group_jacobians(pool: Pool, exact: ExactRoot, policy: RootPolicy) -> np.ndarray:
    """G(I_g) for every group [N, m, m]."""
    table = np.stack([policy.jacobian(i.infostate) for i in exact.infos])
    return table[info_ids(pool, exact)]


def gain_scores(pool: Pool, exact: ExactRoot, policy: RootPolicy, lam: float = 0.0) -> dict[str, np.ndarray]:
    """Per-group unbiased scores of J(independent) - J(candidate), noise units ([N] per candidate)."""
    g = group_jacobians(pool, exact, policy)

    def quad(r):
        v = np.einsum("nkm,nm->nk", g, r)
        return (v * v).sum(1)

    base = quad(pool.returns[FALLBACK]) + lam * pool.draws[FALLBACK]
    return {a: base - quad(pool.returns[a]) - lam * pool.draws[a] for a in CANDIDATES}


def _selection(pool: Pool, groups: np.ndarray | None, stratum: str | None) -> np.ndarray:
    sel = pool.valid.copy()
    if groups is not None:
        mask = np.zeros(pool.n, dtype=bool)
        mask[groups] = True
        sel &= mask
    if stratum is not None:
        sel &= pool.in_stratum(stratum)
    return sel


def estimated_noise(pool: Pool, exact: ExactRoot, policy: RootPolicy, arm: str, *, weights: str,
                    groups: np.ndarray | None = None, stratum: str | None = None) -> float:
    """Sum over I of omega_I tr(G(I) S_I G(I)^T), S_I the sample covariance of the groups within I (noise units).

    weights="empirical": omega_I = n_I / n, the sample frequencies; weights="root_law": omega_I = w_I / sum w_I,
    the root-law probabilities.  Both sums run over the information states with at least two selected groups.
    """
    if weights not in NOISE_WEIGHTS:
        raise ValueError(f"weights must be one of {list(NOISE_WEIGHTS)}, got {weights!r}.")
    ids = info_ids(pool, exact)
    sel = _selection(pool, groups, stratum)
    total, norm = 0.0, 0.0
    for k, info in enumerate(exact.infos):
        r = pool.returns[arm][sel & (ids == k)]
        if len(r) < 2:
            continue
        omega = len(r) if weights == "empirical" else info.weight
        total += omega * noise_trace(policy.jacobian(info.infostate), np.cov(r, rowvar=False, ddof=1))
        norm += omega
    return total / norm


def stratum_share(pool: Pool, exact: ExactRoot, stratum: str, *, weights: str) -> float:
    """The stratum's weight in a whole-root noise estimate: its share of valid groups or its root-law probability."""
    if weights == "empirical":
        return float((pool.valid & pool.in_stratum(stratum)).sum())
    return exact.stratum_weight(stratum)


def sample_cov(pool: Pool, arm: str, stratum: str | None = None, groups: np.ndarray | None = None) -> np.ndarray:
    """Sample covariance of the branch returns over the selected valid groups [m, m] (chips^2)."""
    return np.cov(pool.returns[arm][_selection(pool, groups, stratum)], rowvar=False, ddof=1)
