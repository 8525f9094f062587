"""The paper's numbers of this chapter's tables that it does not compare, each with the one-sentence reason.

Rows of `Row.not_compared`: the sampler calls and update variances of the
coupling-factor and ablation tables (another design, and a learner this
chapter does not train), the paper's own intervals (each is shown beside the
value it belongs to, whose row has the verdict), and the independent arm's
ratio to itself.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.coupling import ABLATION_NAMES, PAPER_ARM_NAMES
from oscc_core.reporting.rows import Row

#: The paper's intervals and the claim whose row shows each beside its value.
PAPER_INTERVALS = {
    "main_uncertainty.contrast_variance.interval": "main.cp_grpo_paired.variance",
    "main_uncertainty.variance_ratio.interval": "main_uncertainty.variance_ratio.cp_grpo_paired",
    "main_uncertainty.check_bet_covariance.interval": "main_uncertainty.check_bet_covariance.cp_grpo_paired",
    "text_precision.check.bootstrap_interval": "marginal_equivalence.check.mean_difference",
    "text_precision.bet.bootstrap_interval": "marginal_equivalence.bet.mean_difference",
    "marginal_equivalence.check.ci_low": "marginal_equivalence.check.mean_difference",
    "marginal_equivalence.check.ci_high": "marginal_equivalence.check.mean_difference",
    "marginal_equivalence.bet.ci_low": "marginal_equivalence.bet.mean_difference",
    "marginal_equivalence.bet.ci_high": "marginal_equivalence.bet.mean_difference",
}


def coupling_not_compared() -> list[Row]:
    """The calls and update-variance columns of tab:app-p1-coupling-factors and tab:app-p1-ablations."""
    calls = ("the paper counts sampler calls of its own design (6 roots x 5,120 groups per seed); our ablation "
             "runs another design (one root, every group in every arm), so its draw counts (the stream ledger) "
             "are of another unit")
    update = ("an update variance needs a learner's gradient step on matched batches; this chapter audits "
              "returns at a fixed root and trains no policy")
    rows = [Row.not_compared(f"coupling factors, {arm}: calls", f"coupling_factors.{p}.calls", calls)
            for arm, p in PAPER_ARM_NAMES.items()]
    rows += [Row.not_compared(f"coupling factors, {arm}: update variance", f"coupling_factors.{p}.update", update)
             for arm, p in PAPER_ARM_NAMES.items()]
    rows += [Row.not_compared(f"ablations, {arm}: update variance", f"ablations.{p}.update_variance", update)
             for arm, p in ABLATION_NAMES.items()]
    return rows


def interval_not_compared() -> list[Row]:
    """The paper's intervals: each is shown beside its value in that value's row, which has the verdict."""
    return [Row.not_compared(f"paper's interval of {of}", cid,
                             f"shown beside the paper's value in the row of {of}, whose verdict compares that value "
                             f"with our interval")
            for cid, of in PAPER_INTERVALS.items()]


def not_compared_rows() -> list[Row]:
    """Every not-compared row of the chapter."""
    ratio_one = Row.not_compared("independent: variance ratio to itself", "main_uncertainty.variance_ratio.independent",
                                 "the independent arm's ratio to itself is 1 by definition: nothing to measure")
    return coupling_not_compared() + interval_not_compared() + [ratio_one]
