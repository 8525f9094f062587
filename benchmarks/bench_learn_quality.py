"""Learning quality: our converging CP-GRPO against OpenSpiel's sampled MCCFR solvers on Leduc, on common units.

Four learners run in this one process (or its worker processes) on the same
machine, on the same seeds, each recorded at the same budgets and scored by
the exact exploitability (NashConv / 2, chips; the uniform policy is 2.3736)
of its *average* policy:

* ours, fast: the converging CP-GRPO with the options of issue 33 (history
  baseline, alpha decay, weighted averaging: `FAST`, the configuration
  `benchmarks/learner_ideas.md` recommends);
* ours, study: the converging CP-GRPO as chapter 05's study tuned it (read
  from `results/05_solver_study.json` under tuning.converging.cp_grpo; eta 8,
  alpha 1, kappa 0.01 when the file holds none);
* OS-MCCFR: pyspiel's C++ `OutcomeSamplingMCCFRSolver(game, epsilon=0.6,
  seed)`, scored with `pyspiel.exploitability(game, solver.average_policy())`;
* ES-MCCFR: pyspiel's C++ `ExternalSamplingMCCFRSolver(game, seed,
  MCCFRAverageType.SIMPLE)`, scored the same way.

Our learners run on `loop.Learners` (fused kernels) without a budget and are
recorded after the first iteration that reaches each budget (their realised
calls, which pass it by less than one iteration's); their exploitability is
our exact evaluator's, and at the largest budget pyspiel's is printed beside.

Common units.  *Terminal histories*: one of our physical calls is one branch
rollout, from the node after the root action at a decision point to the end
of the hand: it reaches exactly one terminal history.  An OS-MCCFR episode
samples one terminal history (one `run_iteration()` of pyspiel is one
episode per player: detected at start-up and printed).  An ES-MCCFR
iteration (one traversal per player) walks every action of the traverser
and samples chance and the other player, so it reaches many terminal
histories; it is run for round(budget / terminal histories per iteration)
iterations.  *Nodes touched*: every history a method visits (chance,
decision and terminal).  ES's and OS's are counted by running OpenSpiel's
Python implementations of the same algorithms with counters (`--probe`
iterations, numpy seeded), ours by playing the first seed's fast run again
on the torch path (bitwise the same run) with a counter of the chance events
its rollouts reach: a call touches its branch's nodes (the node after the
root action, every chance event and decision after it, the terminal) plus
its share of the decision point, which the group's branches share.  *Wall
time*: each learner's own time, its evaluations left out, on one core.

Calls to a threshold (0.2 chips and the paper's CP-GRPO exploitability, read from the claims file, by default): per seed, the first
crossing of the recorded curve, interpolated linearly in log budget and log
exploitability between the two budgets around it (`learning.study_design.
calls_to`'s rule); over seeds, the geometric mean of the seeds that reach it,
with how many do.  Nodes and seconds to a threshold are taken at the same
crossing (seconds interpolated linearly in calls).

Caveat: our learner also walks the whole tree every iteration with the exact
game model (chance probabilities, and the opponent's reach of every history)
to draw its decision points from the counterfactual law, to sample the hidden
card from its posterior, to weight its average policy by own reach and to
take expectations in the baseline's corrections; OS- and ES-MCCFR use the
model only to sample.  That model work is not in the units above (it is in
the wall time).  Hyperparameters are not matched: ours were chosen on
development seeds, OS-MCCFR runs at pyspiel's default exploration 0.6,
ES-MCCFR has none.

    .venv/bin/python benchmarks/bench_learn_quality.py [--quick] [--budgets 1e4,3e4,...] [--seeds 2001,2002]
        [--workers 2] [--probe 2000] [--probe-budget 3e5] [--thresholds 0.2,0.15]
        [--study-json results/05_solver_study.json] [--eta E] [--alpha A] [--kappa K]

The default (budgets 1e4 to 1e7 at four per decade, two seeds, two workers) takes about three minutes of compute
(OS-MCCFR's 1e7 episodes are most of it; about two minutes of wall time on two free cores, more when the machine is
shared); --seeds and --budgets ask for more.  --quick (budgets 1e3 to 1e5, one seed, one process) takes a few
seconds once numba's kernels are cached.  Results do not depend on --workers: every (method, seed) is its own
seeded run.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from oscc_core.chapters.solver import study as solver_study
from oscc_core.learning import calls_rules

GAME = "leduc"                    # our name
OPENSPIEL_GAME = "leduc_poker"    # OpenSpiel's
THRESHOLDS = (solver_study.ROUND_THRESHOLDS[0], solver_study.thresholds()[-1])
OS_EPSILON = 0.6                  # OS-MCCFR exploration (pyspiel's default)
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


def es_expected_cost(game, policy) -> dict:
    """Exact expected counts of one external-sampling iteration (one traversal per player, the traverser
    taking every action, chance and the other players sampled) when every player plays `policy(state)`
    (probabilities in `state.legal_actions()` order): {"terminals", "decisions", "nodes"}, nodes counting every
    history the traversal recurses into (chance, decision and terminal), as the instrumented solver does."""
    def visit(state, traverser):                 # -> (terminals, decisions, nodes) expected below `state`
        if state.is_terminal():
            return np.array([1.0, 0.0, 1.0])
        if state.is_chance_node():
            total = np.array([0.0, 0.0, 1.0])
            for action, p in state.chance_outcomes():
                total += p * visit(state.child(action), traverser)
            return total
        total = np.array([0.0, 1.0, 1.0])
        actions = state.legal_actions()
        if state.current_player() == traverser:
            for action in actions:
                total += visit(state.child(action), traverser)
        else:
            for action, p in zip(actions, policy(state)):
                if p > 0:
                    total += p * visit(state.child(action), traverser)
        return total

    counts = sum(visit(game.new_initial_state(), player) for player in range(game.num_players()))
    return dict(zip(("terminals", "decisions", "nodes"), (float(c) for c in counts)))


def uniform_policy(state) -> list[float]:
    n = len(state.legal_actions())
    return [1.0 / n] * n


# ----- OpenSpiel's solvers and the cost probes ----------------------------------------------------------
def load_openspiel():
    import pyspiel

    return pyspiel, pyspiel.load_game(OPENSPIEL_GAME)


def os_episodes_per_iteration(trials: int = 200) -> int:
    """Episodes (sampled terminal histories) in one `run_iteration()` of pyspiel's C++ OS-MCCFR: 2 (one per
    player) when, after two iterations of a fresh solver, some seed's average policy is not uniform somewhere;
    1 otherwise (with one episode per iteration the update player alternates, so every average-policy increment
    of the first two iterations is taken at zero regrets: uniform)."""
    pyspiel, game = load_openspiel()
    states = []

    def walk(state, seen):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                walk(state.child(action), seen)
            return
        key = state.information_state_string()
        if key not in seen:
            seen.add(key)
            states.append(state)
        for action in state.legal_actions():
            walk(state.child(action), seen)

    walk(game.new_initial_state(), set())
    for seed in range(trials):
        solver = pyspiel.OutcomeSamplingMCCFRSolver(game, OS_EPSILON, seed)
        solver.run_iteration()
        solver.run_iteration()
        policy = solver.average_policy()
        for state in states:
            probs = [p for _, p in policy.get_state_policy(state)]
            if max(probs) - min(probs) > 1e-12:
                return 2
    return 1


def counting_es_solver(game):
    """OpenSpiel's Python ExternalSamplingSolver, counting the nodes, decision nodes and terminal histories its
    traversals touch (attributes nodes, decisions, terminals)."""
    from open_spiel.python.algorithms import external_sampling_mccfr as es

    class Counting(es.ExternalSamplingSolver):
        def __init__(self, game):
            super().__init__(game)
            self.nodes = self.decisions = self.terminals = 0

        def _update_regrets(self, state, player):
            self.nodes += 1
            if state.is_terminal():
                self.terminals += 1
            elif not state.is_chance_node():
                self.decisions += 1
            return super()._update_regrets(state, player)

    return Counting(game)


def counting_os_solver(game):
    """OpenSpiel's Python OutcomeSamplingSolver (exploration 0.6, as pyspiel's), counting the nodes, decision
    nodes and terminal histories its episodes touch."""
    from open_spiel.python.algorithms import outcome_sampling_mccfr as osm

    class Counting(osm.OutcomeSamplingSolver):
        def __init__(self, game):
            super().__init__(game)
            self._expl = OS_EPSILON
            self.nodes = self.decisions = self.terminals = 0

        def _episode(self, state, update_player, my_reach, opp_reach, sample_reach):
            self.nodes += 1
            if state.is_terminal():
                self.terminals += 1
            elif not state.is_chance_node():
                self.decisions += 1
            return super()._episode(state, update_player, my_reach, opp_reach, sample_reach)

    return Counting(game)


def probe(kind: str, iterations: int, seed: int) -> dict:
    """Per-iteration counts of OpenSpiel's Python ES- or OS-MCCFR (`kind`) over `iterations` iterations (numpy
    seeded with `seed`): means of terminal histories, decision nodes and nodes touched, the terminal histories
    per iteration in the first and the last tenth, and the probe's seconds."""
    _, game = load_openspiel()
    np.random.seed(seed)
    solver = (counting_es_solver if kind == "es" else counting_os_solver)(game)
    per = np.zeros((iterations, 3))
    t0 = time.perf_counter()
    for i in range(iterations):
        before = (solver.terminals, solver.decisions, solver.nodes)
        solver.iteration()
        per[i] = (solver.terminals - before[0], solver.decisions - before[1], solver.nodes - before[2])
    tenth = max(1, iterations // 10)
    out = {"iterations": iterations, "seconds": time.perf_counter() - t0,
           "terminals": float(per[:, 0].mean()), "decisions": float(per[:, 1].mean()),
           "nodes": float(per[:, 2].mean()), "terminals_sd": float(per[:, 0].std()),
           "terminals_first_tenth": float(per[:tenth, 0].mean()),
           "terminals_last_tenth": float(per[-tenth:, 0].mean()),
           "nodes_first_tenth": float(per[:tenth, 2].mean()), "nodes_last_tenth": float(per[-tenth:, 2].mean())}
    if kind == "es":
        out["uniform"] = es_expected_cost(game, uniform_policy)
    return out


def run_os(seed: int, budgets, episodes_per_iteration: int) -> dict:
    """C++ OS-MCCFR with `seed`, recorded after round(budget / episodes per iteration) iterations."""
    pyspiel, game = load_openspiel()
    solver = pyspiel.OutcomeSamplingMCCFRSolver(game, OS_EPSILON, seed)
    done, records, seconds = 0, [], 0.0
    for budget in budgets:
        target = max(1, round(budget / episodes_per_iteration))
        t0 = time.perf_counter()
        while done < target:
            solver.run_iteration()
            done += 1
        seconds += time.perf_counter() - t0
        records.append({"budget": budget, "iterations": done, "calls": done * episodes_per_iteration,
                        "seconds": seconds,
                        "exploitability": float(pyspiel.exploitability(game, solver.average_policy()))})
    return {"records": records}


def run_es(seed: int, budgets, per_iteration: dict) -> dict:
    """C++ ES-MCCFR with `seed`, recorded after round(budget / terminal histories per iteration) iterations; the
    exact expected cost of an iteration under its average policy at the largest budget beside."""
    pyspiel, game = load_openspiel()
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE)
    done, records, seconds = 0, [], 0.0
    for budget in budgets:
        target = max(1, round(budget / per_iteration["terminals"]))
        t0 = time.perf_counter()
        while done < target:
            solver.run_iteration()
            done += 1
        seconds += time.perf_counter() - t0
        records.append({"budget": budget, "iterations": done, "calls": done * per_iteration["terminals"],
                        "nodes": done * per_iteration["nodes"], "seconds": seconds,
                        "exploitability": float(pyspiel.exploitability(game, solver.average_policy()))})
    average = solver.average_policy()

    def policy(state):
        probs = dict(average.get_state_policy(state))
        return [probs.get(a, 0.0) for a in state.legal_actions()]

    return {"records": records, "late_cost": es_expected_cost(game, policy)}


