"""A whole learning study: tuning on development seeds, the reporting runs, their summary and checkpoints.

`LearningStudy` holds the design (game, the paper's budget and its
multiples, seeds, thresholds, grids); `run` tunes each learner and arm on
the development seeds (`learning.study_design.tune`, at `tune_multiples` x the
budget: the literal learner at the paper's budget, the converging one at a
larger one, where it has something to show), or takes given choices, then
runs every (learner, arm, seed) task on Dask (`study_runner.run_tasks`) and
returns the study's record: the design, the tuning, the choices,
``runs.<learner>.<arm>.<seed>.<budget>`` and ``summary.<learner>.<budget>``
(`learning.study_design.summary`), and the converging runs' checkpoints.  Every
float is rounded to the book's precision, so the record is the same bytes
for any number of workers.
"""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Schedule
from oscc_core.reporting.dask_cluster import local_cluster
from oscc_core.reporting.results import clean
from oscc_core.reporting.study_runner import run_tasks

#: Grids the tuning starts from (extended at an edge, `learning.study_design.Grid`).
LITERAL_GRID = design.Grid(eta=(2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0))
CONVERGING_GRID = design.Grid(eta=(8.0, 16.0, 32.0, 64.0, 128.0), alpha=(0.0, 0.5, 2.0), kappa=(0.0, 0.01, 0.1))
#: The grid the fast options' converging learner starts from: issue 33's final sweep (benchmarks/learner_ideas.md,
#: sweep E1), whose best point (eta 64, alpha 0.5, kappa 0.003) lies inside it on every axis.  The committed grid
#: cannot reach it (its smallest positive kappa is 0.01, and kappa grows only upward).
FAST_GRID = design.Grid(eta=(32.0, 64.0, 128.0), alpha=(0.25, 0.5, 1.0), kappa=(0.001, 0.003, 0.01))
#: The grid the steady options' converging learner starts from: centred on issue 38's development-seed runs (eta 32,
#: alpha 0.25, kappa 0.001 to 0.003; benchmarks/learner_ideas.md, part 2), extended both ways at an edge.
STEADY_GRID = design.Grid(eta=(16.0, 32.0, 64.0), alpha=(0.125, 0.25, 0.5), kappa=(0.001, 0.003, 0.01),
                          max_extensions=6)
#: The converging learner's starting grid for each named option set (`learning.study_design.CONVERGING_OPTIONS`).
CONVERGING_GRIDS = {"none": CONVERGING_GRID, "fast": FAST_GRID, "steady": STEADY_GRID}
#: Design fields added after the committed studies: recorded only away from their defaults, so the committed
#: designs keep their bytes (and a design without them reads as the defaults).
LATER_DESIGN = {"converging_options": design.DEFAULT_OPTIONS, "curve_per_decade": design.DEFAULT_PER_DECADE}


