"""The observation audit: every information state against every full state consistent with it.

For each information state of a game, every hidden completion (the opponent's
card and, in round one, the public card not yet dealt) and both branch labels,
the engine's decision step is asked for the information state, the observation
hash and the policy address; counts are of information states (C2 and C3 over
the whole state space).  Games without a public card (Kuhn) have only the
opponent's card hidden.  Chapter 01 audits the engine with it, chapter 06 a
learned checkpoint (`table`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from oscc_core.device import HOST
from oscc_core.engine import rng
from oscc_core.engine.probe import any_by, drift_by, engine_step, observe
from oscc_core.engine.violations import Violation
from oscc_core.games import LEDUC, get_game


@dataclass
class ObservationAudit:
    game: str
    states: int
    states_by_player: list
    states_by_round: dict
    full_states: int            # (information state, hidden completion, branch) triples checked
    projection_errors: int      # engine's information state differs from the one we built
    obs_drift_states: int       # observation hash moved under a hidden-field or branch perturbation
    key_drift_states: int       # policy address moved under a hidden-field perturbation
    action_drift_states: int    # drawn action moved under a hidden-field perturbation
    exposures: int              # states with any of the above

    @property
    def verified(self) -> int:
        return self.states - self.exposures

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["verified"] = self.verified
        return d


def full_states(game) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Every (information state, opponent card, future card, branch) consistent with the game.

    Returns the validity mask [states, cards, cards, 2] and, over its True
    entries, the information-state id, own card, opponent card, future card
    and branch label.  Without a public card (Kuhn: every public card is -1)
    the future card is the placeholder 0 and the opponent holds any card but
    the own one.
    """
    info = game.infostates
    c = game.num_cards
    ids = torch.arange(len(info), device=HOST).view(-1, 1, 1, 1)
    opp = torch.arange(c, device=HOST).view(1, -1, 1, 1)
    fut = torch.arange(c, device=HOST).view(1, 1, -1, 1)
    br = torch.arange(2, device=HOST).view(1, 1, 1, -1)
    own = torch.as_tensor(info.card, device=HOST)[ids]
    pub = torch.as_tensor(info.public_card, device=HOST)[ids]
    rnd = torch.as_tensor(game.tree.round, device=HOST)[torch.as_tensor(info.node, device=HOST)][ids]
    valid = ((opp != own) & (opp != pub)).expand(len(info), c, c, 2)
    if game.has_public_card:
        valid = valid & torch.where(rnd >= 2, fut == pub, (fut != own) & (fut != opp))
    else:
        valid = valid & (fut == 0)
    return valid, [x.expand(valid.shape)[valid] for x in (ids, own, opp, fut, br)]


def observation_audit(game=LEDUC, violation: Violation | None = None, run: int = 0, split: str = "audit",
                      group: int = 0, table: np.ndarray | None = None) -> ObservationAudit:
    """Every information state x every consistent full state x both branch labels.

    Hidden fields perturbed: the opponent's private card and, in round one,
    the public card that is not yet dealt.  The engine is asked for the
    information state, the observation hash and the policy address at each
    full state; the observation may not change at all (also not with the
    branch label) and the policy address and action may not change with a
    hidden field (they may change with the branch: that is C3).  Actions are
    drawn from `table` (a checkpoint, [infostates, actions]; the uniform
    continuation when None).
    """
    game = get_game(game)
    info = game.infostates
    n = len(info)
    valid, (i, own_c, opp_c, _fut_c, branch) = full_states(game)
    player = torch.as_tensor(info.player, device=HOST)[i]
    node = torch.as_tensor(info.node, device=HOST)[i]
    public = torch.as_tensor(info.public_card, device=HOST)[i]        # the engine's state holds only the dealt card
    c0 = torch.where(player == 0, own_c, opp_c)
    c1 = torch.where(player == 0, opp_c, own_c)
    keys = rng.policy_key(run, rng.SPLITS[split], group, branch, 0)
    counter = torch.zeros_like(keys)
    seen, action, (ukey, uctr) = engine_step(game, node, c0, c1, public, keys, counter, violation, table)
    obs = observe(game, seen, branch, opp_c, violation)
    per_branch = i * 2 + branch
    proj = any_by(i, seen != i, n)
    obs_drift = drift_by(i, obs, n) | proj
    key_drift = (drift_by(per_branch, ukey, 2 * n) | drift_by(per_branch, uctr, 2 * n)).view(n, 2).any(1)
    act_drift = drift_by(per_branch, action, 2 * n).view(n, 2).any(1)
    exposed = obs_drift | key_drift | act_drift
    rounds = game.tree.round[info.node]
    return ObservationAudit(
        game=game.name, states=n, states_by_player=[int((info.player == p).sum()) for p in (0, 1)],
        states_by_round={int(r): int((rounds == r).sum()) for r in np.unique(rounds)},
        full_states=int(valid.sum()), projection_errors=int(proj.sum()), obs_drift_states=int(obs_drift.sum()),
        key_drift_states=int(key_drift.sum()), action_drift_states=int(act_drift.sum()),
        exposures=int(exposed.sum()))
