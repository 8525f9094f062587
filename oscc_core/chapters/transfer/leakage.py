"""Information leakage of a learned checkpoint: the observation audit and a hidden-card perturbation.

A checkpoint is a policy table [information states, actions] in
`game.infostates` order holding both seats' rows.  Two checks, both through
the engine's own decision step (`oscc_core.engine.rollout.step`, asked via
`oscc_core.engine.probe.engine_step` with the checkpoint's cdf):

(a) the observation audit (`oscc_core.engine.observation_audit`) over every
    information state of the game, with actions drawn from the checkpoint;
    its exposures are violations;
(b) every (deal, decision node) of the game is a decision point; its
    acting player's lookup (the policy row the step reads, the (key, counter)
    address and the action drawn for the point's fixed policy key) is
    repeated with the opponent's card (and, in round one of Leduc, the public
    card not yet dealt) replaced by every other consistent card.  A decision
    point whose row, address or action changes, or whose row is not the one
    the learners read (`games.deal_tables.acting_infostates`: node, own card,
    visible public card), is a lookup change.

Everything is one batched call over all (deal, node, perturbation) triples.
"""
from __future__ import annotations

import numpy as np
import torch

from oscc_core.device import HOST
from oscc_core.engine import rng
from oscc_core.engine.observation_audit import observation_audit
from oscc_core.engine.probe import any_by, drift_by, engine_step
from oscc_core.engine.violations import Violation
from oscc_core.games import NO_PUBLIC_CARD, get_game
from oscc_core.games.deal_tables import acting_infostates


def decisions_before(game) -> np.ndarray:
    """[N] number of decision nodes strictly above each node: the policy counter of a lane standing there."""
    tree = game.tree
    out = np.zeros(tree.num_nodes, dtype=np.int64)
    for n in range(tree.num_nodes):          # parents precede children (a pass over the public tree)
        p = tree.parent[n]
        if p >= 0:
            out[n] = out[p] + int(tree.player[p] >= 0)
    return out


def lookup_perturbations(game) -> dict[str, torch.Tensor]:
    """Every (deal, decision node, consistent replacement of the hidden cards), flattened.

    Keys: `point` (deal * decision nodes + node position), `deal`, `node`,
    `c0`, `c1`, `public` (the engine state's public card: the dealt one from
    round two on, -1 before), `expected` (the row the learners read at the
    unperturbed point) and `points` (number of decision points).
    """
    tree, c = game.tree, game.num_cards
    deals = torch.as_tensor(game.deals, device=HOST)                            # [D, 3]
    nodes = torch.as_tensor(np.flatnonzero(tree.player >= 0), device=HOST)      # [M]
    n_deals, n_nodes = len(deals), len(nodes)
    d = torch.arange(n_deals, device=HOST).view(-1, 1, 1, 1)
    m = torch.arange(n_nodes, device=HOST).view(1, -1, 1, 1)
    opp = torch.arange(c, device=HOST).view(1, 1, -1, 1)                        # the opponent's replacement card
    fut = torch.arange(c, device=HOST).view(1, 1, 1, -1)                        # the public card's replacement
    node = nodes[m]
    player = torch.as_tensor(tree.player, device=HOST)[node]
    late = torch.as_tensor(tree.round, device=HOST)[node] >= 2                  # the public card is dealt
    own = torch.where(player == 1, deals[d, 1], deals[d, 0])
    pub = deals[d, 2]
    valid = opp != own
    if game.has_public_card:
        valid = valid & torch.where(late, (fut == pub) & (opp != pub), (fut != own) & (fut != opp))
        public = torch.where(late, fut, NO_PUBLIC_CARD)
    else:
        valid = valid & (fut == 0)
        public = torch.full_like(fut, NO_PUBLIC_CARD)
    c0 = torch.where(player == 0, own, opp)
    c1 = torch.where(player == 0, opp, own)
    expected = torch.as_tensor(acting_infostates(game), device=HOST)[d, node]
    shape = valid.shape
    fields = {"point": d * n_nodes + m, "deal": d, "node": node, "c0": c0, "c1": c1, "public": public,
              "expected": expected}
    flat = {k: x.expand(shape)[valid] for k, x in fields.items()}
    flat["points"] = n_deals * n_nodes
    return flat


def lookup_leakage(game, table: np.ndarray, violation: Violation | None = None, run: int = 0,
                   split: str = "audit") -> dict:
    """Check (b): decision points whose lookup moves when a hidden card is replaced.

    Each decision point keeps one policy key (run, split, group = deal index,
    branch 0) and its decision counter under every perturbation.
    """
    game = get_game(game)
    p = lookup_perturbations(game)
    keys = rng.policy_key(run, rng.SPLITS[split], p["deal"], 0, 0)
    counter = torch.as_tensor(decisions_before(game), device=HOST)[p["node"]]
    info, action, (ukey, uctr) = engine_step(game, p["node"], p["c0"], p["c1"], p["public"], keys, counter,
                                             violation, table)
    n, point = p["points"], p["point"]
    row = drift_by(point, info, n) | any_by(point, info != p["expected"], n)
    address = drift_by(point, ukey, n) | drift_by(point, uctr, n)
    act = drift_by(point, action, n)
    return {"decision_points": n, "lookups_checked": len(point), "row_changes": int(row.sum()),
            "address_changes": int(address.sum()), "action_changes": int(act.sum()),
            "lookup_changes": int((row | address | act).sum())}


def leakage_violations(game, table, violation: Violation | None = None) -> dict:
    """Leakage counts of a checkpoint `table` [information states, actions] (both seats, infostates order).

    `violation` (None for a real check) is handed to the engine's step as its
    tamper, as in the contract chapter's controls, to show that a leak is
    caught.  Returns states, full_states, observation_exposures (check a),
    decision_points, lookups_checked, row/address/action changes,
    lookup_changes (check b) and violations = exposures + lookup changes.
    """
    game = get_game(game)
    table = np.asarray(table, dtype=np.float64)
    expected = (len(game.infostates), game.num_actions)
    if table.shape != expected:
        raise ValueError(f"table must have shape {expected} (information states x actions of {game.name}), "
                         f"got {table.shape}.")
    audit = observation_audit(game, violation, table=table)
    lookups = lookup_leakage(game, table, violation)
    out = {"game": game.name, "states": audit.states, "full_states": audit.full_states,
           "observation_exposures": audit.exposures, **lookups}
    out["violations"] = out["observation_exposures"] + out["lookup_changes"]
    return out
