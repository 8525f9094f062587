"""The transfer chapter's runs: the operating point fixed on Leduc, then Leduc and Kuhn trained with it.

Each learned arm's step size is chosen on Leduc's development seeds by the
solver chapter's rule (`reporting.learning_study.literal_step_sizes`: the
grid value with the lowest mean exploitability of the arm's average policy at
the matched budget, the grid extended at an edge; the runs are tasks on Dask);
the operating point is built and hashed before any Kuhn run, and every run
below only reads it: each at its arm's step size (`OperatingPoint.runs`).  Per run the
records hold the exact evaluation of its average policy at T, the update
and contrast variances, the quantities behind the other readings of the
paper's numbers (`readings.run_quantities`), and the leakage audit of its
checkpoint.
"""
from __future__ import annotations


import numpy as np

from oscc_core.chapters.transfer import readings
from oscc_core.learning import checkpoints, summary
from oscc_core.learning.operating_point import OperatingPoint, operating_point
from oscc_core.learning.runs import exploitabilities, train
from oscc_core.learning.update_variance import update_variances, update_variances_by_eta
from oscc_core.reporting.learning_study import literal_step_sizes

LEDUC_ARMS = ("cp_grpo", "independent")
KUHN_ARMS = ("cp_grpo", "independent", "grpo", "ppo")
CHECKPOINTS = "06_transfer_checkpoints.json.gz"


def fix_operating_point(p, store, scheduler: str | None = None) -> tuple[OperatingPoint, dict]:
    """Choose eta per learned arm on Leduc's development seeds (runs kept in `store`, a directory, and sent to the
    Dask cluster at `scheduler`, or to `p.scheduler`'s, or to a local one of `p.workers`) and freeze the operating
    point (before any Kuhn run).  Returns it and the choice: {"etas": {arm: eta}, "tuning": {arm: the scores of the
    grid}, "given": whether `p.learning_rate` overrode every arm's choice}."""
    choice = literal_step_sizes(p.source_game, p.eta_grid, p.dev_seeds, p.base_schedule(), p.budget, store,
                                p.workers, scheduler or p.scheduler or None, p.learning_rate, p.torch_device)
    return literal_operating_point(p, choice["etas"]), choice


def literal_operating_point(p, etas: dict) -> OperatingPoint:
    """The literal learner's operating point at the per-arm step sizes `etas` ({arm: eta}): the solver chapter's
    `operating_point(p, etas)` on the source game."""
    return operating_point(p, etas, p.source_game)


def train_game(p, op: OperatingPoint, game: str, arms, progress: bool = False):
    """Every (arm, seed) of `game` trained with the frozen operating point's schedule, each arm at its own eta."""
    return train(game, op.runs(arms, p.seeds), op.schedule, p.torch_device, progress=progress)


def game_records(p, op: OperatingPoint, game: str, batch, root: str, leakage) -> dict:
    """{arm: {seed: record}} of one game's runs; `leakage(game, table)` audits a checkpoint (a dict of counts)."""
    evaluations = summary.evaluate_runs(game, batch.average, dict(op.evaluation)["opponent"])
    last = exploitabilities(game, batch.last)
    update = update_variances(game, batch.runs, batch.learners.logits, batch.learners.values, op.schedule,
                              p.update_replicates, p.torch_device)
    contrast = summary.contrast_variances(game, root, batch.runs, batch.average, p.contrast_groups, p.device)
    records = summary.run_records(batch, evaluations, last, update, contrast)
    for r, run in enumerate(batch.runs):
        record = records[run.arm][str(run.seed)]
        record.update(readings.run_quantities(game, run.arm, batch.average[r], evaluations[r], root))
        record["leakage"] = leakage(game, batch.average[r])
    return records


def update_by_eta(p, game: str, batch) -> dict[float, dict]:
    """{eta: {arm: {seed: {"update_variance": v}}}}: every run of `game`'s batch measured at each step size of
    `p.eta_grid` from the state it trained to (`learning.update_variance.update_variances_by_eta`), as the solver
    chapter reads the same Leduc checkpoints."""
    return update_variances_by_eta(game, batch.runs, batch.learners.logits, batch.learners.values, p.schedule,
                                   p.eta_grid, p.update_replicates, p.torch_device)


def variance_ratios(records: dict, arm: str, key: str = "contrast_variance_exact") -> np.ndarray:
    """Per seed (in the arm's seed order): its exact contrast variance (record `key`: at the chapter's root, or
    "contrast_pooled", pooled over every decision point) over the independent arm's on the same seed (unitless);
    seeds are matched by name."""
    independent = records["independent"]
    return np.array([rec[key] / independent[seed][key] for seed, rec in records[arm].items()])


def save(p, batches: dict) -> dict:
    """Save every checkpoint keyed "<game>/<arm>/<seed>" and recompute each exploitability with pyspiel."""
    tables = {f"{game}/{run.key}": (game, batch.average[r]) for game, batch in batches.items()
              for r, run in enumerate(batch.runs)}
    path = checkpoints.save_checkpoints(p.out_dir / CHECKPOINTS, tables)
    ours = {key: float(exploitabilities(game, table[None])[0]) for key, (game, table) in tables.items()}
    return checkpoints.openspiel_check(path, ours, lambda key: key.split("/")[0])
