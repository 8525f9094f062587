"""What the chapter shows of the learning study: tables (text cells, rounded), the curves figure, the rows that
compare the paper's exploitabilities, and the numbers the prose quotes.

Units: exploitability in chips (NashConv / 2 of the average policy, or of the last iterate where a table says
so); budgets and calls in physical calls (one branch rollout; PPO: one hand); shares unitless.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.solver import coupling_grid, study_coupling, study_curves
from oscc_core.chapters.solver.figures import WIDE_TEXT_PT
from oscc_core.chapters.solver.study import PAPER_EXPLOITABILITY
from oscc_core.learning import calls_rules
from oscc_core.method.stats import t_interval
from oscc_core.reporting import claims
from oscc_core.reporting import study_tables as tables
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.figure_text import record_text_sizes
from oscc_core.reporting.rows import Row

CHECKPOINT_TOLERANCE = 1e-8     # chips: a saved checkpoint's exploitability by pyspiel against the study's
LEARNER_TEXT = {"literal": "literal (the paper's iteration)", "converging": "converging (our additions)"}
#: The paper's NashConv row of each arm in its solver table (NashConv = 2 x exploitability, per seed).
SOLVER_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
              "ppo": "standard_ppo"}


def budgets(study: dict) -> list[int]:
    return tables.budgets(study["design"])


def exploitability_frame(study: dict, learner: str, quantity: str = "exploitability_average"):
    """Arms x budgets: seed mean and 95% t-interval of the exploitability (or of `quantity`)."""
    return tables.exploitability_frame(study["summary"][learner], study["design"], quantity)


def differences_frame(study: dict, learner: str):
    """Comparisons x budgets: paired difference arm - CP-GRPO (seeds matched), its 95% interval, and the seeds
    on which CP-GRPO is lower."""
    return tables.differences_frame(study["summary"][learner], study["design"])


#: How the calls to a threshold are computed (the study's rule, `learning.study_design.calls_to` and `summary`).
CALLS_RULE = ("geometric mean over the seeds that reach it of each seed's first crossing, interpolated linearly in "
              "log calls and log exploitability between the two stored budgets around it; 95% interval "
              "exp(t-interval of the log calls over those seeds)")
#: Significant figures of calls to a threshold: the committed study stores budgets a factor of about 1.10 apart
#: (24 a decade), and the interpolation rule moves a crossing by well under 1% (the rules table), so an
#: interpolated crossing carries three figures (the 95% intervals are about 1% wide).
CALLS_FIGURES = 3
#: The rules of the sensitivity table: (name, interpolation, mean), the book's first.
CALLS_RULES = (("geometric mean, log-log (the book's rule)", "log", "geometric"),
               ("arithmetic mean, linear", "linear", "arithmetic"),
               ("arithmetic mean, log-log", "log", "arithmetic"),
               ("geometric mean, linear", "linear", "geometric"))


crossing = calls_rules.crossing


def calls_to(study: dict, learner: str, arm: str, threshold: float, interpolation: str = "log",
             mean: str = "geometric") -> dict:
    """Calls to reach `threshold` over the study's seeds under one rule (`learning.calls_rules.calls_over_seeds`):
    {"calls", "low", "high", "reached", "seeds", "gaps" ({(before, after): seeds crossing between them})}."""
    return calls_rules.calls_over_seeds(study["runs"][learner][arm].values(), threshold, interpolation, mean)


def calls_text(x: float | None, figures: int = CALLS_FIGURES) -> str:
    """Calls to `figures` significant figures, with separators ('108,000'); 'never' for None."""
    return "never" if x is None else f"{float(f'{x:.{figures}g}'):,.0f}"


def most_crossed_gap(t: dict) -> tuple[tuple[int, int], int] | None:
    """((before, after), seeds) of the gap between stored budgets where most seeds cross (the earliest on a tie),
    or None when no seed crosses (`t`: `calls_to`'s record)."""
    return max(t["gaps"].items(), key=lambda kv: (kv[1], -kv[0][0])) if t["gaps"] else None


def gap_text(t: dict) -> str:
    """Where most seeds cross: 'n of N between b0 and b1' (two neighbouring stored budgets), or '—'."""
    if (most := most_crossed_gap(t)) is None:
        return "—"
    (b0, b1), n = most
    where = f"at or before {b0:,}" if b0 == b1 else f"between {b0:,} and {b1:,}"
    return f"{n} of {t['reached']} {where}"


def gap_cell(t: dict) -> str:
    """`gap_text` short enough for a table cell: 'n of N: b0–b1', 'n of N: at b0' (a crossing at a stored
    budget), or '—'."""
    if (most := most_crossed_gap(t)) is None:
        return "—"
    (b0, b1), n = most
    return f"{n} of {t['reached']}: " + (f"at {b0:,}" if b0 == b1 else f"{b0:,}–{b1:,}")


def never_reached(study: dict) -> list[tuple[str, str]]:
    """(learner, arm) pairs none of whose seeds reaches any threshold within the study."""
    return [(learner, arm) for learner in learner_order(study) for arm in study["thresholds"][learner]
            if all(t["reached"] == 0 for t in study["thresholds"][learner][arm].values())]


def never_text(study: dict) -> str:
    """'literal: cp_grpo, grpo, independent, ppo; converging: grpo, ppo' (`never_reached`), or 'none'."""
    by: dict = {}
    for learner, arm in never_reached(study):
        by.setdefault(learner, []).append(arm)
    return "; ".join(f"{learner}: {', '.join(arms)}" for learner, arms in by.items()) or "none"


def thresholds_frame(study: dict):
    """(learner, arm, threshold): calls to reach it by the study's rule (`CALLS_RULE`), to `CALLS_FIGURES`
    significant figures, its 95% interval over seeds, the seeds that reach it, between which stored budgets
    most of them cross, and how far the alternative rule (arithmetic mean, linear interpolation) moves it
    (`learning.calls_rules.rule_effect`: whether the stored budgets support the printed precision); the arms no
    seed of which reaches any threshold are left out (`never_text`)."""
    import pandas as pd

    rows = []
    never = never_reached(study)
    for learner in learner_order(study):
        for arm in (a for a in study["thresholds"][learner] if (learner, a) not in never):
            for th in study["design"]["thresholds"]:
                t = calls_to(study, learner, arm, float(th))
                settled = tables.settle(study["runs"][learner][arm], float(th))
                rows.append({"learner": learner, "arm": arm, "threshold (chips)": f"{float(th):g}",
                             "first crossing": calls_text(t["calls"]),
                             "95% interval": "—" if t["low"] is None else
                             f"[{calls_text(t['low'])}, {calls_text(t['high'])}]",
                             "seeds": f"{t['reached']} of {t['seeds']}",
                             "stays below from": "never" if settled["settled"] is None else
                             f"{calls_text(settled['settled'])} ({settled['seeds_settled']})",
                             "above at the end": str(settled["above_at_end"]),
                             "most cross between": gap_cell(t),
                             "other rule (interpolation)": study_coupling.rule_effect_text(
                                 study_coupling.rule_effect(study, learner, arm, float(th)))})
    if not rows:
        return pd.DataFrame({"calls to a threshold": ["no arm's seed reaches any threshold within the study"]})
    return pd.DataFrame(rows).set_index(["learner", "arm", "threshold (chips)"])


def calls_rules_frame(study: dict):
    """The calls to each threshold that at least one seed reaches, under each rule of `CALLS_RULES` (unrounded, to
    show how much the figure moves with the rule), and how far the largest lies from the smallest."""
    import pandas as pd

    rows = []
    for learner in learner_order(study):
        for arm in study["thresholds"][learner]:
            for th in study["design"]["thresholds"]:
                got = {name: calls_to(study, learner, arm, float(th), how, mean)["calls"]
                       for name, how, mean in CALLS_RULES}
                if None in got.values():
                    continue
                spread = max(got.values()) / min(got.values()) - 1
                rows.append({"learner": learner, "arm": arm, "threshold (chips)": f"{float(th):g}",
                             **{k: f"{v:,.0f}" for k, v in got.items()}, "largest / smallest - 1": f"{spread:.1%}"})
    if not rows:
        return pd.DataFrame({"calls to a threshold": ["no arm's seed reaches any threshold within the study"]})
    return pd.DataFrame(rows).set_index(["learner", "arm", "threshold (chips)"])


def coverage_frame(study: dict):
    """(learner: arm) x budgets: the share of information states whose logits never moved, seed mean and 95%
    t-interval (on-policy drawing stops visiting the states the policy leaves)."""
    import pandas as pd

    frames = {learner: exploitability_frame(study, learner, "never_updated") for learner in study["summary"]}
    frame = pd.concat([f.set_index(f.index.map(lambda arm, lr=learner: f"{lr}: {arm}")) for learner, f in
                       frames.items()]).fillna("not run")
    frame.index.name = "learner: arm"
    return frame


def ledger_frame(study: dict, budget: int):
    """Per learner and arm at one budget: seed means of physical calls, transitions and decisions, and the share
    of information states never updated."""
    import pandas as pd

    rows = []
    for learner, per in study["summary"].items():
        entry = per.get(str(budget))
        for arm, q in (entry or {"arms": {}})["arms"].items():
            rows.append({"learner": learner, "arm": arm,
                         "physical calls": f"{q['physical_calls']['mean']:,.0f}",
                         "transitions": f"{q['transitions']['mean']:,.0f}",
                         "decisions": f"{q['decisions']['mean']:,.0f}",
                         "never updated": tables.interval_cell(q["never_updated"])})
    return pd.DataFrame(rows).set_index(["learner", "arm"])


def tuning_frame(study: dict):
    """Per learner and arm: the chosen eta (alpha, kappa), its mean development score, the grid's size and
    whether the grid was extended (and whether the choice still sits at its edge); a study run with given
    choices shows only those."""
    import pandas as pd

    if not study.get("tuning"):
        return pd.DataFrame([{"learner": learner, "arm": arm, **{k: f"{v:g}" for k, v in c.items()}}
                             for learner, arms in study["choices"].items() for arm, c in arms.items()]
                            ).set_index(["learner", "arm"])
    rows = []
    for learner, arms in study["tuning"].items():
        for arm, t in arms.items():
            rows.append({"learner": learner, "arm": arm, "eta": f"{t['eta']:g}", "alpha": f"{t['alpha']:g}",
                         "kappa": f"{t['kappa']:g}", "dev score (chips)": f"{t['score']:.4f}",
                         "choices tried": len(t["grid"]), "extensions": t["extensions"],
                         "at the edge": "yes" if t["at_edge"] else "no"})
    return pd.DataFrame(rows).set_index(["learner", "arm"])


def plot_curves(study: dict, anchors: dict | None = None):
    """Exploitability of the average policy against physical calls (log-log), one panel per learner: the mean
    over seeds and its 95% band per arm, the paper's values at its budget (crosses), the thresholds (dotted), and
    on the converging learner's panel OpenSpiel's ES- and OS-MCCFR against their sampled terminal histories
    (`anchors`, dashed), when given."""
    import matplotlib.pyplot as plt

    from oscc_core.chapters.solver.study_curves import plot_anchors

    learners = learner_order(study)
    fig, axes = plt.subplots(1, len(learners), figsize=(11, 4.4), dpi=100, sharey=True)
    for ax, learner in zip(np.atleast_1d(axes), learners):
        tables.plot_arms(ax, study["runs"][learner])
        if anchors is not None and learner == "converging":
            plot_anchors(ax, anchors)
        for arm in study["runs"][learner]:
            ax.plot([study["design"]["budget"]], [float(claims.claim(PAPER_EXPLOITABILITY[arm]))], "x",
                    color=tables.ARM_COLORS[arm], ms=9, mew=2)
        for th in study["design"]["thresholds"]:
            ax.axhline(th, color="grey", ls=":", lw=0.8)
        ax.set_title(LEARNER_TEXT[learner], fontsize=10)
    np.atleast_1d(axes)[0].set_ylabel("exploitability of the average policy (chips)")
    for ax in np.atleast_1d(axes):
        ax.legend(fontsize=WIDE_TEXT_PT, loc="lower left")
    for ax in np.atleast_1d(axes):
        ax.tick_params(labelsize=WIDE_TEXT_PT)
    fig.tight_layout()
    return record_text_sizes(fig)


def learner_order(study: dict) -> list[str]:
    """The study's learners in the book's order, literal (the paper's iteration) first: the results file keeps
    its keys sorted, which would put the converging learner first."""
    return [learner for learner in LEARNER_TEXT if learner in study["runs"]]


def paired_differences(runs: dict, arm: str = "independent", reference: str = "cp_grpo") -> list[tuple]:
    """(calls, 95% t-interval over seeds of arm − reference) at every recorded budget that each seed shared by
    the two arms reached in both: exploitability of the average policy, chips, seeds matched."""

    a, b = runs[arm], runs[reference]
    seeds = sorted(set(a) & set(b), key=int)
    marks = sorted({int(m) for s in seeds for m in a[s]}, key=int)
    marks = [m for m in marks if all(str(m) in a[s] and str(m) in b[s] for s in seeds)]
    return [(m, t_interval([a[s][str(m)]["exploitability_average"] - b[s][str(m)]["exploitability_average"]
                            for s in seeds])) for m in marks]


def plot_paired_difference(study: dict):
    """Independent sampling minus CP-GRPO (exploitability of the average policy, chips, seeds matched) against
    physical calls: the seed mean and its 95% t-band for each learner, zero dotted, and the paper's difference
    at its budget (its independent minus CP-GRPO exploitability) as a cross.  Above zero CP-GRPO is lower."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    for learner, colour in zip(learner_order(study), ("#1f77b4", "#d62728")):
        points = paired_differences(study["runs"][learner])
        calls = [m for m, _ in points]
        ax.plot(calls, [iv.mean for _, iv in points], "o-", ms=3, color=colour, label=LEARNER_TEXT[learner])
        ax.fill_between(calls, [iv.low for _, iv in points], [iv.high for _, iv in points], color=colour,
                        alpha=0.2, lw=0)
    paper = float(claims.claim(PAPER_EXPLOITABILITY["independent"])) - float(
        claims.claim(PAPER_EXPLOITABILITY["cp_grpo"]))
    ax.plot([study["design"]["budget"]], [paper], "kx", ms=9, mew=2, label="paper, at its budget")
    ax.axhline(0.0, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("physical calls per run")
    ax.set_ylabel("independent − CP-GRPO (chips)")
    ax.legend(fontsize=9, loc="best")
    fig.tight_layout()
    return record_text_sizes(fig)


#: The study's figures: glue name -> (file written beside the results, the function that draws it from the study and
#: the MCCFR anchors), the 2 x 2's answer first.
FIGURES = {"fig_solver_grid": ("05_solver_grid.png", lambda study, anchors: coupling_grid.plot(study)),
           "fig_solver_study": ("05_solver_study.png", plot_curves),
           "fig_solver_study_paired": ("05_solver_study_paired.png",
                                       lambda study, anchors: plot_paired_difference(study))}


def chapter_glue(p, learning: dict, converging_digest: str, anchors: dict | None = None) -> dict[str, str]:
    """Every text the chapter glues about the study: the 2 x 2's answer (`coupling_grid.summary_glue`), the prose's
    numbers (`glue_values`), the curves' minima and rises, the MCCFR anchors (`study_curves.anchor_glue`), how the
    committed file was made, the last-iterate sentence, which seeds and budgets ran live, and the converging
    operating point's digest."""
    shown = learning["study"]
    live = (f"{', '.join(map(str, p.study_seeds))} at {', '.join(f'{m}x' for m in p.study_multiples)}"
            if p.study_file else "none: the whole study ran here")
    out = {**glue_values(shown, learning["live_check"]), **study_coupling.glue_values(shown),
           **coupling_grid.summary_glue(shown), **rise_glue(shown),
           "study_run": tables.run_text(shown.get("run")),
           "study_tuning_edges": tables.tuning_edges_text(shown.get("tuning")),
           "study_last_iterate": last_iterate_sentence(shown), "study_live": live,
           "converging_digest": converging_digest}
    out["anchor_text"] = ("The MCCFR anchors are not shown (anchors_file is '')." if anchors is None else
                          study_curves.anchor_sentence(shown, anchors))
    return out


def rise_frame(study: dict, learner: str):
    """Each arm's lowest point and whether its curve rises after it (`reporting.study_tables.rise_frame`)."""
    return tables.rise_frame(study["runs"][learner], f"{learner} learner")


def rise_glue(study: dict) -> dict[str, str]:
    """Which arms' curves rise after their lowest point, per learner ('none' or the arms), for the prose."""
    out = {}
    for learner in learner_order(study):
        found = tables.rises(study["runs"][learner])
        out[f"study_rises_{learner}"] = "none" if not found else ", ".join(found)
    return out


def _order_relation(entry: dict, arm: str) -> Relation:
    return tables.order_relation(entry, arm, "cp_grpo lowest among learned arms (paired, 95%)")


def rows(study: dict) -> list[Row]:
    """The paper's exploitability (tab:measured-grpo-ppo and tab:measured-solver) and NashConv (tab:measured-
    solver) of each learned arm against the literal learner at the paper's budget, over every study seed: the
    primary rows of these claims (the five-seed screen's rows become their sensitivity rows)."""
    entry = study["summary"]["literal"][str(study["design"]["budget"])]
    out = []
    for arm, label in SOLVER_ROW.items():
        iv = entry["arms"][arm]["exploitability_average"]
        rel = _order_relation(entry, arm)
        n = iv["n"]
        out.append(Row.compare(f"{arm}: exploitability, {n} seeds", PAPER_EXPLOITABILITY[arm], iv["mean"],
                               iv["low"], iv["high"], rel))
        out.append(Row.compare(f"{arm}: exploitability, {n} seeds (solver table)",
                               f"measured_solver.{label}.exploitability", iv["mean"], iv["low"], iv["high"],
                               rel))
        out.append(Row.compare(f"{arm}: NashConv, {n} seeds", f"measured_solver.{label}.nashconv",
                               2 * iv["mean"], 2 * iv["low"], 2 * iv["high"], rel))
    return out


def defer_to(primary: list[Row], others: list[Row]) -> list[Row]:
    """`others` with every row whose claim `primary` compares turned into a sensitivity row."""
    taken = {r.claim_id for r in primary}
    return [r.as_sensitivity() if r.primary and r.claim_id in taken else r for r in others]


def resolved_text(study: dict, learner: str, name: str) -> str:
    """Where the paired difference `name` (e.g. 'independent - cp_grpo') has its 95% interval above 0: 'above 0
    at every budget', 'above 0 at 2 of 4 budgets (100x, 160x)' or 'above 0 at no budget', followed by where it
    lies wholly below 0 when it does anywhere ('; below 0 at 2 of 4 budgets (10x, 160x)')."""
    d = study["design"]
    marks = [(b, study["summary"][learner].get(str(b), {}).get("differences", {}).get(name)) for b in budgets(study)]
    marks = [(b, iv) for b, iv in marks if iv is not None]
    above = [b for b, iv in marks if iv["low"] is not None and iv["low"] > 0]
    below = [b for b, iv in marks if iv["high"] is not None and iv["high"] < 0]

    def where(side: str, bs: list) -> str:
        if len(bs) == len(marks):
            return f"{side} 0 at every budget"
        if not bs:
            return f"{side} 0 at no budget"
        named = ", ".join(f"{b // d['budget']}x" for b in bs)
        return f"{side} 0 at {len(bs)} of {len(marks)} budgets ({named})"
    return where("above", above) + (f"; {where('below', below)}" if below else "")


def calls_glue(study: dict, learner: str = "converging") -> dict[str, str]:
    """The calls-to-threshold numbers the prose quotes for the first threshold (0.2 chips): CP-GRPO's and
    independent sampling's calls by the study's rule with their 95% intervals (`CALLS_FIGURES` significant
    figures), the seeds that reach it, where CP-GRPO's seeds cross, CP-GRPO's calls under the plain mean with
    linear interpolation and under the study's rule unrounded (the rule's effect), and the rule in words."""
    th = float(study["design"]["thresholds"][0])
    cp, ind = (calls_to(study, learner, arm, th) for arm in ("cp_grpo", "independent"))
    plain = calls_to(study, learner, "cp_grpo", th, "linear", "arithmetic")

    def with_interval(t):
        return calls_text(t["calls"]) + ("" if t["low"] is None else
                                         f" (95% interval {calls_text(t['low'])} to {calls_text(t['high'])})")
    return {"study_conv_to_02": with_interval(cp), "study_conv_ind_to_02": with_interval(ind),
            "study_conv_ind_to_02_seeds": f"{ind['reached']} of {ind['seeds']}",
            "study_conv_to_02_gap": gap_text(cp), "study_calls_rule": CALLS_RULE,
            "study_calls_never": never_text(study),
            "study_conv_to_02_exact": "never" if cp["calls"] is None else f"{cp['calls']:,.0f}",
            "study_conv_to_02_plain": "never" if plain["calls"] is None else f"{plain['calls']:,.0f}"}


def glue_values(study: dict, check: dict | None) -> dict[str, str]:
    """The study numbers the chapter's prose quotes, as text."""
    d = study["design"]
    lit = study["summary"]["literal"][str(d["budget"])]
    top = str(max(budgets(study)))
    conv = study["summary"]["converging"][top]
    cp = study["thresholds"]["converging"]["cp_grpo"][repr(float(d["thresholds"][0]))]
    diff = lit["differences"]["independent - cp_grpo"]
    out = {"study_seeds": str(len(d["seeds"])), "study_budgets": ", ".join(f"{b:,}" for b in budgets(study)),
           "study_literal_cp": tables.interval_cell(lit["arms"]["cp_grpo"]["exploitability_average"]),
           "study_literal_ind": tables.interval_cell(lit["arms"]["independent"]["exploitability_average"]),
           "study_literal_diff": tables.interval_cell(diff), "study_literal_lower": f"{diff['cp_grpo_lower']} of {diff['n']}",
           "study_top": f"{int(top):,}", "study_conv_cp_top": tables.interval_cell(conv["arms"]["cp_grpo"]["exploitability_average"]),
           "study_conv_ind_top": tables.interval_cell(conv["arms"]["independent"]["exploitability_average"]),
           "study_conv_to_02_seeds": f"{cp['reached']} of {cp['seeds']}", **calls_glue(study)}
    first = study["summary"]["converging"][str(d["budget"])]
    ind_02 = study["thresholds"]["converging"]["independent"][repr(float(d["thresholds"][0]))]
    out.update({
        "study_conv_diff": tables.interval_cell(first["differences"]["independent - cp_grpo"]),
        "study_conv_diff_top": tables.interval_cell(conv["differences"]["independent - cp_grpo"]),
        "study_lit_ppo_diff": tables.interval_cell(lit["differences"]["ppo - cp_grpo"]),
        "study_conv_resolved": resolved_text(study, "converging", "independent - cp_grpo"),
        "study_lit_resolved": resolved_text(study, "literal", "independent - cp_grpo"),
        "study_lit_diff_top": tables.interval_cell(
            study["summary"]["literal"][top]["differences"]["independent - cp_grpo"]),
        "study_conv_call_ratio": "—" if None in (ind_02["geometric_mean"], cp["geometric_mean"]) else
        f"{ind_02['geometric_mean'] / cp['geometric_mean']:.1f}"})
    saved = study.get("checkpoints")
    if saved:
        from oscc_core.reporting.results import residual_text

        out["study_checkpoints"] = str(len(saved["ours"]))
        out["study_checkpoint_difference"] = residual_text(saved["max_abs_difference"], CHECKPOINT_TOLERANCE)
    out["study_check_sentence"] = "nothing was rerun: the whole study ran here"
    if check is not None:
        from oscc_core.reporting.learning_study import live_check_text

        out["study_check_sentence"] = live_check_text(check)
        out["study_check_records"] = f"{check['records']:,}"
        largest = "0" if check["max_abs_difference"] == 0 else f"{check['max_abs_difference']:.1e}"
        if check.get("mode", "bit for bit") == "bit for bit":
            out["study_check_difference"] = f"{largest} (the check is bit for bit: same locked packages, and " \
                                            f"the learners' arithmetic is the same on every CPU)"
        else:
            out["study_check_difference"] = (
                f"{largest}; bit equality is not expected here ({check['reason']}), so the check is that "
                f"{check['fields_within_range']:,} of {check['fields']:,} rerun numbers (those at an arm and "
                f"budget the committed study recorded) lie within the committed seeds' range at that budget")
    return out


# ----- the last iterate beside the average policy -------------------------------------------------
def last_iterate_change(study: dict, learner: str, arm: str) -> dict:
    """The change of the arm's last-iterate exploitability from the paper's budget to the study's largest (chips),
    paired by seed: mean, 95% t-interval and n, with the seed means at both budgets and the average policy's."""
    d = study["design"]
    first, top = str(d["budget"]), str(max(int(b) for b in d["budgets"]))
    seeds = study["runs"][learner][arm]
    iv = t_interval([rec[top]["exploitability_last"] - rec[first]["exploitability_last"] for rec in seeds.values()])
    at = {b: study["summary"][learner][b]["arms"][arm] for b in (first, top)}
    return {"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n,
            "last": [at[b]["exploitability_last"]["mean"] for b in (first, top)],
            "average": [at[b]["exploitability_average"]["mean"] for b in (first, top)]}


def _direction(change: dict) -> str:
    if change["low"] > 0:
        return "rises"
    if change["high"] < 0:
        return "falls"
    return "does not change at 95%"


def last_iterate_sentence(study: dict, learner: str = "converging") -> str:
    """The last iterate beside the average policy for one learner of the study, from its runs: CP-GRPO's seed means
    of both at the paper's budget and the largest, the last iterate's paired change between them (95% t-interval),
    and for how many arms the last iterate rises (resolved) while the average policy falls."""
    d = study["design"]
    first, top = int(d["budget"]), max(int(b) for b in d["budgets"])
    arms = [a for a in study["runs"][learner] if str(top) in next(iter(study["runs"][learner][a].values()))]
    changes = {arm: last_iterate_change(study, learner, arm) for arm in arms}
    cp = changes["cp_grpo"]
    rising = [a for a, c in changes.items() if c["low"] > 0 and c["average"][1] < c["average"][0]]
    text = (f"From {first:,} to {top:,} calls the {learner} learner's CP-GRPO average policy goes from "
            f"{cp['average'][0]:.3f} to {cp['average'][1]:.3f} chips exploitable, while its last iterate goes from "
            f"{cp['last'][0]:.3f} to {cp['last'][1]:.3f}: the last iterate {_direction(cp)} (change "
            f"{cp['mean']:+.3f} chips, 95% interval [{cp['low']:+.3f}, {cp['high']:+.3f}], paired over {cp['n']} "
            f"seeds). Over the {len(changes)} learned arms the last iterate rises while the average policy falls for "
            f"{len(rising)}" + (f" ({', '.join(rising)})" if rising else ""))
    if rising:
        text += ("; there the iterates themselves do not converge, only their average does, so the study compares "
                 "average policies (the chapter's checkpoints), and a last iterate is no substitute for one.")
    else:
        text += "."
    return text
