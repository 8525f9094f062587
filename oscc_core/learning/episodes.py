"""PPO's samples: whole self-play hands, their transitions, GAE advantages and the tabular value.

Each player sees the hand as its own episode: its decisions in order, reward
0 until its last decision, whose reward is its terminal utility (chips).
With gamma = 1 the temporal difference of decision k is
    delta_k = V(I_{k+1}) - V(I_k)   (k not last),   delta_last = u - V(I_last),
the advantage is A_k = sum_l lambda^l delta_{k+l} (GAE) and the lambda-return
A_k + V(I_k) is the value's target.  Advantages are z-scored over each run's
transitions of the iteration before they enter the clipped surrogate.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from oscc_core.engine.rollout import ActionEvent
from oscc_core.learning.objectives import Terms
from oscc_core.learning.ordered_sum import ordered_index_add
from oscc_core.learning.tabular import exact_sqrt

Z_SCORE_EPSILON = 1e-8


@dataclass
class Transitions:
    """Dense [E, D] decisions of E hands (column = decision index; info -1 where the hand had ended)."""

    info: torch.Tensor
    action: torch.Tensor
    player: torch.Tensor
    utility_p0: torch.Tensor     # [E] chips

    @property
    def valid(self) -> torch.Tensor:
        return self.info >= 0

    @property
    def per_episode(self) -> torch.Tensor:
        """[E] transitions (decisions) of each hand."""
        return self.valid.sum(1)


def transitions(events: list[ActionEvent], utility_p0: torch.Tensor, infostate_player: torch.Tensor,
                depth: int) -> Transitions:
    """Dense transitions from `play`'s trace events (lane ids index the hands)."""
    e = len(utility_p0)
    info = torch.full((e, depth), -1, dtype=torch.int64, device=utility_p0.device)
    action = torch.zeros_like(info)
    for ev in events:      # one event per decision level of the batch, not per hand
        if isinstance(ev, ActionEvent):
            info[ev.lanes, ev.counter] = ev.infostate
            action[ev.lanes, ev.counter] = ev.action
    return Transitions(info, action, infostate_player[info.clamp(min=0)], utility_p0)


def gae(tr: Transitions, values: torch.Tensor, lam: float) -> torch.Tensor:
    """[E, D] GAE advantages (gamma 1) given each transition's V(I) [E, D] (chips)."""
    e, depth = tr.info.shape
    utility = torch.stack([tr.utility_p0, -tr.utility_p0], dim=1).to(values.dtype)    # [E, 2] per player
    next_value, running = utility.clone(), torch.zeros_like(utility)
    adv = torch.zeros_like(values)
    rows = torch.arange(e, device=values.device)
    for d in range(depth - 1, -1, -1):   # backwards over decision columns: at most the game's depth
        valid, p, v = tr.valid[:, d], tr.player[:, d].clamp(min=0), values[:, d]
        a = next_value[rows, p] - v + lam * running[rows, p]
        adv[:, d] = torch.where(valid, a, torch.zeros_like(a))
        running[rows, p] = torch.where(valid, a, running[rows, p])
        next_value[rows, p] = torch.where(valid, v, next_value[rows, p])
    return adv


def z_scored(adv: torch.Tensor, valid: torch.Tensor, run: torch.Tensor, num_runs: int) -> torch.Tensor:
    """(A - mean) / (sd + 1e-8) over each run's valid transitions; adv, valid [E, D], run [E]."""
    flat_run = run.unsqueeze(1).expand_as(adv)[valid]
    a = adv[valid]
    count = ordered_index_add(torch.zeros(num_runs, dtype=adv.dtype, device=adv.device), flat_run, torch.ones_like(a))
    mean = ordered_index_add(torch.zeros_like(count), flat_run, a) / count.clamp(min=1)
    centred = a - mean[flat_run]
    sd = exact_sqrt(ordered_index_add(torch.zeros_like(count), flat_run, centred * centred) / count.clamp(min=1))
    out = torch.zeros_like(adv)
    out[valid] = centred / (sd[flat_run] + Z_SCORE_EPSILON)
    return out


def episode_terms(tr: Transitions, adv: torch.Tensor, row_offset: torch.Tensor, behaviour_flat: torch.Tensor,
                  run: torch.Tensor, num_runs: int) -> Terms:
    """One term per transition, weight 1 / (the run's transitions); behaviour_flat [R * n_info, A]."""
    valid = tr.valid
    flat_run = run.unsqueeze(1).expand_as(adv)[valid]
    count = ordered_index_add(torch.zeros(num_runs, dtype=adv.dtype, device=adv.device), flat_run,
                              torch.ones_like(adv[valid]))
    rows = (row_offset.unsqueeze(1) + tr.info)[valid]
    action = tr.action[valid]
    return Terms(rows, action, 1.0 / count[flat_run], adv[valid], behaviour_flat[rows, action])


def value_targets(tr: Transitions, values: torch.Tensor, adv: torch.Tensor, row_offset: torch.Tensor,
                  num_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of lambda-returns A + V and their count per table row [R * n_info] (for V's update)."""
    valid = tr.valid
    rows = (row_offset.unsqueeze(1) + tr.info)[valid]
    target = (adv + values)[valid]
    sums = ordered_index_add(torch.zeros(num_rows, dtype=values.dtype, device=values.device), rows, target)
    counts = ordered_index_add(torch.zeros_like(sums), rows, torch.ones_like(target))
    return sums, counts
