"""The Kuhn-tuned control: the converging learner with its per-arm choices made on Kuhn itself.

The transfer study (`study`) freezes the converging learner's eta, alpha and
kappa on Leduc and applies them unchanged to Kuhn.  Where that study
plateaus, the cause can be the transfer (choices that suit Leduc and not
Kuhn) or the learner (no choice of the rule converges on Kuhn).  The control
separates the two: the same learner, its choices made by the rule that froze
the operating point (`rule_of`: the Leduc study's development seeds, the
tuning budget's multiple, the starting grids and how they grow;
`reporting.learning_study.LearningStudy.tune`, which is
`learning.study_design.tune`, the one rule of both chapters), applied to
Kuhn: its development seeds are the rule's seed numbers drawn on Kuhn
(disjoint from the reporting seeds, or the design refuses them), the tuning
budget the rule's multiple of the chapter's budget.  Then every arm runs at
its Kuhn choices on the frozen study's reporting seeds and budgets, so the
two studies are paired by seed.

Its record (key ``kuhn_tuned`` of the transfer study's file) has the frozen
study's shape with the tuning beside it: ``design`` (with the rule's dev
seeds, grids and tuning multiple), ``tuning.<arm>`` (every score tried),
``choices.<arm>``, ``runs.<arm>.<seed>.<budget>``, ``summary.<budget>``,
``thresholds.<arm>``, and, for a study run whole since issue 33, ``checkpoints``
(pyspiel's recheck of its checkpoints file, `check_checkpoints`).  Units: exploitability in chips, budgets in physical
calls.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from oscc_core.learning import checkpoints
from oscc_core.learning import study_design as design
from oscc_core.learning.operating_point import OperatingPoint
from oscc_core.reporting.learning_study import LearningStudy
from oscc_core.reporting.results import clean
from oscc_core.reporting.study_runner import run_tasks

KEY = "kuhn_tuned"
LEARNER = design.CONVERGING
CHOICE_FIELDS = ("eta", "alpha", "kappa")
#: The control's checkpoints (keys "kuhn_tuned/<arm>/<seed>"), beside the frozen study's file; the studies committed
#: before issue 33 have none (the chapter says so).
CHECKPOINTS_FILE = "06_transfer_study_control_checkpoints.json.gz"


def rule_of(op: OperatingPoint) -> dict:
    """The rule that made the frozen operating point's choices on Leduc: {dev_seeds, budget, tune_multiples,
    grids} and, away from their defaults, converging_options and curve_per_decade (`study.leduc_choices`), as the
    operating point holds it."""
    return dict(op.step_size_rule)


def grid_of(rule: dict) -> design.Grid:
    """The converging learner's starting grid of the rule (its eta, alpha and kappa values, max extensions)."""
    g = rule["grids"][LEARNER]
    return design.Grid(eta=tuple(g["eta"]), alpha=tuple(g["alpha"]), kappa=tuple(g["kappa"]),
                       max_extensions=int(g["max_extensions"]))


def control_design(frozen: LearningStudy, rule: dict) -> LearningStudy:
    """The control's study: the frozen Kuhn study's game, budgets, reporting seeds and thresholds, with the rule's
    development seeds, tuning multiple and converging grid (a ValueError when the rule's development seeds meet the
    reporting seeds)."""
    return replace(frozen, dev_seeds=tuple(int(s) for s in rule["dev_seeds"]),
                   tune_multiples=((LEARNER, int(rule["tune_multiples"][LEARNER])),),
                   grids=((LEARNER, grid_of(rule)),))


def tune(control: LearningStudy, run) -> dict:
    """{arm: tuning record} of the converging learner on the control's development seeds at its tuning budget;
    `run(tasks) -> results` runs the tuning tasks (`LearningStudy.tune`)."""
    return control.tune(None, learners=(LEARNER,), run=run)[LEARNER]


def choices_of(tuning: dict) -> dict:
    """{arm: {eta, alpha, kappa}} of a tuning."""
    return {arm: {k: t[k] for k in CHOICE_FIELDS} for arm, t in tuning.items()}


def reshape(study: dict, tuning: dict | None) -> dict:
    """A LearningStudy record of the converging learner without its learner level, the tuning beside."""
    return clean({"design": study["design"], "tuning": tuning, "choices": study["choices"][LEARNER],
                  "runs": study["runs"][LEARNER], "summary": study["summary"][LEARNER],
                  "thresholds": study["thresholds"][LEARNER]})


