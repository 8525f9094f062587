"""The design of a learning study and what it shows: learners, budgets, tasks, fair tuning, summaries.

A study runs the two learners, literal (the paper's iteration) and
converging (counterfactual decision points and a proximal pull, our
additions), on every learned arm and seed; each run is a `study.Task`.  The
step sizes (and, for the converging learner, alpha and kappa) are chosen per
arm on development seeds (`tune`), on a grid extended while the choice sits
at its edge.  `summary` turns the runs into means and 95% intervals over
seeds per budget, paired differences against CP-GRPO and the calls each arm
needs to reach an exploitability threshold.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from oscc_core.learning.calls_rules import calls_over_seeds, crossing
from oscc_core.learning.loop import LATER_DEFAULTS, Schedule
from oscc_core.learning.study import Task
from oscc_core.method.stats import t_interval

LITERAL, CONVERGING = "literal", "converging"
LEARNERS = (LITERAL, CONVERGING)
#: The learned arms, CP-GRPO first (the uniform policy needs no run: its exploitability is a constant).
ARMS = ("cp_grpo", "independent", "grpo", "ppo")
#: Arms the literal learner runs beyond `LITERAL_FULL_UP_TO` times the base budget (it has stalled by then).
LITERAL_LONG_ARMS = ("cp_grpo", "independent")
LITERAL_FULL_UP_TO = 10


def curve_budgets(base: int, multiples, per_decade: int = 4) -> tuple[int, ...]:
    """The budgets a run is recorded at: `base` x each multiple, and `per_decade` log-spaced budgets per decade
    from base / 10 up to the largest (for the curves and the calls-to-threshold), as integers (calls)."""
    top = base * max(multiples)
    decades = np.log10(top / (base / 10))
    grid = np.round(np.logspace(np.log10(base / 10), np.log10(top), int(round(decades * per_decade)) + 1))
    return tuple(sorted({int(base * m) for m in multiples} | {int(g) for g in grid}))


#: The converging learner's later options, measured on development seeds (benchmarks/learner_ideas.md): a
#: history baseline, an annealed pull and the average weighted by t^2.  A study's base schedule carrying them gives
#: them to its converging learner; its literal learner never takes them.
FAST_OPTIONS = {"baseline": "history", "baseline_floor": 0.5, "alpha_decay": "inverse_sqrt", "alpha_horizon": 30.0,
                "average_power": 2}
#: The converging learner that keeps converging (issue 38; benchmarks/learner_ideas.md, part 2): the history baseline
#: of the fast options with a *constant* pull (the annealed pull let the last iterate drift away from equilibrium
#: once alpha_t had decayed, and the average followed it up) and the average weighted by t + 1 (the (t + 1)^2
#: average chased the drifting iterates; weighting by t + 1 ends lower on the development seeds).
STEADY_OPTIONS = {"baseline": "history", "baseline_floor": 0.5, "average_power": 1}
#: The named option sets a study's converging learner may take (the solver chapter's `converging_options`):
#: "none" is the converging learner without them (the library's default: a study run without naming a set keeps
#: its design record and store keys unchanged), "fast" adds issue 33's options, "steady" issue 38's (the committed
#: studies run with "steady").
CONVERGING_OPTIONS = {"none": {}, "fast": FAST_OPTIONS, "steady": STEADY_OPTIONS}
DEFAULT_OPTIONS = "none"
#: Recorded budgets per decade by default (`curve_budgets`; neighbours about 1.78 apart; the committed studies
#: record 24 a decade, neighbours about 10% apart).
DEFAULT_PER_DECADE = 4


def with_options(base: Schedule, name: str) -> Schedule:
    """`base` carrying the named option set of `CONVERGING_OPTIONS` (its converging learner takes them; the
    literal learner drops them, `learner_schedule`)."""
    if name not in CONVERGING_OPTIONS:
        raise ValueError(f"converging options must be one of {', '.join(CONVERGING_OPTIONS)}, got {name!r}.")
    return replace(base, **{**LATER_DEFAULTS, **CONVERGING_OPTIONS[name]})


def learner_schedule(learner: str, base: Schedule, eta: float, alpha: float = 0.0, kappa: float = 0.0) -> Schedule:
    """The schedule of one learner at one arm's choices: literal is the paper's iteration (on-policy decision
    points, no pull, none of the later options of `loop.LATER_DEFAULTS`); converging draws decision points from the
    counterfactual law and pulls toward a magnet, with the later options `base` carries (none by default)."""
    if learner == LITERAL:
        return replace(base, learning_rate=float(eta), decision_law="on_policy", proximal_alpha=0.0,
                       proximal_kappa=0.0, **LATER_DEFAULTS)
    if learner == CONVERGING:
        return replace(base, learning_rate=float(eta), decision_law="counterfactual", proximal_alpha=float(alpha),
                       proximal_kappa=float(kappa))
    raise ValueError(f"learner must be one of {', '.join(LEARNERS)}, got {learner!r}.")


def chunks(seeds, size: int) -> list[tuple]:
    """`seeds` in consecutive groups of at most `size` (a task trains one group in one batch)."""
    seeds = tuple(seeds)
    return [seeds[i:i + size] for i in range(0, len(seeds), size)]


def study_tasks(game: str, choices: dict, base: Schedule, seeds, budget: int, multiples,
                keep_tables: bool = True, runs_per_task: int = 10, per_decade: int = DEFAULT_PER_DECADE
                ) -> list[Task]:
    """Every run of a study: each learner of `choices` ({learner: {arm: {"eta", "alpha", "kappa"}}}), each arm,
    each seed (`runs_per_task` seeds to a task), recorded at `curve_budgets(budget, multiples, per_decade)`; the literal
    learner's grpo and ppo stop at `LITERAL_FULL_UP_TO` x budget.  The converging runs keep their checkpoint at
    the largest budget."""
    out = []
    for learner, arms in choices.items():
        for arm, c in arms.items():
            cap = multiples if learner == CONVERGING or arm in LITERAL_LONG_ARMS else \
                [m for m in multiples if m <= LITERAL_FULL_UP_TO]
            schedule = learner_schedule(learner, base, c["eta"], c.get("alpha", 0.0), c.get("kappa", 0.0))
            for group in chunks(seeds, runs_per_task):
                out.append(Task.make(game, learner, arm, group, schedule, curve_budgets(budget, cap, per_decade),
                                     keep_table=keep_tables and learner == CONVERGING))
    return out


# ----- the coupling question as a 2 x 2 -----------------------------------------------------------------------
#: The coupling of the 2 x 2: CP-GRPO against independent sampling (the reference first).
GRID_ARMS = ("cp_grpo", "independent")
#: Its other factor: the history baseline on (the options' own) or off.
GRID_BASELINES = ("history", "none")
#: The learner label of the 2 x 2's tasks (their store keys differ from the study's own runs).
GRID_LEARNER = "coupling-grid"


def grid_bases(base: Schedule) -> dict[str, Schedule]:
    """{baseline: `base` with the history baseline on or off} (empty when `base` carries no baseline: the 2 x 2 is
    a question about the baseline's options, and a study without them has none to switch)."""
    if base.baseline == "none":
        return {}
    return {"history": replace(base, baseline="history"), "none": replace(base, baseline="none")}


def coupling_grid_tasks(game: str, choices: dict, base: Schedule, seeds, budget: int, multiples,
                        runs_per_task: int = 10, per_decade: int = DEFAULT_PER_DECADE) -> dict[tuple, list[Task]]:
    """{(owner, baseline): tasks}: both arms of `GRID_ARMS` at the converging choice of `owner` (each arm of
    `GRID_ARMS` in turn; `choices`: {arm: {"eta", "alpha", "kappa"}}), with the history baseline on and off, on
    every seed, recorded at the study's budgets (`curve_budgets`).  Every other hyperparameter is `base`'s."""
    out = {}
    budgets = curve_budgets(budget, multiples, per_decade)
    for owner in GRID_ARMS:
        c = choices[owner]
        for baseline, grid_base in grid_bases(base).items():
            schedule = learner_schedule(CONVERGING, grid_base, c["eta"], c.get("alpha", 0.0), c.get("kappa", 0.0))
            out[(owner, baseline)] = [Task.make(game, GRID_LEARNER, arm, group, schedule, budgets)
                                      for arm in GRID_ARMS for group in chunks(seeds, runs_per_task)]
    return out


def coupling_grid_record(choices: dict, base: Schedule, results: dict[tuple, list[dict]]) -> dict:
    """The 2 x 2 as stored in a study file: {"arms", "baselines", "cells": {owner: {baseline: {"choice", "base",
    "runs": {arm: {seed: {budget: record}}}}}}} from each cell's task results."""
    bases = grid_bases(base)
    cells: dict = {}
    for (owner, baseline), done in results.items():
        cells.setdefault(owner, {})[baseline] = {
            "choice": {k: choices[owner][k] for k in ("eta", "alpha", "kappa")},
            "base": bases[baseline].as_dict(), "runs": runs_table(done)[GRID_LEARNER]}
    return {"arms": list(GRID_ARMS), "baselines": list(GRID_BASELINES), "cells": cells}


# ----- fair tuning on development seeds ---------------------------------------------------------------------
@dataclass(frozen=True)
class Grid:
    """Candidate values of each hyperparameter (eta for every learner; alpha and kappa for the converging one).
    A choice at the edge of a grid that can grow extends it, in both directions: eta doubles past its largest
    value and halves below its smallest; alpha doubles past its largest value and halves below its smallest
    positive one; kappa grows fourfold toward its cap 1 and shrinks fourfold below its smallest positive value; up
    to `max_extensions` times.  A value of 0 (the pull or the magnet switched off) is an edge that cannot grow
    (`at_edge_that_cannot_grow`)."""

    eta: tuple
    alpha: tuple = (0.0,)
    kappa: tuple = (0.0,)
    max_extensions: int = 4

    def combos(self):
        return [(e, a, k) for e in self.eta for a in self.alpha for k in self.kappa]

    def extended(self, best: tuple) -> "Grid | None":
        """The grid grown past each edge the best choice sits on, or None when it sits inside every grid (or only
        at an edge that cannot grow)."""
        eta, alpha, kappa = best
        grown = {}
        if eta == max(self.eta):
            grown["eta"] = self.eta + (2 * eta,)
        elif eta == min(self.eta):
            grown["eta"] = (eta / 2,) + self.eta
        if len(self.alpha) > 1 and alpha > 0:
            if alpha == max(self.alpha):
                grown["alpha"] = self.alpha + (2 * alpha,)
            elif alpha == min(self.alpha):
                grown["alpha"] = (alpha / 2,) + self.alpha
        if len(self.kappa) > 1 and 0 < kappa:
            if kappa == max(self.kappa) and kappa < 1:
                grown["kappa"] = self.kappa + (min(1.0, 4 * kappa),)
            elif kappa == min(self.kappa):
                grown["kappa"] = (kappa / 4,) + self.kappa
        return replace(self, **grown) if grown else None

    def at_edge_that_cannot_grow(self, best: tuple) -> tuple[str, ...]:
        """The hyperparameters whose choice sits at an end of its grid that the grid cannot extend past: alpha or
        kappa at 0 (switched off) with larger values tried, or kappa at its cap 1."""
        _, alpha, kappa = best
        out = []
        if len(self.alpha) > 1 and alpha == 0:
            out.append("alpha")
        if len(self.kappa) > 1 and (kappa == 0 or kappa == 1):
            out.append("kappa")
        return tuple(out)


def tuning_tasks(game: str, learner: str, arm: str, base: Schedule, grid: Grid, dev_seeds, budget: int
                 ) -> list[Task]:
    """One task per choice (its development seeds in one batch), recorded at `budget` only."""
    return [Task.make(game, f"tune-{learner}", arm, dev_seeds, learner_schedule(learner, base, e, a, k), [budget])
            for e, a, k in grid.combos()]


def scores(results: list[dict], budget: int) -> dict[tuple, float]:
    """{(eta, alpha, kappa): mean exploitability of the average policy over the development seeds at `budget`}."""
    out: dict[tuple, list] = {}
    for r in results:
        s = r["task"]["schedule"]
        out.setdefault((s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]), []).extend(
            rec[str(budget)]["exploitability_average"] for rec in r["runs"].values())
    return {k: float(np.mean(v)) for k, v in out.items()}