def ours_schedule(hyper: dict):
    from oscc_core.learning.loop import LATER_DEFAULTS, Schedule

    options = {name: hyper[name] for name in LATER_DEFAULTS if name in hyper}
    return Schedule(iterations=2 ** 62, decision_points=int(hyper["decision_points"]),
                    learning_rate=float(hyper["eta"]), decision_law=hyper["decision_law"],
                    proximal_alpha=float(hyper["alpha"]), proximal_kappa=float(hyper["kappa"]), **options)


def run_ours(seed: int, budgets, hyper: dict, engine: str = "auto", count_chance: bool = False) -> dict:
    """Our converging CP-GRPO (`loop.Learners`, arm cp_grpo) recorded after the first iteration that reaches each
    budget: realised calls, the ledger's counts, seconds of training and exact exploitability of the average
    policy; pyspiel's exploitability of the last one beside.  With `count_chance` (torch engine), also the chance
    events its rollouts reached so far at each record."""
    import torch

    from oscc_core.learning import loop
    from oscc_core.learning.checkpoints import openspiel_exploitability
    from oscc_core.learning.loop import Learners, RunSpec
    from oscc_core.learning.study import exploitability
    from oscc_core.policy import table_to_policy

    torch.set_num_threads(1)
    chance = [0]
    original = loop.play
    if count_chance:
        def counting(*args, **kwargs):
            out = original(*args, **kwargs)
            chance[0] += int(out.chance_draws.sum())
            return out
        loop.play = counting
    try:
        learners = Learners(GAME, [RunSpec("cp_grpo", seed)], ours_schedule(hyper), engine=engine)
        records, seconds = [], 0.0
        for budget in budgets:
            t0 = time.perf_counter()
            while int(learners.ledger.counts["physical_calls"][0]) < budget:
                learners.step()
            seconds += time.perf_counter() - t0
            row = learners.ledger.row(0)
            records.append({"budget": int(budget), "calls": row["physical_calls"], "iterations": row["iterations"],
                            "decisions": row["decisions"], "transitions": row["transitions"], "groups": row["groups"],
                            "chance": chance[0], "seconds": seconds,
                            "exploitability": exploitability(GAME, learners.average_tables()[0])})
    finally:
        loop.play = original
    check = openspiel_exploitability(GAME, table_to_policy(GAME, learners.average_tables()[0]))
    return {"records": records, "pyspiel_top": check, "engine": learners.engine}


