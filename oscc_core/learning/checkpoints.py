"""Checkpoints as OpenSpiel-keyed JSON (gzip), so that anyone can recompute their exploitability with pyspiel.

A checkpoints file maps a key (e.g. "<arm>/<seed>") to a policy: {OpenSpiel
information-state string: [probabilities over the game's actions]}.  It is
written with sorted keys and gzip mtime 0, so the same checkpoints give the
same bytes on every run.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from oscc_core.interop.openspiel import load_openspiel_game, to_openspiel
from oscc_core.policy import table_to_policy


def save_checkpoints(path, tables: dict) -> Path:
    """Write {key: (game, table [n_info, A])} as {key: policy dict} to `path` (gzip JSON); returns the path."""
    body = {key: table_to_policy(game, table) for key, (game, table) in tables.items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    with gzip.GzipFile(path, "wb", mtime=0) as fh:     # mtime 0: the same bytes on every run
        fh.write(text.encode())
    return path


def load_checkpoints(path) -> dict:
    """{key: policy dict} of a checkpoints file."""
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def openspiel_exploitability(game: str, policy: dict) -> float:
    """`pyspiel.exploitability` (chips) of a policy dict, through OpenSpiel's own tabular policy."""
    import pyspiel
    from open_spiel.python.policy import python_policy_to_pyspiel_policy

    return float(pyspiel.exploitability(load_openspiel_game(game), python_policy_to_pyspiel_policy(
        to_openspiel(game, policy))))


def openspiel_check(path, ours: dict, game_of) -> dict:
    """Recompute every checkpoint of the file at `path` with `pyspiel.exploitability` (the game of a key is
    `game_of(key)`) beside `ours` {key: exploitability, chips}: {file, ours, pyspiel, max_abs_difference}."""
    theirs = {key: openspiel_exploitability(game_of(key), policy) for key, policy in load_checkpoints(path).items()}
    return {"file": Path(path).name, "ours": ours, "pyspiel": theirs,
            "max_abs_difference": max(abs(ours[k] - theirs[k]) for k in ours)}
