"""Batched continuation play: every lane walks the public tree by table lookups.

A lane is one (group, branch, rollout).  Each step either deals the public
card (an explicit chance event addressed by its meaning) or lets the acting
player draw an action from its own policy stream.  Finished lanes are
compacted away, so work shrinks as hands end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.games import CHANCE, TERMINAL, Game


class ChanceEvent(NamedTuple):
    """Lanes that reached a chance event: the public card dealt and the (key, counter) of the uniform used."""

    lanes: torch.Tensor
    card: torch.Tensor
    key: torch.Tensor
    counter: torch.Tensor


class ActionEvent(NamedTuple):
    """Lanes that took a decision: information-state id, action, and the policy draw's (counter, key)."""

    lanes: torch.Tensor
    infostate: torch.Tensor
    action: torch.Tensor
    counter: torch.Tensor
    key: torch.Tensor


PUBLIC_CARD_EVENT = "public_card"
COMPACT_FRACTION = 0.25   # compact the batch when this share of lanes has finished


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
    """Integer action thresholds per information state and the last action with mass.

    A draw u = m / 2**53 picks the first action whose cumulative probability
    exceeds u.  Since cdf <= m / 2**53 exactly when ceil(cdf * 2**53) <= m,
    rollouts compare the 53-bit integer m against these thresholds and never
    convert draws to floating point.
    """
    cdf = torch.as_tensor(np.ceil(np.cumsum(table, axis=1) * rng.DRAW_SCALE).astype(np.int64), device=device)
    last = torch.as_tensor(np.where(table > 0, np.arange(table.shape[1]), -1).max(axis=1), device=device)
    return cdf, last


def play(game: Game, node: torch.Tensor, cards: torch.Tensor, public: torch.Tensor,
         policy_keys: torch.Tensor, chance_keys: torch.Tensor, cdf: torch.Tensor,
         last_action: torch.Tensor, chance_map=None, trace: list | None = None, tamper=None,
         table_offset: torch.Tensor | None = None) -> Lanes:
    """Play every lane from `node` to a terminal state.

    cards [L, 2] private cards of players 0 and 1; public [L] public card or -1;
    policy_keys / chance_keys [L] stream keys (the policy counter is the
    lane's decision index; each chance event is one draw at counter 0).
    `chance_map(u, lanes)` may transform the shared uniform (selector stress
    maps).  When `trace` is a list, every event is appended to it as a
    `ChanceEvent` (with the (key, counter) address of the uniform consumed)
    or an `ActionEvent` (with the policy draw's counter and key).

    `table_offset` [L] (optional) shifts each lane's row in `cdf` and
    `last_action`: lanes of several learners' runs play their own policy
    tables stacked in one array (row = run offset + information state).

    `tamper` (None in every admissible run) is a deliberate break of the
    contract used only by the audit's violation controls and failure-ledger
    examples (`oscc_core.violations`): it may rewrite the policy-draw
    address, the chance-draw address or the drawn action, and may cut play
    short.  With `tamper=None` nothing here changes.

    Every step is elementwise (finished lanes stand still); finished lanes
    are compacted away once a quarter of the batch has ended, which only
    saves work: each lane's draws are addressed by its own keys.
    """
    t = game.tables(node.device)
    n = len(node)
    out = Lanes(*(torch.zeros(n, dtype=d, device=node.device) for d in (torch.int64,) * 3 + (torch.bool,) * 2))
    lanes = torch.arange(n, device=node.device)
    counter = torch.zeros(n, dtype=torch.int64, device=node.device)
    chance_seen = torch.zeros_like(counter)
    illegal = torch.zeros(n, dtype=torch.bool, device=node.device)
    c0, c1, public, node = cards[:, 0], cards[:, 1], public.clone(), node.clone()
    offset = torch.zeros_like(counter) if table_offset is None else table_offset
    has_chance = bool((game.tree.player == CHANCE).any())
    steps = int(game.tree.depth.max()) + 1
    if tamper is not None and tamper.max_steps is not None:
        steps = min(steps, tamper.max_steps)
    for _ in range(steps):
        done = t["player"].index_select(0, node) == TERMINAL
        finished = int(done.sum())
        if finished and finished >= COMPACT_FRACTION * len(node):   # drop finished lanes once enough have ended
            f = done.nonzero().squeeze(1)
            fin = [x.index_select(0, f) for x in (lanes, node, c0, c1, public, counter, chance_seen, illegal)]
            _write(out, fin[0], game.utility_p0(*fin[1:5]), *fin[5:8], False)
            keep = (~done).nonzero().squeeze(1)
            node, c0, c1, public, lanes, counter, chance_seen, illegal, policy_keys, chance_keys, offset = (
                x.index_select(0, keep) for x in (node, c0, c1, public, lanes, counter, chance_seen, illegal,
                                                  policy_keys, chance_keys, offset))
        if len(node) == 0:
            return out
        if has_chance:
            node, public, dealt, address = _deal_public(t, node, c0, c1, public, chance_keys, chance_map, lanes,
                                                        game.num_cards, counter, tamper)
            chance_seen += dealt
            if trace is not None and bool(dealt.any()):
                trace.append(ChanceEvent(lanes[dealt], public[dealt], address[0][dealt], address[1][dealt]))
        node, counter, illegal, info, action, decided, used = step(
            node, c0, c1, public, policy_keys, counter, illegal, t["player"], t["info_index"].reshape(-1),
            cdf, last_action, t["legal"], t["child"], game.num_cards, tamper, offset)
        if trace is not None and bool(decided.any()):
            trace.append(ActionEvent(lanes[decided], info[decided], action[decided], used[1][decided],
                                     used[0][decided]))
    done = t["player"][node] == TERMINAL
    _write(out, lanes, torch.where(done, game.utility_p0(node, c0, c1, public), 0), counter, chance_seen,
           illegal, ~done)
    return out


