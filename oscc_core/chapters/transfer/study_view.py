"""What the chapter shows of the converging Kuhn study: tables with short text cells, the curves figure, the
sensitivity rows beside the paper's Kuhn exploitabilities, and the numbers the prose quotes.

Units: exploitability in chips (NashConv / 2 of the average policy); budgets and calls in physical calls (one
branch rollout; PPO: one hand); contrast variances in chips^2.  Intervals are 95% over seeds: Student t for
exploitabilities and paired differences, exp of the t-interval of log calls for calls-to-a-value, the log scale
for contrast variances.
"""
from __future__ import annotations

from oscc_core.chapters.transfer import kuhn_tuned
from oscc_core.chapters.transfer.readings import seed_interval
from oscc_core.chapters.transfer.study import ARMS, TARGET_ARMS, claim_of, top_budget
from oscc_core.reporting import claims, learning_study
from oscc_core.reporting import study_tables as tables
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.figure_text import record_text_sizes
from oscc_core.reporting.rows import Row

ARM_COLORS = tables.ARM_COLORS


def budgets(study: dict) -> list[int]:
    return tables.budgets(study["design"])


def _cell(iv: dict, digits: int = 4) -> str:
    return tables.interval_cell(iv, digits)


def _frame(rows: dict, index: str):
    import pandas as pd

    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = index
    return frame


def exploitability_frame(study: dict, quantity: str = "exploitability_average"):
    """Arms x budgets: seed mean and 95% t-interval of the exploitability of the average policy (chips)."""
    return tables.exploitability_frame(study["summary"], study["design"], quantity, digits=4)


def differences_frame(study: dict):
    """Comparisons x budgets: paired difference arm - CP-GRPO (chips, seeds matched) with its 95% interval and
    the seeds on which CP-GRPO is lower."""
    return tables.differences_frame(study["summary"], study["design"], digits=4)


def target_label(arm: str) -> str:
    """'to CP-GRPO's <the paper's Kuhn exploitability of the arm>' (the value read from the claims file)."""
    return f"to {arm}'s {claims.format_value(claims.claim(claim_of(arm)))}"


def calls_frame(study: dict):
    """Arm x the paper's Kuhn values: geometric mean of the calls at which the average policy's exploitability
    first falls to the value [95% interval] (seeds that get there / all), and beside it the budget from which each
    seed stays at or below it (geometric mean; seeds that settle) with the seeds above it at the last budget
    (`reporting.study_tables.settle`)."""
    rows = {}
    for arm, ths in study["thresholds"].items():
        row = {}
        for a in TARGET_ARMS:
            value = float(claims.claim(claim_of(a)))
            row[f"{target_label(a)}: first crossing"] = tables.calls_text(ths[repr(value)])
            row[f"{target_label(a)}: stays below from; above at the end"] = tables.settle_text(
                tables.settle(study["runs"][arm], value))
        rows[arm] = row
    return _frame(rows, "arm")


def contrast_summary(contrast: dict, maxima: dict) -> dict:
    """Per arm: its construction, the seed mean and 95% log-scale interval of the checkpoints' exact contrast
    variances (chips^2), the largest, the proved maximum and the paper's value."""
    out = {}
    for arm in ARMS:
        values = [v for key, v in contrast.items() if key.split("/")[1] == arm]
        iv = seed_interval(values, positive=True)
        construction, top = maxima[arm]
        out[arm] = {"construction": construction, "mean": iv.mean, "low": iv.low, "high": iv.high,
                    "largest": max(values), "maximum": top, "paper": float(claims.claim(claim_of(arm,
                                                                                          "contrast_variance")))}
    return out


def contrast_frame(summary: dict):
    """Per arm: the checkpoints' exact contrast variances beside the proved maximum and the paper's value."""
    rows = {arm: {"construction": s["construction"],
                  "ours": f"{s['mean']:.3f} [{s['low']:.3f}, {s['high']:.3f}]", "largest seed": f"{s['largest']:.3f}",
                  "proved maximum": f"{s['maximum']:.4f}", "paper": claims.format_value(s["paper"])}
            for arm, s in summary.items()}
    return _frame(rows, "arm")


