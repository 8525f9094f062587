"""The chapter's training runs: eta on development seeds, the diagnostic, the sensitivity panel, the policy
screen and the scale curve.  Each is one batch of `learning.loop.Learners` (all its runs advance together).

Exploitabilities are exact (chips) and computed for every run of a batch at
the iterations a curve asks for, for the average policy (the primary object,
DESIGN section 8) and the last iterate.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from oscc_core.exact.exploitability import nash_conv_table
from oscc_core.exact.sequence_form import sequence_form
from oscc_core.games import LEDUC
from oscc_core.learning.loop import Learners, RunSpec, Schedule

DIAGNOSTIC_ARMS = ("cp_grpo", "independent")
LEARNED_ARMS = ("cp_grpo", "independent", "grpo", "ppo")
POLICY_ARMS = LEARNED_ARMS + ("uniform",)
SCALE_POINTS = 24             # iterations of the scale curve, log-spaced


@dataclass
class Batch:
    """A trained batch: runs, average and last tables [R, n_info, A], the learners, curves (iteration ->
    exploitability [R] of the average and of the last policy, chips)."""

    runs: list
    learners: Learners
    average: np.ndarray
    last: np.ndarray
    curve_average: dict
    curve_last: dict

    def index(self, arm: str, seed: int) -> int:
        return self.runs.index(RunSpec(arm, seed))

    def ledger(self, r: int) -> dict:
        return self.learners.ledger.row(r)


def exploitabilities(game: str, tables: np.ndarray) -> np.ndarray:
    """[R] exploitability (NashConv / 2, chips) of each table [R, n_info, A]."""
    sf = sequence_form(game)
    return np.array([nash_conv_table(sf, t) / 2 for t in tables])


def train(runs: "list[RunSpec]", schedule: Schedule, device, curve_at=(), decay: float = 0.0,
          game: str = LEDUC, progress: bool = False) -> Batch:
    """Train `runs` together until every run is done; eta_t = eta / (1 + decay * t) when decay > 0."""
    learners = Learners(game, runs, schedule, device=device)
    points, averages, lasts = set(curve_at), {}, {}
    total = schedule.iterations if schedule.budget is None else None
    with tqdm(total=total, disable=not progress, desc="iterations", leave=False) as bar:
        while bool(learners.active().any()):
            if decay:
                learners.schedule = replace(schedule, learning_rate=schedule.learning_rate
                                            / (1.0 + decay * learners.iteration))
            learners.step()
            bar.update(1)
            if learners.iteration in points:
                averages[learners.iteration] = exploitabilities(game, learners.average_tables())
                lasts[learners.iteration] = exploitabilities(game, learners.last_tables())
    return Batch(list(runs), learners, learners.average_tables(), learners.last_tables(), averages, lasts)


def runs_of(arms, seeds) -> list[RunSpec]:
    return [RunSpec(a, int(s)) for a in arms for s in seeds]


def choose_eta(p, progress: bool = False) -> dict:
    """eta from `p.eta_grid` minimising the mean exploitability of the learned arms' average policies on
    `p.dev_seeds` at the matched budget (never the reporting seeds, never a paper number); ties -> smaller eta."""
    scores = []
    for eta in p.eta_grid:
        batch = train(runs_of(LEARNED_ARMS, p.dev_seeds), p.schedule(eta, budget=p.budget), p.torch_device,
                      progress=progress)
        ex = exploitabilities(p.game, batch.average)
        scores.append({"eta": eta, "mean_exploitability": float(ex.mean()),
                       **{arm: float(ex[[i for i, r in enumerate(batch.runs) if r.arm == arm]].mean())
                          for arm in LEARNED_ARMS}})
    best = min(scores, key=lambda s: (s["mean_exploitability"], s["eta"]))
    chosen = p.learning_rate if p.learning_rate > 0 else best["eta"]
    return {"grid": scores, "best": best["eta"], "eta": chosen, "given": p.learning_rate > 0}


def diagnostic(p, eta: float, progress: bool = False) -> Batch:
    """The three-seed bounded diagnostic: paired (cp_grpo) and independent, T = p.iterations, every iteration."""
    return train(runs_of(DIAGNOSTIC_ARMS, p.diagnostic_seeds), p.schedule(eta), p.torch_device,
                 curve_at=range(1, p.iterations + 1), progress=progress)


def sensitivity(p, progress: bool = False) -> list[dict]:
    """Per eta in the grid: independent-minus-paired final exploitability (average policy) on every seed."""
    seeds = list(dict.fromkeys(p.diagnostic_seeds + p.sensitivity_seeds))
    out = []
    for eta in p.eta_grid:
        batch = train(runs_of(DIAGNOSTIC_ARMS, seeds), p.schedule(eta), p.torch_device, progress=progress)
        ex = exploitabilities(p.game, batch.average)
        diff = [float(ex[batch.index("independent", s)] - ex[batch.index("cp_grpo", s)]) for s in seeds]
        out.append({"eta": eta, "seeds": seeds, "differences": diff})
    return out


def policy_screen(p, eta: float, progress: bool = False) -> Batch:
    """Every arm on the policy seeds, each run until it has spent `p.budget` physical calls."""
    return train(runs_of(POLICY_ARMS, p.policy_seeds), p.schedule(eta, budget=p.budget), p.torch_device,
                 progress=progress)


def scale_points(iterations: int) -> list[int]:
    """About SCALE_POINTS log-spaced iteration counts from 1 to `iterations` (both included)."""
    grid = np.unique(np.round(np.geomspace(1, iterations, SCALE_POINTS)).astype(int))
    return [int(t) for t in grid]


def scale_curve(p, eta: float, progress: bool = False) -> Batch:
    """cp_grpo and independent on the scale seeds for `p.scale_iterations` iterations (optionally decaying eta)."""
    return train(runs_of(DIAGNOSTIC_ARMS, p.scale_seeds), p.schedule(eta, iterations=p.scale_iterations),
                 p.torch_device, curve_at=scale_points(p.scale_iterations), decay=p.scale_decay, progress=progress)
