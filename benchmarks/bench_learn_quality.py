"""Learning quality: our converging CP-GRPO against OpenSpiel's sampled MCCFR solvers on Leduc, on common units.

Four learners run in this one process (or its worker processes) on the same
machine, on the same seeds, each recorded at the same budgets and scored by
the exact exploitability (NashConv / 2, chips; the uniform policy is 2.3736)
of its *average* policy, by the book's exact engine:

* ours, fast: the converging CP-GRPO with the options of issue 33 (history
  baseline, alpha decay, weighted averaging: `FAST`, the configuration
  `benchmarks/learner_ideas.md` recommends);
* ours, study: the converging CP-GRPO as chapter 05's study tuned it (read
  from `results/05_solver_study.json` under tuning.converging.cp_grpo; eta 8,
  alpha 1, kappa 0.01 when the file holds none);
* OS-MCCFR and ES-MCCFR: the runs chapter 05 shows beside the learners,
  `oscc_core.learning.mccfr_anchor.run_anchor`: OpenSpiel's own *Python*
  `OutcomeSamplingSolver` (exploration 0.6) and `ExternalSamplingSolver`
  (simple averaging), numpy's global generator seeded with the seed, every
  history they recurse into counted.

Every learner is recorded after the first iteration whose count reaches each
budget (ours: realised physical calls; MCCFR: counted terminal histories), so
each record passes its budget by less than one iteration; pyspiel's
exploitability of each learner's last average policy is printed beside ours.

Common units, every one counted in the run, none converted at a fixed rate.
*Terminal histories*: one of our physical calls is one branch rollout, from
the node after the root action at a decision point to the end of the hand: it
reaches exactly one terminal history; an OS-MCCFR episode samples one; an
ES-MCCFR traversal reaches every terminal history below the traverser's
actions along its sampled chance and opponent actions (13.1 an iteration
expected at the uniform start, about 14.2 over the first 100,000, and it
depends on the policies sampled from): each is counted.  *Nodes touched*:
decision and terminal histories (chance histories are left out on both sides,
since our ledgers do not count chance events): MCCFR's counted by
`run_anchor`; ours from the run's ledger, `mccfr_anchor.histories_touched`
(its decision points, every decision its rollouts drew after them, and one
terminal history per call).  *Seconds*: each learner's own training time, its
evaluations left out, on one core: ours on our fused kernels, MCCFR's of
OpenSpiel's Python solvers (far slower per history than pyspiel's C++ ones),
their iterations timed inside `run_anchor` (`timed_iterations`).

Calls to a threshold (0.2 chips and the paper's CP-GRPO exploitability, read from the claims file, by default): per seed, the first
crossing of the recorded curve, interpolated linearly in log budget and log
exploitability between the two budgets around it (`learning.study_design.
calls_to`'s rule); over seeds, the geometric mean of the seeds that reach it,
with how many do.  Nodes and seconds to a threshold are taken at the same
crossing (each interpolated linearly in terminal histories).

Caveat: our learner also walks the whole tree every iteration with the exact
game model (chance probabilities, and the opponent's reach of every history)
to draw its decision points from the counterfactual law, to sample the hidden
card from its posterior, to weight its average policy by own reach and to
take expectations in the baseline's corrections; OS- and ES-MCCFR use the
model only to sample.  That model work is not in the units above (it is in
the wall time).  Hyperparameters are not matched: ours were chosen on
development seeds, OS-MCCFR runs at OpenSpiel's default exploration 0.6,
ES-MCCFR has none.

    .venv/bin/python benchmarks/bench_learn_quality.py [--quick] [--budgets 1e4,3e4,...] [--seeds 2001,2002]
        [--workers 2] [--thresholds 0.2,0.15] [--study-json results/05_solver_study.json] [--eta E] [--alpha A]
        [--kappa K]

OpenSpiel's Python solvers cost about 30 (ES) and 90 (OS) microseconds of one core per terminal history on this
book's machine, so the default (budgets 1e4 to 1e7 at four per decade, two seeds, two workers) takes about 40
minutes of compute (OS-MCCFR's 1e7 terminal histories are most of it; about 20 minutes of wall time on two free
cores, more when the machine is shared); --seeds and --budgets ask for more, --budgets up to 1e6 for a tenth of it.
--quick (budgets 1e3 to 1e5, one seed, one process) takes about 15 seconds once numba's kernels are cached.
Results do not depend on --workers: every (method, seed) is its own seeded run.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from oscc_core.chapters.solver import study as solver_study
from oscc_core.learning import calls_rules, mccfr_anchor

GAME = "leduc"                    # our name
OPENSPIEL_GAME = "leduc_poker"    # OpenSpiel's
THRESHOLDS = (solver_study.ROUND_THRESHOLDS[0], solver_study.thresholds()[-1])
STUDY_JSON = Path(__file__).resolve().parents[1] / "results" / "05_solver_study.json"
#: The study's converging CP-GRPO when its results file holds no tuning.
FALLBACK = {"eta": 8.0, "alpha": 1.0, "kappa": 0.01, "decision_law": "counterfactual", "decision_points": 128}
#: The fast converging CP-GRPO (benchmarks/learner_ideas.md: chosen on development seeds 1001-1008).
FAST = {"eta": 64.0, "alpha": 0.5, "kappa": 0.003, "decision_law": "counterfactual", "decision_points": 128,
        "baseline": "history", "baseline_floor": 0.5, "alpha_decay": "inverse_sqrt", "alpha_horizon": 30.0,
        "average_power": 2}
#: Names under which a study file may hold each hyperparameter (the first is ours).
ALIASES = {"eta": ("eta", "learning_rate"), "alpha": ("alpha", "proximal_alpha"),
           "kappa": ("kappa", "proximal_kappa"), "decision_law": ("decision_law",),
           "decision_points": ("decision_points", "N")}
METHODS = ("fast", "study", "os", "es")
LABELS = {"fast": "CP-GRPO fast", "study": "CP-GRPO study", "os": "OS-MCCFR", "es": "ES-MCCFR"}
#: Our MCCFR methods and the anchors' solvers (`oscc_core.learning.mccfr_anchor`) that run them.
MCCFR = {"os": mccfr_anchor.OS, "es": mccfr_anchor.ES}
#: The arm our learners run (its kind decides how its ledger counts nodes: `mccfr_anchor.histories_touched`).
OUR_ARM = "cp_grpo"
#: Seeds of every method: disjoint from the book's reporting seeds and its development seeds.
DEFAULT_SEEDS = (2001, 2002)
QUICK_SEEDS = (2001,)
QUICK_BUDGETS = (1_000, 10_000, 100_000)


# ----- pure helpers ---------------------------------------------------------------------------------------
def round_sig(x: float, digits: int = 3) -> int:
    """x rounded to `digits` significant figures, as an integer."""
    if x <= 0:
        return round(x)
    return int(round(x, digits - 1 - math.floor(math.log10(x))))


def log_budgets(low: float, high: float, per_decade: int = 4) -> tuple[int, ...]:
    """Budgets from `low` to `high`, `per_decade` log-spaced per decade, at 3 significant figures."""
    count = round(math.log10(high / low) * per_decade) + 1
    return tuple(sorted({round_sig(x) for x in np.logspace(math.log10(low), math.log10(high), count)}))


DEFAULT_BUDGETS = log_budgets(1e4, 1e7)


def parse_budgets(text: str) -> tuple[int, ...]:
    """'1e4,3e4,100000' -> (10000, 30000, 100000): ascending, distinct, positive integers."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"--budgets must be numbers separated by commas, got {part!r}.") from None
        if not math.isfinite(value) or round(value) < 1:
            raise ValueError(f"--budgets must be positive numbers of calls, got {part!r}.")
        out.add(round(value))
    if not out:
        raise ValueError("--budgets must name at least one budget.")
    return tuple(sorted(out))


