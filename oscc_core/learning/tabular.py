"""Tabular softmax policies of several learner runs, stacked in one tensor.

Every run owns one logit table [n_info, A] over OpenSpiel's information
states (`game.infostates` order), shared by both seats (self-play); illegal
actions are masked out of the softmax.  Runs are stacked along a leading
axis, so one tensor operation advances all of them; a run's rows never mix
with another run's (each run has its own slice), which is what makes a run's
trajectory independent of the batch it is trained in.
"""
from __future__ import annotations

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.fixed_math import exp_tensor
from oscc_core.games import Game


def exact_sqrt(a: torch.Tensor) -> torch.Tensor:
    """The correctly rounded square root, elementwise (units: the square root of a's).

    torch's CPU sqrt for float64 is not always correctly rounded, and which
    last bit it returns depends on the CPU it runs on (sqrt(2) comes out one
    unit low on some AVX-512 machines).  On the CPU the root is therefore taken
    by numpy, whose sqrt is the IEEE instruction, as the fused numba kernels
    take it; CUDA's sqrt is correctly rounded already.
    """
    if a.device.type != "cpu":
        return torch.sqrt(a)
    return torch.as_tensor(np.sqrt(a.detach().numpy()), device=a.device)


def sum_last(a: torch.Tensor) -> torch.Tensor:
    """a.sum(-1) as a[..., 0] + a[..., 1] + ... in that order (bitwise the same on every CPU)."""
    total = a[..., 0].clone()
    for column in range(1, a.shape[-1]):
        total = total + a[..., column]
    return total


def legal_mask(game: Game, device) -> torch.Tensor:
    """[n_info, A] bool: the legal actions of every information state."""
    return torch.as_tensor(game.infostates.legal, device=device)


def masked_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Softmax over the legal actions of the last axis (0 on illegal actions); logits [..., A], legal [..., A].

    The exponential is `fixed_math.exp_tensor` (the same bits on every CPU and device) and the normaliser
    sums the columns left to right, so pi_t never depends on the machine.
    """
    shifted = torch.where(legal, logits, torch.full_like(logits, -torch.inf))
    top = shifted.amax(dim=-1, keepdim=True)
    z = torch.where(legal, exp_tensor(shifted - top), torch.zeros_like(logits))
    return z / sum_last(z).unsqueeze(-1)


def stacked_cdf(tables: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer draw thresholds [R * n_info, A] and last action with mass [R * n_info] of R tables [R, n_info, A].

    The same rule as `engine.rollout.policy_cdf` (a 53-bit draw m picks the
    first action with ceil(cdf * 2**53) > m), with cumulative sums taken
    column by column so that thresholds are identical on every CPU.
    """
    flat = tables.reshape(-1, tables.shape[-1])
    cum = torch.empty_like(flat)
    cum[:, 0] = flat[:, 0]
    for column in range(1, flat.shape[1]):
        cum[:, column] = cum[:, column - 1] + flat[:, column]
    cdf = torch.ceil(cum * rng.DRAW_SCALE).to(torch.int64)
    actions = torch.arange(flat.shape[1], device=flat.device)
    last = torch.where(flat > 0, actions, torch.full_like(actions, -1)).amax(dim=1)
    return cdf, last


def to_numpy(tables: torch.Tensor) -> np.ndarray:
    """float64 numpy copy of policy tables (for the exact engine, which works in numpy)."""
    return tables.detach().to("cpu", torch.float64).numpy().copy()
