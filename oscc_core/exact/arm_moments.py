"""Exact ground truth for the collector: each arm's pooled return moments.

For a root and a tabular continuation, `arm_moments` enumerates the game
tree and returns, for every coupling arm, the mean vector and covariance
matrix of the branch returns pooled over the root law, exactly what
`collect(...).summary()` estimates.

Notation: a *situation* s = (own card, visible public card, opponent card)
at the root, with probability w_s.  When the public card is still to come
(Leduc round one), the continuation deals it from the four remaining cards
by U, so the uniform falls in one of four equally likely *bins*; bin k
gives card remaining_s[k].  m[b, s, k] and q[b, s, k] are the first and
second moments of branch b's single-rollout return given (s, k).  Given the
deal, the branches' policy draws are independent, so cross moments factor
through m; the arms differ in which of (opponent card, bin) the branches
share, and a budget of K rollouts adds K(K-1) cross-rollout terms.

The selector-stress continuation maps (`oscc_core.chance_maps`) change only
how the bins of two branches that share a uniform meet: bin k of branch i
meets bin k of branch j (semantic), bin n-1-k when exactly one of the two
branch positions is odd (antithetic), or an independent bin (relabelled: the
shared-chance cross term becomes the independent one).  Means and variances
do not depend on the map.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from oscc_core.engine.arms import ARMS
from oscc_core.engine.chance_maps import DEFAULT_MAP, bin_pairing, check_map
from oscc_core.engine.roots import Root, build_root
from oscc_core.exact.deal_values import deal_values
from oscc_core.games import NO_PUBLIC_CARD, Game, get_game
from oscc_core.policy import resolve_policy


@dataclass(frozen=True)
class Moments:
    """Exact pooled moments of one arm: means [B], covariance [B, B] (chips, chips^2)."""

    arm: str
    actions: list[str]
    mean: np.ndarray
    cov: np.ndarray

    def contrast_var(self, i: int = 0, j: int = 1) -> float:
        """Var(R_i - R_j) in chips^2."""
        return float(self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j])

    def contrast_mean(self, i: int = 0, j: int = 1) -> float:
        return float(self.mean[i] - self.mean[j])


def _check_budget(budget) -> None:
    """The continuation budget: a whole number of rollouts per branch, at least one."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be an integer >= 1 (continuation rollouts per branch), got {budget!r}.")


def _situation_moments(game: Game, root: Root, table: np.ndarray):
    """m, q [B, S, K] and the bin count K for every root situation."""
    v1, v2 = deal_values(game, table, 1), deal_values(game, table, 2)
    deal_index = {tuple(d): i for i, d in enumerate(game.deals.tolist())}
    sign = 1.0 if root.player == 0 else -1.0
    children = [int(game.tree.child[root.node, a]) for a in root.actions]
    m, q = [], []
    for own, pub, opp in root.situations.tolist():
        cards = (own, opp) if root.player == 0 else (opp, own)
        if pub != NO_PUBLIC_CARD or not game.has_public_card:
            publics = [pub]
        else:
            publics = [c for c in range(game.num_cards) if c not in cards]   # bins in card-id order
        rows = [deal_index[(cards[0], cards[1], p)] for p in publics]
        m.append(sign * v1[np.ix_(rows, children)].T)
        q.append(v2[np.ix_(rows, children)].T)
    return np.stack(m, axis=1), np.stack(q, axis=1)


def _restrict(r: Root, m: np.ndarray, q: np.ndarray, where):
    """Root law conditioned on the situations selected by `where` (see `arm_moments`)."""
    keep = np.asarray(where(r.situations.copy()), dtype=bool).reshape(-1)
    if keep.shape != (len(r.situations),):
        raise ValueError(f"where must return one boolean per root situation ({len(r.situations)}), got {keep.shape}.")
    if not keep.any():
        raise ValueError("where selects no root situation with positive probability.")
    info = [tuple(x) for x in r.situations[:, :2].tolist()]
    kept_info = {i for i, k in zip(info, keep) if k}
    if any((i in kept_info) != bool(k) for i, k in zip(info, keep)):
        raise ValueError("where must select whole information states (own and public card), not single opponent cards.")
    w = r.weight[keep] / r.weight[keep].sum()
    r = replace(r, situations=r.situations[keep], weight=w)
    return r, m[:, keep], q[:, keep], w


def _shared_bin_cross(x: np.ndarray, weight: np.ndarray, continuation_map: str) -> np.ndarray:
    """Single-rollout E[X_i X_j] [B, B] when branches share the chance uniform, under the map.

    x [B, N, K] is the branch value per unit (situation or information state)
    and bin; weight [N] the units' probabilities.
    """
    b, _, n_bins = x.shape
    out = np.empty((b, b))
    for i in range(b):
        for j in range(b):
            sigma = bin_pairing(continuation_map, n_bins, i, j)
            if sigma is None:
                out[i, j] = weight @ (x[i].mean(1) * x[j].mean(1))
            else:
                out[i, j] = weight @ (x[i] * x[j][:, sigma]).mean(1)
    return out