def parse_seeds(text: str) -> tuple[int, ...]:
    """'101,102' -> (101, 102): distinct non-negative integers, in the given order."""
    seeds = []
    for part in (p.strip() for p in text.split(",")):
        if part:
            if not part.isdigit():
                raise ValueError(f"--seeds must be non-negative integers separated by commas, got {part!r}.")
            if int(part) not in seeds:
                seeds.append(int(part))
    if not seeds:
        raise ValueError("--seeds must name at least one seed.")
    return tuple(seeds)


def parse_thresholds(text: str) -> tuple[float, ...]:
    """'0.2,0.15' -> (0.2, 0.15): positive exploitabilities (chips), largest first."""
    out = set()
    for part in (p.strip() for p in text.split(",")):
        if part:
            try:
                value = float(part)
            except ValueError:
                raise ValueError(f"--thresholds must be numbers separated by commas, got {part!r}.") from None
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"--thresholds must be positive numbers of chips, got {part!r}.")
            out.add(value)
    if not out:
        raise ValueError("--thresholds must name at least one threshold.")
    return tuple(sorted(out, reverse=True))


#: The learner options a study's design may carry in its base schedule (the "fast" set's fields).
OPTION_NAMES = ("baseline", "baseline_floor", "alpha_decay", "alpha_horizon", "average_power")


