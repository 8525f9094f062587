"""Learning quality: our converging CP-GRPO against OpenSpiel's sampled MCCFR solvers on Leduc, at equal cost.

All three run in this one process (or its worker processes) on the same
machine, each recorded at the same budgets, and each is scored by the exact
exploitability (NashConv / 2, chips; the uniform policy is 2.3736) of its
*average* policy:

* ours: `oscc_core.learning.study.run_task` on arm cp_grpo with the converging
  learner's options (counterfactual decision law, proximal pull toward a
  moving magnet); a budget is a number of physical calls, and the record at
  budget b is exactly what a run with budget b ends with.  Its exploitability
  is our exact evaluator's; at the largest budget it is recomputed with
  `pyspiel.exploitability` and the difference is printed;
* OS-MCCFR: pyspiel's C++ `OutcomeSamplingMCCFRSolver(game, epsilon=0.6,
  seed)`; `pyspiel.exploitability(game, solver.average_policy())`;
* ES-MCCFR: pyspiel's C++ `ExternalSamplingMCCFRSolver(game, seed,
  MCCFRAverageType.SIMPLE)`, scored the same way.

How the costs are compared.  Our physical call is one rollout from a
decision point to the end of the hand (one branch): it reaches exactly one
terminal history.  The common unit is therefore *terminal histories reached*:

* OS-MCCFR samples one terminal history per episode.  One `run_iteration()`
  of the installed pyspiel is one episode per player (2 in Leduc); the
  benchmark detects this at start-up (after two iterations from fresh
  solvers, an average policy that is not uniform somewhere needs two
  episodes per iteration: with one episode per iteration, the update player
  alternates and every average-policy increment so far is taken while its
  regrets are still zero) and prints it.  Its budget is in episodes.
* ES-MCCFR walks every action of the traversing player and samples chance
  and the opponent, so one iteration (one traversal per player) reaches many
  terminal histories and touches many more nodes.  Its cost per iteration is
  measured by running OpenSpiel's Python implementation
  (`open_spiel.python.algorithms.external_sampling_mccfr`, the same
  algorithm) instrumented with counters of the nodes it touches (every
  history it recurses into: chance, decision and terminal), the decision
  nodes and the terminal histories, for `--es-probe-iterations` iterations,
  seeded through numpy's global generator (which that implementation uses).
  The cost depends on the current policy (an opponent that folds early ends
  a traversal early), so the exact expected cost of an iteration is also
  computed under the uniform policy (iteration 1) and under the C++
  solver's average policy at the largest budget (a stand-in for late
  iterations, whose current policy pyspiel does not expose); the printed
  drift bounds the error of converting budgets with the probe's mean.  ES
  runs round(budget / terminals per iteration) iterations, and is printed in
  both units: terminal histories (the one compared with physical calls) and
  nodes touched.

Terminal histories are not equal work: our call starts mid-hand at a decision
point, an OS episode plays a whole hand from the deal, and an ES terminal
history shares its prefix with its siblings; decisions per terminal history
are printed beside for each.  The question asked is the sample cost: how many
terminal histories (returns observed) does each method need.

Output: the hyperparameters used (from `results/05_solver_study.json`
under tuning.converging.cp_grpo when that file holds them, else eta 8,
counterfactual law, alpha 1, kappa 0.01, N 128), the cost probes, per budget
the mean (and range) over seeds of each method's exploitability, the calls
each needs to reach `--threshold` chips on its mean curve (the first
crossing, interpolated linearly in log calls and log exploitability between
the two budgets around it, as `learning.study_design.calls_to` does), and last:

    calls to 0.2: ours X, OS-MCCFR Y, ratio Zx        (Z = Y / X)

    .venv/bin/python benchmarks/bench_learn_quality.py [--quick] [--budgets 1e4,3e4,1e5,...]
        [--seeds 101,102,103] [--workers 2] [--es-probe-iterations 5000] [--threshold 0.2]
        [--study-json results/05_solver_study.json] [--eta E] [--alpha A] [--kappa K]
        [--decision-law L] [--decision-points N]

The default run (budgets 1e4 to 1e7 at four per decade, three seeds, two
worker processes) took 98 s on two free cores and 187 s when the shared
machine was loaded (about 190 s and 370 s of single-core compute: OS-MCCFR
is the longest); --quick (budgets 1e3, 1e4, 1e5, one seed, one process)
takes about 3 s.  Results do not depend on --workers: every (method, seed)
is its own seeded run.

Caveat: a physical call counts rollouts only.  Our learner also walks the
whole tree every iteration with the exact game model (chance probabilities
and the opponent's reach) to draw its decision points from the
counterfactual law, to sample the hidden card from its posterior and to
weight its average policy by own reach; OS- and ES-MCCFR use the model only
to sample.  Neither the uncounted model work nor the hyperparameters are
matched: ours are the tuned (or prototype) values, OS-MCCFR runs at
pyspiel's default exploration 0.6, ES-MCCFR has none.
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

GAME = "leduc"                    # our name
OPENSPIEL_GAME = "leduc_poker"    # OpenSpiel's
THRESHOLD = 0.2
OS_EPSILON = 0.6                  # OS-MCCFR exploration (pyspiel's default)
STUDY_JSON = Path(__file__).resolve().parents[1] / "results" / "05_solver_study.json"
#: The converging CP-GRPO's hyperparameters when the study's tuning is not available.
FALLBACK = {"eta": 8.0, "alpha": 1.0, "kappa": 0.01, "decision_law": "counterfactual", "decision_points": 128}
#: Names under which a study file may hold each hyperparameter (the first is ours).
ALIASES = {"eta": ("eta", "learning_rate"), "alpha": ("alpha", "proximal_alpha"),
           "kappa": ("kappa", "proximal_kappa"), "decision_law": ("decision_law",),
           "decision_points": ("decision_points", "N")}
DEFAULT_SEEDS = (101, 102, 103)
QUICK_SEEDS = (101,)
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


def tuned_hyperparameters(study: object) -> dict:
    """The converging CP-GRPO's hyperparameters held by a study's results (`study`, parsed JSON) under
    tuning.converging.cp_grpo (directly, or under a "choice" / "chosen" / "best" entry), as {name: value}
    for the names of `FALLBACK` it holds with a usable value; {} when it holds none."""
    node = study
    for key in ("tuning", "converging", "cp_grpo"):
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return {}
        node = node[key]
    for inner in ("choice", "chosen", "best"):
        if isinstance(node.get(inner), dict):
            node = node[inner]
            break
    out = {}
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
    """({name: value}, {name: where it came from}): the command line's `overrides` first, then the study file at
    `path` (read defensively: missing, unreadable or incomplete is not an error), then `FALLBACK`."""
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
    return values, sources


def calls_to(points, threshold: float) -> tuple[float | None, str]:
    """Where a curve [(calls, exploitability), ...] first falls to `threshold`: (calls, "crossed") interpolated
    linearly in log calls and log exploitability between the budgets around the crossing; (first calls,
    "at_start") when it is already there at the smallest budget; (None, "never") when it never is."""
    pts = sorted((float(c), float(e)) for c, e in points)
    if not pts:
        return None, "never"
    if pts[0][1] <= threshold:
        return pts[0][0], "at_start"
    for (c0, e0), (c1, e1) in itertools.pairwise(pts):
        if e1 <= threshold:
            f = (math.log(e0) - math.log(threshold)) / (math.log(e0) - math.log(e1))
            return math.exp(math.log(c0) + f * (math.log(c1) - math.log(c0))), "crossed"
    return None, "never"


def fmt_calls(x: float) -> str:
    """Calls at 3 significant figures with thousands separators: 1234567.8 -> '1,230,000'."""
    return f"{round_sig(x):,}"


def last_line(threshold: float, ours: tuple, theirs: tuple, ours_top: float, theirs_top: float) -> str:
    """`calls to T: ours X, OS-MCCFR Y, ratio Zx` from two `calls_to` answers; a method that never reaches the
    threshold is said to, with its largest budget, and the ratio becomes a bound (or n/a)."""
    def part(answer, top):
        value, status = answer
        if status == "never":
            return f"not reached within {fmt_calls(top)}"
        return ("<= " if status == "at_start" else "") + fmt_calls(value)

    (x, sx), (y, sy) = ours, theirs
    if sx != "never" and sy != "never":
        bound = {("crossed", "crossed"): "", ("at_start", "crossed"): ">= ", ("crossed", "at_start"): "<= "}
        ratio = "n/a (both at or below it at the smallest budget)" if (sx, sy) == ("at_start", "at_start") \
            else f"{bound[(sx, sy)]}{y / x:.1f}x"
    elif sx != "never":                          # OS never: its calls exceed its top budget
        ratio = f"> {theirs_top / x:.1f}x"
    elif sy != "never":                          # ours never
        ratio = f"< {y / ours_top:.1f}x"
    else:
        ratio = "n/a (neither reaches it)"
    return f"calls to {threshold:g}: ours {part(ours, ours_top)}, OS-MCCFR {part(theirs, theirs_top)}, ratio {ratio}"


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


def es_probe(iterations: int, seed: int) -> dict:
    """Per-iteration counts of OpenSpiel's Python ES-MCCFR over `iterations` iterations (numpy seeded with
    `seed`): the means, and the terminal histories per iteration in the first and the last tenth."""
    _, game = load_openspiel()
    np.random.seed(seed)
    solver = counting_es_solver(game)
    per = np.zeros((iterations, 3))
    t0 = time.perf_counter()
    for i in range(iterations):
        before = (solver.terminals, solver.decisions, solver.nodes)
        solver.iteration()
        per[i] = (solver.terminals - before[0], solver.decisions - before[1], solver.nodes - before[2])
    tenth = max(1, iterations // 10)
    return {"iterations": iterations, "seconds": time.perf_counter() - t0,
            "terminals": float(per[:, 0].mean()), "decisions": float(per[:, 1].mean()),
            "nodes": float(per[:, 2].mean()), "terminals_sd": float(per[:, 0].std()),
            "terminals_first_tenth": float(per[:tenth, 0].mean()),
            "terminals_last_tenth": float(per[-tenth:, 0].mean()),
            "uniform": es_expected_cost(game, uniform_policy)}


def run_os(seed: int, budgets, episodes_per_iteration: int) -> dict:
    """C++ OS-MCCFR with `seed`, recorded after round(budget / episodes per iteration) iterations."""
    pyspiel, game = load_openspiel()
    solver = pyspiel.OutcomeSamplingMCCFRSolver(game, OS_EPSILON, seed)
    done, records = 0, []
    for budget in budgets:
        target = max(1, round(budget / episodes_per_iteration))
        while done < target:
            solver.run_iteration()
            done += 1
        records.append({"budget": budget, "iterations": done, "calls": done * episodes_per_iteration,
                        "exploitability": float(pyspiel.exploitability(game, solver.average_policy()))})
    return {"records": records}


def run_es(seed: int, budgets, per_iteration: dict) -> dict:
    """C++ ES-MCCFR with `seed`, recorded after round(budget / terminal histories per iteration) iterations; the
    exact expected cost of an iteration under its average policy at the largest budget beside."""
    pyspiel, game = load_openspiel()
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE)
    done, records = 0, []
    for budget in budgets:
        target = max(1, round(budget / per_iteration["terminals"]))
        while done < target:
            solver.run_iteration()
            done += 1
        records.append({"budget": budget, "iterations": done, "calls": done * per_iteration["terminals"],
                        "nodes": done * per_iteration["nodes"],
                        "exploitability": float(pyspiel.exploitability(game, solver.average_policy()))})
    average = solver.average_policy()

    def policy(state):
        probs = dict(average.get_state_policy(state))
        return [probs.get(a, 0.0) for a in state.legal_actions()]

    return {"records": records, "late_cost": es_expected_cost(game, policy)}


def ours_schedule(hyper: dict):
    from oscc_core.learning.loop import Schedule

    return Schedule(decision_points=int(hyper["decision_points"]), learning_rate=float(hyper["eta"]),
                    decision_law=hyper["decision_law"], proximal_alpha=float(hyper["alpha"]),
                    proximal_kappa=float(hyper["kappa"]))


def run_ours(seed: int, budgets, hyper: dict) -> dict:
    """Our converging CP-GRPO (`learning.study.run_task`), and pyspiel's exploitability of its average policy at
    the largest budget beside ours."""
    from oscc_core.learning.checkpoints import openspiel_exploitability
    from oscc_core.learning.study import Task, run_task
    from oscc_core.policy import table_to_policy

    result = run_task(Task.make(GAME, "converging", "cp_grpo", seed, ours_schedule(hyper), budgets,
                                keep_table=True))
    records = [{"budget": int(b), "calls": r["physical_calls"], "iterations": r["iterations"],
                "decisions": r["decisions"], "transitions": r["transitions"],
                "exploitability": r["exploitability_average"]} for b, r in result["runs"][str(seed)].items()]
    check = openspiel_exploitability(GAME, table_to_policy(GAME, np.asarray(result["tables"][str(seed)])))
    return {"records": records, "pyspiel_top": check}


def run_job(job: tuple) -> tuple:
    """(method, seed, budgets, extra) -> (method, seed, result, seconds): one worker task."""
    method, seed, budgets, extra = job
    t0 = time.perf_counter()
    result = {"os": run_os, "es": run_es, "ours": run_ours}[method](seed, budgets, extra)
    return method, seed, result, time.perf_counter() - t0


# ----- the report ------------------------------------------------------------------------------------------
def mean_curve(results: list[dict], budgets) -> list[tuple[float, float]]:
    """[(mean calls, mean exploitability over seeds)] per budget."""
    out = []
    for i, _ in enumerate(budgets):
        out.append((float(np.mean([r["records"][i]["calls"] for r in results])),
                    float(np.mean([r["records"][i]["exploitability"] for r in results]))))
    return out


def cell(results: list[dict], i: int) -> str:
    values = [r["records"][i]["exploitability"] for r in results]
    if len(values) == 1:
        return f"{values[0]:8.4f}{'':16s}"
    return f"{np.mean(values):8.4f} [{min(values):.3f}-{max(values):.3f}]"


def per_seed_calls(results: list[dict], threshold: float) -> str:
    parts = []
    for r in results:
        value, status = calls_to([(x["calls"], x["exploitability"]) for x in r["records"]], threshold)
        parts.append("never" if status == "never" else ("<=" if status == "at_start" else "") + fmt_calls(value))
    return ", ".join(parts)


def _argument(parse):
    """`parse` for argparse: its ValueError's sentence becomes the usage error."""
    def wrapped(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds (budgets "
                        f"{', '.join(map(str, QUICK_BUDGETS))}, one seed, a short ES probe)")
    parser.add_argument("--budgets", type=_argument(parse_budgets), default=None,
                        help="physical calls / episodes / terminal histories, comma-separated (default: 1e4 to 1e7, "
                             "four per decade)")
    parser.add_argument("--seeds", type=_argument(parse_seeds), default=None, help="seeds of every method (default 101,102,103)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default 2; --quick: 1)")
    parser.add_argument("--es-probe-iterations", type=int, default=None,
                        help="iterations of the instrumented Python ES-MCCFR (default 5000; --quick: 200)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD, help="exploitability target (chips)")
    parser.add_argument("--study-json", type=Path, default=STUDY_JSON,
                        help="the study's results, read for tuning.converging.cp_grpo")
    parser.add_argument("--eta", type=float, default=None)
    parser.add_argument("--alpha", type=float, default=None, help="proximal_alpha")
    parser.add_argument("--kappa", type=float, default=None, help="proximal_kappa")
    parser.add_argument("--decision-law", choices=("on_policy", "counterfactual", "uniform"), default=None)
    parser.add_argument("--decision-points", type=int, default=None, help="N")
    args = parser.parse_args()
    budgets = args.budgets or (QUICK_BUDGETS if args.quick else DEFAULT_BUDGETS)
    seeds = args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    workers = max(1, args.workers if args.workers is not None else (1 if args.quick else 2))
    probe_iterations = max(10, args.es_probe_iterations or (200 if args.quick else 5000))
    hyper, sources = hyperparameters(args.study_json, {"eta": args.eta, "alpha": args.alpha, "kappa": args.kappa,
                                                       "decision_law": args.decision_law,
                                                       "decision_points": args.decision_points})
    wall0 = time.perf_counter()

    import pyspiel
    schedule = ours_schedule(hyper)
    print(f"Leduc ({OPENSPIEL_GAME}), exploitability = NashConv / 2 of the average policy (chips; uniform 2.3736); "
          f"pyspiel {getattr(pyspiel, '__version__', '?')}")
    if len(set(sources.values())) == 1:
        used = ", ".join(f"{name} = {hyper[name]}" for name in FALLBACK) + f" [{sources['eta']}]"
    else:
        used = ", ".join(f"{name} = {hyper[name]} [{sources[name]}]" for name in FALLBACK)
    print(f"ours: converging CP-GRPO, {used}")
    print(f"      E = {schedule.epochs} epochs, clip {schedule.epsilon}; seeds {', '.join(map(str, seeds))} "
          f"(the same seeds for every method)")
    epi = os_episodes_per_iteration()
    print(f"OS-MCCFR: pyspiel C++ OutcomeSamplingMCCFRSolver(game, epsilon={OS_EPSILON}, seed); one run_iteration() "
          f"= {epi} episode{'s' if epi > 1 else ''} (detected: {'one per player' if epi == 2 else 'alternating player'}"
          f"); 1 episode = 1 sampled terminal history")
    probe = es_probe(probe_iterations, seeds[0])
    u = probe["uniform"]
    print(f"ES-MCCFR: pyspiel C++ ExternalSamplingMCCFRSolver(game, seed, SIMPLE); cost per iteration measured on "
          f"OpenSpiel's Python ES, {probe['iterations']} iterations ({probe['seconds']:.1f} s):")
    print(f"      {probe['terminals']:.2f} terminal histories (sd {probe['terminals_sd']:.2f}; first tenth "
          f"{probe['terminals_first_tenth']:.2f}, last tenth {probe['terminals_last_tenth']:.2f}), "
          f"{probe['decisions']:.2f} decision nodes, {probe['nodes']:.2f} nodes touched (with chance and terminal)")
    print(f"      exact expectation under the uniform policy: {u['terminals']:.2f} terminal histories, "
          f"{u['decisions']:.2f} decision nodes, {u['nodes']:.2f} nodes")
    print("cost axis: terminal histories reached = our physical calls (one branch rollout from a decision point) = "
          "OS episodes = ES terminal histories (ES iterations = budget / terminal histories per iteration)")

    jobs = [(m, seed, budgets, extra) for m, extra in (("os", epi), ("es", probe), ("ours", hyper))
            for seed in seeds]                  # longest first: OS, ES, ours
    results: dict = {"os": {}, "es": {}, "ours": {}}
    seconds: dict = {"os": 0.0, "es": 0.0, "ours": 0.0}
    if workers == 1:
        done = map(run_job, jobs)
    else:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
        done = pool.map(run_job, jobs)
    for method, seed, result, sec in done:
        results[method][seed] = result
        seconds[method] += sec
    if workers > 1:
        pool.shutdown()
    by = {m: [results[m][s] for s in seeds] for m in results}

    print()
    print(f"{'budget':>11s} | {'ours (mean [min-max])':>26s} | {'OS-MCCFR':>26s} | {'ES-MCCFR':>26s} | "
          f"{'ES iterations':>13s} | {'ES nodes':>11s}")
    for i, b in enumerate(budgets):
        es_rec = by["es"][0]["records"][i]
        print(f"{b:>11,d} | {cell(by['ours'], i):>26s} | {cell(by['os'], i):>26s} | {cell(by['es'], i):>26s} | "
              f"{es_rec['iterations']:>13,d} | {round_sig(es_rec['nodes']):>11,d}")
    top = [r["records"][-1] for r in by["ours"]]
    diff = max(abs(r["records"][-1]["exploitability"] - r["pyspiel_top"]) for r in by["ours"])
    late = {k: float(np.mean([r["late_cost"][k] for r in by["es"]])) for k in ("terminals", "decisions", "nodes")}
    print()
    print(f"ours at {budgets[-1]:,}: pyspiel.exploitability of the same average policies differs from ours by at most "
          f"{diff:.1e}; realised calls {min(r['calls'] for r in top):,}-{max(r['calls'] for r in top):,}, "
          f"{np.mean([r['iterations'] for r in top]):,.0f} iterations, "
          f"{np.mean([r['decisions'] / r['calls'] for r in top]):.2f} decisions and "
          f"{np.mean([r['transitions'] / r['calls'] for r in top]):.2f} transitions per call")
    print(f"ES per terminal history: {probe['decisions'] / probe['terminals']:.2f} decision nodes, "
          f"{probe['nodes'] / probe['terminals']:.2f} nodes touched; exact cost of an iteration under its average "
          f"policy at {budgets[-1]:,}: {late['terminals']:.2f} terminal histories "
          f"({100 * (late['terminals'] / probe['terminals'] - 1):+.1f}% against the probe), "
          f"{late['nodes']:.2f} nodes")
    print(f"compute (all seeds, one core each): ours {seconds['ours']:.1f} s, OS-MCCFR {seconds['os']:.1f} s, "
          f"ES-MCCFR {seconds['es']:.1f} s; {workers} worker{'s' if workers > 1 else ''}; "
          f"wall {time.perf_counter() - wall0:.1f} s")
    th = args.threshold
    answers = {m: calls_to(mean_curve(by[m], budgets), th) for m in by}
    tops = {m: mean_curve(by[m], budgets)[-1][0] for m in by}
    print(f"per seed, calls to {th:g}: ours {per_seed_calls(by['ours'], th)}; OS-MCCFR {per_seed_calls(by['os'], th)}; "
          f"ES-MCCFR {per_seed_calls(by['es'], th)}")
    es_value, es_status = answers["es"]
    if es_status == "never":
        es_text = f"not reached within {fmt_calls(tops['es'])} terminal histories"
    else:
        nodes_per = probe["nodes"] / probe["terminals"]
        es_text = (f"{'<= ' if es_status == 'at_start' else ''}{fmt_calls(es_value)} terminal histories "
                   f"({fmt_calls(es_value / probe['terminals'])} iterations, {fmt_calls(es_value * nodes_per)} nodes "
                   f"touched); ratio to ours {es_value / answers['ours'][0]:.2f}x" if answers["ours"][1] != "never"
                   else f"{fmt_calls(es_value)} terminal histories")
    print(f"ES-MCCFR calls to {th:g} (mean curve): {es_text}")
    print(last_line(th, answers["ours"], answers["os"], tops["ours"], tops["os"]))


if __name__ == "__main__":
    main()
