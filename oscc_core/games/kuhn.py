"""Kuhn poker with OpenSpiel's conventions (`kuhn_poker`).

Three cards 0 < 1 < 2, ante 1, one bet of 1.  Actions: Pass=0, Bet=1.
Information-state string: own card followed by the betting letters, e.g. "0pb".
"""
from __future__ import annotations

from oscc_core.games.base import Game
from oscc_core.games.tree import CHANCE, TERMINAL, PublicNode, enumerate_public_tree

NUM_CARDS = 3
ANTE = 1
BET_SIZE = 1
PASS, BET = 0, 1
ACTION_NAMES = ("Pass", "Bet")
ACTION_LETTERS = "pb"


def _successors(node: PublicNode) -> list[PublicNode]:
    if node.player in (TERMINAL, CHANCE):
        return []
    history = node.rounds[0]
    out = []
    for action in node.legal:
        seq = history + (action,)
        contributions = list(node.contributions)
        if action == BET:
            contributions[node.player] += BET_SIZE
        out.append(_node_after(seq, tuple(contributions)))
    return out


def _node_after(seq: tuple[int, ...], contributions: tuple[int, int]) -> PublicNode:
    """The public node reached by betting sequence `seq` (rule helper)."""
    letters = "".join(ACTION_LETTERS[a] for a in seq)
    if letters in ("pp", "bb", "pbb"):
        return PublicNode((seq,), TERMINAL, contributions)
    if letters in ("bp", "pbp"):
        folder = (len(seq) - 1) % 2  # the last actor passed facing a bet
        return PublicNode((seq,), TERMINAL, contributions, folder=folder)
    return PublicNode((seq,), len(seq) % 2, contributions, legal=(PASS, BET))


class Kuhn(Game):
    name = "kuhn"
    openspiel_name = "kuhn_poker"
    num_cards = NUM_CARDS
    action_names = ACTION_NAMES
    has_public_card = False

    def __init__(self) -> None:
        first = PublicNode(((),), 0, (ANTE, ANTE), legal=(PASS, BET))
        super().__init__(enumerate_public_tree(first, _successors, len(ACTION_NAMES)))

    def hand_strength(self, card, public_card):
        return card

    def information_state_string(self, player: int, own_card: int, public_card: int, node: int) -> str:
        seq = self.tree.nodes[node].rounds[0]
        return f"{own_card}" + "".join(ACTION_LETTERS[a] for a in seq)