def study_options(study: dict) -> dict:
    """The learner options the study's converging learner ran with (its design's base schedule; {} for none)."""
    design = study.get("design") if isinstance(study, dict) else None
    base = design.get("base") if isinstance(design, dict) else None
    return {name: base[name] for name in OPTION_NAMES if isinstance(base, dict) and name in base}


def tuned_hyperparameters(study: object) -> dict:
    """The converging CP-GRPO's hyperparameters held by a study's results (`study`, parsed JSON) under
    tuning.converging.cp_grpo (directly, or under a "choice" / "chosen" / "best" entry), as {name: value}
    for the names of `FALLBACK` it holds with a usable value, with the learner options of its design
    (`study_options`); {} when it holds none."""
    node = study
    for key in ("tuning", "converging", "cp_grpo"):
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return {}
        node = node[key]
    for inner in ("choice", "chosen", "best"):
        if isinstance(node.get(inner), dict):
            node = node[inner]
            break
    out = study_options(study)
    for name, aliases in ALIASES.items():
        for alias in aliases:
            value = node.get(alias)
            if name == "decision_law":
                if value in ("on_policy", "counterfactual", "uniform"):
                    out[name] = value
            elif name == "decision_points":
                if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                    out[name] = value
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                    and value >= 0 and not (name == "eta" and value == 0) and not (name == "kappa" and value > 1):
                out[name] = float(value)
            if name in out:
                break
    return out


def hyperparameters(path: Path, overrides: dict) -> tuple[dict, dict]:
    """({name: value}, {name: where it came from}) of the study's learner: the command line's `overrides` first,
    then the study file at `path` (read defensively: missing, unreadable or incomplete is not an error), then
    `FALLBACK`; with the learner options of the study's design (`study_options`)."""
    try:
        found = tuned_hyperparameters(json.loads(Path(path).read_text()))
        why = "default (no tuning.converging.cp_grpo entry)"
    except FileNotFoundError:
        found, why = {}, "default (no study file)"
    except (OSError, ValueError) as exc:
        found, why = {}, f"default (study file unreadable: {type(exc).__name__})"
    values, sources = {}, {}
    for name, fallback in FALLBACK.items():
        if overrides.get(name) is not None:
            values[name], sources[name] = overrides[name], "command line"
        elif name in found:
            values[name], sources[name] = found[name], f"{Path(path).name} tuning.converging.cp_grpo"
        else:
            values[name], sources[name] = fallback, why
    for name in OPTION_NAMES:                # the learner options the study ran with (its design's base schedule)
        if name in found:
            values[name], sources[name] = found[name], f"{Path(path).name} design.base"
    return values, sources


