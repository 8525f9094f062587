"""The protocol every game implements, plus the tables derived from its public tree."""
from __future__ import annotations

from functools import cached_property

import numpy as np
import torch

from oscc_core.games.tree import CHANCE, NO_PUBLIC_CARD, TERMINAL, PublicTree


class Game:
    """A two-player poker game: rules as a public tree plus card helpers.

    Subclasses set `name`, `openspiel_name`, `num_cards`, `action_names`,
    `has_public_card` and implement `hand_strength` and
    `information_state_string` (exactly OpenSpiel's format).
    """

    name: str
    openspiel_name: str
    num_cards: int
    action_names: tuple[str, ...]
    has_public_card: bool
    num_players = 2

    def __init__(self, tree: PublicTree) -> None:
        self.tree = tree
        self._table_cache: dict[str, dict[str, torch.Tensor]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def num_actions(self) -> int:
        return len(self.action_names)

    def hand_strength(self, card, public_card):  # pragma: no cover - abstract
        raise NotImplementedError

    def information_state_string(self, player: int, own_card: int, public_card: int, node: int) -> str:
        raise NotImplementedError  # pragma: no cover - abstract

    # ----- deals ---------------------------------------------------------
    def public_cards_possible(self, node: int, excluded: tuple[int, ...]) -> list[int]:
        """Public cards consistent with `node` given cards already held."""
        if not self.has_public_card or self.tree.round[node] < 2:
            return [NO_PUBLIC_CARD]
        return [c for c in range(self.num_cards) if c not in excluded]

    @cached_property
    def deals(self) -> np.ndarray:
        """Every (card of player 0, card of player 1, public card) with equal chance; [D, 3]."""
        out = []
        for c0 in range(self.num_cards):
            for c1 in range(self.num_cards):
                if c1 == c0:
                    continue
                publics = [c for c in range(self.num_cards) if c not in (c0, c1)] if self.has_public_card else [NO_PUBLIC_CARD]
                out.extend((c0, c1, p) for p in publics)
        return np.array(out, dtype=np.int64)

    # ----- information states -------------------------------------------
    @cached_property
    def infostates(self) -> "InfostateIndex":
        return InfostateIndex(self)

    # ----- utilities -----------------------------------------------------
    def utility_p0(self, node, card0, card1, public_card):
        """Player 0's terminal utility in chips (numpy or torch, elementwise)."""
        tree = self.tree
        lib = torch if isinstance(node, torch.Tensor) else np
        tables = self.tables(node.device) if lib is torch else None
        contributions = tables["contributions"] if lib is torch else tree.contributions
        if lib is torch:
            folder = tables["folder"].index_select(0, node)
            c0 = contributions[:, 0].index_select(0, node)
            c1 = contributions[:, 1].index_select(0, node)
        else:
            folder, c0, c1 = tree.folder[node], contributions[node, 0], contributions[node, 1]
        s0, s1 = self.hand_strength(card0, public_card), self.hand_strength(card1, public_card)
        showdown = lib.sign(s0 - s1) * c0  # contributions are equal at a showdown
        return lib.where(folder == 0, -c0, lib.where(folder == 1, c1, showdown))

    # ----- torch tables --------------------------------------------------
    def tables(self, device) -> dict[str, torch.Tensor]:
        """Tensors rollouts index into, cached per device."""
        key = str(device)
        if key not in self._table_cache:
            t, info = self.tree, self.infostates
            arrays = {
                "player": t.player, "legal": t.legal, "child": t.child,
                "chance_child": t.chance_child, "round": t.round,
                "contributions": t.contributions, "folder": t.folder,
                "info_index": info.index_table, "num_legal": t.legal.sum(axis=1),
            }
            self._table_cache[key] = {k: torch.as_tensor(v, device=device) for k, v in arrays.items()}
        return self._table_cache[key]


class InfostateIndex:
    """Numbering of every information state of both players.

    `index_table[node, own_card, public_card + 1]` is the id of the acting
    player's information state (-1 where none exists); `strings[id]` is
    OpenSpiel's information-state string; `player`, `node`, `card`,
    `public_card` and `legal` describe each id.
    """

    def __init__(self, game: Game) -> None:
        tree = game.tree
        n_pub = game.num_cards + 1
        self.index_table = np.full((tree.num_nodes, game.num_cards, n_pub), -1, dtype=np.int64)
        strings, player, node_of, card_of, pub_of = [], [], [], [], []
        for node in range(tree.num_nodes):
            p = int(tree.player[node])
            if p in (CHANCE, TERMINAL):
                continue
            for card in range(game.num_cards):
                for pub in game.public_cards_possible(node, (card,)):
                    self.index_table[node, card, pub + 1] = len(strings)
                    strings.append(game.information_state_string(p, card, pub, node))
                    player.append(p), node_of.append(node), card_of.append(card), pub_of.append(pub)
        self.strings = strings
        self.player = np.array(player, dtype=np.int64)
        self.node = np.array(node_of, dtype=np.int64)
        self.card = np.array(card_of, dtype=np.int64)
        self.public_card = np.array(pub_of, dtype=np.int64)
        self.legal = tree.legal[self.node]
        self.id_of = {s: i for i, s in enumerate(strings)}

    def __len__(self) -> int:
        return len(self.strings)
