"""Batched continuation play: every lane walks the public tree by table lookups.

A lane is one (group, branch, rollout).  Each step either deals the public
card (an explicit chance event addressed by its meaning) or lets the acting
player draw an action from its own policy stream.  Finished lanes are
compacted away, so work shrinks as hands end.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import rng
from .games import CHANCE, TERMINAL, Game

PUBLIC_CARD_EVENT = "public_card"


def chance_event_of_nodes(game: Game) -> dict[int, int]:
    """Semantic address of the chance event at each chance node.

    Leduc's only continuation chance event is the public card; whatever
    betting led there, it is the same event (round 2, first occurrence), so
    branches with different histories still share its uniform.
    """
    tree = game.tree
    return {int(n): rng.semantic_event_id(game.name, PUBLIC_CARD_EVENT, int(tree.round[tree.chance_child[n]]), 0)
            for n in np.flatnonzero(tree.player == CHANCE)}


@dataclass
class Lanes:
    """Per-lane outcome of `play`: indexed by lane id."""

    utility_p0: torch.Tensor     # [L] int64 chips
    decisions: torch.Tensor      # [L] int64 policy draws consumed
    chance_draws: torch.Tensor   # [L] int64 chance events reached
    illegal: torch.Tensor        # [L] bool an illegal action was drawn
    unfinished: torch.Tensor     # [L] bool still not terminal after the deepest level


def policy_cdf(table: np.ndarray, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Cumulative probabilities per information state and the last action with mass."""
    cdf = torch.as_tensor(np.cumsum(table, axis=1), device=device)
    last = torch.as_tensor(np.array([np.flatnonzero(r > 0).max() for r in table]), device=device)
    return cdf, last


def play(game: Game, node: torch.Tensor, cards: torch.Tensor, public: torch.Tensor,
         policy_keys: torch.Tensor, chance_keys: torch.Tensor, cdf: torch.Tensor,
         last_action: torch.Tensor, chance_map=None, trace: list | None = None) -> Lanes:
    """Play every lane from `node` to a terminal state.

    cards [L, 2] private cards of players 0 and 1; public [L] public card or -1;
    policy_keys / chance_keys [L] stream keys (the policy counter is the
    lane's decision index; each chance event is one draw at counter 0).
    `chance_map(u, lane_ids)` may transform the shared uniform (selector
    stress maps); by default the uniform is used as drawn.  When `trace` is
    a list, every event is appended to it as ("chance", lanes, public card)
    or ("action", lanes, node, infostate id, action) tensors.
    """
    t = game.tables(node.device)
    n_lanes, c = len(node), game.num_cards
    out = Lanes(torch.zeros(n_lanes, dtype=torch.int64, device=node.device),
                torch.zeros(n_lanes, dtype=torch.int64, device=node.device),
                torch.zeros(n_lanes, dtype=torch.int64, device=node.device),
                torch.zeros(n_lanes, dtype=torch.bool, device=node.device),
                torch.zeros(n_lanes, dtype=torch.bool, device=node.device))
    lane = torch.arange(n_lanes, device=node.device)
    counter = torch.zeros(n_lanes, dtype=torch.int64, device=node.device)
    chance_seen = torch.zeros(n_lanes, dtype=torch.int64, device=node.device)
    info_flat = t["info_index"].reshape(-1)
    for _ in range(int(game.tree.depth.max()) + 1):
        player = t["player"][node]
        done = player == TERMINAL
        if bool(done.any()):
            f = done.nonzero().squeeze(1)
            out.utility_p0[lane[f]] = game.utility_p0(node[f], cards[f, 0], cards[f, 1], public[f])
            out.decisions[lane[f]] = counter[f]
            out.chance_draws[lane[f]] = chance_seen[f]
            keep = (~done).nonzero().squeeze(1)
            node, cards, public, lane, counter, chance_seen, player = (
                x[keep] for x in (node, cards, public, lane, counter, chance_seen, player))
            policy_keys, chance_keys = policy_keys[keep], chance_keys[keep]
        if len(node) == 0:
            return out
        at_chance = player == CHANCE
        if bool(at_chance.any()):
            h = at_chance.nonzero().squeeze(1)
            u = rng.uniform(chance_keys[h], 0)
            if chance_map is not None:
                u = chance_map(u, lane[h])
            remaining = torch.ones(len(h), c, dtype=torch.float64, device=node.device)
            remaining.scatter_(1, cards[h], 0.0)
            public[h] = draw_index(remaining, u)
            node[h] = t["chance_child"][node[h]]
            chance_seen[h] += 1
            if trace is not None:
                trace.append(("chance", lane[h].clone(), public[h].clone()))
            player = t["player"][node]
        own = cards.gather(1, player.clamp(min=0).unsqueeze(1)).squeeze(1)
        info = info_flat[(node * c + own) * (c + 1) + public + 1]
        u = rng.uniform(policy_keys, counter)
        action = (cdf[info] <= u.unsqueeze(1)).sum(1)
        action = torch.minimum(action, last_action[info])
        if trace is not None:
            trace.append(("action", lane.clone(), node.clone(), info.clone(), action.clone()))
        legal = t["legal"][node, action]
        out.illegal[lane] |= ~legal
        node = torch.where(legal, t["child"][node, action], node)  # an illegal lane stays put and ends unfinished
        counter = counter + 1
    out.unfinished[lane] = True
    return out


def draw_index(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """First index whose cumulative weight exceeds U * total (cards sorted by id)."""
    cum = weights.cumsum(dim=-1)
    idx = (cum <= u.unsqueeze(-1) * cum[..., -1:]).sum(dim=-1)
    last = (weights > 0).to(torch.int64) * torch.arange(weights.shape[-1], device=weights.device)
    return torch.minimum(idx, last.max(dim=-1).values)
