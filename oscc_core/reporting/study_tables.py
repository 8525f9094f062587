"""Tables, curves and orderings of a learning study's summary that every chapter with a study shows alike.

A study summary is ``{budget: {"arms": {arm: {quantity: interval}}, "differences": {"<arm> - cp_grpo":
interval}}}`` for one learner (`learning.study_design.summary`), with budgets in physical calls as string keys
and intervals ``{"mean", "low", "high", "n"}`` (95% over seeds).  Units: exploitability in chips; budgets and
calls in physical calls (one branch rollout; PPO: one hand).
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning import calls_rules
from oscc_core.learning.study_design import Grid, curve_rise
from oscc_core.reporting.claims import Relation

ARM_COLORS = {"cp_grpo": "#1f77b4", "independent": "#ff7f0e", "grpo": "#2ca02c", "ppo": "#d62728"}
BAND_FLOOR = 1e-4        # chips: the lowest a band is drawn on the log axis (an interval may reach below 0)


def budgets(design: dict) -> list[int]:
    """The study's summary budgets (physical calls)."""
    return [int(b) for b in design["budgets"]]


def budget_label(design: dict, budget: int) -> str:
    """'10x (614,400)': the budget as a multiple of the paper's, and in calls."""
    return f"{budget // design['budget']}x ({budget:,})"


def interval_cell(iv: dict, digits: int = 3) -> str:
    """'mean [low, high]', the mean alone when no interval exists, '—' when nothing does."""
    if iv["mean"] is None:
        return "—"
    if iv["low"] is None:
        return f"{iv['mean']:.{digits}f}"
    return f"{iv['mean']:.{digits}f} [{iv['low']:.{digits}f}, {iv['high']:.{digits}f}]"


#: Significant figures of a count of calls in a table or a sentence.
CALLS_FIGURES = 3


def calls_number(x: float, figures: int = CALLS_FIGURES) -> str:
    """A count of calls to `figures` significant figures, comma-grouped as the book writes every count: 108,000
    (never 1.08e+05 beside another table's 108,000)."""
    return f"{float(f'{float(x):.{figures}g}'):,.0f}"


def calls_text(t: dict) -> str:
    """Calls to reach a threshold: geometric mean [95% interval] (seeds that reach it / all), or 'never'; each
    count as `calls_number` writes it."""
    if t["geometric_mean"] is None:
        return f"never (0/{t['seeds']})"
    if t["low"] is None:
        return f"{calls_number(t['geometric_mean'])} ({t['reached']}/{t['seeds']})"
    return (f"{calls_number(t['geometric_mean'])} [{calls_number(t['low'])}, {calls_number(t['high'])}] "
            f"({t['reached']}/{t['seeds']})")


def _frame(rows: dict, index: str):
    import pandas as pd

    frame = pd.DataFrame.from_dict(rows, orient="index").fillna("not run")
    frame.index.name = index
    return frame


def exploitability_frame(summary: dict, design: dict, quantity: str = "exploitability_average", digits: int = 3):
    """Arms x budgets: seed mean and 95% t-interval of `quantity` (chips); 'not run' where an arm has no run."""
    rows: dict = {}
    for b in budgets(design):
        for arm, q in summary.get(str(b), {"arms": {}})["arms"].items():
            rows.setdefault(arm, {})[budget_label(design, b)] = interval_cell(q[quantity], digits)
    return _frame(rows, "arm")


def differences_frame(summary: dict, design: dict, digits: int = 3):
    """Comparisons x budgets: paired difference arm - CP-GRPO (chips, seeds matched), its 95% interval, and the
    seeds on which CP-GRPO is lower."""
    rows: dict = {}
    for b in budgets(design):
        for name, d in summary.get(str(b), {"differences": {}})["differences"].items():
            rows.setdefault(name, {})[budget_label(design, b)] = \
                f"{interval_cell(d, digits)} ({d['cp_grpo_lower']}/{d['n']})"
    return _frame(rows, "difference (chips)")


