"""Expected utility powers per deal and node: a backward pass over the public tree, vectorised over deals.

A deal fixes both private cards and (Leduc) the public card; given a deal,
the only randomness left is the players' action choices.  `deal_values`
sweeps the public tree from the deepest nodes up, one depth level at a time,
and returns E[u_0(z)**power | deal, node] for every deal and node: the
building block of exact values, exact return moments and best responses.
"""
from __future__ import annotations

import numpy as np

from oscc_core.games import CHANCE, Game, get_game
from oscc_core.games.deal_tables import acting_infostates, terminal_utilities
from oscc_core.reductions import sum_last_axis


def deal_values(game: Game, table: np.ndarray, power: int = 1) -> np.ndarray:
    """[D, N] E[u_0**power | deal, node] when both players follow `table` (float64 chips**power)."""
    game = get_game(game)
    tree = game.tree
    values = terminal_utilities(game) ** power
    ids = acting_infostates(game)
    for depth in range(int(tree.depth.max()), -1, -1):
        at = np.flatnonzero(tree.depth == depth)
        chance = at[tree.player[at] == CHANCE]
        values[:, chance] = values[:, tree.chance_child[chance]]
        decision = at[tree.player[at] >= 0]
        if decision.size == 0:
            continue
        probs = table[ids[:, decision]]                              # [D, K, A]
        child = tree.child[decision]                                 # [K, A]
        child_values = np.where(child >= 0, values[:, np.maximum(child, 0)], 0.0)
        values[:, decision] = sum_last_axis(probs * child_values)
    return values