def calls_to(points, threshold: float) -> tuple[float | None, str]:
    """Where a curve [(calls, exploitability), ...] first falls to `threshold`: (calls, "crossed") interpolated
    linearly in log calls and log exploitability between the budgets around the crossing; (first calls,
    "at_start") when it is already there at the smallest budget; (None, "never") when it never is."""
    found = calls_rules.crossing_of_points([(float(c), float(e)) for c, e in points], threshold)
    if found is None:
        return None, "never"
    calls, before, after = found
    return calls, ("at_start" if before == after else "crossed")


def at_calls(points, calls: float) -> float:
    """A quantity [(calls, value), ...] at `calls`, linear between the points around it (the last point's value
    scaled by calls beyond it)."""
    pts = sorted(points)
    if calls <= pts[0][0]:
        return pts[0][1] * calls / pts[0][0]
    for (c0, v0), (c1, v1) in itertools.pairwise(pts):
        if calls <= c1:
            return v0 + (v1 - v0) * (calls - c0) / (c1 - c0)
    return pts[-1][1] * calls / pts[-1][0]


def geometric_summary(values) -> tuple[float | None, int]:
    """(geometric mean of the values that are not None, how many there are)."""
    got = [v for v in values if v is not None]
    return (float(np.exp(np.mean(np.log(got)))) if got else None), len(got)


def fmt_calls(x: float | None) -> str:
    """Calls at 3 significant figures with thousands separators: 1234567.8 -> '1,230,000'; None -> '-'."""
    return "-" if x is None else f"{round_sig(x):,}"


# ----- the runs -----------------------------------------------------------------------------------------------
@contextmanager
def timed_iterations():
    """Inside the block, `mccfr_anchor.run_anchor` runs as it always does, its solver's iterations timed: yields
    the list that receives, at each of its records (in budget order), the seconds its iterations took so far
    (the evaluations left out).  The module's own functions are put back after the block."""
    made, evaluate = mccfr_anchor.counting_solver, mccfr_anchor.average_table
    marks: list[float] = []

    def counting_solver(kind, game):
        solver = made(kind, game)
        step, solver.seconds = solver.iteration, 0.0

        def iteration():
            t0 = time.perf_counter()
            step()
            solver.seconds += time.perf_counter() - t0
        solver.iteration = iteration
        return solver

    def average_table(game_name, solver, tabular):
        marks.append(solver.seconds)
        return evaluate(game_name, solver, tabular)

    mccfr_anchor.counting_solver, mccfr_anchor.average_table = counting_solver, average_table
    try:
        yield marks
    finally:
        mccfr_anchor.counting_solver, mccfr_anchor.average_table = made, evaluate


def run_mccfr(method: str, seed: int, budgets) -> dict:
    """OpenSpiel's Python OS- or ES-MCCFR (`method` "os" or "es") as chapter 05 runs it (`mccfr_anchor.run_anchor`,
    numpy's global generator seeded `seed`), recorded after the first iteration whose counted terminal histories
    reach each budget: terminal histories ("calls"), decision and terminal histories ("nodes"), iterations, the
    seconds of its iterations so far and the exact exploitability of its average policy; pyspiel's exploitability
    of the last one beside."""
    from oscc_core.learning.checkpoints import openspiel_exploitability
    from oscc_core.policy import table_to_policy

    budgets = sorted(int(b) for b in budgets)
    with timed_iterations() as seconds:
        out = mccfr_anchor.run_anchor(MCCFR[method], GAME, seed, budgets)
    if len(seconds) != len(budgets):
        raise RuntimeError(f"run_anchor evaluated {len(seconds)} average policies for {len(budgets)} budgets: "
                           "timed_iterations no longer follows its loop.")
    records = []
    for budget, sec in zip(budgets, seconds):
        r = out["records"][str(budget)]
        records.append({"budget": budget, "calls": r["terminal_histories"],
                        "nodes": r["terminal_histories"] + r["decision_histories"], "iterations": r["iterations"],
                        "seconds": sec, "exploitability": r["exploitability_average"]})
    return {"records": records, "pyspiel_top": openspiel_exploitability(GAME, table_to_policy(GAME, out["table"]))}


