"""The coupling question at one operating point: CP-GRPO and independent sampling trained with the same choices.

The learning study chooses each arm's step size eta, pull alpha and magnet rate kappa on the development seeds,
arm by arm, so its ratio of calls to a threshold mixes two effects: the coupling, and the choices the tuning made
for each arm.  Here both arms run at *one* operating point, each arm's tuned choice in turn (read from the study
shown), on the study's first `common_point_seeds` reporting seeds (all of them when it has fewer), paired by seed,
recorded like the study (its options, budgets per decade and thresholds) up to `MULTIPLES` x the budget.  The
paired ratio of calls to each threshold and the paired differences (`learning.coupling_question`) then measure
the coupling alone.

Units: calls in physical calls, exploitability in chips of the average policy.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.solver.study import design_of, store
from oscc_core.chapters.solver.study_coupling import ratio_text, summaries
from oscc_core.learning import coupling_question
from oscc_core.learning import study_design as design
from oscc_core.reporting import study_tables

#: Budgets of the runs, as multiples of the budget: up to ten times it, past every arm's crossing of the
#: study's thresholds (the study's converging arms cross the last one before four times the budget).
MULTIPLES = (1, 10)
#: The two arms of the coupling question, the reference (CP-GRPO) first.
ARMS = (coupling_question.REFERENCE, "independent")
LABELS = {"cp_grpo": "CP-GRPO", "independent": "independent"}


def run(p, shown: dict) -> dict | None:
    """{owner arm: {"choice", "seeds", "calls", "summary"}} for both arms trained at `owner`'s converging choice
    in the study `shown` ("calls": each arm's calls to each threshold, `study_design.summary`'s entries;
    "summary": `coupling_question.coupling_summary`), or None when `p.common_point_seeds` is 0."""
    if not p.common_point_seeds:
        return None
    seeds = tuple(shown["design"]["seeds"][:p.common_point_seeds])
    thresholds = shown["design"]["thresholds"]
    out = {}
    for owner in ARMS:
        choice = shown["choices"][design.CONVERGING][owner]
        done = like_shown(p, shown, seeds).run(store(p), {design.CONVERGING: {arm: choice for arm in ARMS}},
                                               p.workers, p.scheduler or None, p.torch_device)
        runs = done["study"]["runs"][design.CONVERGING]
        out[owner] = {"choice": dict(choice), "seeds": len(seeds),
                      "calls": done["study"]["thresholds"][design.CONVERGING],
                      "summary": coupling_question.coupling_summary(runs, thresholds)}
    return out


def like_shown(p, shown: dict, seeds):
    """The design of the common-point runs: the parameters' (the shown study's options, checked when the chapter
    validates them), on `seeds` up to `MULTIPLES` x the budget, recorded at the shown study's budgets a decade and
    asked about its thresholds, so the ratios are interpolated like the study's own."""
    d = shown["design"]
    return replace(design_of(p, seeds=seeds, multiples=MULTIPLES), thresholds=tuple(d["thresholds"]),
                   curve_per_decade=d.get("curve_per_decade", design.DEFAULT_PER_DECADE))


def choice_text(choice: dict) -> str:
    """'eta 32, alpha 1, kappa 0.003'."""
    return ", ".join(f"{k} {choice[k]:g}" for k in ("eta", "alpha", "kappa"))


def frame(common: dict | None):
    """(whose choice, threshold): each arm's calls to the threshold (geometric mean [95% interval] (seeds)) and
    independent / CP-GRPO calls paired by seed (geometric mean of the ratios [95% interval], pairs)."""
    import pandas as pd

    if common is None:
        return pd.DataFrame({"not run": ["common_point_seeds is 0"]})
    rows = []
    for owner, r in common.items():
        for th, ratio in r["summary"]["calls_ratio"].items():
            rows.append({"both arms at": f"{LABELS[owner]}'s choice ({choice_text(r['choice'])})",
                         "threshold (chips)": f"{float(th):g}",
                         **{f"{LABELS[a]} calls": study_tables.calls_text(r["calls"][a][th]) for a in ARMS},
                         "independent / CP-GRPO calls": ratio_text(ratio)})
    return pd.DataFrame(rows).set_index(["both arms at", "threshold (chips)"])


def glue_values(common: dict | None, study: dict) -> dict[str, str]:
    """For the prose: the paired ratio of calls to the study's first threshold at each arm's choice, the seeds,
    and the sentence reading them beside the study's own ratio (`reading`)."""
    first = float(study["design"]["thresholds"][0])
    said = {"common_reading": reading(common, summaries(study)[design.CONVERGING]["calls_ratio"][repr(first)],
                                      first)}
    if common is None:
        skipped = "not run (common_point_seeds 0)"
        return {**said, "common_ratio_cp": skipped, "common_ratio_ind": skipped, "common_seeds": "0"}
    key = repr(first)
    return {**said, "common_ratio_cp": ratio_text(common["cp_grpo"]["summary"]["calls_ratio"][key]),
            "common_ratio_ind": ratio_text(common["independent"]["summary"]["calls_ratio"][key]),
            "common_seeds": str(common["cp_grpo"]["seeds"])}


def _direction(r: dict) -> str:
    """Which arm needs fewer calls, resolved at 95% on the paired log ratios: "CP-GRPO", "independent" or "none"."""
    if r["ratio"] is None or r["low"] is None:
        return "none"
    return "CP-GRPO" if r["low"] > 1 else "independent" if r["high"] < 1 else "none"


def reading(common: dict | None, study_ratio: dict, first_threshold: float) -> str:
    """One sentence reading the common-point ratios beside the study's own (`study_ratio`: the study's
    `coupling_question.calls_ratio` at `first_threshold`, each arm at its own choice).  The study's advantage is
    put down to the tuning only when, at both operating points, the ratio's 95% interval contains 1 and lies
    wholly below the study's interval."""
    if common is None:
        return "The common operating point was not run (common_point_seeds 0)."
    key = repr(float(first_threshold))
    ratios = {owner: common[owner]["summary"]["calls_ratio"][key] for owner in ARMS}
    at = {owner: _direction(r) for owner, r in ratios.items()}
    study = _direction(study_ratio)
    below = study_ratio["low"] is not None and all(r["high"] is not None and r["high"] < study_ratio["low"]
                                                   for r in ratios.values())
    if set(at.values()) == {"none"}:
        if study == "CP-GRPO" and below:
            tail = (" the study's advantage of CP-GRPO, whose interval lies above both, comes from the choices the "
                    "tuning made for each arm, not from the coupling.")
        else:
            tail = " the coupling's effect at one operating point is not resolved at 95%."
        return (f"At either arm's choice the two arms need the same calls to {first_threshold:g} chips within the "
                f"95% interval (the ratio's interval contains 1 at both):{tail}")
    parts = [f"at {LABELS[o]}'s choice {'neither arm is resolved faster' if d == 'none' else d + ' needs fewer calls'}"
             for o, d in at.items()]
    return (f"At one operating point, to {first_threshold:g} chips: {'; '.join(parts)} (95% intervals of the "
            f"paired ratios); with each arm at its own choice (the study) "
            f"{'neither is resolved faster' if study == 'none' else study + ' needs fewer calls'}.")
