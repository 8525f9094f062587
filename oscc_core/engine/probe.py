"""The engine's decision step on explicit full states, and the observation hash it records.

`engine_step` runs the engine's own decision step (`rollout.step`) on states
built by hand; `observation_hash_table` is the int64 observation hash of every
information state (SHA-256 of its OpenSpiel string); `any_by` and `drift_by`
reduce per-transition flags to one bool per group or per state.  The audits
over information states (`engine.observation_audit`), over traced runs
(chapter 01) and over a learned checkpoint's lookups (chapter 06) ask the
engine through these helpers.
"""
from __future__ import annotations

import hashlib
from functools import cache

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.engine.rollout import policy_cdf, step
from oscc_core.games import get_game
from oscc_core.policy import uniform_table


@cache
def observation_hash_table(game_name: str) -> torch.Tensor:
    """int64 observation hash of every information state: SHA-256 of its OpenSpiel string."""
    strings = get_game(game_name).infostates.strings
    return torch.tensor([rng.signed(int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little"))
                         for s in strings], dtype=torch.int64, device="cpu")


def engine_step(game, node, c0, c1, public, keys, counter, violation=None, table: np.ndarray | None = None):
    """The engine's own decision step (`rollout.step`) on explicit full states.

    Returns the information-state id the engine computes (the policy row it
    looks up), the action it draws from `table` ([infostates, actions] in
    `game.infostates` order; the uniform continuation when None) and the
    (key, counter) address it reads.
    """
    t = game.tables("cpu")
    cdf, last = policy_cdf(uniform_table(game) if table is None else np.asarray(table, dtype=np.float64), "cpu")
    illegal = torch.zeros(len(node), dtype=torch.bool, device=node.device)
    _, _, _, info, action, _, used = step(node, c0, c1, public, keys, counter, illegal, t["player"],
                                           t["info_index"].reshape(-1), cdf, last, t["legal"], t["child"],
                                           game.num_cards, violation)
    return info, action, used


def observe(game, info, branch, other, violation):
    """The observation hash recorded at information states `info` (a violation may tamper with it)."""
    h = observation_hash_table(game.name)[info]
    return h if violation is None else violation.observe(h, branch, other)


def any_by(index: torch.Tensor, flag: torch.Tensor, size: int) -> torch.Tensor:
    """[size] bool: True for every index with at least one flagged entry."""
    out = torch.zeros(size, dtype=torch.bool, device=index.device)
    out[index[flag]] = True
    return out


def drift_by(index: torch.Tensor, values: torch.Tensor, size: int) -> torch.Tensor:
    """True for every index whose values are not all equal."""
    full = {"dtype": torch.int64, "device": index.device}
    lo = torch.full((size,), torch.iinfo(torch.int64).max, **full).scatter_reduce(0, index, values, "amin")
    hi = torch.full((size,), torch.iinfo(torch.int64).min, **full).scatter_reduce(0, index, values, "amax")
    return (lo != hi) & (hi >= lo)