def arm_moments(game: "str | Game", root: str, continuation="uniform", budget: int = 1,
                where=None, continuation_map: str = DEFAULT_MAP) -> dict[str, Moments]:
    """Exact pooled mean vector and covariance of branch returns for every arm.

    `continuation` is "uniform" or a policy dict and also defines the root
    law, as in `collect`; `budget` is the number of continuation rollouts
    summed into each branch return.

    `where` (optional) restricts the root law to a stratum of root
    situations: a callable taking the situations array [S, 3] (own card,
    visible public card or -1, opponent card) and returning a boolean mask
    [S].  The moments are then those of the root law conditioned on the
    stratum (weights renormalised), e.g. ``where=lambda s: s[:, 0] // 2 == 0``
    for the roots where the acting player holds a jack.  A stratum must be a
    union of the acting player's information states (decided by own and
    public card only), so that the hidden card keeps its posterior.

    `continuation_map` ("semantic", "relabelled", "antithetic") is the
    selector-stress map of `collect`; it changes only the cross terms of the
    chance-sharing arms (continuation_only, full).  The branch positions are
    those of the legal root actions in their default order.
    """
    check_map(continuation_map)
    _check_budget(budget)
    game = get_game(game)
    table = resolve_policy(game, continuation)
    r = build_root(game, root, table)
    m, q = _situation_moments(game, r, table)         # [B, S, K]
    w, K = r.weight, budget
    if where is not None:
        r, m, q, w = _restrict(r, m, q, where)
    mbar, qbar = m.mean(2), q.mean(2)                  # averages over the bins
    mean = K * (mbar @ w)
    second_diag = (K * qbar + K * (K - 1) * mbar ** 2) @ w

    # information-state level averages over the opponent card (continuation_only / independent)
    info_keys = [tuple(x) for x in r.situations[:, :2].tolist()]
    infos = sorted(set(info_keys))
    member = np.array([[k == i for k in info_keys] for i in infos], dtype=np.float64)  # [I, S]
    p_info = member @ w
    post = member * w / p_info[:, None]                # p(opponent | info) rows
    a = np.einsum("is,bsk->bik", post, m)              # A_b(I, k)
    abar = a.mean(2)

    if continuation_map == DEFAULT_MAP:
        shared_full = np.einsum("s,isk,jsk->ij", w, m, m) / m.shape[2]
        shared_cont = np.einsum("I,iIk,jIk->ij", p_info, a, a) / a.shape[2]
    else:
        shared_full = _shared_bin_cross(m, w, continuation_map)
        shared_cont = _shared_bin_cross(a, p_info, continuation_map)
    cross = {
        "full": shared_full * K + K * (K - 1) * np.einsum("s,is,js->ij", w, mbar, mbar),
        "root_only": K * K * np.einsum("s,is,js->ij", w, mbar, mbar),
        "continuation_only": shared_cont * K + K * (K - 1) * np.einsum("I,iI,jI->ij", p_info, abar, abar),
        "independent": K * K * np.einsum("I,iI,jI->ij", p_info, abar, abar),
    }
    cross["policy_namespace"] = cross["independent"]
    out = {}
    for arm in ARMS:
        second = cross[arm].copy()
        np.fill_diagonal(second, second_diag)
        out[arm] = Moments(arm, r.action_names, mean.copy(), second - np.outer(mean, mean))
    return out


@dataclass(frozen=True)
class InfostateMoments:
    """Exact moments of every arm conditional on one information state of the acting player."""

    own_card: int
    public_card: int              # visible public card, or -1 before it is dealt
    weight: float                 # probability of this information state under the root law
    infostate: str                # OpenSpiel information-state string (the policy key)
    moments: dict[str, Moments]


def infostate_moments(game: "str | Game", root: str, continuation="uniform", budget: int = 1,
                      continuation_map: str = DEFAULT_MAP) -> list[InfostateMoments]:
    """`arm_moments` conditioned on each information state I of the acting player at the root.

    These are the Sigma(I) of the gradient noise N(Gamma; I) = tr(G(I) Sigma(I) G(I)^T);
    the weights are the root law's probabilities of I (they sum to one).
    """
    _check_budget(budget)
    game = get_game(game)
    r = build_root(game, root, resolve_policy(game, continuation))
    info = r.situations[:, :2]
    out = []
    for own, pub in sorted({tuple(x) for x in info.tolist()}):
        mask = (info[:, 0] == own) & (info[:, 1] == pub)
        mom = arm_moments(game, root, continuation, budget,
                          where=lambda s, o=own, p=pub: (s[:, 0] == o) & (s[:, 1] == p),
                          continuation_map=continuation_map)
        out.append(InfostateMoments(int(own), int(pub), float(r.weight[mask].sum()),
                                    game.information_state_string(r.player, int(own), int(pub), r.node), mom))
    return out