def run_job(job: tuple) -> tuple:
    """(method, seed, budgets, extra) -> (method, seed, result, seconds): one worker task."""
    method, seed, budgets, extra = job
    t0 = time.perf_counter()
    if method in ("fast", "study"):
        result = run_ours(seed, budgets, extra)
    elif method == "probe":
        result = run_ours(seed, budgets, extra, engine="torch", count_chance=True)
    else:
        result = {"os": run_os, "es": run_es}[method](seed, budgets, extra)
    return method, seed, result, time.perf_counter() - t0


# ----- the report ------------------------------------------------------------------------------------------
def curve(result: dict, key: str = "calls") -> list[tuple[float, float]]:
    return [(r[key], r["exploitability"]) for r in result["records"]]


def cell(results: list[dict], i: int) -> str:
    values = [r["records"][i]["exploitability"] for r in results]
    if len(values) == 1:
        return f"{values[0]:8.4f}{'':16s}"
    return f"{np.mean(values):8.4f} [{min(values):.3f}-{max(values):.3f}]"


def our_nodes_per_call(probe_result: dict) -> list[tuple[float, float]]:
    """[(calls, nodes touched so far per call)] of the probe's records: a call's branch nodes (its transitions
    and chance events: the node after the root action, every later decision and chance event, the terminal)
    plus its group's decision point, shared by the group's calls."""
    return [(r["calls"], (r["groups"] + r["transitions"] + r["chance"]) / r["calls"])
            for r in probe_result["records"]]


