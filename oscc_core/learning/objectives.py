"""Advantages and the clipped surrogate of every learner arm, as one list of weighted terms.

Every arm's objective is a weighted sum of clipped terms
    w_k * min(r_k A_k, clip(r_k, 1 - eps, 1 + eps) A_k),   r_k = pi_theta(a_k | I_k) / pi0(a_k | I_k),
(returns and advantages frozen before the update, in chips):

- cp_grpo / independent (the paper's Eq. paired-update, averaged over the
  run's groups): one term per legal branch, w = pi0(a_i | I) / n_groups,
  A_i = R_i - mean_i R;
- grpo: one term per sampled action, w = 1 / (n_groups * G),
  A = (R - mean) / (sd + 1e-8) within the group (sd with G - 1 degrees of
  freedom, A = 0 when sd = 0);
- ppo: one term per transition, w = 1 / n_transitions (see `episodes`).

A clip-selected term (A > 0 and r > 1 + eps, or A < 0 and r < 1 - eps) is
constant in theta; an active one has gradient w A r (e_a - pi_theta(. | I))
with respect to the logits of I (chips per logit).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from oscc_core.learning.ordered_sum import ordered_index_add
from oscc_core.learning.tabular import exact_sqrt, masked_softmax, sum_last

GRPO_STD_EPSILON = 1e-8     # GRPO's guard in (R - mean) / (sd + 1e-8)


@dataclass
class Terms:
    """Flat clipped-surrogate terms [K]: table row (run * n_info + I), action, weight, advantage, pi0(a | I)."""

    row: torch.Tensor
    action: torch.Tensor
    weight: torch.Tensor
    advantage: torch.Tensor
    behaviour: torch.Tensor

    @staticmethod
    def cat(parts: list[Terms]) -> Terms:
        return Terms(*(torch.cat([getattr(t, f) for t in parts]) for f in
                       ("row", "action", "weight", "advantage", "behaviour")))


def centred(returns: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A_i = R_i - mean over the group's lanes (last axis; `mask` marks lanes), 0 off the mask."""
    count = sum_last(mask.to(returns.dtype)).clamp(min=1)
    mean = sum_last(returns * mask) / count
    return torch.where(mask, returns - mean.unsqueeze(-1), torch.zeros_like(returns))


def group_normalised(returns: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GRPO's (R - mean) / (sd + 1e-8) over the last axis (sd with n - 1 degrees of freedom); 0 when sd = 0."""
    a = centred(returns, mask)
    count = sum_last(mask.to(returns.dtype))
    sd = exact_sqrt(sum_last(a * a) / (count - 1).clamp(min=1))
    return torch.where(sd.unsqueeze(-1) > 0, a / (sd.unsqueeze(-1) + GRPO_STD_EPSILON), torch.zeros_like(a))


def group_terms(rows: torch.Tensor, action: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor,
                behaviour: torch.Tensor, groups_per_run: torch.Tensor, normalise: bool) -> Terms:
    """Terms of grouped samples [R', N, S]: rows/action/behaviour per cell, returns (chips), mask of lanes.

    Weights: pi0 / n_groups for enumerated branches (`normalise=False`, the
    paper's behaviour weights), 1 / (n_groups * S) for sampled ones.
    """
    adv = group_normalised(returns, mask) if normalise else centred(returns, mask)
    per_run = groups_per_run.clamp(min=1).to(returns.dtype).view(-1, 1, 1)
    weight = (1.0 / (per_run * mask.shape[-1])).expand_as(returns) if normalise else behaviour / per_run
    cells = [x.expand_as(returns)[mask] for x in (rows, action, weight, adv, behaviour)]
    return Terms(*cells)


def clipped_gradient(logits: torch.Tensor, legal: torch.Tensor, terms: Terms, epsilon: float
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradient of sum_k w_k min(r_k A_k, clip(r_k) A_k) over flat logits [R * n_info, A], and which terms clipped.

    Terms are accumulated row by row in their order (`ordered_index_add`, the same order on every device), so
    a run's gradient does not depend on other runs' terms.
    """
    probs = masked_softmax(logits[terms.row], legal[terms.row])
    taken = probs.gather(1, terms.action.unsqueeze(1)).squeeze(1)
    ratio = taken / terms.behaviour
    adv = terms.advantage
    clipped = ((adv > 0) & (ratio > 1 + epsilon)) | ((adv < 0) & (ratio < 1 - epsilon))
    coef = torch.where(clipped, torch.zeros_like(adv), terms.weight * adv * ratio)
    onehot = torch.nn.functional.one_hot(terms.action, logits.shape[1]).to(logits.dtype)
    grad = ordered_index_add(torch.zeros_like(logits), terms.row, coef.unsqueeze(1) * (onehot - probs))
    return grad, clipped
