"""A learning study's unit of work: the runs of one learner and arm on a few seeds, recorded at budgets.

A `Task` is the runs of one arm on some seeds: their game, learner name,
arm, seeds, full schedule (step size and the converging options included)
and the budgets at which they are recorded.  `run_task` trains the runs
together in one batch (a run's numbers never depend on its batch: tested),
each up to the largest budget, and records at every budget b exactly what
a run with budget b alone would end with: before each iteration that may
bring a run to b the state is kept (`Learners.snapshot`; a run that b cuts
keeps its own part of it, `Learners.run_part`); once every run has reached
b, the records are taken and, if a larger budget follows, each run's last
iteration is undone (the one b cut short) and taken again under the next
budget, so its later iterations are those of a run that never had budget b.
Each run keeps its own iteration counter, hence its own group ids (t N + k),
as it would alone.

A record per run and budget holds the exact exploitability (NashConv / 2,
chips) of the average policy (the checkpoint) and of the last iterate, the
share of information states never updated, and the run's ledger (physical
calls, transitions, decisions, groups, iterations).  A task is a pure
function of its fields: the random streams are counter-based, so tasks may
run in any order on any number of workers (`reporting.study_runner`) and
give the same bytes.  Tasks that share a game, budgets and a schedule (each
with its own step size) may also train together in one batch
(`run_tasks_together`, on any device): a GPU is busier with one batch of
many runs than with many small ones.
"""
from __future__ import annotations

from collections.abc import Sequence
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
    """The runs of one learner and arm on `seeds` (units: budgets in physical calls)."""

    game: str
    learner: str
    arm: str
    seeds: tuple
    schedule: tuple            # sorted (field, value) pairs of a `Schedule` (its budget is ignored)
    budgets: tuple             # ascending physical-call budgets at which the runs are recorded
    keep_table: bool = False   # keep each run's average policy at the largest budget (a checkpoint)

    @classmethod
    def make(cls, game: str, learner: str, arm: str, seeds, schedule: Schedule, budgets, keep_table=False):
        budgets = tuple(sorted(int(b) for b in budgets))
        if not budgets or budgets[0] < 1:
            raise ValueError(f"budgets must be positive numbers of physical calls, got {budgets!r}.")
        seeds = (int(seeds),) if isinstance(seeds, (int, np.integer)) else tuple(int(s) for s in seeds)
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"a task needs distinct seeds, got {seeds!r}.")
        fields = tuple(sorted(replace(schedule, budget=None, iterations=UNBOUNDED).as_dict().items()))
        return cls(game, learner, arm, seeds, fields, budgets, bool(keep_table))

    def record(self) -> dict:
        """The task's fields as JSON."""
        out = asdict(self)
        out["schedule"] = dict(self.schedule)
        out["budgets"], out["seeds"] = list(self.budgets), list(self.seeds)
        return out

    @property
    def batch_key(self) -> tuple:
        """What tasks must share to train in one batch: game, schedule and budgets.  The step size is not part of
        it: each run of a batch carries its own (`RunSpec.learning_rate`)."""
        return self.game, tuple(f for f in self.schedule if f[0] != "learning_rate"), self.budgets

    @property
    def learning_rate(self) -> float:
        """The runs' step size eta."""
        return dict(self.schedule)["learning_rate"]

    def digest(self, source: str) -> str:
        """SHA-256 of the task's fields and the source digest: the name its result is stored under."""
        return digest({"task": self.record(), "source": source})


def exploitability(game: str, table: np.ndarray) -> float:
    """NashConv / 2 of one policy table (chips)."""
    return nash_conv_table(sequence_form(game), table) / 2


def _mark(learners: Learners, game: str, r: int, average: np.ndarray, last: np.ndarray, never: np.ndarray) -> dict:
    row = learners.ledger.row(r)
    return {"exploitability_average": exploitability(game, average[r]),
            "exploitability_last": exploitability(game, last[r]), "never_updated": float(never[r]),
            **{f: int(row[f]) for f in LEDGER_FIELDS}}


def run_task(task: Task, device="cpu") -> dict:
    """Train the task's runs up to the largest budget: {"task", "runs": {seed: {budget: record}}, "tables"?}.

    Each budget's record is that of a run trained with that budget alone (module docstring); with
    `keep_table`, "tables" holds each run's average policy at the largest budget as a nested list [n_info][A].
    """
    return run_tasks_together([task], device)[0]


