"""Backward passes over a game's public tree, vectorised over every deal.

A deal fixes both private cards and (Leduc) the public card; given a deal,
the only randomness left is the players' action choices.  `deal_values`
sweeps the public tree from the deepest nodes up, one depth level at a time,
and returns E[u_0(z)**power | deal, node] for every deal and node: the
building block of exact values, exact return moments and best responses.
"""
from __future__ import annotations

import numpy as np

from .games import CHANCE, NO_PUBLIC_CARD, TERMINAL, Game, get_game
from .reductions import sum_last_axis


def acting_infostates(game: Game) -> np.ndarray:
    """[D, N] id of the acting player's information state at (deal, node); -1 off decision nodes."""
    game = get_game(game)
    tree, deals = game.tree, game.deals
    player = np.clip(tree.player, 0, 1)                       # [N]
    own = deals[:, player]                                    # [D, N]
    visible_public = np.where(tree.round[None, :] >= 2, deals[:, 2:3], NO_PUBLIC_CARD)
    ids = game.infostates.index_table[np.arange(tree.num_nodes)[None, :], own, visible_public + 1]
    decision = (tree.player >= 0)[None, :]
    return np.where(decision, ids, -1)


def terminal_utilities(game: Game) -> np.ndarray:
    """[D, N] player 0's utility in chips at terminal nodes (0 elsewhere)."""
    game = get_game(game)
    tree, deals = game.tree, game.deals
    nodes = np.arange(tree.num_nodes)[None, :]
    u = game.utility_p0(np.broadcast_to(nodes, (len(deals), tree.num_nodes)),
                        deals[:, 0:1], deals[:, 1:2], deals[:, 2:3])
    return np.where((tree.player == TERMINAL)[None, :], u, 0).astype(np.float64)


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