@dataclass(frozen=True)
class LearningStudy:
    """The design of a study (units: budgets in physical calls, thresholds in chips of exploitability)."""

    game: str
    budget: int                                   # the paper's matched budget per run
    multiples: tuple                              # budgets of the summary: budget x each
    seeds: tuple                                  # reporting seeds
    dev_seeds: tuple                              # development seeds (disjoint from the reporting seeds)
    thresholds: tuple                             # exploitability levels for calls-to-threshold
    base: Schedule = field(default_factory=Schedule)   # N, E, clip, G, GAE: shared by every run
    tune_multiples: tuple = (("literal", 1), ("converging", 10))
    runs_per_task: int = 10                       # seeds a task trains in one batch (numbers never depend on it)
    grids: tuple = (("literal", LITERAL_GRID), ("converging", CONVERGING_GRID))
    converging_options: str = design.DEFAULT_OPTIONS   # the named option set `base` carries (its name, recorded)
    curve_per_decade: int = design.DEFAULT_PER_DECADE  # recorded budgets per decade (`study_design.curve_budgets`)

    def __post_init__(self):
        if set(self.seeds) & set(self.dev_seeds):
            raise ValueError(f"the reporting seeds and the development seeds must be disjoint; both hold "
                             f"{sorted(set(self.seeds) & set(self.dev_seeds))}.")
        # One source of truth for the runs: the base schedule; the name must say what it carries.
        if design.with_options(self.base, self.converging_options) != self.base:
            raise ValueError(f"the base schedule does not carry the converging options "
                             f"{self.converging_options!r} the design names (`study_design.with_options`).")

    def record(self) -> dict:
        out = asdict(self)
        for name, default in LATER_DESIGN.items():
            if out[name] == default:
                del out[name]
        out["base"] = self.base.as_dict()
        out["grids"] = {name: asdict(g) for name, g in self.grids}
        out["tune_multiples"] = dict(self.tune_multiples)
        out["budgets"] = [self.budget * m for m in self.multiples]
        out["recorded_budgets"] = list(design.curve_budgets(self.budget, self.multiples, self.curve_per_decade))
        return out

    def tune(self, store, workers: int = 2, scheduler: str | None = None, learners=design.LEARNERS,
             run=None, device="cpu") -> dict:
        """{learner: {arm: tuning result}} on the development seeds (`learning.study_design.tune`, each learner at
        its grid and `tune_multiples` x the budget).  `run(tasks) -> results` runs the tuning's tasks; by default
        they go to Dask (on a GPU `device`, to it), kept in `store`."""
        if run is None:
            def run(tasks):
                return run_tasks(tasks, store, workers, scheduler, device=device)["results"]
        grids, mult = dict(self.grids), dict(self.tune_multiples)
        return {learner: {arm: design.tune(run, self.game, learner, arm, self.base, grids[learner], self.dev_seeds,
                                          self.budget * mult[learner]) for arm in design.ARMS}
                for learner in learners}

    def run(self, store, choices: dict | None = None, workers: int = 2, scheduler: str | None = None,
            device="cpu", coupling_grid: bool = False) -> dict:
        """The study's record (module docstring).  Without `choices` ({learner: {arm: {eta, alpha, kappa}}}) the
        study tunes first; with them it runs only the reporting seeds.  With `coupling_grid` (and a base that
        carries the history baseline) it also runs the coupling question's 2 x 2 (`study_design.
        coupling_grid_tasks`), stored under "coupling_grid".  On a GPU `device` the tasks run on it
        (`study_runner.run_tasks`), with the same results."""
        tuning = None
        if choices is None:
            tuning = self.tune(store, workers, scheduler, device=device)
            choices = {learner: {arm: {k: t[k] for k in ("eta", "alpha", "kappa")} for arm, t in arms.items()}
                       for learner, arms in tuning.items()}
        tasks = design.study_tasks(self.game, choices, self.base, self.seeds, self.budget, self.multiples,
                                   runs_per_task=self.runs_per_task, per_decade=self.curve_per_decade)
        grid = {}
        if coupling_grid and design.CONVERGING in choices:
            grid = design.coupling_grid_tasks(self.game, choices[design.CONVERGING], self.base, self.seeds,
                                              self.budget, self.multiples, self.runs_per_task, self.curve_per_decade)
        cells = [t for ts in grid.values() for t in ts]
        done = run_tasks(tasks + cells, store, workers, scheduler, device=device)
        results, first = done["results"][:len(tasks)], len(tasks)
        runs = design.runs_table(results)
        tables = {f"{r['task']['learner']}/{r['task']['arm']}/{seed}": table
                  for r in results for seed, table in (r.get("tables") or {}).items()}
        summary = design.summary(runs, [self.budget * m for m in self.multiples], self.thresholds)
        body = {"design": self.record(), "tuning": tuning, "choices": choices, "runs": runs,
                "summary": summary["by_budget"], "thresholds": summary["thresholds"]}
        if grid:
            by_cell = {}
            for key, ts in grid.items():
                by_cell[key], first = done["results"][first:first + len(ts)], first + len(ts)
            body["coupling_grid"] = design.coupling_grid_record(choices[design.CONVERGING], self.base, by_cell)
        return {"study": clean(body), "tables": tables, "seconds": done["seconds"], "workers": done["workers"],
                "ran": done["ran"], "stored": done["stored"]}


