"""Continuation budget: the paired comparison with k continuation rollouts per branch, on the per-rollout scale.

Each branch return is the sum of k rollouts from the same post-action state;
the audits divide by k (``per_rollout``), so variances are those of the
per-rollout mean (chips^2) and ratios are unitless.  Rows of
tab:app-p1-root-budget, matched to the paper's rows by budget.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import PAIR_QUANTITIES, POSITIVE, pair_estimates, pair_relation, row
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.reporting.rows import Row

#: The paper's budget row each of our budgets is compared with.
BUDGET_ROWS = {1: "private_card_group_a", 4: "private_card_group_b", 8: "public_round_split"}


def budget_audits(root: str, budgets, n_groups: int, seed: int, continuation, device: str,
                  n_bootstrap: int) -> dict[int, PairedAudit]:
    """One per-rollout paired audit of the independent and full arms per budget k."""
    return {k: paired_audit(root, HEADLINE_ARMS, n_groups, seed, continuation, device, n_bootstrap, f"budget/{k}",
                            budget=k, per_rollout=True) for k in budgets}


def budget_rows(audits: dict[int, PairedAudit]) -> list[Row]:
    """tab:app-p1-root-budget, matched to the paper's rows by budget (per-rollout-mean scale); a budget the paper
    does not report gets rows without a paper value.  The budgets and pair counts are settings
    (`settings.setting_rows`); variances and ratios are positive by definition (`pair_rows` docstring)."""
    rows = []
    for k, a in audits.items():
        label = BUDGET_ROWS.get(k)
        for q, text in PAIR_QUANTITIES:
            cid = f"root_budget.{label}.{q}" if label else None
            rows.append(row(f"budget {k}: {text}", cid, pair_estimates(a)[q], pair_relation(q, a),
                            positive=q in POSITIVE))
    return rows