def checkpoint_frame(check: dict, tolerance: float):
    """Per checkpoint: the study's exploitability, pyspiel's of the file read back, their difference against
    `tolerance` (chips)."""
    from oscc_core.reporting.results import residual_text

    rows = {k: {"ours": f"{check['ours'][k]:.10f}", "pyspiel": f"{check['pyspiel'][k]:.10f}",
                "|difference|": residual_text(abs(check["ours"][k] - check["pyspiel"][k]), tolerance)}
            for k in check["ours"]}
    return _frame(rows, "checkpoint")


NO_CONTROL_CHECKPOINTS = ("no checkpoints committed for the control: the committed study predates them (a study "
                          "run whole keeps them, and the chapter then rechecks each with pyspiel)")


def control_checkpoint_text(check: dict | None, tolerance: float) -> str:
    """What the pyspiel recheck of the Kuhn-tuned control's checkpoints found (`study.check_control_checkpoints`),
    or that none were committed."""
    if check is None:
        return NO_CONTROL_CHECKPOINTS
    from oscc_core.reporting.results import residual_text

    found = (f"{len(check['pyspiel'])} checkpoints of the control rechecked by pyspiel, largest |difference| "
             f"{residual_text(check['max_abs_difference'], tolerance)} chips" if check["pyspiel"] else
             "the control's checkpoints file holds none")
    return found + ("" if not check["missing"] else f"; MISSING for {', '.join(check['missing'])}")


def control_checkpoint_frame(check: dict | None, tolerance: float):
    """`checkpoint_frame` of the control's checkpoints, or one row saying that none were committed."""
    if check is None or not check["ours"]:
        return _frame({"kuhn_tuned": {"pyspiel recheck": control_checkpoint_text(check, tolerance)}}, "checkpoint")
    return checkpoint_frame(check, tolerance)


