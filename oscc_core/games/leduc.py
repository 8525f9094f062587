"""Leduc poker with OpenSpiel's conventions (`leduc_poker`, two players).

Six cards 0..5 with rank = id // 2 (J J Q Q K K).  Ante 1; raise 2 in round
one and 4 in round two; at most two raises per round (the first bet counts);
player 0 opens both rounds.  Actions: Fold=0, Call=1 (check), Raise=2 (bet);
Fold is legal only when facing a bet.  A pair with the public card wins,
otherwise the higher rank; equal ranks split the pot.
"""
from __future__ import annotations

from oscc_core.games.base import Game
from oscc_core.games.tree import CHANCE, TERMINAL, PublicNode, enumerate_public_tree

NUM_CARDS = 6
NUM_SUITS = 2
ANTE = 1
RAISE_AMOUNTS = (2, 4)      # by round
MAX_RAISES = 2
STARTING_MONEY = 100
FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("Fold", "Call", "Raise")
PAIR_BONUS = 100            # a pair beats any high card


def rank(card):
    return card // NUM_SUITS


def _raises(seq: tuple[int, ...]) -> int:
    return sum(1 for a in seq if a == RAISE)


def _facing_bet(contributions: tuple[int, int], player: int) -> bool:
    return contributions[player] < contributions[1 - player]


def _legal_actions(seq: tuple[int, ...], contributions, player: int) -> tuple[int, ...]:
    legal = []
    if _facing_bet(contributions, player):
        legal.append(FOLD)
    legal.append(CALL)
    if _raises(seq) < MAX_RAISES:
        legal.append(RAISE)
    return tuple(legal)


def _round_over(seq: tuple[int, ...]) -> bool:
    """A round ends on a call after both players have acted (check-check or a called bet)."""
    return len(seq) >= 2 and seq[-1] == CALL


def _decision(rounds, contributions) -> PublicNode:
    seq = rounds[-1]
    player = len(seq) % 2  # player 0 opens every round and the players alternate
    return PublicNode(rounds, player, contributions, legal=_legal_actions(seq, contributions, player))


def _successors(node: PublicNode) -> list[PublicNode]:
    if node.player == TERMINAL:
        return []
    if node.player == CHANCE:
        return [_decision(node.rounds + ((),), node.contributions)]
    out = []
    round_index = len(node.rounds) - 1
    for action in node.legal:
        rounds = node.rounds[:-1] + (node.rounds[-1] + (action,),)
        contributions = list(node.contributions)
        p = node.player
        if action == FOLD:
            out.append(PublicNode(rounds, TERMINAL, node.contributions, folder=p))
            continue
        if action == CALL:
            contributions[p] = contributions[1 - p]
        else:
            contributions[p] = contributions[1 - p] + RAISE_AMOUNTS[round_index]
        contributions = tuple(contributions)
        if not _round_over(rounds[-1]):
            out.append(_decision(rounds, contributions))
        elif round_index == 0:
            out.append(PublicNode(rounds, CHANCE, contributions))
        else:
            out.append(PublicNode(rounds, TERMINAL, contributions))
    return out


class Leduc(Game):
    name = "leduc"
    openspiel_name = "leduc_poker"
    num_cards = NUM_CARDS
    action_names = ACTION_NAMES
    has_public_card = True

    def __init__(self) -> None:
        super().__init__(enumerate_public_tree(_decision(((),), (ANTE, ANTE)), _successors, len(ACTION_NAMES)))

    def hand_strength(self, card, public_card):
        """Larger is better: a pair with the public card, else the rank."""
        return rank(card) + PAIR_BONUS * (rank(card) == rank(public_card))

    def information_state_string(self, player: int, own_card: int, public_card: int, node: int) -> str:
        nd = self.tree.nodes[node]
        c = nd.contributions
        public = f"[Public: {public_card}]" if public_card != -1 else ""
        round1 = " ".join(map(str, nd.rounds[0]))
        round2 = " ".join(map(str, nd.rounds[1])) if len(nd.rounds) > 1 else ""
        return (f"[Observer: {player}][Private: {own_card}][Round {len(nd.rounds)}][Player: {nd.player}]"
                f"[Pot: {c[0] + c[1]}][Money: {STARTING_MONEY - c[0]} {STARTING_MONEY - c[1]}]"
                f"{public}[Round1: {round1}][Round2: {round2}]")
