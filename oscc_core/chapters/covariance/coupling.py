"""Coupling factors: the 2x2 ablation (root reuse x continuation coupling) and the stream ledger.

`coupling_rows` compares every arm's contrast variance and check-bet
covariance (chips^2) with tab:app-p1-coupling-factors, tab:app-p1-ablations
and the ablation prose, all with ONE construction: the pooled all-roots audit
(the run's seed and continuation, every arm on the same groups; the one-root
audit gives sensitivity rows);
`coupling_steps` gives the variance each factor removes alone (chips^2);
`ledger_frame` counts the stream keys and uniforms each arm consumes, and
`calls_rows` shows the paper's physical calls per arm beside our count of
physical draws (every uniform an arm consumes, the unit of the cost chapter),
not compared in size: the comparability family "coupling-factor calls" of
`reporting.comparability` says why.
"""
from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations

from oscc_core.chapters.covariance.pair_rows import PAPER_ARM_VARIANCE, row
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.engine.arms import ARMS, PAPER_ARMS, STATED_BELOW, in_stated_order
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: The paper's name of each paper arm in its coupling-factor table.
PAPER_ARM_NAMES = {"independent": "ind", "root_only": "root_only", "continuation_only": "stream_only",
                   "full": "cp_grpo"}
#: The paper's name of each arm in its ablation table (the namespace ablation included).
ABLATION_NAMES = {"independent": "ind", "root_only": "root_only", "continuation_only": "continuation",
                  "full": "cp_grpo_full", "policy_namespace": "policy_namespace"}
#: The paper's name of each paper arm in its ablation prose.
PROSE_NAMES = {"independent": "independent", "root_only": "root_only", "continuation_only": "continuation_only",
               "full": "cp_grpo_full"}
#: The arm each single factor is measured on: (arm, glue key of the variance it removes).
FACTOR_STEPS = (("root_only", "root_step"), ("continuation_only", "cont_step"))


def ordering(audit, quantity: str, decreasing: bool = True) -> Relation:
    """The relation the paper states for the four arms (`engine.arms.STATED_BELOW`) for `quantity` ("contrast_var": both partial arms
    below independent, full lowest; "covariance": both above, full highest), decided on the exact values by
    enumeration (resolved None): no sampling noise can reverse it.  `resolved_by_intervals` gives the Monte-Carlo
    view of the same relation."""
    values = {a: getattr(audit, quantity)(a).exact for a in PAPER_ARMS}
    name, side, end = ("variance", "<", "lowest") if decreasing else ("covariance", ">", "highest")
    return Relation(f"{name}: root_only, continuation_only {side} independent; full {end} (exact values)",
                    in_stated_order(values, decreasing))


def resolved_by_intervals(audit, quantity: str, decreasing: bool = True) -> bool:
    """Whether, for every pair of the stated relation (`engine.arms.STATED_BELOW`), the paired bootstrap interval of their difference
    (`PairedAudit.difference`) lies on the side of 0 the relation states."""
    resolved = True
    for a, b in STATED_BELOW:                          # a below b (variances), above b (covariances)
        d = audit.difference(quantity, b, a)
        resolved &= d.low > 0 if decreasing else d.high < 0
    return bool(resolved)


def ordering_sentence(audit) -> str:
    """Whether the four arms keep the relation the paper states for their contrast variances (on the exact
    values), as a clause the text can quote."""
    order = ordering(audit, "contrast_var")
    stated = "both partial couplings below independent, full coupling lowest"
    if order.holds:
        mc = ("every paired difference of our estimates resolves it" if resolved_by_intervals(audit, "contrast_var")
              else "our estimates do not resolve every step")
        return f"keep the relation the paper states ({stated}), exactly ({mc})"
    values = {a: audit.contrast_var(a).exact for a in PAPER_ARMS}
    ours = " > ".join(sorted(values, key=values.get, reverse=True)).replace("_", "-")
    return f"do not keep the relation the paper states ({stated}): exactly, ours is {ours}"


def namespace_relation(audit) -> Relation:
    """The namespace ablation changes nothing: its exact contrast variance is the independent arm's.  The exact
    enumeration gives the namespaced arm the independent arm's law by definition, so the relation holds by
    construction and never makes a row partly (`Relation.constructed`); whether our Monte-Carlo interval covers
    the independent arm's exact value is the implementation's test (`namespace_covered`)."""
    v, ind = audit.contrast_var("policy_namespace"), audit.contrast_var("independent")
    same_law = math.isclose(v.exact, ind.exact, rel_tol=1e-12)
    return Relation("policy_namespace variance = independent variance (the same exact law)", same_law).constructed()


def namespace_covered(audit) -> bool:
    """Whether our 95% interval of the namespaced arm's contrast variance covers the independent arm's exact
    value (the Monte-Carlo check that re-addressing policy streams changes nothing)."""
    v, ind = audit.contrast_var("policy_namespace"), audit.contrast_var("independent")
    return bool(v.low <= ind.exact <= v.high)


