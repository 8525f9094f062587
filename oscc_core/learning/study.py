"""A learning study: independent (learner, arm, seed) runs, each recorded at budgets of physical calls.

A `Task` is one run: its game, learner name, arm, seed, full schedule
(step size and the converging options included) and the budgets at which it
is recorded.  `run_task` trains it once, up to its largest budget, and
records at every budget b exactly what a run with budget b would end with:
before each iteration the state is kept (`Learners.snapshot`); when the run
reaches b, the record is taken and, if a larger budget follows, the last
iteration is undone and taken again under the next budget, so the run's
later iterations are those of a run that never had budget b.

A record per budget holds the exact exploitability (NashConv / 2, chips) of
the average policy (the checkpoint) and of the last iterate, the share of
information states never updated, the iterations and the run's ledger
(physical calls, transitions, decisions).  A task is a pure function of its
fields: the random streams are counter-based, so tasks may run in any order
on any number of workers (`reporting.study_runner`) and give the same bytes.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from oscc_core.digest import digest
from oscc_core.exact.exploitability import nash_conv_table
from oscc_core.exact.sequence_form import sequence_form
from oscc_core.learning.loop import Learners, RunSpec, Schedule

#: The iteration cap of a study run: never binding, the budgets stop it.
UNBOUNDED = 2 ** 62
#: The ledger fields a record keeps.
LEDGER_FIELDS = ("physical_calls", "transitions", "decisions", "groups", "iterations")


@dataclass(frozen=True)
class Task:
    """One run of a study (units: budgets in physical calls)."""

    game: str
    learner: str
    arm: str
    seed: int
    schedule: tuple            # sorted (field, value) pairs of a `Schedule` (its budget is ignored)
    budgets: tuple             # ascending physical-call budgets at which the run is recorded
    keep_table: bool = False   # keep the average policy at the largest budget (a checkpoint)

    @classmethod
    def make(cls, game: str, learner: str, arm: str, seed: int, schedule: Schedule, budgets, keep_table=False):
        budgets = tuple(sorted(int(b) for b in budgets))
        if not budgets or budgets[0] < 1:
            raise ValueError(f"budgets must be positive numbers of physical calls, got {budgets!r}.")
        fields = tuple(sorted(replace(schedule, budget=None, iterations=UNBOUNDED).as_dict().items()))
        return cls(game, learner, arm, int(seed), fields, budgets, bool(keep_table))

    @property
    def key(self) -> str:
        return f"{self.learner}/{self.arm}/{self.seed}"

    def record(self) -> dict:
        """The task's fields as JSON."""
        out = asdict(self)
        out["schedule"] = dict(self.schedule)
        out["budgets"] = list(self.budgets)
        return out

    def digest(self, source: str) -> str:
        """SHA-256 of the task's fields and the library's source digest: the name its result is stored under."""
        return digest({"task": self.record(), "source": source})


def exploitability(game: str, table: np.ndarray) -> float:
    """NashConv / 2 of one policy table (chips)."""
    return nash_conv_table(sequence_form(game), table) / 2


def _mark(learners: Learners, game: str) -> dict:
    row = learners.ledger.row(0)
    return {"exploitability_average": exploitability(game, learners.average_tables()[0]),
            "exploitability_last": exploitability(game, learners.last_tables()[0]),
            "never_updated": float(learners.coverage()[0]),
            **{f: int(row[f]) for f in LEDGER_FIELDS}}


def run_task(task: Task) -> dict:
    """Train the task's run up to its largest budget; {"task", "budgets": {budget: record}, "table"?}.

    Each budget's record is that of a run trained with that budget alone (module docstring); with
    `keep_table`, the average policy at the largest budget as a nested list [n_info][A].
    """
    torch.set_num_threads(1)                      # one core per task: workers run tasks side by side
    base = Schedule(**dict(task.schedule))
    learners = Learners(task.game, [RunSpec(task.arm, task.seed)], replace(base, budget=task.budgets[0]))
    marks, out = list(task.budgets), {}
    while marks:
        budget = marks[0]
        learners.schedule = replace(base, budget=budget)
        learners.spent[:] = False
        snap = None
        while bool(learners.active().any()):
            snap = learners.snapshot()
            learners.step()
        out[budget] = _mark(learners, task.game)
        marks.pop(0)
        if marks and snap is not None:
            learners.restore(snap)                # undo the iteration the budget cut short
    result = {"task": task.record(), "budgets": {str(b): out[b] for b in task.budgets}}
    if task.keep_table:
        result["table"] = learners.average_tables()[0].tolist()
    return result
