"""Coupling factors: the 2x2 ablation (root reuse x continuation coupling) and the stream ledger.

`coupling_rows` compares every arm's contrast variance and check-bet
covariance (chips^2) with tab:app-p1-coupling-factors and
tab:app-p1-ablations; `coupling_steps` gives the variance each factor removes
alone (chips^2); `ledger_frame` counts the stream keys and uniforms each arm
consumes.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import PAPER_ARM_VARIANCE, row
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.engine.arms import ARMS, PAPER_ARMS, in_paper_order
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: Per arm, the paper's (contrast variance, covariance) claim ids; the namespace ablation has no covariance.
COUPLING_CLAIMS = {
    "independent": ("ablations.ind.variance", "coupling_factors.ind.covariance"),
    "root_only": ("ablations.root_only.variance", "coupling_factors.root_only.covariance"),
    "continuation_only": ("ablations.continuation.variance", "coupling_factors.stream_only.covariance"),
    "full": ("ablations.cp_grpo_full.variance", "coupling_factors.cp_grpo.covariance"),
    "policy_namespace": ("ablations.policy_namespace.variance", None),
}
#: The paper's name of each paper arm in its coupling-factor table.
PAPER_ARM_NAMES = {"independent": "ind", "root_only": "root_only", "continuation_only": "stream_only",
                   "full": "cp_grpo"}
#: The arm each single factor is measured on: (arm, glue key of the variance it removes).
FACTOR_STEPS = (("root_only", "root_step"), ("continuation_only", "cont_step"))


def coupling_rows(audit: PairedAudit) -> list[Row]:
    """tab:app-p1-coupling-factors and tab:app-p1-ablations: contrast variance and covariance per arm.

    Relations, as the paper's tables order the arms: contrast variance
    independent > root_only > continuation_only > full, covariance in the
    reverse order; the policy-namespace ablation (a policy-randomness check)
    has the independent arm's variance: its interval contains the independent
    arm's exact value.
    """
    v = {a: audit.contrast_var(a) for a in ARMS}
    c = {a: audit.covariance(a) for a in ARMS}
    var_order = Relation("variance: " + " > ".join(PAPER_ARMS),
                         in_paper_order({a: v[a].value for a in PAPER_ARMS}))
    cov_order = Relation("covariance: " + " < ".join(PAPER_ARMS),
                         in_paper_order({a: c[a].value for a in PAPER_ARMS}, decreasing=False))
    rows = []
    for arm in ARMS:
        var_id, cov_id = COUPLING_CLAIMS[arm]
        if arm == "policy_namespace":
            rel = Relation("policy_namespace variance = independent variance (interval covers its exact value)",
                           v[arm].low <= v["independent"].exact <= v[arm].high)
        else:
            rel = var_order
        rows.append(row(f"{arm}: contrast variance", var_id, v[arm], rel))
        rows.append(row(f"{arm}: covariance", cov_id, c[arm], cov_order if cov_id else None))
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