def run_tasks_together(tasks: Sequence[Task], device="cpu") -> list[dict]:
    """`run_task` of every task, their runs trained in one batch on `device` (torch device or name); the tasks
    must share their `batch_key` (each run keeps its task's step size).  Each result is the one the task gives
    alone (a run's numbers never depend on its batch)."""
    if not tasks or any(t.batch_key != tasks[0].batch_key for t in tasks):
        raise ValueError("tasks trained together must share their game, budgets and schedule (all but its step "
                         "size).")
    device = torch.device(device)
    if device.type == "cpu":
        torch.set_num_threads(1)                  # one core per task: workers run tasks side by side
    runs = [RunSpec(t.arm, s, t.learning_rate) for t in tasks for s in t.seeds]
    records, learners = _train(tasks[0], runs, device)
    out, first = [], 0
    for task in tasks:
        mine = range(first, first + len(task.seeds))
        result = {"task": task.record(), "runs": {str(s): records[r] for s, r in zip(task.seeds, mine)}}
        if task.keep_table:
            tables = learners.average_tables()
            result["tables"] = {str(s): tables[r].tolist() for s, r in zip(task.seeds, mine)}
        out.append(result)
        first += len(task.seeds)
    return out


def quiet_iterations(budget: int, physical: np.ndarray, most: np.ndarray, active: np.ndarray) -> int:
    """The largest k such that k iterations cannot bring any active run to `budget`: physical + k * most < budget
    for each (physical: its calls so far; most: the most one iteration can spend, `most_calls_per_iteration`).
    0 when one of them might reach it in the next iteration, or none is active."""
    if not active.any():
        return 0
    return max(0, int(((budget - 1 - physical[active]) // most[active]).min()))


def _train(task: Task, runs: list[RunSpec], device) -> tuple[list[dict], Learners]:
    """The runs, trained to each of the task's budgets in turn: ([{budget: record} per run], the learners).

    Only an iteration that may bring a run to the budget is snapshotted (`quiet_iterations`): the others run
    back to back, with no copy of the state and, on a GPU, no wait for the device in between."""
    base = Schedule(**dict(task.schedule))
    learners = Learners(task.game, runs, replace(base, budget=task.budgets[0]), device=device)
    n, most = base.decision_points, learners.most_calls_per_iteration()
    iterations = np.zeros(len(runs), dtype=np.int64)          # each run's own iteration counter
    out: list[dict] = [{} for _ in runs]
    for k, budget in enumerate(task.budgets):
        learners.schedule = replace(base, budget=budget)
        cut = [None] * len(runs)                              # each run's state before the iteration b cut short
        while (was := learners.active().cpu().numpy()).any():
            physical = learners.ledger.counts["physical_calls"].cpu().numpy()
            quiet = min(quiet_iterations(budget, physical, most, was), base.iterations - learners.iteration)
            if quiet > 0:
                _quiet_steps(learners, iterations, was, quiet)
                continue
            snap, before = learners.snapshot(), iterations.copy()
            learners.step(group_base=torch.as_tensor(iterations * n, device=learners.device))
            iterations[was] += 1
            for r in np.flatnonzero(was & learners.spent.cpu().numpy()):
                cut[r] = (Learners.run_part(snap, r), before[r])
        average, last, never = learners.average_tables(), learners.last_tables(), learners.coverage()
        for r in range(len(runs)):
            out[r][str(budget)] = _mark(learners, task.game, r, average, last, never)
        if k + 1 < len(task.budgets):
            for r in range(len(runs)):
                if cut[r] is not None:
                    learners.restore_run(cut[r][0], r)
                    iterations[r] = cut[r][1]
    return out, learners


def _quiet_steps(learners: Learners, iterations: np.ndarray, was: np.ndarray, count: int) -> None:
    """`count` iterations in which no run reaches its budget (the runs `was` active throughout): the group ids
    t N + k advance on the device."""
    n = learners.schedule.decision_points
    group_base = torch.as_tensor(iterations * n, device=learners.device)
    advance = torch.as_tensor(np.where(was, n, 0), device=learners.device)
    for _ in range(count):
        learners.step(group_base=group_base)
        group_base += advance
    iterations[was] += count
