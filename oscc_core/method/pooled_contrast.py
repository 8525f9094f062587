"""A contrast variance pooled over every decision point of a game: the paper's reading of a contrast variance,
computed in one place for every chapter that reads a checkpoint's contrast variance that way
(`reporting.reading_sets.CONTRAST_POOLED`).

The paper's headline contrast variance is "a weighted summary over all root IDs", and its transfer table
"reports the same variance and quality fields as the in-environment table".  Read that way, a contrast variance
of a checkpoint is the variance of the budget-1 contrast R_check - R_bet over comparison groups whose root is
any decision point of the game where the two actions are legal (`pool_roots`), each point h weighted by its share
w_h of the decisions that hands played by the checkpoint reach (the book's headline weighting, `method.pooling`
"visits").  The pooled groups form a mixture, so

    Var_pool = sum_h w_h Var_h + sum_h w_h (d_h - d_bar)^2,   d_h the mean contrast at h, d_bar = sum_h w_h d_h,

which `method.pooling.mixture_moments` gives from each point's exact moments (`exact.arm_moments`, the
checkpoint as continuation and as the policy that sets each point's law).  The second term, the spread of the
points' mean contrasts, is why no per-point maximum bounds a pooled variance: only the range of a budget-1
contrast does.  Units: chips^2.
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.roots import decision_histories, parse_root, reach_probability
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.games import get_game
from oscc_core.method import pooling
from oscc_core.method.stats import contrast_pair
from oscc_core.policy import table_to_policy

#: How the pool weighs its decision points (`method.pooling.WEIGHTINGS`): the book's headline weighting.
WEIGHTING = "visits"


def contrast_actions(game: str) -> tuple[str, str]:
    """The two actions of the game's reported contrast (check and bet: the contrast at the root '')."""
    g = get_game(game)
    names = [g.action_names[a] for a in np.flatnonzero(g.tree.legal[parse_root(g, "")])]
    i, j = contrast_pair(names)
    return names[i], names[j]


def pool_roots(game: str) -> list[str]:
    """Every decision point of `game` where both actions of the contrast are legal, in the tree's order (in Kuhn
    all four; in Leduc those where Call and Raise are both legal)."""
    g, wanted = get_game(game), set(contrast_actions(game))
    return [h for h in decision_histories(g)
            if wanted <= {g.action_names[a] for a in np.flatnonzero(g.tree.legal[parse_root(g, h)])}]


def pool_weights(game: str, table: np.ndarray) -> dict[str, float]:
    """{decision point: weight} of the pool under the checkpoint `table` (float64 [infostates, actions]): the
    points the checkpoint reaches, each weighted by its share of the decisions its hands reach."""
    roots = [h for h in pool_roots(game) if reach_probability(game, h, table) > 0]
    return dict(zip(roots, (float(w) for w in pooling.root_weights(game, roots, table, WEIGHTING))))


def pooled_contrast(game: str, table: np.ndarray, constructions) -> dict[str, float]:
    """{construction: exact pooled Var(R_check - R_bet), chips^2} of the checkpoint `table` (continuation and
    behaviour policy) for each construction in `constructions` (`engine.arms.ARMS` names)."""
    g = get_game(game)
    weights, policy = pool_weights(game, table), table_to_policy(g, table)
    names = contrast_actions(game)
    moments = {h: arm_moments(g, h, policy) for h in weights}
    w = np.array(list(weights.values()))
    out = {}
    for c in constructions:
        idx = [[moments[h][c].actions.index(a) for a in names] for h in weights]
        means = np.stack([moments[h][c].mean[i] for h, i in zip(weights, idx)])
        covs = np.stack([moments[h][c].cov[np.ix_(i, i)] for h, i in zip(weights, idx)])
        _, cov = pooling.mixture_moments(w, means, covs)
        out[c] = float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    return out


def pooled_own_constructions(game: str, constructions, tables) -> list[float]:
    """Per checkpoint of `tables` (float64 [runs, infostates, actions]): the exact pooled contrast variance of its
    own construction (`constructions[r]`, an `engine.arms.ARMS` name: the coupling arm of the run's learner)."""
    return [pooled_contrast(game, table, (c,))[c] for c, table in zip(constructions, tables)]
