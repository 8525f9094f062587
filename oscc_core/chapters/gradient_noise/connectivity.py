"""The tabular connectivity loop: paired (cp_grpo) and independent learners trained for a few logical batches
on Leduc, per seed, under the clipping study's conditions, with the physical ledger of every run.

A *loop condition* fixes the behaviour-checkpoint lag (iterations, `learning.lagged`) and the step size; the
schedule (logical batches = iterations, decision points per batch, epochs per batch, clip range) is shared.
The conditions follow the clipping study's rows: the connectivity control (lag 0, the control step size), the
lag grid (each lag at the control step size), the learning-rate grid (each step size at lag 0) and the
activated stress (largest lag with largest step size).

The endpoint of a run is the exact expected return (chips) of its final policy (`endpoint="last"`, the
reloaded checkpoint) or of its average policy, in each seat against the uniform opponent; I - P is the
independent run's endpoint minus the paired run's on the same seed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.exact.evaluation import profile_table, root_values
from oscc_core.games import LEDUC
from oscc_core.learning.lagged import train_lagged
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.loop import RunSpec, Schedule
from oscc_core.policy import uniform_table

PAIRED, INDEPENDENT = "cp_grpo", "independent"
LOOP_ARMS = (PAIRED, INDEPENDENT)
ENDPOINTS = ("last", "average")
#: The clipping study's rows, as keys of `loop_conditions`.
ROWS = ("connectivity_control", "behavior_lag_grid", "learning_rate_grid", "activated_stress")


@dataclass(frozen=True)
class Condition:
    """One loop condition: its name, the behaviour lag (iterations) and the step size (logits)."""

    name: str
    lag: int
    learning_rate: float


def loop_conditions(learning_rate: float, lag_grid, learning_rate_grid) -> dict[str, list[Condition]]:
    """The clipping study's rows (`ROWS`) and the loop conditions pooled into each."""
    control = Condition("control", 0, learning_rate)
    return {"connectivity_control": [control],
            "behavior_lag_grid": [Condition(f"lag {x}", int(x), learning_rate) for x in lag_grid],
            "learning_rate_grid": [Condition(f"η {x:g}", 0, x) for x in learning_rate_grid],
            "activated_stress": [Condition("stress", int(max(lag_grid)), max(learning_rate_grid))]}


@dataclass
class LoopRun:
    """One condition trained on every seed: runs (arms outermost), ledger [fields, R], seat endpoints [R, 2]."""

    condition: Condition
    runs: list
    ledger: np.ndarray
    endpoint: np.ndarray

    def _rows(self, arm: str) -> list[int]:
        return [r for r, run in enumerate(self.runs) if run.arm == arm]

    @property
    def seeds(self) -> list[int]:
        return [self.runs[r].seed for r in self._rows(PAIRED)]

    def count(self, field: str, arms=LOOP_ARMS) -> np.ndarray:
        """[seeds] a ledger count per seed, summed over `arms`."""
        f = FIELDS.index(field)
        return sum(self.ledger[f, self._rows(a)] for a in arms)

    def sampling_calls(self) -> np.ndarray:
        """[seeds] draws the seed's runs consume (both arms): root draws plus policy draws."""
        return self.count("root_draws") + self.count("decisions")

    def i_minus_p(self, seat: int) -> np.ndarray:
        """[seeds] independent-minus-paired endpoint (chips) in `seat`."""
        return self.endpoint[self._rows(INDEPENDENT), seat] - self.endpoint[self._rows(PAIRED), seat]

    def clip_fraction(self) -> float:
        """Share of clip-selected surrogate terms over both arms and every seed."""
        terms = self.count("terms").sum()
        return float(self.count("clipped_terms").sum() / terms) if terms else 0.0


def seat_returns(game: str, tables: np.ndarray) -> np.ndarray:
    """[R, 2] exact expected return (chips) of each policy table [R, n_info, A] in seat 0 and in seat 1 against
    the uniform opponent."""
    uniform = uniform_table(game)
    seat0 = np.stack([profile_table(game, t, uniform) for t in tables])
    seat1 = np.stack([profile_table(game, uniform, t) for t in tables])
    return np.stack([root_values(game, seat0).mean(axis=1), -root_values(game, seat1).mean(axis=1)], axis=1)


def run_condition(condition: Condition, seeds, schedule: Schedule, endpoint: str = "last",
                  device="cpu", game: str = LEDUC) -> LoopRun:
    """Train the paired and independent learners on every seed under `condition`."""
    runs = [RunSpec(a, int(s)) for a in LOOP_ARMS for s in seeds]
    sched = Schedule(**{**schedule.as_dict(), "learning_rate": condition.learning_rate})
    learners = train_lagged(game, runs, sched, lag=condition.lag, device=device)
    tables = learners.last_tables() if endpoint == "last" else learners.average_tables()
    return LoopRun(condition, runs, learners.ledger.array(), seat_returns(game, tables))


def run_loops(conditions: dict[str, list[Condition]], seeds, schedule: Schedule, endpoint: str = "last",
              device="cpu") -> dict[str, list[LoopRun]]:
    """Every row's conditions trained (`run_condition`)."""
    return {row: [run_condition(c, seeds, schedule, endpoint, device) for c in conds]
            for row, conds in conditions.items()}


def pooled_i_minus_p(loops: list[LoopRun], seat: int) -> np.ndarray:
    """[seeds] I - P of a row, averaged over the row's conditions seed by seed."""
    return np.mean([run.i_minus_p(seat) for run in loops], axis=0)


def record(loops: dict[str, list[LoopRun]]) -> dict:
    """The loop's results, JSON-ready: per condition its seeds, ledger counts per seed and endpoints."""
    out = {}
    for row, runs in loops.items():
        out[row] = [{"condition": r.condition.name, "lag": r.condition.lag,
                     "learning_rate": r.condition.learning_rate, "seeds": r.seeds,
                     "clip_fraction": r.clip_fraction(),
                     "sampling_calls": r.sampling_calls().tolist(),
                     "physical_calls": r.count("physical_calls").tolist(),
                     "transitions": r.count("transitions").tolist(),
                     "i_minus_p": [r.i_minus_p(0).tolist(), r.i_minus_p(1).tolist()],
                     "endpoint": {a: r.endpoint[r._rows(a)].tolist() for a in LOOP_ARMS}} for r in runs]
    return out


def loop_values(loops: dict[str, list[LoopRun]]) -> dict:
    """The numbers the chapter's text quotes: clip fractions of the control and the stress, the control's
    seat-0 I - P (seed mean), mean sampling calls and branch rollouts per seed."""
    control = loops["connectivity_control"][0]
    return {"loop_clip_control": control.clip_fraction(),
            "loop_clip_stress": loops["activated_stress"][0].clip_fraction(),
            "loop_imp0": float(np.mean(control.i_minus_p(0))),
            "loop_calls": float(np.mean(control.sampling_calls())),
            "loop_rollouts": float(np.mean(control.count("physical_calls")))}