def crossings(method: str, results: list[dict], threshold: float, nodes_per_call) -> dict:
    """Per seed, the terminal histories, nodes and seconds at which `results` first reach `threshold`; their
    geometric means over the seeds that do, and how many do."""
    calls, nodes, seconds = [], [], []
    for r in results:
        value, status = calls_to(curve(r), threshold)
        if status == "never":
            calls.append(None), nodes.append(None), seconds.append(None)
            continue
        calls.append(value)
        seconds.append(at_calls([(x["calls"], x["seconds"]) for x in r["records"]], value))
        nodes.append(value * nodes_per_call(value))
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
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds (budgets "
                        f"{', '.join(map(str, QUICK_BUDGETS))}, one seed, short probes)")
    parser.add_argument("--budgets", type=_argument(parse_budgets), default=None,
                        help="terminal histories (our physical calls, OS episodes, ES terminal histories), "
                             "comma-separated (default: 1e4 to 1e7, four per decade)")
    parser.add_argument("--seeds", type=_argument(parse_seeds), default=None,
                        help=f"seeds of every method (default {','.join(map(str, DEFAULT_SEEDS))})")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default 2; --quick: 1)")
    parser.add_argument("--probe", type=int, default=None,
                        help="iterations of the instrumented Python ES- and OS-MCCFR (default 2000; --quick: 100)")
    parser.add_argument("--probe-budget", type=float, default=None,
                        help="calls of our torch-path run that counts nodes (default 3e5, capped at the largest "
                             "budget)")
    parser.add_argument("--thresholds", type=_argument(parse_thresholds), default=THRESHOLDS,
                        help="exploitability targets (chips), comma-separated")
    parser.add_argument("--study-json", type=Path, default=STUDY_JSON,
                        help="the study's results, read for tuning.converging.cp_grpo")
    parser.add_argument("--eta", type=float, default=None, help="the study learner's eta")
    parser.add_argument("--alpha", type=float, default=None, help="the study learner's proximal_alpha")
    parser.add_argument("--kappa", type=float, default=None, help="the study learner's proximal_kappa")
    return parser


