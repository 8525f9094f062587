"""What the rules allow at a root: a bound on any group's score, and the fold-heavy stratum under CFR+.

A group's score X_g = ||G(I) R^ind_g||^2 - ||G(I) R^Gamma_g||^2 (noise units,
chips^2 per unit logit^2) is a difference of two non-negative terms, so
|X_g| <= max_I max_R ||G(I) R||^2, where R runs over the branch-return
vectors the rules allow at I: branch a's return is one of the acting
player's terminal utilities (chips) below action a, over every deal that
agrees with I.  `calibration.natural_bound` lets every return range over
[-13, 13] and bounds ||G R|| by the operator norm; it is valid but loose,
most of all at a root where one action's return is a constant (Fold).

`fold_heavy_stratum` gives, for the CFR+ root policy at the three-action
root, the stratum that folds most, its exact noise per arm, the conditional
covariance of Call and Raise per arm and the exact noise minimiser.
"""
from __future__ import annotations

import itertools

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.games import LEDUC, get_game
from oscc_core.games.deal_tables import terminal_utilities
from oscc_core.games.tree import TERMINAL
from oscc_core.method.policy_gradient import policy_jacobian
from oscc_core.method.selectors import oracle_select
from oscc_core.method.strata import stratum_of

from .exact_root import ExactRoot
from .root_policy import RootPolicy, resolve_root_policy


def _terminals_below(tree, node: int) -> np.ndarray:
    """Terminal nodes in the subtree of `node` (nodes are enumerated parents first)."""
    inside = np.zeros(tree.num_nodes, dtype=bool)
    inside[node] = True
    for j in range(node + 1, tree.num_nodes):
        if tree.parent[j] >= 0 and inside[tree.parent[j]]:
            inside[j] = True
    return np.flatnonzero(inside & (tree.player == TERMINAL))


def branch_return_sets(root: str, policy: RootPolicy, game: str = LEDUC) -> dict[str, tuple[tuple[float, ...], ...]]:
    """Information state -> per legal root action, the sorted returns (chips, acting player) the rules allow."""
    g = get_game(game)
    tree, info = g.tree, g.infostates
    node = tree.node_of_history(root)
    player = int(tree.player[node])
    sign = 1.0 if player == 0 else -1.0
    utilities = terminal_utilities(g)                                   # [D, N], player 0's chips
    below = [_terminals_below(tree, int(tree.child[node, a])) for a in np.flatnonzero(tree.legal[node])]
    out = {}
    for s in policy.probs:
        k = info.id_of[s]
        deals = g.deals[:, player] == info.card[k]
        if info.public_card[k] >= 0:
            deals &= g.deals[:, 2] == info.public_card[k]
        out[s] = tuple(tuple(sorted({sign * float(u) + 0.0 for u in utilities[np.ix_(deals, t)].ravel()})) for t in below)
    return out


def rule_score_bound(root: str, policy: RootPolicy, game: str = LEDUC) -> dict:
    """max_I max_R ||G(I) R||^2 over the branch returns the rules allow (noise units), with the maximising
    return vector, and each action's return range (chips) over the root's information states."""
    sets = branch_return_sets(root, policy, game)
    best, best_r = -1.0, None
    for s, per_action in sets.items():
        jac = policy_jacobian(policy.probs[s])
        for r in itertools.product(*per_action):
            v = float(np.sum((jac @ np.asarray(r)) ** 2))
            if v > best:
                best, best_r = v, r
    ranges = {a: (min(x[k][0] for x in sets.values()), max(x[k][-1] for x in sets.values()))
              for k, a in enumerate(policy.actions)}
    return {"bound": best, "returns": dict(zip(policy.actions, best_r)), "ranges": ranges}


def fold_heavy_stratum(exact: ExactRoot, policy: RootPolicy) -> dict:
    """The stratum with the largest mean pi(Fold): its pi(Fold), exact noise and E_I Cov(R_Call, R_Raise | I)
    per arm, and Oracle-Select's choice there (the exact noise minimiser)."""
    fold, call, raise_ = (exact.actions.index(a) for a in ("Fold", "Call", "Raise"))

    def mean_fold(z):
        members = [i for i in exact.infos if stratum_of(i.own_card) == z]
        w = np.array([i.weight for i in members])
        return float(np.dot(w, [policy.probs[i.infostate][fold] for i in members]) / w.sum())

    z = max(exact.strata(), key=mean_fold)
    noise = {a: exact.noise(a, policy, z) for a in PAPER_ARMS}
    return {"stratum": z, "fold": mean_fold(z), "noise": noise,
            "cov": {a: exact.conditional_cov(a, call, raise_, z) for a in PAPER_ARMS},
            "oracle": oracle_select(noise)}


def bound_glue(p) -> dict:
    """Glue values of the score-bound prose: the rules' bound at both roots and each three-action return range."""
    three = rule_score_bound(p.root, p.pi3, p.game)
    two = rule_score_bound(p.binary_root, p.pi2, p.game)
    return {"rule_bound3": three["bound"], "rule_bound2": two["bound"], "fold_return": three["ranges"]["Fold"][1],
            "call_max": three["ranges"]["Call"][1], "raise_max": three["ranges"]["Raise"][1]}


def cfr_stratum_glue(p, exact3: ExactRoot) -> dict:
    """Glue values of the CFR+ root policy's fold-heavy stratum at the three-action root (`fold_heavy_stratum`)."""
    cfr = resolve_root_policy("root_policy", "cfr_plus", p.root, p.continuation_policy, p.cfr_iterations,
                              floor=p.root_policy_floor, game=p.game)
    heavy = fold_heavy_stratum(exact3, cfr)
    return {"cfr_heavy_stratum": heavy["stratum"], "cfr_heavy_fold": heavy["fold"], "cfr_heavy_oracle": heavy["oracle"],
            **{f"cfr_heavy_N_{a}": v for a, v in heavy["noise"].items()},
            **{f"cfr_heavy_cov_{a}": v for a, v in heavy["cov"].items()}}
