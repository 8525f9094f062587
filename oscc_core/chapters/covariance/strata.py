"""Root strata: the paired comparison by own-card class (J, Q, K), by round and by number of legal actions.

Card strata restrict the one-root audit's groups to one own-card class
(``method.strata``) and condition the exact values on it; the round, action
and all-roots rows are the pooled audit's (``pooled``), with one-root audits
beside them as sensitivity rows.  Rows of tab:app-p1-strata: contrast variances and
covariance in chips^2, ratios unitless.

The paper's "private-card A" and "B" rows do not say which cards they hold;
it calls A a "low-information root" and B a "high-information root".  Each is
read three ways, as our own-card class J, Q or K (`Row.under_readings`), in
the order of `CLASS_READINGS`: the middle card Q first for A (it tells its
holder least about who wins), the strongest card K first for B.  The verdict
is that first reading's; the row keeps the other two beside it.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.covariance.pair_rows import PAIR_QUANTITIES, POSITIVE, pair_estimates, pair_relation, row
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.chapters.covariance.pooled import one_root
from oscc_core.method.strata import CARD_CLASSES
from oscc_core.reporting.rows import Row

#: Roots that define the round and action-count strata: round one and two actions are player 0's first decision,
#: round two is player 0's first decision after check-check and the public card, three actions is player 1
#: facing a bet.
ROUND_ROOTS = {"round one": "", "round two": "11|"}
ACTION_ROOTS = {"two actions": "", "three actions": "2"}
#: The own-card classes each paper private-card row is read as, in order: the declared reading first (A: the
#: middle card Q, B: the strongest card K), whose verdict the row takes.
CLASS_READINGS = {"a": ("Q", "J", "K"), "b": ("K", "J", "Q")}
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
    """One-root paired audits of each stratum (sensitivity rows beside the pooled strata): round two at
    ``"11|"``, three actions at ``"2"``; round one, two actions and all roots at the audited root (`audit`)."""
    roots = {"round one": ROUND_ROOTS["round one"], "round two": ROUND_ROOTS["round two"],
             "three actions": ACTION_ROOTS["three actions"]}
    out = {label: paired_audit(r, HEADLINE_ARMS, n_groups, seed, continuation, device, n_bootstrap,
                               f"stratum/root/{r}") for label, r in roots.items()}
    out["two actions"] = out["round one"]
    out["all roots"] = audit
    return out


def class_range_row(paper_label: str, q: str, text: str, card: dict[str, PairedAudit]) -> Row:
    """One paper private-card row under three readings, our own-card classes in the order of `CLASS_READINGS`
    (the paper does not say which cards it holds): each reading is compared by the verdict rule with its
    relation (resolved by that class's intervals), and the row gives the first reading's verdict and keeps the
    others (`Row.under_readings`)."""
    cid = f"strata.private_card_{paper_label}.{q}"
    readings = [replace(row(f"private-card {paper_label.upper()} (paper): {text}", cid, pair_estimates(card[label])[q],
                            pair_relation(q, card[label], f" (own card {label})"), positive=q in POSITIVE),
                        reading=f"own card {label}") for label in CLASS_READINGS[paper_label]]
    return Row.under_readings(readings)


def strata_rows(card: dict[str, PairedAudit], roots: dict[str, PairedAudit], pooled: dict[str, PairedAudit]) -> list:
    """tab:app-p1-strata.

    Our own-card strata (J, Q, K) have no paper counterpart of their own: the
    paper's "private-card A" and "B" rows do not say which cards they hold.
    Each of those paper rows is therefore read as each of the three card
    classes (`class_range_row`).  The round, action and "all roots" rows are
    the pooled audit's (`pooled.strata_audits`: every root of the stratum,
    weighted as the headline pool); the one-root audits of `roots` give the
    same rows as sensitivity rows (`pooled.one_root`).  Variances and ratios
    are positive by definition (`pair_rows` docstring).
    """
    rows = []
    for label, a in card.items():
        for q, text in PAIR_QUANTITIES:
            rows.append(row(f"own card {label}: {text}", None, pair_estimates(a)[q]))
    for paper_label in ("a", "b"):
        for q, text in PAIR_QUANTITIES:
            rows.append(class_range_row(paper_label, q, text, card))
    for label, a in pooled.items():
        for q, text in PAIR_QUANTITIES:
            rows.append(row(f"{label} (pooled, {a.root}): {text}", f"strata.{STRATUM_CLAIMS[label]}.{q}",
                            pair_estimates(a)[q], pair_relation(q, a), positive=q in POSITIVE))
    for label, a in roots.items():
        one = [row(f"{label}: {text}", f"strata.{STRATUM_CLAIMS[label]}.{q}", pair_estimates(a)[q],
                   pair_relation(q, a), positive=q in POSITIVE) for q, text in PAIR_QUANTITIES]
        rows += one_root(one, a.root)
    return rows


def glue_values(card: dict[str, PairedAudit], pooled: dict[str, PairedAudit]) -> dict[str, float]:
    """The stratum numbers the chapter's text quotes, by glue name (round and action strata: pooled)."""
    ratios = [a.ratio().value for a in card.values()]
    return {"round_two_reduction": pooled["round two"].reduction().value,
            "three_action_reduction": pooled["three actions"].reduction().value,
            **{f"{label.replace(' ', '_').replace('actions', 'action')}_roots": int(pooled[label].root.split()[0])
               for label in ("round one", "round two", "two actions", "three actions")},
            "card_ratio_min": min(ratios), "card_ratio_max": max(ratios)}
