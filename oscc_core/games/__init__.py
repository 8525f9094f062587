"""Kuhn and Leduc poker with OpenSpiel's rules, action ids and information-state strings."""
from __future__ import annotations

from oscc_core.games.base import Game, InfostateIndex
from oscc_core.games.kuhn import Kuhn
from oscc_core.games.leduc import Leduc
from oscc_core.games.tree import CHANCE, NO_PUBLIC_CARD, TERMINAL, PublicTree

KUHN, LEDUC = "kuhn", "leduc"      # the game names, as OpenSpiel's short names
GAMES = {KUHN: Kuhn, LEDUC: Leduc}
_INSTANCES: dict[str, Game] = {}


def get_game(game: "str | Game") -> Game:
    """The game object for a name ("kuhn" or "leduc"); games are built once."""
    if isinstance(game, Game):
        return game
    if game not in GAMES:
        raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}.")
    if game not in _INSTANCES:
        _INSTANCES[game] = GAMES[game]()
    return _INSTANCES[game]


__all__ = ["CHANCE", "GAMES", "KUHN", "LEDUC", "Game", "InfostateIndex", "Kuhn", "Leduc", "NO_PUBLIC_CARD",
           "PublicTree", "TERMINAL", "get_game"]