def _print_setup(seeds, study: dict, sources: dict, episodes_per_iteration: int) -> None:
    """The run's header: the game, each method and the hyperparameters of our two learners, with their sources."""
    import pyspiel
    print(f"Leduc ({OPENSPIEL_GAME}), exploitability = NashConv / 2 of the average policy (chips; uniform 2.3736); "
          f"pyspiel {getattr(pyspiel, '__version__', '?')}; seeds {', '.join(map(str, seeds))} for every method")
    fast = ours_schedule(FAST)
    print(f"CP-GRPO fast:  {', '.join(f'{k} = {v}' for k, v in FAST.items())}; E = {fast.epochs}, clip "
          f"{fast.epsilon} (benchmarks/learner_ideas.md)")
    if len(set(sources.values())) == 1:
        used = ", ".join(f"{name} = {study[name]}" for name in FALLBACK) + f" [{sources['eta']}]"
    else:
        used = ", ".join(f"{name} = {study[name]} [{sources[name]}]" for name in FALLBACK)
    options = ", ".join(f"{name} = {study[name]}" for name in OPTION_NAMES if name in study)
    print(f"CP-GRPO study: {used}" + (f"; options of the study's design: {options}" if options else ""))
    epi = episodes_per_iteration
    print(f"OS-MCCFR: pyspiel C++ OutcomeSamplingMCCFRSolver(game, epsilon={OS_EPSILON}, seed); one run_iteration() "
          f"= {epi} episode{'s' if epi > 1 else ''} (detected); one episode = one sampled terminal history")
    print("ES-MCCFR: pyspiel C++ ExternalSamplingMCCFRSolver(game, seed, SIMPLE); iterations = budget / terminal "
          "histories per iteration (probe below)")


