"""The chapter's training runs: eta on development seeds, the diagnostic, the sensitivity panel, the policy
screen and the scale curve.  Each is one batch of learner runs (`learning.runs.train`: all its runs advance
together); exploitabilities are exact (chips).
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning.runs import LEARNED_ARMS, Batch, choose_step_size, exploitabilities, runs_of, train

DIAGNOSTIC_ARMS = ("cp_grpo", "independent")
POLICY_ARMS = LEARNED_ARMS + ("uniform",)
SCALE_POINTS = 24             # iterations of the scale curve, log-spaced
__all__ = ["LEARNED_ARMS", "Batch", "exploitabilities", "train"]


def choose_eta(p, progress: bool = False) -> dict:
    """eta by `learning.runs.choose_step_size` on `p.dev_seeds` at the matched budget (never the reporting
    seeds, never a paper number); `p.learning_rate > 0` overrides it."""
    return choose_step_size(p.game, p.eta_grid, p.dev_seeds, p.schedule(p.eta_grid[0], budget=p.budget),
                            p.torch_device, given=p.learning_rate, progress=progress)


def diagnostic(p, eta: float, progress: bool = False) -> Batch:
    """The three-seed bounded diagnostic: paired (cp_grpo) and independent, T = p.iterations, every iteration."""
    return train(p.game, runs_of(DIAGNOSTIC_ARMS, p.diagnostic_seeds), p.schedule(eta), p.torch_device,
                 curve_at=range(1, p.iterations + 1), progress=progress)


def sensitivity(p, progress: bool = False) -> list[dict]:
    """Per eta in the grid: independent-minus-paired final exploitability (average policy) on every seed."""
    seeds = list(dict.fromkeys(p.diagnostic_seeds + p.sensitivity_seeds))
    out = []
    for eta in p.eta_grid:
        batch = train(p.game, runs_of(DIAGNOSTIC_ARMS, seeds), p.schedule(eta), p.torch_device, progress=progress)
        ex = exploitabilities(p.game, batch.average)
        diff = [float(ex[batch.index("independent", s)] - ex[batch.index("cp_grpo", s)]) for s in seeds]
        out.append({"eta": eta, "seeds": seeds, "differences": diff})
    return out


def policy_screen(p, eta: float, progress: bool = False) -> Batch:
    """Every arm on the policy seeds, each run until it has spent `p.budget` physical calls."""
    return train(p.game, runs_of(POLICY_ARMS, p.policy_seeds), p.schedule(eta, budget=p.budget), p.torch_device,
                 progress=progress)


def scale_points(iterations: int) -> list[int]:
    """About SCALE_POINTS log-spaced iteration counts from 1 to `iterations` (both included)."""
    grid = np.unique(np.round(np.geomspace(1, iterations, SCALE_POINTS)).astype(int))
    return [int(t) for t in grid]


def scale_curve(p, eta: float, progress: bool = False) -> Batch:
    """cp_grpo and independent on the scale seeds for `p.scale_iterations` iterations (optionally decaying eta)."""
    return train(p.game, runs_of(DIAGNOSTIC_ARMS, p.scale_seeds), p.schedule(eta, iterations=p.scale_iterations),
                 p.torch_device, curve_at=scale_points(p.scale_iterations), decay=p.scale_decay, progress=progress)
