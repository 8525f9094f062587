"""Comparison rows of one paired audit's estimates against the paper's claims.

`row` turns a `method.stats.Estimate` into a `Row` (with the paper's own
interval where it prints one); `pair_estimates` and `pair_relation` give the
four quantities the seed, stratum and budget tables compare for the
independent and full arms, and the relation the paper states for each:
contrast variances (chips^2; paired below independent), the full arm's
check-bet covariance (chips^2; positive) and the variance ratio (unitless;
below 1).
"""
from __future__ import annotations

from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: Paper wording for our action names at two-action roots.
PAPER_BRANCH = {"Call": "check", "Raise": "bet"}
#: The paper's contrast variance of the four coupling arms (tab:main and tab:app-p1-ablations).
PAPER_ARM_VARIANCE = {"independent": "main.independent.variance", "root_only": "ablations.root_only.variance",
                      "continuation_only": "ablations.continuation.variance", "full": "main.cp_grpo_paired.variance"}
#: The quantities of the stratum and budget tables: (claim-id suffix, text).
PAIR_QUANTITIES = (("paired_variance", "paired variance"), ("independent_variance", "independent variance"),
                   ("covariance", "covariance"), ("variance_ratio", "variance ratio"))


def row(quantity: str, claim_id: str | None, est: Estimate, relation: Relation | None = None,
        paper_interval_id: str | None = None) -> Row:
    """A paper-beside-ours row from an Estimate; no claim id -> no paper value."""
    out = Row.estimate(quantity, claim_id, est, relation)
    if paper_interval_id is not None:
        out = out.with_paper_interval(*claims.claim(paper_interval_id))
    return out


def pair_estimates(a) -> dict[str, Estimate]:
    """The `PAIR_QUANTITIES` of a paired audit of the independent and full arms."""
    return {"paired_variance": a.contrast_var("full"), "independent_variance": a.contrast_var("independent"),
            "covariance": a.covariance("full"), "variance_ratio": a.ratio()}


def lower_variance(a) -> Relation:
    """The paper's 'paired variance below independent' (bold in its tables), on audit `a`."""
    return Relation("paired variance < independent variance",
                    a.contrast_var("full").value < a.contrast_var("independent").value)


def pair_relation(q: str, a) -> Relation:
    """The relation the paper states for quantity `q` of a paired audit `a`: the coupled covariance is
    positive; the ratio is below 1; the paired variance is below the independent one."""
    if q == "covariance":
        return Relation("paired covariance > 0", a.covariance("full").value > 0)
    if q in ("variance_ratio", "ratio"):
        return Relation("variance ratio paired / independent < 1", a.ratio().value < 1)
    return lower_variance(a)