def plot_curves(study: dict):
    """Exploitability of the average policy against physical calls (log-log): the seed mean and its 95% band per
    arm, the paper's Kuhn values (dotted, labelled) and the paper's budget (grey)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.4), dpi=100)
    marks = tables.plot_arms(ax, study["runs"], complete_only=False)
    for arm in TARGET_ARMS:
        value = float(claims.claim(claim_of(arm)))
        ax.axhline(value, color=ARM_COLORS[arm], ls=":", lw=1)
        ax.annotate(f"paper, {arm}", (marks[0], value), fontsize=8, color=ARM_COLORS[arm], va="bottom")
    ax.axvline(study["design"]["budget"], color="grey", lw=0.8)
    ax.set_ylabel("exploitability of the average policy (chips)")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return record_text_sizes(fig)


def _order_relation(entry: dict, arm: str) -> Relation:
    return tables.order_relation(entry, arm, "cp_grpo lowest in this game (paired, 95%)")


def rows(study: dict) -> list[Row]:
    """The paper's Kuhn exploitability and NashConv of each learned arm beside the converging learner's at the
    paper's budget, over every study seed: sensitivity rows (the paper's table describes its own learners, the
    literal ones, whose rows keep the verdict)."""
    entry = study["summary"][str(study["design"]["budget"])]
    out = []
    for arm in ARMS:
        iv, rel = entry["arms"][arm]["exploitability_average"], _order_relation(entry, arm)
        out.append(Row.compare(f"kuhn, {arm}: exploitability", claim_of(arm), iv["mean"], iv["low"], iv["high"],
                               rel).as_sensitivity())
        out.append(Row.compare(f"kuhn, {arm}: nashconv", claim_of(arm, "nashconv"), 2 * iv["mean"], 2 * iv["low"],
                               2 * iv["high"], rel).as_sensitivity())
    return out


def glue_values(study: dict, live: dict | None, live_design: tuple, contrast: dict) -> dict[str, str]:
    """The study numbers the chapter's prose quotes, as text (`live_design`: the live rerun's seeds and
    multiples)."""
    d, top = study["design"], top_budget(study)
    first, last = study["summary"][str(d["budget"])], study["summary"][str(top)]
    cp = {b: e["arms"]["cp_grpo"]["exploitability_average"] for b, e in (("first", first), ("last", last))}
    diff = last["differences"]["independent - cp_grpo"]
    reach = study["thresholds"]["cp_grpo"][repr(float(claims.claim(claim_of("cp_grpo"))))]
    seeds, multiples = live_design
    if live is None:
        rerun = "none: the whole study ran here"
    else:
        parts = [live[k]["records"] for k in ("frozen", kuhn_tuned.KEY) if k in live]
        both = f" ({parts[0]:,} of the frozen study, {parts[1]:,} of the Kuhn-tuned control)" if len(parts) == 2 else ""
        rerun = (f"seeds {', '.join(map(str, seeds))} at {', '.join(f'{m}x' for m in multiples)}{both}; "
                 f"{learning_study.live_check_text(live)}")
    return {"study_seeds": str(len(d["seeds"])), "study_budgets": ", ".join(f"{b:,}" for b in budgets(study)),
            "study_top": f"{top:,}", "study_cp_first": _cell(cp["first"]), "study_cp_top": _cell(cp["last"]),
            "study_ind_minus_cp_top": _cell(diff), "study_cp_lower_top": f"{diff['cp_grpo_lower']} of {diff['n']}",
            "study_cp_reach": tables.calls_text(reach), "study_live": rerun,
            "study_run": tables.run_text(study.get("run")),
            "study_contrast_largest": f"{max(s['largest'] for s in contrast.values()):.3f}",
            **learner_glue(study), **rise_glue(study)}


def learner_glue(study: dict) -> dict[str, str]:
    """How the frozen converging learner's pull and average behave (its option set, from the study's design)."""
    options = study["design"].get("converging_options", "none")
    return {"study_pull": tables.PULL_TEXT[options], "study_average": tables.AVERAGE_TEXT[options]}


def rise_glue(study: dict) -> dict[str, str]:
    """The arms whose curves rise after their lowest point, at the frozen choices and at the Kuhn-tuned ones, in one
    sentence (`reporting.study_tables.rises`)."""
    frozen = tables.rises(study["runs"])
    tuned = tables.rises(study[kuhn_tuned.KEY]["runs"]) if kuhn_tuned.KEY in study else []
    if not frozen and not tuned:
        said = ("No curve rises after its lowest point, at the frozen choices or at the Kuhn-tuned ones (the last "
                "budget minus the lowest, paired over seeds, never has its 95% interval wholly above zero).")
    else:
        said = (f"Curves that rise after their lowest point (the last budget minus the lowest, paired over seeds, "
                f"resolved above zero): at the frozen choices {', '.join(frozen) or 'none'}; at the Kuhn-tuned "
                f"ones {', '.join(tuned) or 'none'}.")
    return {"study_rises": said}


def rise_frames(study: dict):
    """Each arm's lowest point and paired rise after it (`reporting.study_tables.rise_frame`), at the frozen choices
    and at the Kuhn-tuned ones."""
    out = [tables.rise_frame(study["runs"], "frozen on Leduc")]
    if kuhn_tuned.KEY in study:
        out.append(tables.rise_frame(study[kuhn_tuned.KEY]["runs"], "tuned on Kuhn"))
    return out


# ----- the Kuhn-tuned control ----------------------------------------------------------------------
CONTROL_TEXT = {"frozen": "frozen on Leduc", kuhn_tuned.KEY: "tuned on Kuhn"}


def literal_exploitability(records: dict) -> dict:
    """{arm: seed mean and 95% t-interval of the exploitability (chips) of the literal learner's Kuhn runs at the
    chapter's budget} from the chapter's Kuhn records ({arm: {seed: record}})."""
    from oscc_core.method.stats import t_interval

    out = {}
    for arm, seeds in records.items():
        iv = t_interval([rec["exploitability"] for rec in seeds.values()])
        out[arm] = {"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n}
    return out


def control_frame(study: dict):
    """(arm, operating point) x budgets: the average policy's exploitability, seed mean and 95% t-interval
    (chips), at the point frozen on Leduc and at the Kuhn-tuned control's, then frozen minus tuned (paired by seed,
    95% t-interval; the seeds on which the tuned control is lower)."""
    import pandas as pd

    tuned, rows = study[kuhn_tuned.KEY], {}
    for arm in ARMS:
        for name, s in (("frozen", study), (kuhn_tuned.KEY, tuned)):
            rows[(arm, CONTROL_TEXT[name])] = {tables.budget_label(study["design"], b): _cell(
                s["summary"][str(b)]["arms"][arm]["exploitability_average"]) for b in budgets(study)}
        rows[(arm, "frozen - tuned")] = {}
        for b in budgets(study):
            d = kuhn_tuned.paired_difference(study, tuned, arm, b)
            rows[(arm, "frozen - tuned")][tables.budget_label(study["design"], b)] = \
                f"{_cell(d)} ({d['tuned_lower']}/{d['n']})"
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.names = ["arm", "operating point"]
    return frame


def control_choices_frame(study: dict):
    """Per arm: eta, alpha and kappa frozen on Leduc beside those the same rule chooses on Kuhn's development seeds,
    with the Kuhn development score (chips), the choices tried, the grid's extensions and whether the choice
    still sits at the grid's edge."""
    tuned = study[kuhn_tuned.KEY]
    rows = {}
    for arm in ARMS:
        f, t = study["choices"][arm], tuned["choices"][arm]
        rows[arm] = {"Leduc (eta, alpha, kappa)": f"{f['eta']:g}, {f['alpha']:g}, {f['kappa']:g}",
                     "Kuhn (eta, alpha, kappa)": f"{t['eta']:g}, {t['alpha']:g}, {t['kappa']:g}"}
        if tuned.get("tuning"):
            tu = tuned["tuning"][arm]
            rows[arm].update({"Kuhn dev score (chips)": f"{tu['score']:.4f}", "choices tried": len(tu["grid"]),
                              "extensions": tu["extensions"], "at the edge": "yes" if tu["at_edge"] else "no"})
    return _frame(rows, "arm")


