"""Comparison rows of one paired audit's estimates against the paper's claims, and the relations they declare.

`row` turns a `method.stats.Estimate` into a `Row` (with the paper's own
interval where it prints one); `pair_estimates` and `pair_relation` give the
four quantities the seed, stratum and budget tables compare for the
independent and full arms, and the relation the paper states for each:
contrast variances (chips^2; paired below independent), the full arm's
check-bet covariance (chips^2; positive) and the variance ratio (unitless;
below 1).

Every relation is decided on the EXACT values by enumeration wherever the
estimates carry them (`on_exact`): the relation then holds or fails with no
sampling noise, and `Relation.resolved` is None.  Without exact values (or with
``exact=False``, for a relation the paper states about one seed's sample) it is
decided on our estimates and resolved by our 95% intervals:
"paired variance < independent variance" when the paired bootstrap interval of
the ratio full / independent lies below 1, "covariance > 0" when the
covariance's interval lies above 0, "ratio < 1" when the ratio's interval lies
below 1.

Variances, standard deviations and ratios are positive by definition and are
compared with ``positive=True``: an interval that reaches 0 would hold a value
that contradicts them.  The paired bootstrap percentile intervals used here are
quantiles of replicate variances (and of ratios of two of them), so they cannot
go below 0; the flag makes the rule explicit rather than changing a verdict.
"""
from __future__ import annotations

import math

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
#: Quantities positive by definition (variances and their ratio), by claim-id suffix.
POSITIVE = frozenset({"paired_variance", "independent_variance", "variance_ratio", "ratio"})


def row(quantity: str, claim_id: str | None, est: Estimate, relation: Relation | None = None,
        paper_interval_id: str | None = None, positive: bool = False) -> Row:
    """A paper-beside-ours row from an Estimate; no claim id -> no paper value.  `positive`: a variance, an SD
    or a ratio (an interval reaching 0 makes an agreeing size inconclusive)."""
    out = Row.estimate(quantity, claim_id, est, relation, positive)
    if paper_interval_id is not None:
        out = out.with_paper_interval(*claims.claim(paper_interval_id))
    return out


def pair_estimates(a) -> dict[str, Estimate]:
    """The `PAIR_QUANTITIES` of a paired audit of the independent and full arms."""
    return {"paired_variance": a.contrast_var("full"), "independent_variance": a.contrast_var("independent"),
            "covariance": a.covariance("full"), "variance_ratio": a.ratio()}


def on_exact(*estimates: Estimate) -> bool:
    """Whether every one of `estimates` carries a finite exact value (a relation between them is then decided on
    the exact values)."""
    return all(e.exact is not None and math.isfinite(float(e.exact)) for e in estimates)


def side(text: str, est: Estimate, *, above: float | None = None, below: float | None = None,
         exact: bool = True) -> Relation:
    """``est > above`` or ``est < below``: on the exact value when `est` has one (and `exact`), resolved None;
    otherwise on the estimate, resolved by its 95% interval (`Relation.side`)."""
    if exact and on_exact(est):
        return Relation.side(text, float(est.exact), above=above, below=below)
    return Relation.side(text, est.value, est.low, est.high, above=above, below=below)


def lower_variance(a, text: str = "paired variance < independent variance", exact: bool = True) -> Relation:
    """The paper's 'paired variance below independent' (bold in its tables), on audit `a`: on the exact
    variances when they exist (and `exact`), resolved None; otherwise on the point estimates, resolved when the
    paired bootstrap interval of the ratio full / independent lies below 1."""
    full, ind = a.contrast_var("full"), a.contrast_var("independent")
    if exact and on_exact(full, ind):
        return Relation(text, float(full.exact) < float(ind.exact))
    return Relation(text, full.value < ind.value, a.ratio().high < 1.0)


def pair_relation(q: str, a, suffix: str = "", exact: bool = True) -> Relation:
    """The relation the paper states for quantity `q` of a paired audit `a`: the coupled covariance is
    positive; the ratio is below 1; the paired variance is below the independent one.  Decided on the exact
    values where `a` has them (and `exact`), else on the estimates (module docstring).  `suffix` is appended to
    the relation's text (e.g. " (own card J)")."""
    if q == "covariance":
        return side("paired covariance > 0" + suffix, a.covariance("full"), above=0.0, exact=exact)
    if q in ("variance_ratio", "ratio"):
        return side("variance ratio paired / independent < 1" + suffix, a.ratio(), below=1.0, exact=exact)
    return lower_variance(a, "paired variance < independent variance" + suffix, exact)


def every(relations: list[Relation], text: str) -> Relation:
    """One relation that holds when every one of `relations` holds and is resolved when every one is resolved
    (e.g. "paired variance < independent variance in every seed")."""
    resolved = [r.resolved for r in relations]
    return Relation(text, all(r.holds for r in relations),
                    None if any(x is None for x in resolved) else all(resolved))