def best(score: dict[tuple, float]) -> tuple:
    """The choice with the lowest score; ties go to the smaller eta, then alpha, then kappa."""
    return min(score, key=lambda c: (score[c], c))


def tune(run, game: str, learner: str, arm: str, base: Schedule, grid: Grid, dev_seeds, budget: int) -> dict:
    """Choose (eta, alpha, kappa) for one learner and arm on `dev_seeds` at `budget`, extending the grid while the
    choice sits at its edge; `run(tasks) -> results` runs tasks (`reporting.study_runner`).  Returns the choice,
    every score (the grid as finally searched) and the number of extensions."""
    extensions, score = 0, {}
    while True:
        todo = [c for c in grid.combos() if c not in score]
        score.update(scores(run([t for t in tuning_tasks(game, learner, arm, base, grid, dev_seeds, budget)
                                 if (dict(t.schedule)["learning_rate"], dict(t.schedule)["proximal_alpha"],
                                     dict(t.schedule)["proximal_kappa"]) in todo]), budget))
        choice = best(score)
        grown = grid.extended(choice) if extensions < grid.max_extensions else None
        if grown is None:
            break
        grid, extensions = grown, extensions + 1
    eta, alpha, kappa = choice
    return {"eta": eta, "alpha": alpha, "kappa": kappa, "score": score[choice], "extensions": extensions,
            "at_edge": grid.extended(choice) is not None,
            "grid": [{"eta": e, "alpha": a, "kappa": k, "score": v} for (e, a, k), v in sorted(score.items())]}


