"""Comparison roots: a public history, the acting player, and the root law.

A root is given as a public history of OpenSpiel action ids: "" is player
0's first decision, "2" is player 1 facing a bet, "11|" is player 0's first
decision in Leduc's second round ("|" marks the public card, which then
belongs to the root and is drawn by the root law).

The root law is the distribution of the acting player's information state
at that history when chance deals uniformly and both players follow the
behaviour policy; the opponent's (hidden) card is drawn from its posterior
given that information state.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from oscc_core.games import NO_PUBLIC_CARD, Game, get_game
from oscc_core.games.deal_tables import acting_infostates

_HISTORY_PATTERN = re.compile(r"^[0-9]*(\|[0-9]*)?$")


@dataclass(frozen=True)
class Root:
    """A decision node and the laws of its random fields.

    `situations` lists every (own card, visible public card, opponent card)
    with positive probability; `weight` is its probability; the laws used to
    draw them sequentially are `own_weights` [C], `public_weights` [C, C+1]
    (column = public card + 1) and `hidden_weights` [C, C+1, C].
    """

    game: Game
    history: str
    node: int
    player: int
    actions: tuple[int, ...]
    situations: np.ndarray          # [S, 3] own, visible public (or -1), opponent
    weight: np.ndarray              # [S]
    own_weights: np.ndarray
    public_weights: np.ndarray
    hidden_weights: np.ndarray

    @property
    def round(self) -> int:
        return int(self.game.tree.round[self.node])

    @property
    def public_in_root(self) -> bool:
        return self.game.has_public_card and self.round >= 2

    @property
    def action_names(self) -> list[str]:
        return [self.game.action_names[a] for a in self.actions]


def parse_root(game: "str | Game", history: str) -> int:
    """Node index of a root history; ValueError unless it names a decision node."""
    game = get_game(game)
    if not isinstance(history, str) or not _HISTORY_PATTERN.match(history):
        raise ValueError(f"root must be a public history of action ids such as '', '2' or '11|', got {history!r}.")
    node = game.tree.node_of_history(history)
    if node < 0 or game.tree.player[node] < 0:
        decisions = [h for h, p in zip(game.tree.history, game.tree.player) if p >= 0]
        raise ValueError(f"root {history!r} is not a decision point of {game.name} "
                         f"(legal roots include {decisions[:6]} ...).")
    return node


def _path_to(game: Game, node: int) -> list[tuple[int, int]]:
    """(decision node, action) pairs on the way from the first decision to `node`."""
    tree, path = game.tree, []
    while tree.parent[node] >= 0:
        parent = int(tree.parent[node])
        if tree.player[parent] >= 0:
            path.append((parent, int(np.flatnonzero(tree.child[parent] == node)[0])))
        node = parent
    return path[::-1]


def _equalise(weights: np.ndarray) -> np.ndarray:
    """Rows whose positive weights are all equal become exact 0/1 rows.

    Then the inverse-CDF draw over them is exactly `remaining[floor(U*n)]`.
    """
    out = weights.copy()
    positive = out > 0
    rows = positive.any(axis=-1)
    top = np.where(positive, out, -np.inf).max(axis=-1)
    low = np.where(positive, out, np.inf).min(axis=-1)
    equal = rows & np.isclose(top, low, rtol=1e-12, atol=0)
    out[equal] = positive[equal].astype(np.float64)
    return out


def decision_histories(game: "str | Game") -> list[str]:
    """The public history of every decision point of `game`, in the tree's order (a root may be any of them)."""
    game = get_game(game)
    return [h for h, p in zip(game.tree.history, game.tree.player) if p >= 0]


def _deal_reach(game: Game, node: int, behaviour_table: np.ndarray) -> np.ndarray:
    """[deals] probability that both players' behaviour policy takes the actions of `node`'s history, per deal."""
    ids = acting_infostates(game)
    reach = np.ones(len(game.deals))
    for n, a in _path_to(game, node):
        reach = reach * behaviour_table[ids[:, n], a]
    return reach


def reach_probability(game: "str | Game", history: str, behaviour_table: np.ndarray) -> float:
    """Probability that a hand dealt uniformly and played by `behaviour_table` reaches the public history
    `history` (any public card, where the history has one): the mean over deals of the product of the behaviour
    probabilities of its actions."""
    game = get_game(game)
    return float(_deal_reach(game, parse_root(game, history), behaviour_table).mean())


def build_root(game: "str | Game", history: str, behaviour_table: np.ndarray) -> Root:
    """The root at `history` with its law under `behaviour_table` (float64 [infostates, actions])."""
    game = get_game(game)
    node = parse_root(game, history)
    player = int(game.tree.player[node])
    deals = game.deals
    reach = _deal_reach(game, node, behaviour_table)
    if reach.sum() <= 0:
        raise ValueError(f"root {history!r} is unreachable under the behaviour policy; choose another root or policy.")
    own, opp = deals[:, player], deals[:, 1 - player]
    public = deals[:, 2] if (game.has_public_card and game.tree.round[node] >= 2) else np.full(len(deals), NO_PUBLIC_CARD)
    c = game.num_cards
    joint = np.zeros((c, c + 1, c))
    np.add.at(joint, (own, public + 1, opp), reach / len(deals))
    joint /= joint.sum()
    s_own, s_pub, s_opp = np.nonzero(joint)
    situations = np.stack([s_own, s_pub - 1, s_opp], axis=1)
    return Root(game=game, history=history, node=node, player=player,
                actions=tuple(int(a) for a in np.flatnonzero(game.tree.legal[node])),
                situations=situations, weight=joint[s_own, s_pub, s_opp],
                own_weights=_equalise(joint.sum(axis=(1, 2))),
                public_weights=_equalise(joint.sum(axis=2)),
                hidden_weights=_equalise(joint))