def order_relation(entry: dict, arm: str, lowest: str) -> Relation:
    """The paper's ordering of exploitability (CP-GRPO lowest) at one budget's `entry`: held when every paired
    difference arm - CP-GRPO is above 0 on the seed means, resolved when every 95% interval of those differences
    lies above 0.  `lowest` names the relation for CP-GRPO itself ('cp_grpo lowest ...')."""
    diffs = entry["differences"]
    names = list(diffs) if arm == "cp_grpo" else [f"{arm} - cp_grpo"]
    text = lowest if arm == "cp_grpo" else f"cp_grpo < {arm} (paired, 95%)"
    holds = all(diffs[n]["mean"] > 0 for n in names)
    resolved = all(diffs[n]["low"] is not None and diffs[n]["low"] > 0 for n in names)
    return Relation(text, holds, resolved)


def plot_arms(ax, runs: dict, complete_only: bool = True) -> list[int]:
    """On `ax`, each arm's mean exploitability of the average policy against physical calls with its 95% band
    over seeds (`runs`: {arm: {seed: {budget: record}}}), log-log; returns the marks of the last arm drawn.
    `complete_only` keeps the marks every seed of the arm reached."""
    from oscc_core.method.stats import t_interval

    marks: list[int] = []
    for arm, seeds in runs.items():
        marks = sorted({int(b) for rec in seeds.values() for b in rec})
        if complete_only:
            marks = [b for b in marks if all(str(b) in rec for rec in seeds.values())]
        ivs = [t_interval([rec[str(b)]["exploitability_average"] for rec in seeds.values()]) for b in marks]
        ax.plot(marks, [iv.mean for iv in ivs], "-", color=ARM_COLORS[arm], label=arm)
        ax.fill_between(marks, [max(iv.low, BAND_FLOOR) for iv in ivs], [iv.high for iv in ivs],
                        color=ARM_COLORS[arm], alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("physical calls per run")
    return marks


def run_text(run: dict | None) -> str:
    """How the committed study's file was made: the runs its invocation computed, those read back from the run
    store (computed by an earlier, stopped invocation), and that invocation's wall time and workers."""
    if not run:
        return "not recorded"
    total = run.get("ran", 0) + run.get("stored", 0)
    return (f"{run.get('ran', 0)} of {total} tasks computed by the invocation that wrote the file, the rest read "
            f"back from its run store; that invocation took {run['seconds'] / 60:.0f} minutes "
            f"{workers_text(run['workers'])}")


def workers_text(workers) -> str:
    """Where a study's tasks ran: "on N workers" (Dask), or the runner's own phrase ("in process on cuda:0")."""
    return workers if isinstance(workers, str) and workers.startswith("in process") else f"on {workers} workers"


def step_size_frame(choice: dict, untried: str = "—"):
    """Per eta (rows) and learned arm (columns) of a step-size choice (`reporting.learning_study.
    literal_step_sizes`): the mean exploitability (chips) of the arm's average policies on the development seeds,
    each arm's chosen eta starred; `untried` where an arm did not try an eta (a grid is extended only past the
    edge an arm's choice sits on)."""
    import pandas as pd

    rows: dict = {}
    for arm, t in choice["tuning"].items():
        for g in t["grid"]:
            star = " *" if g["eta"] == choice["etas"][arm] else ""
            rows.setdefault(g["eta"], {})[arm] = f"{g['score']:.4f}{star}"
    frame = pd.DataFrame.from_dict(dict(sorted(rows.items())), orient="index").fillna(untried)
    frame.index = [f"{eta:g}" for eta in frame.index]
    frame.index.name = "eta"
    return frame


# ----- curves as they are: lowest point, rise after it, where a curve settles below a threshold -----------------
def rise_frame(runs: dict, label: str):
    """Arms: the lowest seed mean of the curve and its budget, the last budget's seed mean, and the last budget's
    exploitability minus the lowest budget's, paired over seeds (mean [95% t-interval]); "rises" when the interval
    lies wholly above 0 (a converging learner's curves must not)."""
    import pandas as pd

    rows = {}
    for arm, seeds in runs.items():
        r = curve_rise(seeds)
        if r is None:
            continue
        rows[arm] = {"lowest seed mean (chips)": f"{r['lowest_mean']:.4g}", "at (calls)": f"{r['lowest_budget']:,}",
                     "last budget (calls)": f"{r['last_budget']:,}", "its seed mean (chips)": f"{r['last_mean']:.4g}",
                     "last − lowest, paired (chips)": interval_cell(r, 4),
                     "rises": "yes" if r["rises"] else "no"}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = label
    return frame


def rises(runs: dict) -> list[str]:
    """The arms of `runs` ({arm: {seed: {budget: record}}}) whose curve rises after its lowest point
    (`curve_rise`)."""
    return [arm for arm, seeds in runs.items() if (r := curve_rise(seeds)) and r["rises"]]


def settle(seeds: dict, threshold: float) -> dict:
    """Where one arm's seeds ({seed: {budget: record}}) lie against `threshold`: the geometric mean over seeds of
    the budget from which each stays at or below it (`calls_rules.settled_at_or_below`; the seeds that settle),
    and the seeds above it at the last budget."""
    curves = [calls_rules.exploitability_curve(s) for s in seeds.values()]
    settled = [b for c in curves if (b := calls_rules.settled_at_or_below(c, threshold)) is not None]
    return {"settled": float(np.exp(np.mean(np.log(settled)))) if settled else None, "seeds_settled": len(settled),
            "seeds": len(curves), "above_at_end": calls_rules.seeds_above_at_end(curves, threshold)}


def settle_text(s: dict) -> str:
    """'126,000 (30/30); 0 above at the end'."""
    head = "never" if s["settled"] is None else \
        f"{calls_number(s['settled'])} ({s['seeds_settled']}/{s['seeds']})"
    return f"{head}; {s['above_at_end']} above at the end"


#: How the converging learner's pull and average behave under each named option set
#: (`learning.study_design.CONVERGING_OPTIONS`), in words for the chapters' prose.
PULL_TEXT = {"none": "the pull's strength alpha is constant",
             "fast": "the pull anneals as alpha_t = alpha / sqrt((t + 30) / 30)",
             "steady": "the pull's strength alpha is constant"}
AVERAGE_TEXT = {"none": "the average policy weighs every iteration alike, as CFR does",
                "fast": "each branch's return is corrected by a history baseline (a mean-zero control variate on "
                        "every sampled step, learned from the same rollouts), and the average policy weighs "
                        "iteration t by (t + 1)^2",
                "steady": "each branch's return is corrected by a history baseline (a mean-zero control variate on "
                          "every sampled step, learned from the same rollouts), and the average policy weighs "
                          "iteration t by t + 1"}


def _ends_that_cannot_grow(t: dict) -> tuple[str, ...]:
    """The hyperparameters of a tuning record whose choice sits at an end no grid can pass
    (`Grid.at_edge_that_cannot_grow` on the grid of the values it tried)."""
    tried = Grid(**{k: tuple(sorted({g[k] for g in t["grid"]})) for k in ("eta", "alpha", "kappa")})
    return tried.at_edge_that_cannot_grow((t["eta"], t["alpha"], t["kappa"]))


def tuning_edges_text(tuning: dict | None) -> str:
    """Where the tuned choices lie in their grids (`tuning`: {learner: {arm: tuning record}} or {arm: record}):
    'every choice lies inside its grid (7 extensions in all)', or the choices still at an edge (the grid's cap of
    extensions reached) and those at an end a grid cannot pass (`_ends_that_cannot_grow`)."""
    if not tuning:
        return "the choices were given, not tuned"
    flat = {arm: t for arm, t in tuning.items() if "grid" in t} or \
        {f"{learner} {arm}": t for learner, arms in tuning.items() for arm, t in arms.items()}
    at_edge = [name for name, t in flat.items() if t["at_edge"]]
    ends = [f"{name} ({', '.join(found)})" for name, t in flat.items() if (found := _ends_that_cannot_grow(t))]
    grown = sum(t["extensions"] for t in flat.values())
    text = (f"every choice lies inside its grid ({grown} extensions in all)" if not at_edge else
            f"{len(at_edge)} of {len(flat)} choices still sit at an edge after the grid's largest number of "
            f"extensions: {', '.join(at_edge)}")
    return text + (f"; at an end no grid can pass: {'; '.join(ends)}" if ends else "")