# ----- what a study shows ------------------------------------------------------------------------------------
def runs_table(results: list[dict]) -> dict:
    """{learner: {arm: {seed: {budget: record}}}} of the study's results (budgets as integer-valued strings)."""
    out: dict = {}
    for r in results:
        t = r["task"]
        out.setdefault(t["learner"], {}).setdefault(t["arm"], {}).update(r["runs"])
    return out


def calls_to(curve: dict, threshold: float) -> float | None:
    """The physical calls at which a run's average-policy exploitability first falls to `threshold` (chips),
    interpolated linearly in log calls and log exploitability between the two recorded budgets around the
    crossing; None when it never does within the recorded budgets (`calls_rules.crossing`, the study's rule)."""
    found = crossing(curve, threshold, "log")
    return None if found is None else found[0]


def _interval(values) -> dict:
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return {"mean": float(v.mean()) if v.size else None, "low": None, "high": None, "n": int(v.size)}
    iv = t_interval(v)
    return {"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n}


def curve_rise(seeds: dict, field: str = "exploitability_average") -> dict | None:
    """Whether a curve rises after its lowest point (`seeds`: {seed: {budget: record}}; the budgets every seed
    recorded): the budget with the lowest seed mean and that mean, the last budget and its mean, and the last
    budget's value minus the lowest budget's, paired over seeds, with its 95% t-interval ("mean", "low", "high",
    "n").  "rises" is the rule of a converging learner: the interval lies wholly above 0.  None without a budget
    that every seed recorded."""
    shared = sorted(set.intersection(*(set(map(int, s)) for s in seeds.values())))
    if not shared:
        return None
    rows = np.array([[s[str(b)][field] for b in shared] for s in seeds.values()], dtype=np.float64)
    means = rows.mean(axis=0)
    lowest = int(np.argmin(means))          # the first budget with the lowest mean on a tie
    change = _interval(rows[:, -1] - rows[:, lowest])
    return {"lowest_budget": shared[lowest], "lowest_mean": float(means[lowest]), "last_budget": shared[-1],
            "last_mean": float(means[-1]), **change,
            "rises": change["low"] is not None and change["low"] > 0}


def summary(runs: dict, budgets, thresholds) -> dict:
    """summary[learner][budget]: each arm's mean and 95% t-interval over seeds of the average policy's and the
    last iterate's exploitability (chips) and of the share of states never updated; the paired differences
    arm - cp_grpo (seeds matched) with their intervals and the seeds on which cp_grpo is lower.  Plus
    thresholds[learner][arm][threshold]: the seeds that reach it and the geometric mean of their calls with the
    95% interval exp(t-interval of log calls) (`calls_rules.calls_over_seeds`, the study's rule)."""
    out: dict = {"by_budget": {}, "thresholds": {}}
    for learner, arms in runs.items():
        per = out["by_budget"].setdefault(learner, {})
        for b in budgets:
            key = str(int(b))
            have = {arm: seeds for arm, seeds in arms.items() if all(key in s for s in seeds.values())}
            if not have:
                continue
            entry = {"arms": {}, "differences": {}}
            for arm, seeds in have.items():
                entry["arms"][arm] = {q: _interval([s[key][q] for s in seeds.values()])
                                      for q in ("exploitability_average", "exploitability_last", "never_updated",
                                                "physical_calls", "transitions", "decisions")}
            if "cp_grpo" in have:
                for arm in (a for a in have if a != "cp_grpo"):
                    common = [s for s in have[arm] if s in have["cp_grpo"]]
                    d = [have[arm][s][key]["exploitability_average"] - have["cp_grpo"][s][key]["exploitability_average"]
                         for s in common]
                    entry["differences"][f"{arm} - cp_grpo"] = {**_interval(d), "cp_grpo_lower": int(sum(x > 0 for x in d))}
            per[key] = entry
        ths = out["thresholds"].setdefault(learner, {})
        for arm, seeds in arms.items():
            for th in thresholds:
                r = calls_over_seeds(seeds.values(), th)               # the study's rule: log-log, geometric mean
                ths.setdefault(arm, {})[repr(float(th))] = {"reached": r["reached"], "seeds": r["seeds"],
                                                            "geometric_mean": r["calls"], "low": r["low"],
                                                            "high": r["high"]}
    return out
