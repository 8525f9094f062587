"""The paper's printed 95% intervals against ours, as intervals (`Row.interval_pair`).

Agreement: the midpoints differ by at most sqrt(h_paper^2 + h_ours^2) (h: a
half-width), the 95% interval of the difference of two independent
estimates (the midpoint test, not containment: an end the paper prints may
lie outside our interval while the two agree); the reason gives both
intervals, the test's numbers, whether the intervals overlap and which
contains the other.  Ours are the paired root-bootstrap percentile intervals of the
fixed-root audit: the full arm's contrast variance and check-bet covariance
and the ratio full / independent (chips^2, unitless) of tab:main-uncertainty,
and each branch's mean difference full - independent (chips) of the
precision prose and tab:marginal-equivalence.  Each row declares the relation
the paper states for its quantity, decided on the exact values, so a size that
does not agree can be partly (not the branch-mean rows: their exact difference
is 0 by construction, so their relation could not have failed).

The equivalence table prints each branch's interval as two entries (95% CI
low and high); the prose prints the same interval as one.  The interval is
one comparison, the prose's entry's: the table's two entries get rows that
print it again (`Row.printed_as`, naming the end they print), so the ledger
counts it once.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.equivalence import exact_equivalent
from oscc_core.chapters.covariance.pair_rows import PAPER_BRANCH, pair_relation
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.reporting.rows import Row

#: tab:main-uncertainty's intervals: claim id -> (quantity, relation key of `pair_relation`).
UNCERTAINTY = {"main_uncertainty.contrast_variance.interval": ("full: contrast variance", "paired_variance"),
               "main_uncertainty.variance_ratio.interval": ("ratio full / independent", "variance_ratio"),
               "main_uncertainty.check_bet_covariance.interval": ("full: check-bet covariance", "covariance")}
#: The ends of the equivalence table's interval: claim-id suffix -> words.
ENDS = {"ci_low": "low end", "ci_high": "high end"}


def uncertainty_rows(audit: PairedAudit) -> list[Row]:
    """tab:main-uncertainty's bootstrap intervals against the audit's paired bootstrap intervals."""
    est = {"paired_variance": audit.contrast_var("full"), "variance_ratio": audit.ratio(),
           "covariance": audit.covariance("full")}
    return [Row.interval_pair(q, cid, est[k].low, est[k].high, est[k].value,
                              pair_relation(k, audit), exact=est[k].exact)     # the relation is decided on it
            for cid, (q, k) in UNCERTAINTY.items()]


def equivalence_interval_rows(audit: PairedAudit, records: list[dict]) -> list[Row]:
    """Each branch's 95% interval of the mean difference full - independent (prose and table) against ours;
    the table's low and high entries are printings of the prose's comparison, their reason naming the end."""
    if audit.actions != list(PAPER_BRANCH):
        return []
    rows = []
    for rec, name in zip(records, audit.actions):
        word = PAPER_BRANCH[name]
        prose = Row.interval_pair(f"{word}: mean difference", f"text_precision.{word}.bootstrap_interval",
                                  rec["ci95_low"], rec["ci95_high"], rec["difference"], exact_equivalent(rec))
        rows.append(prose)
        for suffix, end in ENDS.items():
            rows.append(prose.printed_as(f"marginal_equivalence.{word}.{suffix}", f"{word}: {end} (table)",
                                         f"the {end} of the interval the prose prints"))
    return rows


def interval_rows(audit: PairedAudit, records: list[dict]) -> list[Row]:
    """Every interval the paper prints for the fixed-root audit, against ours."""
    return uncertainty_rows(audit) + equivalence_interval_rows(audit, records)
