"""Per-deal tables over a game's public tree: who acts in which information state, and terminal utilities.

A deal fixes both private cards and (Leduc) the public card; a table is
indexed [deal, public-tree node].
"""
from __future__ import annotations

import numpy as np

from oscc_core.games import NO_PUBLIC_CARD, TERMINAL, Game, get_game


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