def ours_schedule(hyper: dict):
    from oscc_core.learning.loop import LATER_DEFAULTS, Schedule

    options = {name: hyper[name] for name in LATER_DEFAULTS if name in hyper}
    return Schedule(iterations=2 ** 62, decision_points=int(hyper["decision_points"]),
                    learning_rate=float(hyper["eta"]), decision_law=hyper["decision_law"],
                    proximal_alpha=float(hyper["alpha"]), proximal_kappa=float(hyper["kappa"]), **options)


def run_ours(seed: int, budgets, hyper: dict) -> dict:
    """Our converging CP-GRPO (`loop.Learners`, arm `OUR_ARM`) recorded after the first iteration that reaches
    each budget: realised calls (terminal histories), the nodes its ledger says it touched
    (`mccfr_anchor.histories_touched`), the ledger's counts, seconds of training and exact exploitability of the
    average policy; pyspiel's exploitability of the last one beside."""
    import torch

    from oscc_core.learning.arms import get_learner_arm
    from oscc_core.learning.checkpoints import openspiel_exploitability
    from oscc_core.learning.loop import Learners, RunSpec
    from oscc_core.learning.study import exploitability
    from oscc_core.policy import table_to_policy

    torch.set_num_threads(1)
    learners = Learners(GAME, [RunSpec(OUR_ARM, seed)], ours_schedule(hyper))
    samples = get_learner_arm(OUR_ARM).samples
    records, seconds = [], 0.0
    for budget in budgets:
        t0 = time.perf_counter()
        while int(learners.ledger.counts["physical_calls"][0]) < budget:
            learners.step()
        seconds += time.perf_counter() - t0
        row = learners.ledger.row(0)
        records.append({"budget": int(budget), "calls": row["physical_calls"],
                        "nodes": mccfr_anchor.histories_touched(row, samples), "iterations": row["iterations"],
                        "decisions": row["decisions"], "groups": row["groups"],
                        "seconds": seconds, "exploitability": exploitability(GAME, learners.average_tables()[0])})
    check = openspiel_exploitability(GAME, table_to_policy(GAME, learners.average_tables()[0]))
    return {"records": records, "pyspiel_top": check, "engine": learners.engine}


def run_job(job: tuple) -> tuple:
    """(method, seed, budgets, extra) -> (method, seed, result, seconds): one worker task."""
    method, seed, budgets, extra = job
    t0 = time.perf_counter()
    result = run_ours(seed, budgets, extra) if method in ("fast", "study") else run_mccfr(method, seed, budgets)
    return method, seed, result, time.perf_counter() - t0


# ----- the report ------------------------------------------------------------------------------------------
def curve(result: dict, key: str = "calls") -> list[tuple[float, float]]:
    return [(r[key], r["exploitability"]) for r in result["records"]]


def cell(results: list[dict], i: int) -> str:
    values = [r["records"][i]["exploitability"] for r in results]
    if len(values) == 1:
        return f"{values[0]:8.4f}{'':16s}"
    return f"{np.mean(values):8.4f} [{min(values):.3f}-{max(values):.3f}]"


def crossings(results: list[dict], threshold: float) -> dict:
    """Per seed, the terminal histories at which `results` first reach `threshold`, and the nodes and seconds
    there (each interpolated linearly in terminal histories between the records around it); their geometric
    means over the seeds that do, and how many do."""
    calls, nodes, seconds = [], [], []
    for r in results:
        value, status = calls_to(curve(r), threshold)
        if status == "never":
            calls.append(None), nodes.append(None), seconds.append(None)
            continue
        calls.append(value)
        nodes.append(at_calls([(x["calls"], x["nodes"]) for x in r["records"]], value))
        seconds.append(at_calls([(x["calls"], x["seconds"]) for x in r["records"]], value))
    out = {}
    for name, values in (("calls", calls), ("nodes", nodes), ("seconds", seconds)):
        out[name], out["reached"] = geometric_summary(values)
    out["per_seed"] = calls
    return out