def _write(out: Lanes, lanes, utility, counter, chance_seen, illegal, unfinished) -> None:
    out.utility_p0[lanes] = utility
    out.decisions[lanes] = counter
    out.chance_draws[lanes] = chance_seen
    out.illegal[lanes] = illegal
    out.unfinished[lanes] = unfinished


def _deal_public(t, node, c0, c1, public, chance_keys, chance_map, lanes, num_cards, counter=None, tamper=None):
    """Lanes at a chance node draw the public card: remaining cards (by id) [floor(U * n)].

    Also returns the (key, counter) address of each lane's chance uniform:
    the semantic event key at counter 0, unless a violation control tampers
    with it.
    """
    at_chance = t["player"].index_select(0, node) == CHANCE
    if not bool(at_chance.any()):
        return node, public, at_chance, (chance_keys, torch.zeros_like(chance_keys))
    if tamper is None:
        address = (chance_keys, torch.zeros_like(chance_keys))
    else:
        address = tamper.chance_address(chance_keys, counter)
    u = rng.uniform(*address)
    if chance_map is not None:
        u = chance_map(u, lanes)
    k = (u * (num_cards - 2)).to(torch.int64)          # index among the remaining cards
    low, high = torch.minimum(c0, c1), torch.maximum(c0, c1)
    k = k + (k >= low)                                 # skip the two dealt cards, in id order
    card = k + (k >= high)
    public = torch.where(at_chance, card, public)
    node = torch.where(at_chance, t["chance_child"].index_select(0, node), node)
    return node, public, at_chance, address


def step(node, c0, c1, public, policy_keys, counter, illegal, player_table, info_flat, cdf, last_action,
          legal, child, num_cards: int, tamper=None, table_offset=None):
    """One decision for every lane standing at a decision node (others stand still).

    Also returns the (key, counter) address of each lane's policy draw.
    `table_offset` [L] (optional): each lane's row offset into `cdf` and `last_action`.
    """
    player = player_table.index_select(0, node)
    decided = player >= 0
    own = torch.where(player == 1, c1, c0)
    info = info_flat.index_select(0, (node * num_cards + own) * (num_cards + 1) + public + 1).clamp(min=0)
    if tamper is None:
        used = (policy_keys, counter)
    else:
        used = tamper.policy_address(policy_keys, counter, own, torch.where(player == 1, c0, c1))
    m = rng.uniform_bits(*used)
    row = info if table_offset is None else info + table_offset
    action = (cdf.index_select(0, row) <= m.unsqueeze(1)).sum(1)
    action = torch.minimum(action, last_action.index_select(0, row))
    if tamper is not None:
        action = tamper.action(action, info, counter)
    cell = node * legal.shape[1] + action
    ok = legal.reshape(-1).index_select(0, cell)
    node = torch.where(decided & ok, child.reshape(-1).index_select(0, cell), node)
    return node, counter + decided, illegal | (decided & ~ok), info, action, decided, used


def draw_index(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """First index whose cumulative weight exceeds U * total (cards sorted by id)."""
    cum = ordered_cumsum(weights)
    idx = (cum <= u.unsqueeze(-1) * cum[..., -1:]).sum(dim=-1)
    last = (weights > 0).to(torch.int64) * torch.arange(weights.shape[-1], device=weights.device)
    return torch.minimum(idx, last.max(dim=-1).values)


def ordered_cumsum(a: torch.Tensor) -> torch.Tensor:
    """Cumulative sums over the last axis, added left to right: the CPU's `cumsum` bit for bit, on every device.

    CUDA's scan adds in a tree order of its own, so float weights (a posterior's reach products) could
    round differently there; the last axis is short (a card per column), so a loop over it costs little.
    """
    cum = a.clone()
    for column in range(1, a.shape[-1]):
        cum[..., column] = cum[..., column - 1] + a[..., column]
    return cum