def run(control: LearningStudy, store, workers: int, scheduler: str | None, choices: dict | None = None,
        device="cpu") -> dict:
    """Tune on the development seeds (unless `choices`, {arm: {eta, alpha, kappa}}, are given: a live rerun), then
    run the reporting seeds at the choices.  Returns {"study": the control's record, "ran", "stored": tasks run
    now and read back from `store`, tuning included}."""
    counts = {"ran": 0, "stored": 0}

    def counted(tasks):
        done = run_tasks(tasks, store, workers, scheduler, device=device)
        counts["ran"], counts["stored"] = counts["ran"] + done["ran"], counts["stored"] + done["stored"]
        return done["results"]

    tuning = None
    if choices is None:
        tuning = tune(control, counted)
        choices = choices_of(tuning)
    done = control.run(store, {LEARNER: choices}, workers, scheduler, device)
    return {"study": reshape(done["study"], tuning), "tables": done["tables"], "ran": counts["ran"] + done["ran"],
            "stored": counts["stored"] + done["stored"]}


# ----- the control's checkpoints, rechecked by pyspiel ------------------------------------------------
def save_checkpoints(out_dir, game: str, tables: dict) -> Path:
    """Each control run's average policy at the largest budget (`tables`: {"converging/<arm>/<seed>": table}, the
    study's) as "kuhn_tuned/<arm>/<seed>" in `CHECKPOINTS_FILE` under `out_dir`; returns the path."""
    kept = {f"{KEY}/{key.split('/', 1)[1]}": (game, table) for key, table in tables.items()
            if key.startswith(f"{LEARNER}/")}
    return checkpoints.save_checkpoints(Path(out_dir) / CHECKPOINTS_FILE, kept)


def check_checkpoints(control: dict, path, game: str, tolerance: float) -> dict | None:
    """pyspiel's exploitability of every control checkpoint in `path` beside the control's own value at its largest
    budget (chips): {file, ours, pyspiel, max_abs_difference, missing (runs without a checkpoint), agrees (none
    missing, every difference within `tolerance`)}; None when `path` is None (no checkpoints were kept)."""
    if path is None:
        return None
    top = str(max(int(b) for b in control["design"]["recorded_budgets"]))
    ours = {f"{KEY}/{arm}/{seed}": runs[top]["exploitability_average"]
            for arm, seeds in control["runs"].items() for seed, runs in seeds.items() if top in runs}
    saved = checkpoints.load_checkpoints(path)
    missing = sorted(set(ours) - set(saved))
    # A key the study does not know is a file of another study: compare nothing rather than guess.
    strangers = sorted(set(saved) - set(ours))
    if strangers:
        raise ValueError(f"{Path(path).name} holds checkpoints the control did not run: {strangers[:3]}.")
    check = checkpoints.openspiel_check(path, {k: v for k, v in ours.items() if k in saved}, lambda key: game) \
        if saved else {"file": Path(path).name, "ours": {}, "pyspiel": {}, "max_abs_difference": None}
    difference = check["max_abs_difference"]
    return clean({**check, "missing": missing,
                  "agrees": not missing and difference is not None and difference <= tolerance})


# ----- the control beside the frozen study --------------------------------------------------------
def paired_difference(frozen: dict, tuned: dict, arm: str, budget: int) -> dict:
    """Frozen minus Kuhn-tuned exploitability of the arm's average policy at `budget` (chips), seeds matched: the
    mean, its 95% t-interval, n and the seeds on which the tuned control is lower."""
    from oscc_core.method.stats import t_interval

    key, a, b = str(int(budget)), frozen["runs"][arm], tuned["runs"][arm]
    d = np.array([a[s][key]["exploitability_average"] - b[s][key]["exploitability_average"] for s in a if s in b])
    iv = t_interval(d)
    return {"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n, "tuned_lower": int((d > 0).sum())}


def decade_rate(study: dict, arm: str) -> float | None:
    """The exponent r of exploitability ~ calls^-r between the study's two largest budgets, from the seed means of
    the average policy's exploitability (0: flat; a no-regret average falling as 1/sqrt(calls) has r = 1/2); None
    for a study of one budget."""
    budgets = sorted(int(b) for b in study["design"]["budgets"])
    if len(budgets) < 2:
        return None
    b0, b1 = budgets[-2:]
    e0, e1 = (study["summary"][str(b)]["arms"][arm]["exploitability_average"]["mean"] for b in (b0, b1))
    return math.log(e0 / e1) / math.log(b1 / b0)
