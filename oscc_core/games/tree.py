"""Public betting trees: the shared layout behind batched rollouts and exact passes.

Kuhn and Leduc poker have a public betting structure that does not depend on
which cards were dealt.  Each game enumerates that structure once, in Python,
with its rule helpers; afterwards every rollout step and every exact pass is a
table lookup over these arrays (no recursion over histories at run time).

A *public node* is a betting history.  A full state is a public node plus the
private cards and, in Leduc round two, the public card.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CHANCE = -1      # node where the public card is dealt (Leduc, end of round one)
TERMINAL = -2    # node where the hand is over

NO_PUBLIC_CARD = -1


@dataclass
class PublicNode:
    """One public betting history, as produced by a game's rule helpers."""

    rounds: tuple[tuple[int, ...], ...]   # actions per betting round (OpenSpiel ids)
    player: int                           # 0, 1, CHANCE or TERMINAL
    contributions: tuple[int, int]        # chips each player has put in the pot
    legal: tuple[int, ...] = ()           # legal action ids at a decision node
    folder: int = -1                      # player who folded at a fold terminal


@dataclass
class PublicTree:
    """Array layout of a game's public tree (node 0 is the first decision).

    All arrays are numpy; `Game.tables(device)` turns the ones rollouts need
    into torch tensors.
    """

    nodes: list[PublicNode]
    num_actions: int
    player: np.ndarray = field(init=False)          # [N] int
    round: np.ndarray = field(init=False)           # [N] int, 1-based
    legal: np.ndarray = field(init=False)           # [N, A] bool
    child: np.ndarray = field(init=False)           # [N, A] int, -1 when illegal
    chance_child: np.ndarray = field(init=False)    # [N] int, -1 unless CHANCE
    parent: np.ndarray = field(init=False)          # [N] int, -1 at the root
    depth: np.ndarray = field(init=False)           # [N] int
    contributions: np.ndarray = field(init=False)   # [N, 2] int
    folder: np.ndarray = field(init=False)          # [N] int
    history: list[str] = field(init=False)          # "12|2" style public history

    def __post_init__(self) -> None:
        n, a = len(self.nodes), self.num_actions
        index = {node.rounds: i for i, node in enumerate(self.nodes)}
        self.player = np.array([nd.player for nd in self.nodes], dtype=np.int64)
        self.round = np.array([len(nd.rounds) for nd in self.nodes], dtype=np.int64)
        self.contributions = np.array([nd.contributions for nd in self.nodes], dtype=np.int64)
        self.folder = np.array([nd.folder for nd in self.nodes], dtype=np.int64)
        self.legal = np.zeros((n, a), dtype=bool)
        self.child = np.full((n, a), -1, dtype=np.int64)
        self.chance_child = np.full(n, -1, dtype=np.int64)
        self.parent = np.full(n, -1, dtype=np.int64)
        for i, nd in enumerate(self.nodes):
            for act in nd.legal:
                j = index[_extend(nd.rounds, act)]
                self.legal[i, act] = True
                self.child[i, act] = j
                self.parent[j] = i
            if nd.player == CHANCE:
                j = index[nd.rounds + ((),)]
                self.chance_child[i] = j
                self.parent[j] = i
        self.depth = np.zeros(n, dtype=np.int64)
        for i in range(n):  # nodes are enumerated parents first
            if self.parent[i] >= 0:
                self.depth[i] = self.depth[self.parent[i]] + 1
        self.history = ["|".join("".join(map(str, r)) for r in nd.rounds) for nd in self.nodes]

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def node_of_history(self, history: str) -> int:
        """Index of the public node with this history string, or -1."""
        try:
            return self.history.index(history)
        except ValueError:
            return -1


def _extend(rounds: tuple[tuple[int, ...], ...], action: int) -> tuple[tuple[int, ...], ...]:
    return rounds[:-1] + (rounds[-1] + (action,),)


def enumerate_public_tree(first: PublicNode, successors, num_actions: int) -> PublicTree:
    """Breadth-first enumeration from `first`; `successors(node)` lists children.

    Breadth-first order guarantees parents precede children, which the exact
    passes rely on (they sweep depths backwards).
    """
    nodes, frontier = [], [first]
    while frontier:
        nodes.extend(frontier)
        frontier = [child for node in frontier for child in successors(node)]
    return PublicTree(nodes, num_actions)
