"""OpenSpiel's MCCFR beside the learning study's arms, on their axis (each curve's lowest point, whether it rises
after it and where it settles below a threshold are `reporting.study_tables`', shared with the transfer chapter).

Units: exploitability in chips (NashConv / 2 of the average policy); calls in physical calls, which for the
anchors are sampled terminal histories (one branch rollout of a learner reaches one terminal history).
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning import mccfr_anchor
from oscc_core.learning.arms import get_learner_arm
from oscc_core.method.stats import t_interval
from oscc_core.reporting import study_tables as tables

ANCHOR_COLOURS = {mccfr_anchor.ES: "#555555", mccfr_anchor.OS: "#999999"}


# ----- OpenSpiel's MCCFR beside the arms ---------------------------------------------------------------------------
def anchor_curve(anchors: dict, kind: str, field: str = "terminal_histories") -> list[tuple[float, object]]:
    """(seed mean of `field` at the budget, 95% t-interval of the exploitability over seeds) at every budget every
    seed of the anchor recorded."""
    runs = anchors["runs"][kind]
    budgets = sorted(set.intersection(*(set(map(int, r)) for r in runs.values())))
    return [(float(np.mean([r[str(b)][field] for r in runs.values()])),
             t_interval([r[str(b)]["exploitability_average"] for r in runs.values()])) for b in budgets]


def plot_anchors(ax, anchors: dict) -> None:
    """ES- and OS-MCCFR on `ax` (exploitability against terminal histories): seed mean and 95% band, dashed."""
    for kind in mccfr_anchor.SOLVERS:
        points = anchor_curve(anchors, kind)
        x = [c for c, _ in points]
        ax.plot(x, [iv.mean for _, iv in points], "--", color=ANCHOR_COLOURS[kind], lw=1.4,
                label=f"{mccfr_anchor.LABELS[kind]} (OpenSpiel)")
        ax.fill_between(x, [max(iv.low, tables.BAND_FLOOR) for _, iv in points], [iv.high for _, iv in points],
                        color=ANCHOR_COLOURS[kind], alpha=0.15, lw=0)


def histories(record: dict, arm: str) -> int:
    """Decision and terminal histories a learner's run touched (`mccfr_anchor.histories_touched`)."""
    return mccfr_anchor.histories_touched(record, get_learner_arm(arm).samples)


def against_anchor(study: dict, anchors: dict, learner: str = "converging", arm: str = "cp_grpo",
                   kind: str = mccfr_anchor.ES) -> list[dict]:
    """At every budget both recorded: the arm's and the anchor's seed means (their own seeds; not paired), the
    arm minus the anchor with a 95% Welch interval, and each one's mean histories touched."""
    from scipy import stats as sps

    mine, theirs = study["runs"][learner][arm], anchors["runs"][kind]
    shared = sorted(set.intersection(*(set(map(int, r)) for r in list(mine.values()) + list(theirs.values()))))
    out = []
    for b in shared:
        x = np.array([r[str(b)]["exploitability_average"] for r in mine.values()])
        y = np.array([r[str(b)]["exploitability_average"] for r in theirs.values()])
        vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
        df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1)) if vx + vy > 0 else 1.0
        half = float(sps.t.ppf(0.975, df)) * float(np.sqrt(vx + vy))
        d = float(x.mean() - y.mean())
        out.append({"budget": b, "arm": float(x.mean()), "anchor": float(y.mean()), "difference": d,
                    "low": d - half, "high": d + half,
                    "arm_terminal": float(np.mean([r[str(b)]["physical_calls"] for r in mine.values()])),
                    "anchor_terminal": float(np.mean([r[str(b)]["terminal_histories"] for r in theirs.values()])),
                    "arm_touched": float(np.mean([histories(r[str(b)], arm) for r in mine.values()])),
                    "anchor_touched": float(np.mean([r[str(b)]["terminal_histories"] + r[str(b)]["decision_histories"]
                                                     for r in theirs.values()]))})
    return out


def anchor_frame(study: dict, anchors: dict, learner: str = "converging", arm: str = "cp_grpo", every: int = 6):
    """Every `every`-th budget both recorded (and the last): the arm and ES-MCCFR's exploitability (seed means),
    their difference with its 95% interval, and what each touched (terminal histories; decision and terminal
    histories), then OS-MCCFR's exploitability where it ran."""
    import pandas as pd

    rows = against_anchor(study, anchors, learner, arm)
    os_points = dict(zip(anchors["design"]["budgets"][mccfr_anchor.OS],
                         [iv for _, iv in anchor_curve(anchors, mccfr_anchor.OS)]))
    picked = rows[::every] + ([rows[-1]] if (len(rows) - 1) % every else [])
    out = {}
    for r in picked:
        # OS-MCCFR's budgets are its own grid's (up to 16 times the paper's): the one within 2% of this budget
        os_iv = next((iv for b, iv in os_points.items() if abs(np.log(b / r["budget"])) < 0.02), None)
        out[f"{r['budget']:,}"] = {
            f"{arm} (chips)": f"{r['arm']:.4g}", "ES-MCCFR (chips)": f"{r['anchor']:.4g}",
            f"{arm} − ES-MCCFR": f"{r['difference']:+.4f} [{r['low']:+.4f}, {r['high']:+.4f}]",
            f"{arm} histories touched": f"{r['arm_touched']:,.0f}",
            "ES-MCCFR terminal / touched": f"{r['anchor_terminal']:,.0f} / {r['anchor_touched']:,.0f}",
            "OS-MCCFR (chips)": "—" if os_iv is None else f"{os_iv.mean:.4g}"}
    frame = pd.DataFrame.from_dict(out, orient="index")
    frame.index.name = "budget (terminal histories)"
    return frame


def anchor_sentence(study: dict, anchors: dict, learner: str = "converging", arm: str = "cp_grpo") -> str:
    """Where the arm lies against OpenSpiel's ES-MCCFR at every budget both recorded (resolved below, above, or
    neither, by a 95% Welch interval of the difference of seed means: the anchors' seeds share no random numbers
    with the learners'), both at the largest shared budget, and ES-MCCFR's terminal histories per iteration there
    (counted)."""
    rows = against_anchor(study, anchors, learner, arm)
    above = [r["budget"] for r in rows if r["low"] > 0]
    below = [r["budget"] for r in rows if r["high"] < 0]
    top = rows[-1]
    es = anchors["runs"][mccfr_anchor.ES]
    per_iteration = np.mean([r[str(top["budget"])]["terminal_histories"] / r[str(top["budget"])]["iterations"]
                             for r in es.values()])

    def where(budgets: list[int]) -> str:
        if not budgets:
            return "none"
        return f"{len(budgets)} ({budgets[0]:,} to {budgets[-1]:,} calls)" if len(budgets) > 1 else \
            f"1 ({budgets[0]:,} calls)"
    return (f"On the same axis, OpenSpiel's ES-MCCFR ({len(es)} seeds; its terminal histories counted in every run, "
            f"{per_iteration:.2f} per iteration on average by {top['budget']:,}) ends at {top['anchor']:.4f} chips, "
            f"and {learner} {arm} at {top['arm']:.4f}. Of the {len(rows)} budgets both recorded, {arm}'s average "
            f"policy is resolved below ES-MCCFR's at {where(below)} and above it at {where(above)} (95% Welch "
            f"intervals of the difference of seed means).")
