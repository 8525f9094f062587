"""What the chapter shows of the coupling question and of the calls-to-threshold rule, from the study's runs.

Both are computed from the runs at show time (`learning.coupling_question`, `learning.calls_rules`), so the
committed study needs no regeneration to show them.  Units: calls in physical calls, exploitability in chips.
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning import calls_rules, coupling_question
from oscc_core.reporting import study_tables as tables

#: The comparison of the coupling question: independent sampling over CP-GRPO.
ARM = "independent"


def summaries(study: dict) -> dict:
    """{learner: `coupling_question.coupling_summary`} of every learner whose runs hold both arms."""
    return {learner: coupling_question.coupling_summary(arms, study["design"]["thresholds"], ARM)
            for learner, arms in study["runs"].items() if ARM in arms and coupling_question.REFERENCE in arms}


def ratio_text(r: dict) -> str:
    """'1.72 [1.63, 1.81], 30 pairs' (a ratio of calls, its 95% interval, the pairs behind it), or why there is
    none."""
    if r["ratio"] is None:
        return f"no seed on which both arms reach it (of {r['seeds']})"
    interval = "" if r["low"] is None else f" [{r['low']:.2f}, {r['high']:.2f}]"
    return f"{r['ratio']:.2f}{interval}, {r['pairs']} pair{'' if r['pairs'] == 1 else 's'}"


def ratio_frame(study: dict, order=None):
    """(learner, threshold): independent / CP-GRPO calls to the threshold, paired by seed over the seeds on which
    both reach it (geometric mean and 95% t-interval of the log ratios), the pairs, the seeds on which CP-GRPO
    needs fewer calls, and the seeds on which one arm alone reaches it."""
    import pandas as pd

    rows = []
    for learner, s in sorted(summaries(study).items(), key=lambda kv: (order or []).index(kv[0])
                             if kv[0] in (order or []) else len(order or [])):
        for th, r in s["calls_ratio"].items():
            rows.append({"learner": learner, "threshold (chips)": f"{float(th):g}",
                         "independent / CP-GRPO calls": ratio_text(r),
                         "CP-GRPO fewer calls": f"{r['reference_faster']} of {r['pairs']}" if r["pairs"] else "—",
                         "one arm alone reaches it": f"independent {r['only_arm']}, CP-GRPO {r['only_reference']}"})
    return pd.DataFrame(rows).set_index(["learner", "threshold (chips)"])


def differences_frame(study: dict, learner: str):
    """Budgets: independent − CP-GRPO exploitability of the average policy at every recorded budget, seeds matched
    (mean and 95% t-interval; positive: CP-GRPO lower), with the seeds on which CP-GRPO is lower."""
    import pandas as pd

    rows = {f"{b:,}": {"independent − CP-GRPO (chips)": tables.interval_cell(d),
                       "CP-GRPO lower": f"{d['cp_grpo_lower']} of {d['n']}"}
            for b, d in summaries(study)[learner]["differences"].items()}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "physical calls"
    return frame


def glue_values(study: dict, learner: str = "converging") -> dict[str, str]:
    """The coupling ratio the prose quotes (at the first threshold) and how far apart the stored budgets lie."""
    first = repr(float(study["design"]["thresholds"][0]))
    r = summaries(study)[learner]["calls_ratio"][first]
    gaps = np.diff(np.log(sorted(int(b) for b in study["design"]["recorded_budgets"])))
    return {"study_coupling_ratio": ratio_text(r),
            "study_coupling_faster": f"{r['reference_faster']} of {r['pairs']}",
            "study_budget_factor": f"{float(np.exp(np.median(gaps))):.2f}"}


def rule_effect_text(effect: dict) -> str:
    """How far the alternative rule (arithmetic mean, linear interpolation) lies from the study's rule, and in
    brackets how far linear interpolation alone moves it (the part denser budgets remove): '+9.0% (+3.8%)'."""
    if effect["relative_difference"] is None:
        return "—"
    return f"{effect['relative_difference']:+.1%} ({effect['interpolation_difference']:+.1%})"


def rule_effect(study: dict, learner: str, arm: str, threshold: float) -> dict:
    """`learning.calls_rules.rule_effect` of one learner and arm of the study."""
    return calls_rules.rule_effect(study["runs"][learner][arm].values(), threshold)