def _argument(parse):
    """`parse` for argparse: its ValueError's sentence becomes the usage error."""
    def wrapped(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return wrapped


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of about 15 seconds (budgets "
                        f"{', '.join(map(str, QUICK_BUDGETS))}, one seed, one process)")
    parser.add_argument("--budgets", type=_argument(parse_budgets), default=None,
                        help="terminal histories (our physical calls, MCCFR's counted terminal histories), "
                             "comma-separated (default: 1e4 to 1e7, four per decade)")
    parser.add_argument("--seeds", type=_argument(parse_seeds), default=None,
                        help=f"seeds of every method (default {','.join(map(str, DEFAULT_SEEDS))})")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default 2; --quick: 1)")
    parser.add_argument("--thresholds", type=_argument(parse_thresholds), default=THRESHOLDS,
                        help="exploitability targets (chips), comma-separated")
    parser.add_argument("--study-json", type=Path, default=STUDY_JSON,
                        help="the study's results, read for tuning.converging.cp_grpo")
    parser.add_argument("--eta", type=float, default=None, help="the study learner's eta")
    parser.add_argument("--alpha", type=float, default=None, help="the study learner's proximal_alpha")
    parser.add_argument("--kappa", type=float, default=None, help="the study learner's proximal_kappa")
    return parser


def _print_setup(seeds, study: dict, sources: dict) -> None:
    """The run's header: the game, each method and the hyperparameters of our two learners, with their sources."""
    from importlib.metadata import version

    print(f"Leduc ({OPENSPIEL_GAME}), exploitability = NashConv / 2 of the average policy (chips; uniform 2.3736; the "
          f"book's exact engine); open_spiel {version('open_spiel')}; seeds {', '.join(map(str, seeds))} for every "
          "method")
    fast = ours_schedule(FAST)
    print(f"CP-GRPO fast:  {', '.join(f'{k} = {v}' for k, v in FAST.items())}; E = {fast.epochs}, clip "
          f"{fast.epsilon} (benchmarks/learner_ideas.md)")
    if len(set(sources.values())) == 1:
        used = ", ".join(f"{name} = {study[name]}" for name in FALLBACK) + f" [{sources['eta']}]"
    else:
        used = ", ".join(f"{name} = {study[name]} [{sources[name]}]" for name in FALLBACK)
    options = ", ".join(f"{name} = {study[name]}" for name in OPTION_NAMES if name in study)
    print(f"CP-GRPO study: {used}" + (f"; options of the study's design: {options}" if options else ""))
    print("OS-MCCFR, ES-MCCFR: OpenSpiel's Python OutcomeSamplingSolver (exploration "
          f"{mccfr_anchor.OS_EXPLORATION}) and ExternalSamplingSolver (simple averaging), run as chapter 05 runs them "
          "(oscc_core.learning.mccfr_anchor.run_anchor, numpy seeded): every terminal and decision history counted "
          "in the run, recorded after the first iteration reaching each budget")
    print("Units: terminal histories (ours: physical calls, one branch rollout each); nodes touched = decision + "
          "terminal histories (MCCFR: counted; ours: the ledger's, mccfr_anchor.histories_touched); seconds = "
          "training only, one core: ours on our fused kernels, MCCFR's = OpenSpiel's PYTHON solvers' iterations "
          "(far slower than pyspiel's C++ solvers)")


def _run_all(jobs: list, workers: int) -> tuple[dict, dict]:
    """Every job's result by method and seed, and each method's compute seconds (summed over its jobs)."""
    results: dict = {m: {} for m in METHODS}
    compute: dict = {m: 0.0 for m in METHODS}
    if workers == 1:
        done = map(run_job, jobs)
    else:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
        done = pool.map(run_job, jobs)
    for method, seed, result, sec in done:
        results[method][seed] = result
        compute[method] += sec
    if workers > 1:
        pool.shutdown()
    return results, compute


