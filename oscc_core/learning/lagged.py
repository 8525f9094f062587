"""Learners whose behaviour policy lags: iteration t collects with the policy of iteration t - lag.

The learners of `loop.Learners` collect with the current policy pi_t and
start each update at it, so every importance ratio is 1 at the first epoch.
A behaviour-checkpoint lag L (in iterations) keeps the logits of the last L
iterations: iteration t draws its decision points, plays its lanes and
freezes pi0 with the checkpoint of iteration max(t - L, 0), while the update
still starts from the current logits.  The ratios pi_t / pi0 then start away
from 1 and the clipped surrogate selects its clipped branch whenever they
leave [1 - eps, 1 + eps].  Lag 0 is the plain learner.

Only the torch engine runs here (the compiled kernels of `learning.fused`
collect with the current policy).
"""
from __future__ import annotations

from collections import deque

import torch

from oscc_core.learning.loop import Learners, RunSpec, Schedule


class LaggedLearners(Learners):
    """`loop.Learners` (torch engine) collecting with the checkpoint `lag` iterations back."""

    def __init__(self, game, runs: list[RunSpec], schedule: Schedule, lag: int = 0, device="cpu") -> None:
        if isinstance(lag, bool) or not isinstance(lag, int) or lag < 0:
            raise ValueError(f"lag must be an integer >= 0 (iterations), got {lag!r}.")
        super().__init__(game, runs, schedule, device=device, engine="torch")
        self.lag = lag
        self._checkpoints: deque = deque(maxlen=lag + 1)

    def behaviour_logits(self) -> torch.Tensor:
        """The logits of iteration max(t - lag, 0) (kept before each iteration)."""
        self._checkpoints.append(self.logits.clone())
        return self._checkpoints[0]


def train_lagged(game, runs: list[RunSpec], schedule: Schedule, lag: int = 0, device="cpu") -> LaggedLearners:
    """Run every run of `runs` until it is done (`schedule.iterations`, or its budget); returns the learners
    (last and average tables, ledger)."""
    learners = LaggedLearners(game, runs, schedule, lag=lag, device=device)
    while bool(learners.active().any()):
        learners.step()
    return learners