#: Design fields of a study that enter its converging operating point's rule (`rule_of_design`), beside the later
#: fields of `LATER_DESIGN` when they are away from their defaults.
RULE_FIELDS = ("dev_seeds", "budget", "tune_multiples", "grids")


def rule_of_design(d: dict) -> dict:
    """The rule that made a study's converging choices, from its design record `d`: the development seeds, budget,
    tuning multiples and grids, and the converging options and recorded budgets per decade where they are not the
    defaults (so a study run at the defaults keeps its rule's bytes).  The recorded budgets per decade do not change
    the choices (the tuning scores one budget), but the rule carries them so that the Kuhn study is recorded at the
    same density: the operating point's digest covers the recording grid as well as the choices, and a Leduc study
    regenerated at another density alone makes the Kuhn study stale too."""
    out = {k: d[k] for k in RULE_FIELDS}
    out.update({k: d[k] for k, default in LATER_DESIGN.items() if d.get(k, default) != default})
    return out


def rule_base(base: Schedule, rule: dict) -> Schedule:
    """`base` with the converging options the rule names (none when it names none)."""
    return design.with_options(base, rule.get("converging_options", design.DEFAULT_OPTIONS))


def literal_step_sizes(game: str, grid, dev_seeds, base: Schedule, budget: int, store, workers: int = 2,
                       scheduler: str | None = None, given: float = 0.0, device="cpu") -> dict:
    """eta per learned arm for the literal learner (`learning.study_design.tune`): the value of `grid` with the
    lowest mean exploitability of the arm's average policy on `dev_seeds` at `budget`, the grid extended while the
    choice sits at its edge; the runs are tasks on Dask (on a GPU `device`, on it), kept in `store`.  A positive `given` overrides every
    arm's choice.  Returns {"etas": {arm: eta}, "tuning": {arm: tuning record}, "given": bool}."""
    def run(tasks):
        return run_tasks(tasks, store, workers, scheduler, device=device)["results"]

    tuning = {arm: design.tune(run, game, design.LITERAL, arm, base, design.Grid(eta=tuple(grid)), tuple(dev_seeds),
                               budget) for arm in design.ARMS}
    etas = {arm: (float(given) if given > 0 else t["eta"]) for arm, t in tuning.items()}
    return {"etas": etas, "tuning": tuning, "given": given > 0}


def writer_commit() -> dict:
    """The code that writes a study: {"commit": the library checkout's git HEAD, "clean": whether the library's
    source (``oscc_core/``) had no uncommitted change}; {"commit": None, "clean": None} outside a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parent.parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "oscc_core"],
                               capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "clean": None}
    return {"commit": head, "clean": not dirty}


def study_store(directory: str, prefix: str) -> str:
    """The directory that keeps every finished run: `directory`, or a fresh temporary one named `prefix`..."""
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        return directory
    return tempfile.mkdtemp(prefix=prefix)


def _records(runs: dict, path: tuple = ()):
    """(path, record) for every record of a study's runs, however deep their keys (learner, arm, seed, budget)."""
    for key, value in runs.items():
        if isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            yield from _records(value, path + (key,))
        else:
            yield path + (key,), value


def _lookup(runs: dict, path: tuple):
    for key in path:
        runs = runs.get(key) if isinstance(runs, dict) else None
    return runs


def bit_equality_expected(committed: dict) -> tuple[bool, str]:
    """Whether a live rerun on this machine must reproduce `committed` bit for bit, and why (one clause).

    The learners' arithmetic is the same on every CPU (`fixed_math`, fixed-order sums), so the bits can only
    move with the numeric packages: equality is expected when the study's manifest recorded exactly the
    versions installed here.  A study on a GPU gives the same bits (its kernels round as the CPU's do), so the
    device does not enter.
    """
    from oscc_core.reporting.results import package_versions

    recorded = committed.get("manifest", {}).get("package_versions")
    if recorded is None:
        return False, ("the committed study was written before the learners' fixed-rounding arithmetic and records "
                       "no package versions")
    if recorded != package_versions():
        moved = ", ".join(f"{k} {recorded.get(k)} -> {v}" for k, v in package_versions().items() if recorded.get(k) != v)
        return False, f"the numeric packages differ from the committed study's ({moved})"
    return True, "same locked numeric packages as the committed study, and learner arithmetic fixed on every CPU"


