"""The coupling question as a 2 x 2: coupling (CP-GRPO or independent sampling) x history baseline (on or off).

The learning study tunes each arm's eta, alpha and kappa on the development seeds separately, so a ratio of
calls between the arms at their own choices mixes the coupling with the tuning.  The 2 x 2 asks the question at
common operating points: both arms run at *one* choice of every hyperparameter, each arm's tuned choice in turn,
with the converging learner's history baseline on and off (a baseline removes some of the noise that coupling
removes), on every reporting seed, recorded at every budget (`learning.study_design.coupling_grid_tasks`; the
records are in the study file under ``coupling_grid``).  Everything here is computed from those records at show
time: the paired difference independent − CP-GRPO at every budget, the stretches of budgets where its 95%
interval excludes 0, and the paired ratio of calls to each threshold.

Units: calls in physical calls, exploitability in chips of the average policy.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.solver.study_coupling import ratio_text
from oscc_core.learning import coupling_question
from oscc_core.learning.study_design import GRID_ARMS, GRID_BASELINES
from oscc_core.method.stats import t_interval
from oscc_core.reporting import study_tables as tables
from oscc_core.reporting.figure_text import record_text_sizes

LABELS = {"cp_grpo": "CP-GRPO", "independent": "independent"}
BASELINE_TEXT = {"history": "baseline on", "none": "baseline off"}
#: The comparison of every cell: independent sampling minus CP-GRPO (above 0: CP-GRPO lower).
ARM, REFERENCE = "independent", coupling_question.REFERENCE
COLOURS = {"history": "#1f77b4", "none": "#d62728"}


def owners(study: dict) -> list[str]:
    """The arms whose tuned choice the 2 x 2 runs at, CP-GRPO's first; an arm whose choice equals an earlier one's
    is left out (both arms' tuning can choose the same point, and then the two common points are one)."""
    grid = (study.get("coupling_grid") or {"cells": {}})["cells"]
    out: list[str] = []
    for owner in GRID_ARMS:
        cell = next(iter(grid.get(owner, {}).values()), None)
        if cell is not None and all(cell["choice"] != next(iter(grid[o].values()))["choice"] for o in out):
            out.append(owner)
    return out


def choice_label(study: dict, owner: str) -> str:
    """"CP-GRPO's choice", or "the choice tuned for both" when the tuning chose the same point for every arm of the
    2 x 2."""
    return "the choice tuned for both" if owners(study) == [owner] and len(GRID_ARMS) > 1 else \
        f"{LABELS[owner]}'s choice"


def cells(study: dict) -> list[tuple[str, str, dict]]:
    """(owner, baseline, cell) of the study's 2 x 2 in the book's order (CP-GRPO's choice first, baseline on
    first; `owners`); empty when the study has none."""
    grid = (study.get("coupling_grid") or {"cells": {}})["cells"]
    return [(o, b, grid[o][b]) for o in owners(study) for b in GRID_BASELINES if b in grid[o]]


def paired(runs: dict, arm: str = ARM, reference: str = REFERENCE) -> list[tuple[int, object]]:
    """(budget, 95% t-interval over seeds of arm − reference) at every budget every seed of both recorded."""
    a, b = runs[arm], runs[reference]
    seeds = sorted(set(a) & set(b), key=int)
    marks = sorted(set.intersection(*(set(map(int, a[s])) & set(map(int, b[s])) for s in seeds)))
    return [(m, t_interval([a[s][str(m)]["exploitability_average"] - b[s][str(m)]["exploitability_average"]
                            for s in seeds])) for m in marks]


def side(iv) -> int:
    """+1 when the 95% interval lies wholly above 0, -1 wholly below, 0 when it holds 0."""
    return 1 if iv.low > 0 else -1 if iv.high < 0 else 0


def stretches(points: list[tuple[int, object]]) -> list[dict]:
    """The maximal runs of consecutive recorded budgets whose interval lies on one side of 0: {"side" (+1:
    independent above, CP-GRPO lower; -1: the reverse), "first", "last" (budgets), "budgets" (how many),
    "largest" (the budget and interval of the largest |mean| in the run)}."""
    out: list[dict] = []
    for budget, iv in points:
        s = side(iv)
        if s and out and out[-1]["side"] == s and out[-1]["open"]:
            run = out[-1]
        elif s:
            run = {"side": s, "first": budget, "budgets": 0, "largest": (budget, iv), "open": True}
            out.append(run)
        else:
            if out:
                out[-1]["open"] = False
            continue
        run["last"], run["budgets"] = budget, run["budgets"] + 1
        if abs(iv.mean) > abs(run["largest"][1].mean):
            run["largest"] = (budget, iv)
    for run in out:
        run.pop("open")
    return out


def stretch_text(run: dict) -> str:
    """'CP-GRPO lower from 61,440 to 614,400 calls (25 budgets; largest 0.012 [0.008, 0.016] at 200,000)'."""
    lower = "CP-GRPO" if run["side"] > 0 else "independent"
    budget, iv = run["largest"]
    span = f"at {run['first']:,} calls" if run["first"] == run["last"] else \
        f"from {run['first']:,} to {run['last']:,} calls"
    return (f"{lower} lower {span} ({run['budgets']} budget{'s' if run['budgets'] != 1 else ''}; largest "
            f"{abs(iv.mean):.4f} chips [{abs(iv.high if run['side'] < 0 else iv.low):.4f}, "
            f"{abs(iv.low if run['side'] < 0 else iv.high):.4f}] at {budget:,})")


def ratio(cell: dict, threshold: float) -> dict:
    """Independent / CP-GRPO calls to `threshold` in one cell, paired by seed (`coupling_question.calls_ratio`)."""
    return coupling_question.calls_ratio(cell["runs"][ARM], cell["runs"][REFERENCE], float(threshold))


def direction(r: dict) -> str:
    """Which arm needs fewer calls, resolved at 95% on the paired log ratios: "CP-GRPO", "independent" or
    "neither"."""
    if r["ratio"] is None or r["low"] is None:
        return "neither"
    return "CP-GRPO" if r["low"] > 1 else "independent" if r["high"] < 1 else "neither"


def choice_text(choice: dict) -> str:
    """'eta 32, alpha 0.25, kappa 0.003'."""
    return ", ".join(f"{k} {choice[k]:g}" for k in ("eta", "alpha", "kappa"))


def cell_label(owner: str, baseline: str) -> str:
    return f"{LABELS[owner]}'s choice, {BASELINE_TEXT[baseline]}"


def stretch_frame(study: dict):
    """(both arms at, baseline) x each stretch where independent − CP-GRPO is resolved at 95%: which arm is
    lower, the first and last budget, how many budgets, and the largest difference with its interval."""
    import pandas as pd

    rows = []
    for owner, baseline, cell in cells(study):
        found = stretches(paired(cell["runs"]))
        for run in found or [None]:
            base = {"both arms at": choice_label(study, owner), "history baseline": BASELINE_TEXT[baseline][9:]}
            if run is None:
                rows.append({**base, "lower arm": "neither, at any budget", "from (calls)": "—", "to (calls)": "—",
                             "budgets": 0, "largest |independent − CP-GRPO| (chips)": "—"})
                continue
            budget, iv = run["largest"]
            rows.append({**base, "lower arm": "CP-GRPO" if run["side"] > 0 else "independent",
                         "from (calls)": f"{run['first']:,}", "to (calls)": f"{run['last']:,}",
                         "budgets": run["budgets"],
                         "largest |independent − CP-GRPO| (chips)": f"{abs(iv.mean):.4f} at {budget:,}"})
    return pd.DataFrame(rows).set_index(["both arms at", "history baseline"])


def ratio_frame(study: dict):
    """(both arms at, baseline, threshold): each arm's calls to the threshold (geometric mean [95%], seeds that
    reach it) and independent / CP-GRPO calls paired by seed."""
    import pandas as pd

    from oscc_core.learning.calls_rules import calls_over_seeds

    rows = []
    for owner, baseline, cell in cells(study):
        for th in study["design"]["thresholds"]:
            calls = {arm: calls_over_seeds(cell["runs"][arm].values(), float(th)) for arm in GRID_ARMS}
            rows.append({"both arms at": choice_label(study, owner), "history baseline": BASELINE_TEXT[baseline][9:],
                         "threshold (chips)": f"{float(th):g}",
                         **{f"{LABELS[a]} calls": tables.calls_text({"geometric_mean": calls[a]["calls"],
                                                                     "low": calls[a]["low"], "high": calls[a]["high"],
                                                                     "reached": calls[a]["reached"],
                                                                     "seeds": calls[a]["seeds"]})
                            for a in GRID_ARMS},
                         "independent / CP-GRPO": ratio_text(ratio(cell, th))})
    return pd.DataFrame(rows).set_index(["both arms at", "history baseline", "threshold (chips)"])


def baseline_ratios(study: dict, threshold: float) -> dict:
    """{(owner, arm): baseline-off / baseline-on calls to `threshold`, paired by seed}: what the history baseline
    saves each arm at each common choice."""
    grid = study["coupling_grid"]["cells"]
    return {(owner, arm): coupling_question.calls_ratio(grid[owner]["none"]["runs"][arm],
                                                          grid[owner]["history"]["runs"][arm], float(threshold))
            for owner in owners(study) for arm in GRID_ARMS
            if {"none", "history"} <= set(grid.get(owner, {}))}


def plot(study: dict):
    """Independent − CP-GRPO (exploitability of the average policy, chips, seeds matched) against physical calls,
    one panel per common choice, the history baseline on and off: seed mean and 95% t-band; above 0 CP-GRPO is
    lower."""
    import matplotlib.pyplot as plt

    shown = owners(study)
    fig, axes = plt.subplots(1, len(shown), figsize=(11 if len(shown) > 1 else 7.5, 4.2), dpi=100, sharey=True,
                             squeeze=False)
    for ax, owner in zip(axes[0], shown):
        for o, baseline, cell in cells(study):
            if o != owner:
                continue
            points = paired(cell["runs"])
            calls = [m for m, _ in points]
            ax.plot(calls, [iv.mean for _, iv in points], "-", color=COLOURS[baseline],
                    label=f"history {BASELINE_TEXT[baseline]}")
            ax.fill_between(calls, [iv.low for _, iv in points], [iv.high for _, iv in points],
                            color=COLOURS[baseline], alpha=0.2, lw=0)
        ax.axhline(0.0, color="grey", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("physical calls per run", fontsize=10)
        choice = study["coupling_grid"]["cells"][owner][GRID_BASELINES[0]]["choice"]
        ax.set_title(f"both arms at {choice_label(study, owner)}: {choice_text(choice)}", fontsize=10)
        ax.tick_params(labelsize=9)
    axes[0][0].set_ylabel("independent − CP-GRPO (chips)", fontsize=10)
    axes[0][0].legend(fontsize=9, loc="best")
    fig.tight_layout()
    return record_text_sizes(fig)


def _ratio_clause(r: dict) -> str:
    d = direction(r)
    if d == "neither":
        return f"neither arm is resolved faster (independent / CP-GRPO {ratio_text(r)})"
    return f"{d} needs fewer calls (independent / CP-GRPO {ratio_text(r)})"


def conclusion(study: dict) -> str:
    """The 2 x 2 in one clause, from which arm is resolved faster to the first threshold with the baseline off and
    on (`direction` in every cell of each row): e.g. 'coupling helps without the history baseline, and the
    baseline takes its place'."""
    th = float(study["design"]["thresholds"][0])
    row = {b: {direction(ratio(cell, th)) for _, bb, cell in cells(study) if bb == b} for b in GRID_BASELINES}
    off, on = row["none"], row["history"]
    if off == {"CP-GRPO"} and on == {"neither"}:
        return "coupling helps without the history baseline, and the baseline takes its place"
    if off == {"CP-GRPO"} and on == {"CP-GRPO"}:
        return "coupling helps with the history baseline and without it"
    if off == {"neither"} and on == {"neither"}:
        return "coupling changes the calls neither with the history baseline nor without it"
    return "which arm is resolved faster depends on the common choice and on the history baseline"


def answer(study: dict) -> str:
    """The 2 x 2's answer in a few sentences, from its records: with the baseline off and on, at each common
    choice, which arm needs fewer calls to the study's first threshold and where the paired difference is
    resolved; then what the baseline saves each arm."""
    if not cells(study):
        return "The study holds no 2 x 2 (its converging learner carries no history baseline to switch)."
    th = float(study["design"]["thresholds"][0])
    head = conclusion(study)
    parts = [f"In short, {head}."]
    for baseline in reversed(GRID_BASELINES):            # off first: does coupling help without the baseline?
        said = []
        for owner, b, cell in cells(study):
            if b != baseline:
                continue
            found = stretches(paired(cell["runs"]))
            where = "; ".join(stretch_text(run) for run in found) or "the difference is resolved at no budget"
            said.append(f"at {choice_label(study, owner)} {_ratio_clause(ratio(cell, th))}, and {where}")
        parts.append(f"With the history {BASELINE_TEXT[baseline]}, to {th:g} chips: " + "; ".join(said) + ".")
    saves = baseline_ratios(study, th)
    if saves:
        text = ", ".join(f"{LABELS[arm]} at {choice_label(study, owner)} {ratio_text(r)}" for (owner, arm), r in
                         saves.items())
        parts.append(f"The baseline's own effect, baseline-off / baseline-on calls to {th:g} chips: {text}.")
    return " ".join(parts)


def own_choice_stretches(study: dict, learner: str = "converging") -> str:
    """Where independent − CP-GRPO is resolved with each arm at its own tuned choice (the study's own runs)."""
    found = stretches(paired(study["runs"][learner]))
    return "; ".join(stretch_text(run) for run in found) or "resolved at no budget"


def tuning_reading(study: dict, learner: str = "converging") -> str:
    """The study's own-choice ratio of calls to the first threshold read beside the 2 x 2's common-choice ratios
    with the baseline the study ran with: what part of it is the tuning."""
    th = float(study["design"]["thresholds"][0])
    runs = study["runs"][learner]
    own = coupling_question.calls_ratio(runs[ARM], runs[REFERENCE], th)
    common = [(owner, ratio(cell, th)) for owner, b, cell in cells(study) if b == GRID_BASELINES[0]]
    if not common:
        return f"with each arm at its own choice independent / CP-GRPO is {ratio_text(own)}."
    if len(owners(study)) == 1 and len(GRID_ARMS) > 1:
        return (f"the tuning chose the same point for both arms ({choice_text(cells(study)[0][2]['choice'])}), "
                f"so each arm's own choice is the common one, and the study's ratio, {ratio_text(own)}, is the 2 x 2's "
                f"with the baseline on: here the tuning moves nothing.")
    said = "; ".join(f"{ratio_text(r)} at {LABELS[o]}'s" for o, r in common)
    intervals = own["low"] is not None and all(r["low"] is not None for _, r in common)
    disjoint = intervals and all(r["high"] < own["low"] or r["low"] > own["high"] for _, r in common)
    verdict = ("the two do not overlap, so the difference between them is the tuning's, not the coupling's" if
               disjoint else "the intervals overlap, so the tuning is not resolved as moving it" if intervals else
               "a ratio without an interval (fewer than two pairs) resolves nothing")
    return (f"with each arm at its own choice independent / CP-GRPO is {ratio_text(own)}; with both at one choice "
            f"(baseline on, as the study ran) it is {said}: {verdict}.")


def summary_glue(study: dict) -> dict[str, str]:
    """Short texts for the box, the prose and Fig. grid's caption: the 2 x 2's conclusion as a sentence
    (`conclusion`), each cell's ratio to the first threshold and its direction."""
    th = float(study["design"]["thresholds"][0])
    points = ("at the one point the tuning chose for both arms" if len(owners(study)) == 1 else
              "at CP-GRPO's tuned choice and at independent sampling's")
    head = conclusion(study) if cells(study) else "the study holds no 2 x 2"
    out = {"grid_answer": answer(study), "grid_conclusion": head[0].upper() + head[1:], "grid_threshold": f"{th:g}",
           "grid_points": points,
           "tuning_reading": tuning_reading(study), "own_choice_stretches": own_choice_stretches(study)}
    for owner, baseline, cell in cells(study):
        r = ratio(cell, th)
        out[f"grid_ratio_{owner}_{baseline}"] = ratio_text(r)
        out[f"grid_direction_{owner}_{baseline}"] = direction(r)
    return out
