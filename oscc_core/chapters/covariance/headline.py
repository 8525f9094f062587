"""The fixed-root audit's headline rows: pairs, contrast means, variances, SDs, ratio, reduction, covariance.

Rows of tab:main, tab:main-uncertainty and the branch means of the paper's
'Return-contrast precision' prose; `glue_values` gives the numbers the
chapter's text quotes.  Units: means in chips, variances and covariances in
chips^2, SDs in chips, the ratio unitless, the reduction in percent.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import PAPER_BRANCH, lower_variance, row, side
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.reporting.rows import Row


def fixed_root_rows(audit: PairedAudit) -> list[Row]:
    """tab:main, tab:main-uncertainty and the 'Return-contrast precision' prose: the audit's group counts
    (`audit_check_rows`), then the estimates (`estimate_rows`)."""
    return audit_check_rows(audit) + estimate_rows(audit)


def audit_check_rows(audit: PairedAudit) -> list[Row]:
    """The group counts the paper prints for the audit: failed or filtered groups, valid groups (every arm
    passes every audit predicate) and each arm's groups emitted; exact counts, checks rather than settings (a
    failed group would lower them)."""
    return [
        Row.count("failed or filtered groups (all arms)", "text_precision.both_arms.failed_or_filtered_groups",
                  audit.groups - audit.valid, 0),
        Row.count("valid groups (all arms)", "learning_boundary.fixed_root.valid_groups", audit.valid),
        *groups_emitted_rows(audit),
    ]


def estimate_rows(audit: PairedAudit) -> list[Row]:
    """Means, variances, SDs, ratio, reduction, covariances and branch means of the independent and full arms.

    Relations, as the paper states them, each decided on the exact values by enumeration (`pair_rows.side`):
    the paired (full) variance and SD are the lower ones (bold in tab:main), the ratio is below 1, the
    reduction positive, the coupled covariance positive.  The contrast means and the
    independent arm's covariance are descriptive in the paper: no relation, never partly.  Variances, SDs and
    the ratio are positive by definition (`pair_rows` docstring).  The group counts per arm of tab:main are
    settings (`settings.setting_rows`).
    """
    ind_v, full_v = audit.contrast_var("independent"), audit.contrast_var("full")
    ratio, reduction = audit.ratio(), audit.reduction()
    lower = lower_variance(audit)
    lower_sd = lower_variance(audit, "full SD < independent SD")
    ind_m, full_m = audit.contrast_mean("independent"), audit.contrast_mean("full")
    rows = [
        row("independent: contrast mean", "main.independent.reported_mean", ind_m),
        row("full: contrast mean", "main.cp_grpo_paired.reported_mean", full_m),
        row("independent: contrast variance", "main.independent.variance", ind_v, lower, positive=True),
        row("full: contrast variance", "main.cp_grpo_paired.variance", full_v, lower,
            "main_uncertainty.contrast_variance.interval", positive=True),
        row("independent: contrast SD", "main.independent.sd", audit.contrast_sd("independent"), lower_sd,
            positive=True),
        row("full: contrast SD", "main.cp_grpo_paired.sd", audit.contrast_sd("full"), lower_sd, positive=True),
        row("variance ratio full / independent", "main_uncertainty.variance_ratio.cp_grpo_paired", ratio,
            side("variance ratio full / independent < 1", ratio, below=1.0),
            "main_uncertainty.variance_ratio.interval", positive=True),
        row("variance reduction (%)", "main.caption.variance_reduction", reduction,
            side("variance reduction > 0", reduction, above=0.0)),
    ]
    ind_c, full_c = audit.covariance("independent"), audit.covariance("full")
    rows += [
        row("independent: check-bet covariance", "main_uncertainty.check_bet_covariance.independent", ind_c),
        row("full: check-bet covariance", "main_uncertainty.check_bet_covariance.cp_grpo_paired", full_c,
            side("full covariance > 0", full_c, above=0.0),
            "main_uncertainty.check_bet_covariance.interval"),
    ]
    if audit.actions == list(PAPER_BRANCH):
        rows += branch_mean_rows(audit)
    return rows


def groups_emitted_rows(audit: PairedAudit) -> list[Row]:
    """The paper's 'groups emitted' of each arm ('100000/100000'): our groups that pass every audit predicate
    out of the groups collected, an exact count (a check, not a setting: a failed group would lower it)."""
    out = []
    for arm, label in (("full", "cp_grpo"), ("independent", "independent")):
        valid, groups = audit.emitted_counts(arm)
        out.append(Row.fraction(f"{arm}: groups emitted", f"text_precision.{label}.groups_emitted", valid, groups))
    return out


def branch_mean_rows(audit: PairedAudit) -> list[Row]:
    """Each branch mean of the full and independent arms against the paper's prose.

    The paper calls these means descriptive marginal checks: no relation is declared, so a mean outside
    our interval is not reproduced."""
    rows = []
    for arm, label in (("full", "cp_grpo"), ("independent", "independent")):
        for b, word in ((0, "check"), (1, "bet")):
            est = audit.branch_mean(arm, b)
            cid = f"text_precision.{label}.{word}_mean"
            rows.append(row(f"{arm}: branch mean, {word} ({audit.actions[b]})", cid, est))
    return rows


def glue_values(audit: PairedAudit, n_groups: int) -> dict:
    """The numbers the fixed-root section's text quotes, by glue name."""
    ind, full = audit.contrast_var("independent"), audit.contrast_var("full")
    ratio, reduction = audit.ratio(), audit.reduction()
    ind_mean = audit.contrast_mean("independent")
    return {
        "n_groups": f"{n_groups:,}", "contrast": " minus ".join(audit.pair_names),
        "ind_var": ind.value, "ind_exact": ind.exact, "full_var": full.value, "full_exact": full.exact,
        "full_low": full.low, "full_high": full.high, "ratio": ratio.value, "ratio_exact": ratio.exact,
        "reduction": reduction.value, "reduction_low": reduction.low, "reduction_high": reduction.high,
        "reduction_exact": reduction.exact, "full_cov": audit.covariance("full").value,
        "full_cov_exact": audit.covariance("full").exact, "ind_cov": audit.covariance("independent").value,
        "ind_cov_exact": audit.covariance("independent").exact,
        "mean_exact": ind_mean.exact, "mean_z": (ind_mean.value - ind_mean.exact) / ind_mean.se,
    }