def _run_all(jobs: list, workers: int) -> tuple[dict, dict]:
    """Every job's result by method and seed, and each method's compute seconds (summed over its jobs)."""
    results: dict = {m: {} for m in METHODS + ("probe",)}
    compute: dict = {m: 0.0 for m in METHODS + ("probe",)}
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


def _print_probes(probes: dict, by: dict, probe_run: dict, budgets) -> list:
    """What one unit of each method costs in nodes touched (the instrumented probes); returns our nodes per call
    as the probe measured it by each budget (`our_nodes_per_call`)."""
    print()
    print("Cost probes (OpenSpiel's Python solvers, instrumented; our first seed's fast run replayed on the torch path):")
    for kind in ("es", "os"):
        p = probes[kind]
        unit = "iteration (one traversal per player)" if kind == "es" else "iteration (one episode per player)"
        print(f"  {LABELS[kind]}: per {unit}, {p['terminals']:.2f} terminal histories, {p['decisions']:.2f} decision "
              f"nodes, {p['nodes']:.2f} nodes touched ({p['iterations']} iterations; nodes per terminal history "
              f"{p['nodes'] / p['terminals']:.2f}, first tenth {p['nodes_first_tenth'] / p['terminals_first_tenth']:.2f}"
              f", last tenth {p['nodes_last_tenth'] / p['terminals_last_tenth']:.2f})")
    u = probes["es"]["uniform"]
    late = {k: float(np.mean([r["late_cost"][k] for r in by["es"]])) for k in ("terminals", "decisions", "nodes")}
    print(f"  ES exact expectation per iteration: uniform policy {u['terminals']:.2f} terminal histories, {u['nodes']:.2f}"
          f" nodes; its average policy at {budgets[-1]:,}: {late['terminals']:.2f} terminal histories "
          f"({100 * (late['terminals'] / probes['es']['terminals'] - 1):+.1f}% against the probe), {late['nodes']:.2f} "
          "nodes")
    fast_first = by["fast"][0]
    same = all(a["exploitability"] == b["exploitability"] for a, b in zip(probe_run["records"], fast_first["records"]))
    npc = our_nodes_per_call(probe_run)
    last = probe_run["records"][-1]
    print(f"  one of our physical calls = one branch rollout from the node after the root action to the end of the "
          f"hand = ONE sampled terminal history; over {last['calls']:,} calls of the probe it touched "
          f"{npc[-1][1]:.2f} nodes on average ({last['transitions'] / last['calls']:.2f} transitions: the root action "
          f"and {last['decisions'] / last['calls']:.2f} later decisions; {last['chance'] / last['calls']:.2f} chance "
          f"events; {last['groups'] / last['calls']:.2f} decision points, each shared by its group's "
          f"{last['calls'] / last['groups']:.2f} branches); at {npc[0][0]:,} calls {npc[0][1]:.2f}")
    print(f"  the torch-path replay {'equals' if same else 'DIFFERS FROM'} the fused run's exploitability at every "
          f"budget it reached ({probe_run['engine']} against {fast_first['engine']})")
    return npc


