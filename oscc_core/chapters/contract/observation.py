"""Chapter 01's use of the observation audit: reachable states and the numbers section 2 quotes.

The audit itself (every information state x every consistent hidden
completion x both branch labels, asked of the engine's decision step) lives
in the engine layer, `oscc_core.engine.observation_audit`, so chapter 06 can
run it on learned checkpoints; it is re-exported here for this chapter's
modules and notebook.
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.observation_audit import ObservationAudit, full_states, observation_audit
from oscc_core.games import LEDUC, get_game

__all__ = ["ObservationAudit", "full_states", "observation_audit", "observation_glue", "reachable_by_root",
           "reachable_states"]

#: The roots whose reachable states the chapter counts: player 0's first decision, player 1 after a check or a bet.
AUDIT_ROOTS = ("", "1", "2")


def reachable_states(game=LEDUC, root: str = "") -> int:
    """Information states that can occur at or after `root` (with any cards)."""
    game = get_game(game)
    tree = game.tree
    start = tree.node_of_history(root)
    below = np.zeros(tree.num_nodes, dtype=bool)
    below[start] = True
    for n in range(tree.num_nodes):       # parents precede children
        if tree.parent[n] >= 0 and below[tree.parent[n]]:
            below[n] = True
    return int(below[game.infostates.node].sum())


def reachable_by_root(game=LEDUC, roots=AUDIT_ROOTS) -> dict[str, int]:
    """root -> information states that can occur at or after it (`reachable_states`)."""
    return {root: reachable_states(game, root) for root in roots}


def observation_glue(obs: ObservationAudit, obs_leak: ObservationAudit, key_leak: ObservationAudit,
                     game=LEDUC) -> dict:
    """The numbers section 2's prose quotes: state counts, exposures, the two leaks, reachable states."""
    return {"obs_states": obs.states, "obs_full_states": obs.full_states, "obs_exposures": obs.exposures,
            "obs_leak_states": obs_leak.obs_drift_states, "key_leak_states": key_leak.key_drift_states,
            "action_leak_states": key_leak.action_drift_states,
            "states_per_player": obs.states_by_player[0], "states_round1": obs.states_by_round[1],
            "states_round2": obs.states_by_round[2],
            "reach_root": reachable_states(game, ""), "reach_1": reachable_states(game, "1"),
            "reach_2": reachable_states(game, "2")}
