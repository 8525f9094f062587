"""Tabular policies: OpenSpiel information-state string -> action probabilities.

The exchange format everywhere in the book is a plain dict mapping every
information-state string of a game to a list of probabilities over the
game's distinct actions (zero on illegal actions).  Internally a policy is a
float64 array [num_infostates, num_actions] in the order of
`game.infostates`.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from oscc_core.games import Game, get_game

NORMALISATION_TOLERANCE = 1e-6


def uniform_policy(game: "str | Game") -> dict[str, list[float]]:
    """The policy that plays every legal action with equal probability."""
    game = get_game(game)
    return table_to_policy(game, uniform_table(game))


def random_policy(game: "str | Game", seed: int, low: float = 0.05) -> dict[str, list[float]]:
    """A policy with unequal probabilities on every legal action: weights uniform on [low, 1) from
    numpy's generator seeded with `seed`, normalised per information state (tests and engine checks)."""
    game = get_game(game)
    gen = np.random.default_rng(seed)
    table = np.zeros(game.infostates.legal.shape)
    for row, legal in enumerate(game.infostates.legal.astype(bool)):
        weights = np.where(legal, gen.uniform(low, 1.0, legal.size), 0.0)
        table[row] = weights / weights.sum()
    return table_to_policy(game, table)


def uniform_table(game: "str | Game") -> np.ndarray:
    game = get_game(game)
    legal = game.infostates.legal.astype(np.float64)
    return legal / legal.sum(axis=1, keepdims=True)


def table_to_policy(game: "str | Game", table: np.ndarray) -> dict[str, list[float]]:
    """Array [num_infostates, num_actions] -> policy dict."""
    game = get_game(game)
    return {s: [float(x) for x in row] for s, row in zip(game.infostates.strings, np.asarray(table))}


def policy_table(game: "str | Game", policy, name: str = "policy") -> np.ndarray:
    """Validate a policy dict and return it as an array in infostate order.

    Raises ValueError with one sentence naming the parameter and the offending
    information state when a state is missing, a row is not a flat list of
    numbers (strings and nested lists are refused), has the wrong length, a
    probability is negative or not finite, mass sits on an illegal action, or
    a row does not sum to one.  Extra keys that are not information states of
    this game mean the policy is for another game and are rejected too.
    """
    game = get_game(game)
    fast = _table_if_valid(game, policy)
    if fast is not None:
        return fast
    info = game.infostates
    if not isinstance(policy, dict):
        raise ValueError(f"{name} must be a dict from information-state string to probabilities, got {type(policy).__name__}.")
    foreign = next((k for k in policy if k not in info.id_of), None)
    if foreign is not None:
        raise ValueError(f"{name} has information state {foreign!r}, which is not a {game.name} information state (wrong game?).")
    table = np.zeros((len(info), game.num_actions))
    for i, s in enumerate(info.strings):
        if s not in policy:
            raise ValueError(f"{name} is missing information state {s!r}.")
        row = _numeric_row(policy[s])
        if row is None:
            raise ValueError(f"{name} at {s!r} must be a flat list of {game.num_actions} numbers (one probability "
                             f"per action id), got {policy[s]!r}.")
        if row.shape != (game.num_actions,):
            raise ValueError(f"{name} at {s!r} must list {game.num_actions} probabilities (one per action id), got {row.size}.")
        if not np.all(np.isfinite(row)) or np.any(row < 0):
            raise ValueError(f"{name} at {s!r} has a negative or non-finite probability {row.tolist()}.")
        if np.any(row[~info.legal[i]] > 0):
            raise ValueError(f"{name} at {s!r} puts mass on an illegal action; legal action ids are {np.flatnonzero(info.legal[i]).tolist()}.")
        if abs(row.sum() - 1.0) > NORMALISATION_TOLERANCE:
            raise ValueError(f"{name} at {s!r} sums to {row.sum():.6g}, not 1.")
        table[i] = row
    return table


def _table_if_valid(game: Game, policy) -> "np.ndarray | None":
    """Vectorised check of a well-formed policy; None sends the caller to the row-by-row checks.

    A Leduc policy has 936 rows, and checking them one by one costs far more
    than an exact pass over the game, so the common valid case is checked in
    one go and only an invalid policy pays for the error message.
    """
    info = game.infostates
    try:
        if not isinstance(policy, dict) or len(policy) != len(info):
            return None
        raw = np.array([policy[s] for s in info.strings])
    except (KeyError, ValueError, TypeError):
        return None
    if raw.dtype.kind not in "biuf" or raw.shape != (len(info), game.num_actions):
        return None                                    # strings, objects or nested rows
    table = raw.astype(np.float64)
    valid = (np.all(np.isfinite(table)) and np.all(table >= 0) and not np.any(table[~info.legal] > 0)
             and np.all(np.abs(table.sum(axis=1) - 1.0) <= NORMALISATION_TOLERANCE))
    return table if valid else None


def _numeric_row(value) -> "np.ndarray | None":
    """A flat row of real numbers as float64, or None (strings, nested lists, objects)."""
    try:
        row = np.asarray(value)
    except (ValueError, TypeError):
        return None
    if row.ndim != 1 or row.dtype.kind not in "biuf":
        return None
    return row.astype(np.float64)


def save_policy(policy: dict, path: "str | Path") -> None:
    Path(path).write_text(json.dumps(policy, indent=0, sort_keys=True))


def load_policy(path: "str | Path", name: str = "continuation") -> dict:
    """Read a policy JSON file; a missing file is a ValueError naming `name`."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{name} must be 'uniform', 'cfr_plus' or a path to a policy JSON file; {str(path)!r} does not exist.")
    return json.loads(path.read_text())


def resolve_policy(game: Game, policy, name: str = "continuation") -> np.ndarray:
    """'uniform' or a policy dict -> validated float64 table [infostates, actions]."""
    if isinstance(policy, str):
        if policy != "uniform":
            raise ValueError(f"{name} must be 'uniform' or a tabular policy dict, got {policy!r}.")
        return uniform_table(game)
    return policy_table(game, policy, name)