def _print_curves(by: dict, budgets, compute: dict, workers: int, wall0: float) -> None:
    """Exploitability per budget and method (mean and range over seeds), the pyspiel recheck of our last
    policies, and the compute spent."""
    print()
    header = " | ".join(f"{LABELS[m] + ' (mean [min-max])':>26s}" for m in METHODS)
    print(f"{'budget':>11s} | {header}")
    for i, b in enumerate(budgets):
        print(f"{b:>11,d} | " + " | ".join(f"{cell(by[m], i):>26s}" for m in METHODS))
    print()
    for m in ("fast", "study"):
        top = [r["records"][-1] for r in by[m]]
        diff = max(abs(r["records"][-1]["exploitability"] - r["pyspiel_top"]) for r in by[m])
        print(f"{LABELS[m]} at {budgets[-1]:,}: pyspiel.exploitability of the same average policies differs from ours "
              f"by at most {diff:.1e}; realised calls {min(r['calls'] for r in top):,}-{max(r['calls'] for r in top):,}"
              f", {np.mean([r['iterations'] for r in top]):,.0f} iterations")
    print(f"compute (all seeds, one core each, evaluations included): "
          + ", ".join(f"{LABELS[m]} {compute[m]:.1f} s" for m in METHODS)
          + f", node probe {compute['probe']:.1f} s; {workers} worker{'s' if workers > 1 else ''}; "
          f"wall {time.perf_counter() - wall0:.1f} s")


def _print_thresholds(by: dict, thresholds, budgets, seeds, nodes_per: dict) -> None:
    """Per method and threshold: seeds that reach it, terminal histories, nodes and seconds at the crossing; then
    each method's histories against our fast learner's."""
    print()
    print("To each threshold, per method: geometric mean over the seeds that reach it (first crossing, log-log "
          f"between budgets; {len(budgets)} budgets from {budgets[0]:,} to {budgets[-1]:,}); nodes touched and "
          "seconds (training only, one core) at the same crossing")
    print(f"{'method':>14s} | {'threshold':>9s} | {'seeds':>5s} | {'terminal histories':>18s} | {'nodes touched':>14s} | "
          f"{'seconds':>8s}")
    table = {}
    for th in thresholds:
        for m in METHODS:
            c = crossings(m, by[m], th, nodes_per[m])
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
    probe_iterations = max(10, args.probe or (100 if args.quick else 2000))
    probe_top = min(budgets[-1], args.probe_budget or (budgets[-1] if args.quick else 3e5))
    probe_budgets = tuple(b for b in budgets if b <= probe_top) or budgets[:1]
    study, sources = hyperparameters(args.study_json, {"eta": args.eta, "alpha": args.alpha, "kappa": args.kappa})
    wall0 = time.perf_counter()
    epi = os_episodes_per_iteration()
    _print_setup(seeds, study, sources, epi)

    probes = {kind: probe(kind, probe_iterations, seeds[0]) for kind in ("es", "os")}
    jobs = [(m, seed, budgets, extra) for m, extra in (("os", epi), ("es", probes["es"]), ("fast", FAST),
                                                       ("study", study)) for seed in seeds]
    jobs.append(("probe", seeds[0], probe_budgets, FAST))     # longest first: OS, ES, ours, the probe
    results, compute = _run_all(jobs, workers)
    by = {m: [results[m][s] for s in seeds] for m in METHODS}
    npc = _print_probes(probes, by, results["probe"][seeds[0]], budgets)

    def our_nodes(calls):                       # nodes per call so far, as the probe measured it by then
        return at_calls(npc, calls) if calls <= npc[-1][0] else npc[-1][1]

    nodes_per = {"fast": our_nodes, "study": lambda c: npc[-1][1],
                 "os": lambda c: probes["os"]["nodes"] / probes["os"]["terminals"],
                 "es": lambda c: probes["es"]["nodes"] / probes["es"]["terminals"]}
    _print_curves(by, budgets, compute, workers, wall0)
    _print_thresholds(by, args.thresholds, budgets, seeds, nodes_per)


if __name__ == "__main__":
    main()
