"""Marginal equivalence: each branch mean of the full arm minus the independent arm, by two one-sided tests.

`equivalence_rows` gives tab:marginal-equivalence as comparison rows and as
decision records (difference, 90% TOST interval, 95% interval, margin,
decision); `equivalence_frame` renders the records.  Units: chips.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import PAPER_BRANCH, row
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.method.stats import Estimate
from oscc_core.reporting.rows import Relation, Row


def equivalence_rows(audit: PairedAudit, margin: float) -> tuple[list[Row], list[dict]]:
    """tab:marginal-equivalence: (comparison rows, decision records) for each branch of a two-action root.

    The relation the paper states is the decision "equivalent": |full - independent| < margin.  The rows decide
    it on the exact difference (`exact_equivalent`), which is 0 by construction of the coupling, so it never
    makes a row partly; the records keep our Monte-Carlo decision (two one-sided tests at 90%, and
    `equivalent` on the 95% interval)."""
    rows, records = [], []
    for b, name in enumerate(audit.actions):
        rec = audit.equivalence(b, margin)
        records.append(rec)
        word = PAPER_BRANCH.get(name)
        est = Estimate(rec["difference"], rec["ci95_low"], rec["ci95_high"], rec["exact"], rec["se"])
        if word is None or audit.actions != list(PAPER_BRANCH):
            rows.append(row(f"{name}: mean difference full - independent", None, est))
            continue
        rows.append(row(f"{word} ({name}): mean difference full - independent",
                        f"marginal_equivalence.{word}.mean_difference", est,
                        exact_equivalent(rec),
                        f"text_precision.{word}.bootstrap_interval"))
    return rows, records


def equivalent(rec: dict) -> Relation:
    """'|full - independent| < margin' on a decision record: holds on the difference, resolved by the 95%
    interval."""
    m = rec["margin"]
    return Relation(f"|full - independent| < margin {m:g} (equivalent)", abs(rec["difference"]) < m,
                    -m < rec["ci95_low"] and rec["ci95_high"] < m)


def exact_equivalent(rec: dict) -> Relation:
    """'|full - independent| < margin' on the exact difference of a decision record: coupling keeps every
    branch's marginal law, so the exact difference is 0 and the relation holds by construction
    (`Relation.constructed`: it never makes a row partly)."""
    m = rec["margin"]
    return Relation(f"|full - independent| < margin {m:g} (exact difference)", abs(rec["exact"]) < m).constructed()


def decision_sentence(records: list[dict]) -> str:
    """Which branches pass the equivalence test (two one-sided tests at 90%), as a sentence the text can quote."""
    passed = [r["branch"] for r in records if r["equivalent"]]
    failed = [r["branch"] for r in records if not r["equivalent"]]
    if not failed:
        return "Both branches pass the equivalence test, as in the paper."
    if not passed:
        return "Neither branch is shown equivalent, although the paper's both are."
    return (f"{' and '.join(passed)} passes the equivalence test, {' and '.join(failed)} is not shown equivalent "
            "(its 90% interval reaches past the margin), although the paper's both pass.")


def equivalence_frame(records: list[dict], digits: int = 4):
    """The decision records as a text table (one row per branch)."""
    import pandas as pd

    return pd.DataFrame([{
        "branch": r["branch"], "difference (chips)": f"{r['difference']:.{digits}f}",
        "95% interval": f"[{r['ci95_low']:.{digits}f}, {r['ci95_high']:.{digits}f}]",
        f"{r['tost_level']:.0%} interval (TOST)": f"[{r['tost_low']:.{digits}f}, {r['tost_high']:.{digits}f}]",
        "exact": f"{r['exact']:.{digits}f}", "margin": f"{r['margin']:g}",
        "decision": "equivalent" if r["equivalent"] else "not shown equivalent"} for r in records])
