"""Training batches of learner runs, their exact exploitability curves, and the step-size rule.

`train` advances a batch of runs (`loop.Learners`) until every run is done
and records, at the iterations a curve asks for, the exact exploitability
(NashConv / 2, chips) of every run's average policy (the primary object,
DESIGN section 8) and last iterate.  `choose_step_size` is the rule that
picks eta: the grid value that minimises the mean exploitability of the
learned arms' average policies on development seeds, at the matched budget.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from oscc_core.exact.exploitability import nash_conv_table
from oscc_core.exact.sequence_form import sequence_form
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.loop import Learners, RunSpec, Schedule

LEARNED_ARMS = ("cp_grpo", "independent", "grpo", "ppo")


@dataclass
class Batch:
    """A trained batch: runs, average and last tables [R, n_info, A], the learners, curves (iteration ->
    exploitability [R] of the average and of the last policy, chips), and the ledger after every iteration
    (`ledger_history` [T, fields, R] int64, cumulative; fields in `learning.ledger.FIELDS` order)."""

    runs: list
    learners: Learners
    average: np.ndarray
    last: np.ndarray
    curve_average: dict
    curve_last: dict
    ledger_history: np.ndarray

    def ledger_per_iteration(self, arm: str) -> dict[str, list[int]]:
        """{ledger field: [count spent in iteration t, summed over the arm's runs] for t = 1..T}."""
        rows = [r for r, run in enumerate(self.runs) if run.arm == arm]
        spent = np.diff(self.ledger_history[:, :, rows].sum(axis=2), axis=0, prepend=0)
        return {field: spent[:, f].tolist() for f, field in enumerate(FIELDS)}

    def index(self, arm: str, seed: int) -> int:
        return next(i for i, r in enumerate(self.runs) if (r.arm, r.seed) == (arm, seed))

    def ledger(self, r: int) -> dict:
        return self.learners.ledger.row(r)

    @property
    def game(self) -> str:
        return self.learners.game.name


def exploitabilities(game: str, tables: np.ndarray) -> np.ndarray:
    """[R] exploitability (NashConv / 2, chips) of each table [R, n_info, A]."""
    sf = sequence_form(game)
    return np.array([nash_conv_table(sf, t) / 2 for t in tables])


def runs_of(arms, seeds) -> list[RunSpec]:
    """Every (arm, seed) run, arms outermost."""
    return [RunSpec(a, int(s)) for a in arms for s in seeds]


def train(game: str, runs: list[RunSpec], schedule: Schedule, device, curve_at=(), decay: float = 0.0,
          progress: bool = False) -> Batch:
    """Train `runs` together until every run is done (each at its own eta, `RunSpec.learning_rate`, or the
    schedule's); eta_t = eta / (1 + decay * t) when decay > 0."""
    learners = Learners(game, runs, schedule, device=device)
    points, averages, lasts, history = set(curve_at), {}, {}, []
    total = schedule.iterations if schedule.budget is None else None
    with tqdm(total=total, disable=not progress, desc="iterations", leave=False) as bar:
        while bool(learners.active().any()):
            if decay:
                learners.rate_divisor = 1.0 + decay * learners.iteration
            learners.step()
            history.append(learners.ledger.array())
            bar.update(1)
            if learners.iteration in points:
                averages[learners.iteration] = exploitabilities(game, learners.average_tables())
                lasts[learners.iteration] = exploitabilities(game, learners.last_tables())
    empty = np.zeros((0, len(FIELDS), len(runs)), dtype=np.int64)
    return Batch(list(runs), learners, learners.average_tables(), learners.last_tables(), averages, lasts,
                 np.stack(history) if history else empty)


def choose_step_size(game: str, grid, dev_seeds, schedule: Schedule, device, given: float = 0.0,
                     progress: bool = False) -> dict:
    """eta from `grid` minimising the mean exploitability of the learned arms' average policies on `dev_seeds`
    under `schedule` (its budget); ties go to the smaller eta.  A positive `given` eta overrides the choice
    (the grid is still shown)."""
    scores = []
    for eta in grid:
        batch = train(game, runs_of(LEARNED_ARMS, dev_seeds), replace(schedule, learning_rate=eta), device,
                      progress=progress)
        ex = exploitabilities(game, batch.average)
        scores.append({"eta": eta, "mean_exploitability": float(ex.mean()),
                       **{arm: float(ex[[i for i, r in enumerate(batch.runs) if r.arm == arm]].mean())
                          for arm in LEARNED_ARMS}})
    best = min(scores, key=lambda s: (s["mean_exploitability"], s["eta"]))
    return {"grid": scores, "best": best["eta"], "eta": given if given > 0 else best["eta"], "given": given > 0}
