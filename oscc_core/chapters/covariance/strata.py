"""Root strata: the paired comparison by own-card class (J, Q, K), by round and by number of legal actions.

Card strata restrict the headline audit's groups to one own-card class
(``method.strata``) and condition the exact values on it; round and action
strata audit other roots.  Rows of tab:app-p1-strata: contrast variances and
covariance in chips^2, ratios unitless.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import PAIR_QUANTITIES, pair_estimates, pair_relation, row
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.method.strata import CARD_CLASSES
from oscc_core.reporting.rows import Relation, Row

#: Roots that define the round and action-count strata (DESIGN.md section 5).
ROUND_ROOTS = {"round one": "", "round two": "11|"}
ACTION_ROOTS = {"two actions": "", "three actions": "2"}
#: Claim-id part of each root stratum.
STRATUM_CLAIMS = {"round one": "round_one", "round two": "round_two", "two actions": "two_actions",
                  "three actions": "three_actions", "all roots": "all_roots"}


def card_audits(audit: PairedAudit, seed: int, continuation, device: str, n_bootstrap: int) -> dict[str, PairedAudit]:
    """The headline audit's independent and full groups restricted to each own-card class (J, Q, K)."""
    return {label: paired_audit(audit.root, HEADLINE_ARMS, audit.groups, seed, continuation, device, n_bootstrap,
                                f"stratum/card/{label}", own_class=rank, collections=audit.collections)
            for rank, label in enumerate(CARD_CLASSES)}


def root_audits(audit: PairedAudit, n_groups: int, seed: int, continuation, device: str,
                n_bootstrap: int) -> dict[str, PairedAudit]:
    """Paired audits at the round-two and three-action roots; round one, two actions and all roots reuse others.

    Round one and two actions are the same root ``""`` (one audit serves both);
    the paper's aggregate row 'all roots' is the headline `audit`.
    """
    roots = {"round one": ROUND_ROOTS["round one"], "round two": ROUND_ROOTS["round two"],
             "three actions": ACTION_ROOTS["three actions"]}
    out = {label: paired_audit(r, HEADLINE_ARMS, n_groups, seed, continuation, device, n_bootstrap,
                               f"stratum/root/{r}") for label, r in roots.items()}
    out["two actions"] = out["round one"]
    out["all roots"] = audit
    return out


def class_range_row(paper_label: str, q: str, text: str, card: dict[str, PairedAudit]) -> Row:
    """One paper private-card row against all three card classes (the paper does not say which cards it holds).

    Reproduced when the paper's value lies in the 95% interval of at least one
    class, partly when the paper's relation holds in every class.
    """
    cid = f"strata.private_card_{paper_label}.{q}"
    ests = [pair_estimates(a)[q] for a in card.values()]
    each = [pair_relation(q, a) for a in card.values()]
    relation = Relation(f"{each[0].text} (each card class)", all(r.holds for r in each))
    return Row.any_of(f"private-card {paper_label.upper()} (paper) vs J/Q/K: {text}", cid, ests, relation)


def strata_rows(card: dict[str, PairedAudit], roots: dict[str, PairedAudit]) -> list:
    """tab:app-p1-strata.

    Our own-card strata (J, Q, K) have no paper counterpart of their own: the
    paper's "private-card A" and "B" rows do not say which cards they hold.
    Each of those paper rows is therefore compared with all three card
    classes (`class_range_row`).
    """
    rows = []
    for label, a in card.items():
        for q, text in PAIR_QUANTITIES:
            rows.append(row(f"own card {label}: {text}", None, pair_estimates(a)[q]))
    for paper_label in ("a", "b"):
        for q, text in PAIR_QUANTITIES:
            rows.append(class_range_row(paper_label, q, text, card))
    for label, a in roots.items():
        for q, text in PAIR_QUANTITIES:
            rows.append(row(f"{label} (root {a.root!r}): {text}", f"strata.{STRATUM_CLAIMS[label]}.{q}",
                            pair_estimates(a)[q], pair_relation(q, a)))
    return rows


def glue_values(card: dict[str, PairedAudit], roots: dict[str, PairedAudit]) -> dict[str, float]:
    """The stratum numbers the chapter's text quotes, by glue name."""
    ratios = [a.ratio().value for a in card.values()]
    return {"round_two_reduction": roots["round two"].reduction().value,
            "three_action_reduction": roots["three actions"].reduction().value,
            "card_ratio_min": min(ratios), "card_ratio_max": max(ratios)}