def _print_curves(by: dict, budgets, compute: dict, workers: int, wall0: float) -> None:
    """Exploitability per budget and method (mean and range over seeds), the pyspiel recheck of every method's
    last policies, what each method's last records counted, and the compute spent."""
    print()
    header = " | ".join(f"{LABELS[m] + ' (mean [min-max])':>26s}" for m in METHODS)
    print(f"{'budget':>11s} | {header}")
    for i, b in enumerate(budgets):
        print(f"{b:>11,d} | " + " | ".join(f"{cell(by[m], i):>26s}" for m in METHODS))
    print()
    for m in METHODS:
        top = [r["records"][-1] for r in by[m]]
        diff = max(abs(r["records"][-1]["exploitability"] - r["pyspiel_top"]) for r in by[m])
        unit = "calls" if m in ("fast", "study") else "terminal histories"
        print(f"{LABELS[m]} at {budgets[-1]:,}: pyspiel.exploitability of the same average policies differs from ours "
              f"by at most {diff:.1e}; realised {unit} {min(r['calls'] for r in top):,}-"
              f"{max(r['calls'] for r in top):,}, {np.mean([r['iterations'] for r in top]):,.0f} iterations, "
              f"{np.mean([r['nodes'] / r['calls'] for r in top]):.2f} nodes touched per terminal history")
    print("compute (all seeds, one core each, evaluations included): "
          + ", ".join(f"{LABELS[m]} {compute[m]:.1f} s" for m in METHODS)
          + f"; {workers} worker{'s' if workers > 1 else ''}; wall {time.perf_counter() - wall0:.1f} s")


def _print_thresholds(by: dict, thresholds, budgets, seeds) -> None:
    """Per method and threshold: seeds that reach it, terminal histories, nodes and seconds at the crossing; then
    each method's histories against our fast learner's."""
    print()
    print("To each threshold, per method: geometric mean over the seeds that reach it (first crossing, log-log "
          f"between budgets; {len(budgets)} budgets from {budgets[0]:,} to {budgets[-1]:,}); nodes touched and "
          "seconds (training only, one core; MCCFR: OpenSpiel's Python solvers) at the same crossing")
    print(f"{'method':>14s} | {'threshold':>9s} | {'seeds':>5s} | {'terminal histories':>18s} | {'nodes touched':>14s} | "
          f"{'seconds':>8s}")
    table = {}
    for th in thresholds:
        for m in METHODS:
            c = crossings(by[m], th)
            table[(m, th)] = c
            sec = "-" if c["seconds"] is None else f"{c['seconds']:.2f}"
            print(f"{LABELS[m]:>14s} | {th:>9g} | {c['reached']:>2d}/{len(seeds):<2d} | {fmt_calls(c['calls']):>18s} | "
                  f"{fmt_calls(c['nodes']):>14s} | {sec:>8s}")
    for th in thresholds:
        ours = table[("fast", th)]["calls"]
        parts = []
        for m in ("study", "es", "os"):
            theirs = table[(m, th)]["calls"]
            parts.append(f"{LABELS[m]} " + ("not reached" if theirs is None else
                                            (f"{theirs / ours:.1f}x" if ours else "n/a")))
        print(f"terminal histories to {th:g}, against CP-GRPO fast ({fmt_calls(ours)}): " + ", ".join(parts))


def main() -> None:
    args = _parser().parse_args()
    budgets = args.budgets or (QUICK_BUDGETS if args.quick else DEFAULT_BUDGETS)
    seeds = args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    workers = max(1, args.workers if args.workers is not None else (1 if args.quick else 2))
    study, sources = hyperparameters(args.study_json, {"eta": args.eta, "alpha": args.alpha, "kappa": args.kappa})
    wall0 = time.perf_counter()
    _print_setup(seeds, study, sources)
    jobs = [(m, seed, budgets, extra) for m, extra in (("os", None), ("es", None), ("fast", FAST), ("study", study))
            for seed in seeds]                                     # longest first: OS, ES, ours
    results, compute = _run_all(jobs, workers)
    by = {m: [results[m][s] for s in seeds] for m in METHODS}
    _print_curves(by, budgets, compute, workers, wall0)
    _print_thresholds(by, args.thresholds, budgets, seeds)


if __name__ == "__main__":
    main()