def live_check(committed: dict, live: dict, bitwise: bool | None = None) -> dict:
    """Compare every run record of a live rerun with the committed study.

    Records are matched by their keys under "runs" (learner, arm, seed, budget).  Always reported: how many
    records both hold and the largest absolute difference of any of their numbers.  Also, for each rerun
    record, whether every number lies within the committed study's range over its seeds at the same
    learner, arm and budget.  `mode` says which comparison decides: "bit for bit" (the largest difference
    must be 0) when `bitwise` (default: `bit_equality_expected`), else "within the seeds' range".  When that
    comparison has nothing to compare (no record both hold; no number with a committed range), "nothing_to_compare"
    is True and "agrees" False: a check that compared nothing does not agree (`live_check_text` says so).
    """
    why = None
    if bitwise is None:
        bitwise, why = bit_equality_expected(committed)
    compared, largest, inside, fields = 0, 0.0, 0, 0
    for path, rec in _records(live["runs"]):
        theirs = _lookup(committed["runs"], path)
        if theirs is not None:
            if set(rec) != set(theirs):
                raise ValueError(f"the rerun record {'/'.join(path)} and the committed one hold different fields "
                                 f"({sorted(set(rec) ^ set(theirs))}): the study was written by other code.")
            compared += 1
            largest = max([largest] + [abs(float(rec[k]) - float(theirs[k])) for k in rec])
        seeds = _lookup(committed["runs"], path[:-2]) or {}
        spread = [s[path[-1]] for s in seeds.values() if isinstance(s, dict) and path[-1] in s]
        for k, v in rec.items():
            values = [float(s[k]) for s in spread if k in s]
            if values:                         # a budget or arm the committed study did not record has no range
                fields += 1
                inside += min(values) <= float(v) <= max(values)
    nothing = compared == 0 if bitwise else fields == 0
    return {"records": compared, "max_abs_difference": largest, "mode": "bit for bit" if bitwise else
            "within the seeds' range", "reason": why, "fields": fields, "fields_within_range": inside,
            "nothing_to_compare": nothing, "agrees": not nothing and (largest == 0 if bitwise else inside == fields)}


def live_check_text(live: dict) -> str:
    """One sentence on what the live check compared and what it found."""
    if live.get("nothing_to_compare"):
        return ("nothing to compare: the rerun and the committed study share no record (the rerun's seeds, arms or "
                "budgets are not the study's)" if live["mode"] == "bit for bit" else
                "nothing to compare: the committed study records no seed's range at the rerun's arms and budgets")
    if live["mode"] == "bit for bit":
        found = ("agrees exactly" if live["max_abs_difference"] == 0 else
                 f"DIFFERS by up to {live['max_abs_difference']:.1e}")
        return f"compared bit for bit: each of the {live['records']:,} records both hold {found}"
    return (f"compared with the committed seeds' range at the same budget ({live['reason']}, so bit equality "
            f"is not expected): {live['fields_within_range']:,} of {live['fields']:,} numbers lie within it, and "
            f"the {live['records']:,} records both hold differ by at most {live['max_abs_difference']:.1e}")


@contextmanager
def cluster(workers: int, scheduler: str = "", device: str | torch.device = "cpu"):
    """The address of the Dask scheduler a chapter's runs go to: `scheduler`, or a local cluster of `workers`
    processes (one thread each) kept for the whole block, so that one cluster serves every batch of tasks
    (`reporting.dask_cluster.local_cluster`: no fixed port, and nothing of its start or its shutdown reaches a
    chapter's page).  On a GPU `device` the runs train in the chapter's own process (`study_runner.run_tasks`), so
    no cluster starts and the address is ""."""
    in_process = torch.device(device).type != "cpu"
    if scheduler or in_process:
        yield "" if in_process else scheduler
        return
    with local_cluster(workers) as address:
        yield address