def plot_control(study: dict, literal: dict):
    """One panel per learned arm: the average policy's exploitability against physical calls (log-log), seed mean
    and 95% band, at the operating point frozen on Leduc (solid) and at the Kuhn-tuned control's (dashed); the
    literal learner at the chapter's budget (its seed mean and 95% interval, black); the paper's Kuhn value
    (dotted)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2), dpi=100, sharex=True, sharey=True)
    budget = study["design"]["budget"]
    for ax, arm in zip(axes.ravel(), ARMS):
        for name, s, style in (("frozen", study, "-"), (kuhn_tuned.KEY, study[kuhn_tuned.KEY], "--")):
            tables.plot_arms(ax, {arm: s["runs"][arm]}, complete_only=False)
            ax.lines[-1].set_linestyle(style)          # the mean line plot_arms just drew
            ax.lines[-1].set_label(f"converging, {CONTROL_TEXT[name]}")
        lit = literal.get(arm)
        if lit is not None:
            ax.errorbar([budget], [lit["mean"]], yerr=[[lit["mean"] - max(lit["low"], tables.BAND_FLOOR)],
                                                       [lit["high"] - lit["mean"]]],
                        fmt="o", color="black", ms=5, capsize=3, label=f"literal ({lit['n']} seeds)")
        ax.axhline(float(claims.claim(claim_of(arm))), color="grey", ls=":", lw=1, label="paper")
        ax.axvline(budget, color="grey", lw=0.6)
        ax.set_title(arm, fontsize=11)
        ax.xaxis.set_minor_formatter(NullFormatter())      # a study of one decade would label its minor ticks
        ax.tick_params(labelsize=9)
        ax.legend(fontsize=9, loc="lower left")
    for ax in axes[:, 0]:
        ax.set_ylabel("exploitability (chips)", fontsize=10)
    fig.tight_layout()
    return fig


def control_glue(study: dict) -> dict[str, str]:
    """The Kuhn-tuned control's numbers the prose quotes, as text: its development seeds and where its choices lie in
    their grids."""
    control = study[kuhn_tuned.KEY]
    return {"control_dev_seeds": ", ".join(map(str, control["design"]["dev_seeds"])),
            "control_tuning_edges": tables.tuning_edges_text(control.get("tuning"))}
