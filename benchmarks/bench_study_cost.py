"""What regenerating the two learning studies would cost: one seed of every study task, timed, and the 30-seed study's
wall time extrapolated (issue 33, phase 2).

    .venv/bin/python benchmarks/bench_study_cost.py                      # the planned design and the committed one
    .venv/bin/python benchmarks/bench_study_cost.py --designs planned --batch-check 0

For each design (the committed one: the options and recorded budgets per decade its study file records; the
planned one: the fast options, 24 a decade; both at the committed multiples 1, 10, 100, 160 x 61,440 calls on Leduc and 1, 10, 100 x 61,440 on
Kuhn) it times, one task at a time on one core (as a study worker runs them):

* chapter 05's reporting runs: every learner and arm, one seed;
* chapter 05's tuning: one choice per learner and arm on the two development seeds at its tuning budget (the
  tuning runs every choice of the grid, each about as costly);
* chapter 06's reporting runs (the frozen study and the Kuhn-tuned control cost the same per run): every arm,
  one seed; and its control's tuning, one choice per arm.

A study task trains ten seeds in one batch; `--batch-check` times one such task (converging CP-GRPO) to see how a
batch's cost compares with ten single seeds.  The extrapolation: 30 seeds x each task's time per seed, plus every
tuning choice (the grid's size, and with one extension), spread over the workers; the committed design's
extrapolation beside its measured wall time (the study files' ``run.seconds``) says how far to trust it.  The
choices: the committed study's for the committed design; for the planned one, the literal learner's committed
choices and, for the converging learner, issue 33's point (eta 64, alpha 0.5, kappa 0.003) for every arm.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Schedule
from oscc_core.learning.study import Task, run_task
from oscc_core.reporting.learning_study import CONVERGING_GRIDS

ROOT = Path(__file__).resolve().parent.parent
SOLVER, TRANSFER = ROOT / "results" / "05_solver_study.json", ROOT / "results" / "06_transfer_study.json"
BUDGET, SEED, DEV = 61_440, 13, (1001, 1002)
LEDUC_MULTIPLES, KUHN_MULTIPLES = (1, 10, 100, 160), (1, 10, 100)
FAST_POINT = {"eta": 64.0, "alpha": 0.5, "kappa": 0.003}
#: The planned design's converging options and recorded budgets per decade (the committed one's are its file's).
PLANNED = ("fast", 24)


def designs() -> dict:
    """{name: (converging options, recorded budgets per decade)}: the committed study's, read from its design
    record, and the planned one."""
    d = json.loads(SOLVER.read_text())["design"]
    return {"committed": (d.get("converging_options", design.DEFAULT_OPTIONS),
                          d.get("curve_per_decade", design.DEFAULT_PER_DECADE)), "planned": PLANNED}


def choices_of(name: str) -> dict:
    """The committed study's choices, or for the planned design its literal choices and `FAST_POINT` for every
    converging arm."""
    committed = json.loads(SOLVER.read_text())["choices"]
    if name == "committed":
        return committed
    return {"literal": committed["literal"], "converging": {arm: dict(FAST_POINT) for arm in design.ARMS}}


def timed(task: Task) -> float:
    start = time.perf_counter()
    run_task(task)
    return time.perf_counter() - start


def reporting_seconds(game: str, name: str, options: str, per_decade: int, multiples, learners) -> dict:
    """{(learner, arm): seconds of one seed} for the tasks of the design `name`."""
    base = design.with_options(Schedule(**json.loads(SOLVER.read_text())["design"]["base"]), options)
    choices = {learner: arms for learner, arms in choices_of(name).items() if learner in learners}
    out = {}
    for task in design.study_tasks(game, choices, base, (SEED,), BUDGET, multiples, per_decade=per_decade):
        out[(task.learner, task.arm)] = timed(task)
        print(f"  {game} {task.learner} {task.arm}: {out[(task.learner, task.arm)]:.1f} s "
              f"({len(task.budgets)} recorded budgets up to {max(task.budgets):,})", flush=True)
    return out


def tuning_seconds(game: str, options: str, learners) -> dict:
    """{(learner, arm): seconds of one tuning choice} (the grid's first, on both development seeds)."""
    base = design.with_options(Schedule(**json.loads(SOLVER.read_text())["design"]["base"]), options)
    grids = {"literal": design.Grid(eta=(4.0,)), "converging": CONVERGING_GRIDS[options]}
    budgets = {"literal": BUDGET, "converging": 10 * BUDGET}
    out = {}
    for learner in learners:
        g = grids[learner]
        for arm in design.ARMS:
            c = dict(zip(("eta", "alpha", "kappa"), g.combos()[len(g.combos()) // 2]))   # a middle choice
            task = design.tuning_tasks(game, learner, arm, base, design.Grid(eta=(c["eta"],), alpha=(c["alpha"],),
                                                                            kappa=(c["kappa"],)), DEV,
                                       budgets[learner])[0]
            out[(learner, arm)] = timed(task)
            print(f"  tuning {game} {learner} {arm}: {out[(learner, arm)]:.1f} s per choice", flush=True)
    return out


def grid_sizes(name: str, options: str, game: str) -> dict:
    """{(learner, arm): (choices tried without an extension, with one)}: the committed design's as its tuning
    record says (the Leduc study's, or the Kuhn control's), the planned one's from its starting grid."""
    if name == "committed":
        body = json.loads((SOLVER if game == "leduc" else TRANSFER).read_text())
        tuning = body["tuning"] if game == "leduc" else {"converging": body["kuhn_tuned"]["tuning"]}
        return {(ln, a): (len(t["grid"]), len(t["grid"])) for ln, arms in tuning.items() for a, t in arms.items()}
    literal = {("literal", a): (7, 8) for a in design.ARMS}            # 7 etas, one more at an edge
    g = CONVERGING_GRIDS[options]
    base, more = len(g.combos()), (len(g.eta) + 1) * len(g.alpha) * len(g.kappa)
    conv = {("converging", a): (base, more) for a in design.ARMS}
    return {**(literal if game == "leduc" else {}), **conv}


def extrapolate(runs: dict, tunes: dict, sizes: dict, seeds: int, workers: int, batch: float) -> tuple:
    """(low, high) wall seconds: `seeds` x each run's time x `batch`, plus every tuning choice, over `workers`."""
    reporting = sum(runs.values()) * seeds * batch
    low = reporting + sum(tunes[k] * sizes[k][0] for k in tunes)
    high = reporting + sum(tunes[k] * sizes[k][1] for k in tunes)
    return low / workers, high / workers


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--designs", default="committed,planned")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-check", type=int, default=1, help="time one ten-seed task (1) or not (0)")
    args = ap.parse_args(argv)
    batch = 1.0
    if args.batch_check:
        base = design.with_options(Schedule(**json.loads(SOLVER.read_text())["design"]["base"]), "fast")
        sched = design.learner_schedule("converging", base, **FAST_POINT)
        budgets = design.curve_budgets(BUDGET, LEDUC_MULTIPLES, 24)
        ten = timed(Task.make("leduc", "converging", "cp_grpo", tuple(range(SEED, SEED + 10)), sched, budgets))
        one = timed(Task.make("leduc", "converging", "cp_grpo", (SEED,), sched, budgets))
        batch = ten / (10 * one)
        print(f"batch: ten seeds {ten:.1f} s, one seed {one:.1f} s: a batched seed costs {batch:.2f} of one alone")
    measured = {"leduc": json.loads(SOLVER.read_text())["run"]["seconds"],
                "kuhn": json.loads(TRANSFER.read_text())["run"]["seconds"]}
    for name in args.designs.split(","):
        options, per_decade = designs()[name]
        print(f"{name} design: converging options {options!r}, {per_decade} recorded budgets per decade", flush=True)
        for game, multiples, learners, runs_per_seed in (("leduc", LEDUC_MULTIPLES, design.LEARNERS, 1),
                                                         ("kuhn", KUHN_MULTIPLES, ("converging",), 2)):
            runs = reporting_seconds(game, name, options, per_decade, multiples, learners)
            runs = {k: v * runs_per_seed for k, v in runs.items()}        # Kuhn: the frozen study and the control
            tunes = tuning_seconds(game, options, learners)
            low, high = extrapolate(runs, tunes, grid_sizes(name, options, game), args.seeds, args.workers, batch)
            beside = f" (measured: {measured[game] / 60:.0f} min)" if name == "committed" else ""
            print(f"{name} {game} study, {args.seeds} seeds on {args.workers} workers: about {low / 60:.0f} to "
                  f"{high / 60:.0f} min{beside}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
