"""Per-hand event traces, for replay against OpenSpiel and for the audit chapter.

Rollouts normally keep only their outcomes; `sample_hands` plays complete
hands from the deal with the collector's own streams and returns each hand's
events as plain Python lists.  It is meant for audits on thousands of hands,
not for the hot path.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from oscc_core.device import HOST
from oscc_core.engine import rng
from oscc_core.engine.rollout import ChanceEvent, chance_event_of_nodes, draw_index, play, policy_cdf
from oscc_core.games import NO_PUBLIC_CARD, get_game
from oscc_core.policy import resolve_policy


class HandChance(NamedTuple):
    """The public card dealt."""

    card: int


class HandAction(NamedTuple):
    """One decision: who acted, in which information state (OpenSpiel string), and the action id."""

    player: int
    infostate: str
    action: int


@dataclass
class Hand:
    """One complete hand: the deal, then the ordered events."""

    cards: tuple[int, int]
    events: list = field(default_factory=list)  # HandChance and HandAction, in the order they happened
    utility_p0: int = 0


def sample_hands(game, n: int, seed: int, policy="uniform", split: str = "audit") -> list[Hand]:
    """Play `n` hands from the initial deal; the deal uses the root stream, play uses the policy and chance streams."""
    game = get_game(game)
    table = resolve_policy(game, policy, "policy")
    cdf, last = policy_cdf(table, HOST)
    groups = torch.arange(n, dtype=torch.int64, device=HOST)
    sp = rng.SPLITS[split]
    key = rng.derive_key("root", run=seed, split=sp, group=groups)
    deck = torch.ones(n, game.num_cards, dtype=torch.float64, device=HOST)
    c0 = draw_index(deck, rng.uniform(key, 0))
    deck.scatter_(1, c0.unsqueeze(1), 0.0)
    c1 = draw_index(deck, rng.uniform(key, 1))
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    trace: list = []
    out = play(game, torch.zeros(n, dtype=torch.int64, device=HOST), torch.stack([c0, c1], 1),
               torch.full((n,), NO_PUBLIC_CARD, dtype=torch.int64, device=HOST),
               rng.policy_key(seed, sp, groups, 0), rng.derive_key("chance", run=seed, split=sp, group=groups,
                                                                    event=event, rollout=0),
               cdf, last, trace=trace)
    hands = [Hand((int(a), int(b)), utility_p0=int(u)) for a, b, u in zip(c0, c1, out.utility_p0)]
    info = game.infostates
    for record in trace:
        if isinstance(record, ChanceEvent):
            for lane, card in zip(record.lanes.tolist(), record.card.tolist()):
                hands[lane].events.append(HandChance(card))
        else:
            for lane, ids, act in zip(record.lanes.tolist(), record.infostate.tolist(), record.action.tolist()):
                hands[lane].events.append(HandAction(int(info.player[ids]), info.strings[ids], act))
    return hands
