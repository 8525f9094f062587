"""The coupling question of a learning study in one summary: does CP-GRPO learn faster than independent sampling?

Two readings of the same runs, both paired by seed (the two arms share their
seeds, hence their decision points' random streams):

* calls to a threshold: for each seed on which *both* arms reach it, the
  ratio of independent's calls to CP-GRPO's (each interpolated by the study's
  rule, `calls_rules.crossing`); the geometric mean of the ratios with a 95%
  t-interval on the paired log differences, and the number of pairs.  A ratio
  above 1: CP-GRPO needs fewer calls.  Seeds on which only one arm reaches
  the threshold are counted, not used (a censored pair has no ratio);
* exploitability at every budget: independent minus CP-GRPO, seeds matched
  (`study_design.summary`'s paired differences, at every recorded budget both
  arms hold for all their seeds).  Above 0: CP-GRPO is lower.

Units: calls in physical calls, exploitability in chips.
"""
from __future__ import annotations

import numpy as np

from oscc_core.learning.calls_rules import crossing
from oscc_core.learning.study_design import summary
from oscc_core.method.stats import t_interval

REFERENCE = "cp_grpo"      # `study_design.summary` takes its paired differences against CP-GRPO


def calls_ratio(arm_runs: dict, reference_runs: dict, threshold: float) -> dict:
    """arm / reference calls to `threshold`, paired by seed ({seed: {budget: record}} each): {"ratio" (geometric
    mean over the pairs), "low", "high" (exp of the 95% t-interval of the log ratios; None with fewer than two
    pairs), "pairs", "seeds" (shared by both arms), "only_arm", "only_reference" (seeds on which one arm alone
    reaches it), "reference_faster" (pairs with a ratio above 1)}."""
    shared = sorted(set(arm_runs) & set(reference_runs), key=str)
    logs, only_arm, only_ref = [], 0, 0
    for seed in shared:
        a, r = crossing(arm_runs[seed], threshold), crossing(reference_runs[seed], threshold)
        if a is not None and r is not None:
            logs.append(np.log(a[0]) - np.log(r[0]))
        only_arm += a is not None and r is None
        only_ref += r is not None and a is None
    out = {"ratio": None, "low": None, "high": None, "pairs": len(logs), "seeds": len(shared),
           "only_arm": int(only_arm), "only_reference": int(only_ref),
           "reference_faster": int(sum(d > 0 for d in logs))}
    if logs:
        out["ratio"] = float(np.exp(np.mean(logs)))
    if len(logs) >= 2 and np.ptp(logs) > 0:
        iv = t_interval(logs)
        out["low"], out["high"] = float(np.exp(iv.low)), float(np.exp(iv.high))
    return out


def shared_budgets(arm_runs: dict, reference_runs: dict) -> list[int]:
    """The recorded budgets every seed of both arms holds, ascending."""
    seeds = list(arm_runs.values()) + list(reference_runs.values())
    common = set.intersection(*(set(curve) for curve in seeds)) if seeds else set()
    return sorted(int(b) for b in common)


def coupling_summary(arms: dict, thresholds, arm: str = "independent") -> dict:
    """The coupling question of one learner's runs (`arms`: {arm: {seed: {budget: record}}}): {"calls_ratio":
    {repr(threshold): `calls_ratio` arm / CP-GRPO}, "differences": {budget: arm - CP-GRPO exploitability of the
    average policy, `study_design.summary`'s paired entry (mean, low, high, n, cp_grpo_lower)}}."""
    ours, ref = arms[arm], arms[REFERENCE]
    budgets = shared_budgets(ours, ref)
    by_budget = summary({"_": {REFERENCE: ref, arm: ours}}, budgets, ())["by_budget"]["_"]
    return {"calls_ratio": {repr(float(th)): calls_ratio(ours, ref, float(th)) for th in thresholds},
            "differences": {b: by_budget[str(b)]["differences"][f"{arm} - {REFERENCE}"] for b in budgets}}
