"""The chapter's training runs: eta per arm on development seeds, the diagnostic, the sensitivity panel, the
policy screen and the scale curve.  Each is one batch of learner runs (`learning.runs.train`: all its runs
advance together, each at its arm's step size); exploitabilities are exact (chips).
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning.loop import RunSpec
from oscc_core.learning.runs import LEARNED_ARMS, Batch, exploitabilities, runs_of, train
from oscc_core.reporting.learning_study import literal_step_sizes

DIAGNOSTIC_ARMS = ("cp_grpo", "independent")
POLICY_ARMS = LEARNED_ARMS + ("uniform",)
SCALE_POINTS = 24             # iterations of the scale curve, log-spaced
__all__ = ["LEARNED_ARMS", "Batch", "exploitabilities", "train"]


def choose_etas(p, store) -> dict:
    """eta per learned arm on `p.dev_seeds` at the matched budget (never the reporting seeds, never a paper
    number): `reporting.learning_study.literal_step_sizes` with the notebook's grid, cluster and override."""
    return literal_step_sizes(p.game, p.eta_grid, p.dev_seeds, p.base_schedule(), p.budget, store, p.workers,
                              p.scheduler or None, p.learning_rate, p.torch_device)


def runs_at(arms, seeds, etas: dict) -> list[RunSpec]:
    """Every (arm, seed) run at its arm's step size (the uniform policy takes any: it never updates)."""
    first = next(iter(etas.values()))
    return [RunSpec(arm, int(seed), etas.get(arm, first)) for arm in arms for seed in seeds]


def diagnostic(p, etas: dict, progress: bool = False) -> Batch:
    """The three-seed bounded diagnostic: paired (cp_grpo) and independent, T = p.iterations, every iteration."""
    return train(p.game, runs_at(DIAGNOSTIC_ARMS, p.diagnostic_seeds, etas), p.schedule(etas["cp_grpo"]),
                 p.torch_device, curve_at=range(1, p.iterations + 1), progress=progress)


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


def policy_screen(p, etas: dict, progress: bool = False) -> Batch:
    """Every arm on the policy seeds at its step size, each run until it has spent `p.budget` physical calls."""
    return train(p.game, runs_at(POLICY_ARMS, p.policy_seeds, etas), p.schedule(etas["cp_grpo"], budget=p.budget),
                 p.torch_device, progress=progress)


def scale_points(iterations: int) -> list[int]:
    """About SCALE_POINTS log-spaced iteration counts from 1 to `iterations` (both included)."""
    grid = np.unique(np.round(np.geomspace(1, iterations, SCALE_POINTS)).astype(int))
    return [int(t) for t in grid]


def scale_curve(p, etas: dict, progress: bool = False) -> Batch:
    """cp_grpo and independent on the scale seeds for `p.scale_iterations` iterations (optionally decaying eta)."""
    return train(p.game, runs_at(DIAGNOSTIC_ARMS, p.scale_seeds, etas),
                 p.schedule(etas["cp_grpo"], iterations=p.scale_iterations), p.torch_device,
                 curve_at=scale_points(p.scale_iterations), decay=p.scale_decay, progress=progress)