def coupling_rows(audit: PairedAudit) -> list[Row]:
    """tab:app-p1-coupling-factors (contrast and covariance per arm), tab:app-p1-ablations (variance per arm,
    the namespace ablation included) and the ablation prose, all from the fixed-root audit `audit`.

    Relations, as the paper's ablation prose states them (`engine.arms.STATED_BELOW`): both partial arms below independent and full
    lowest in contrast variance, the reverse for the covariance, each decided on the exact values; the
    policy-namespace ablation has the independent arm's exact law (by construction).  Variances are positive by
    definition (`pair_rows` docstring)."""
    v = {a: audit.contrast_var(a) for a in ARMS}
    var_order, cov_order = ordering(audit, "contrast_var"), ordering(audit, "covariance", decreasing=False)
    rows = []
    for arm in PAPER_ARMS:
        p = PAPER_ARM_NAMES[arm]
        rows.append(row(f"coupling factors, {arm}: contrast variance", f"coupling_factors.{p}.contrast", v[arm],
                        var_order, positive=True))
        rows.append(row(f"coupling factors, {arm}: covariance", f"coupling_factors.{p}.covariance",
                        audit.covariance(arm), cov_order))
    for arm in ARMS:
        rel = namespace_relation(audit) if arm == "policy_namespace" else var_order
        rows.append(row(f"ablations, {arm}: contrast variance", f"ablations.{ABLATION_NAMES[arm]}.variance",
                        v[arm], rel, positive=True))
    for arm in PAPER_ARMS:
        rows.append(row(f"ablation prose, {arm}: contrast variance",
                        f"text_ablation.{PROSE_NAMES[arm]}.contrast_variance", v[arm], var_order, positive=True))
    return rows


def coupling_steps(audit: PairedAudit) -> dict[str, float]:
    """Contrast variance each factor removes alone (independent minus the one-factor arm), chips^2.

    Keys: ``root_step`` and ``cont_step`` (ours), with ``_exact`` (enumeration) and ``paper_`` (the paper's).
    """
    ind = audit.contrast_var("independent")
    paper_ind = claims.claim(PAPER_ARM_VARIANCE["independent"])
    out = {}
    for arm, key in FACTOR_STEPS:
        v = audit.contrast_var(arm)
        out[key] = ind.value - v.value
        out[f"{key}_exact"] = ind.exact - v.exact
        out[f"paper_{key}"] = paper_ind - claims.claim(PAPER_ARM_VARIANCE[arm])
    return out


def ledger_frame(audit: PairedAudit):
    """Logical keys and physical draws per arm, beside the paper's logical keys and calls."""
    import pandas as pd

    out = []
    for arm, c in audit.collections.items():
        rec = {"arm": arm, "groups": f"{audit.groups:,}"}
        for cat in ("root", "hidden", "chance", "policy"):
            rec[f"keys: {cat}"] = f"{c.logical_keys[cat]:,}"
        for cat in ("hidden", "chance", "policy"):
            rec[f"draws: {cat}"] = f"{c.physical_draws[cat]:,}"
        p = PAPER_ARM_NAMES.get(arm)
        rec["paper keys"] = f"{claims.claim(f'coupling_factors.{p}.logical_keys'):,}" if p else "—"
        rec["paper calls"] = f"{claims.claim(f'coupling_factors.{p}.calls'):,}" if p else "—"
        out.append(rec)
    return pd.DataFrame(out)


def physical_calls(audit: PairedAudit, arm: str) -> int:
    """Every uniform the arm's collection consumed (hidden, chance and policy draws): its physical calls."""
    return int(sum(audit.collections[arm].physical_draws.values()))


def calls_rows(audit: PairedAudit) -> list[Row]:
    """tab:app-p1-coupling-factors' calls per arm beside our physical draws at the audit's settings: not compared
    in size (the comparability family "coupling-factor calls", `reporting.comparability`, whose reason each row
    gives first); the reason adds both counts per group, and our branch rollouts per group beside them."""
    rows = []
    for arm, p in PAPER_ARM_NAMES.items():
        cid = f"coupling_factors.{p}.calls"
        ours, groups = physical_calls(audit, arm), audit.groups
        rollouts = groups * len(audit.actions) * audit.budget
        keys = claims.claim(f"coupling_factors.{p}.logical_keys")
        detail = (f"the paper's {claims.claim(cid) / keys:.3f} calls per logical key against our "
                  f"{ours / groups:.3f} per group over {groups:,} groups at one root ({rollouts / groups:g} branch "
                  f"rollouts per group)")
        row = Row.compare(f"{arm}: physical calls", cid, ours)
        rows.append(replace(row, reason=f"{row.reason}; {detail}"))
    return rows
