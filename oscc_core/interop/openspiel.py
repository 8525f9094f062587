"""Policy exchange with OpenSpiel (`open-spiel` on PyPI, a test dependency).

`pyspiel` and `open_spiel` are imported inside the functions, so importing
this module (or `oscc_core`) never requires OpenSpiel.  Our information-state
strings and action ids are OpenSpiel's, so a conversion is a row copy keyed
by the information-state string.
"""
from __future__ import annotations

import numpy as np

from oscc_core.games import Game, get_game
from oscc_core.policy import policy_table, table_to_policy


def load_openspiel_game(game: "str | Game"):
    """The pyspiel game with the same rules as `game` ("kuhn" -> kuhn_poker, "leduc" -> leduc_poker)."""
    import pyspiel

    return pyspiel.load_game(get_game(game).openspiel_name)


def to_openspiel(game: "str | Game", policy: dict):
    """Our policy dict -> `open_spiel.python.policy.TabularPolicy` of the OpenSpiel game."""
    from open_spiel.python.policy import TabularPolicy

    game = get_game(game)
    table = policy_table(game, policy)
    tabular = TabularPolicy(load_openspiel_game(game))
    for state, row in zip(game.infostates.strings, table):
        tabular.action_probability_array[tabular.state_lookup[state]] = row
    return tabular


def from_openspiel(game: "str | Game", tabular_policy) -> dict:
    """An OpenSpiel `TabularPolicy` (both players' states) -> our validated policy dict.

    Raises ValueError when the tabular policy is for another game (missing
    information states or a different number of actions).
    """
    game = get_game(game)
    lookup = tabular_policy.state_lookup
    array = np.asarray(tabular_policy.action_probability_array, dtype=np.float64)
    if array.shape[1] != game.num_actions:
        raise ValueError(f"tabular_policy has {array.shape[1]} actions per state; {game.name} has {game.num_actions}.")
    missing = next((s for s in game.infostates.strings if s not in lookup), None)
    if missing is not None:
        raise ValueError(f"tabular_policy is missing {game.name} information state {missing!r} (wrong game?).")
    policy = table_to_policy(game, array[[lookup[s] for s in game.infostates.strings]])
    policy_table(game, policy, name="tabular_policy")   # same checks as every policy entering the book
    return policy
