"""Each headline quantity of the chapter under the readings it measures: pooled over every root (the paper's
reading), at one root, and under the CFR+ continuation.

The chapter computes each quantity of the paper's tables three ways: on the audit pooled over every decision
point (its primary rows), on the one-root audit (sensitivity rows whose quantity reads "root '<h>' only: ...",
`pooled.one_root`) and, for the headline variances, ratio and covariance, under the CFR+ continuation at the
audited root (sensitivity rows of the "cfr_plus_alternative" table).  `with_readings` puts the three on each
primary row as its readings (`Row.under_readings`), in the words every chapter reads them in
(`reporting.reading_sets`): the pool decides, since the paper's text fixes it ("a weighted summary over all root
IDs"); a verdict another reading would change is flagged as depending on the reading.  The sensitivity rows stay in
their tables as they are.  Units: those of each row.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.reporting import claims, reading_sets
from oscc_core.reporting.rows import Row

#: How a one-root sensitivity row's quantity starts (`pooled.one_root`), and the table of the CFR+ alternative.
ONE_ROOT_PREFIX, CFR_TABLE = "root ", "cfr_plus_alternative"
#: The claim-id endings of the quantities that are contrast variances (their readings say so).
VARIANCE_ENDINGS = ("variance", ".contrast", "contrast_variance")


def _root_of(quantity: str) -> str | None:
    """The root a one-root sensitivity row names ("root '11|' only: ..." -> "11|"), or None."""
    if not quantity.startswith(ONE_ROOT_PREFIX) or " only: " not in quantity:
        return None
    return quantity[len(ONE_ROOT_PREFIX):quantity.index(" only: ")].strip("'")


def _labels(claim_id: str, root: str) -> tuple[str, str]:
    """(the pooled reading, the reading at `root`) of a claim, a contrast variance's in its own words."""
    if claim_id.endswith(VARIANCE_ENDINGS) and "ratio" not in claim_id:
        return reading_sets.CONTRAST_POOLED, reading_sets.contrast_at(root)
    return reading_sets.POOLED_ROOTS, reading_sets.at_root(root)


def with_readings(tables: dict[str, list[Row]], cfr_words: str) -> dict[str, list[Row]]:
    """`tables` (name -> rows) with every primary row that a one-root sensitivity row repeats read pooled (the
    paper's reading, which decides), at that root, and, where the CFR+ alternative measured it, at the audited root
    under the CFR+ continuation (`cfr_words`, e.g. "the CFR+ average policy after 1,000 iterations")."""
    one_root = {r.claim_id: r for rows in tables.values() for r in rows
                if not r.primary and r.claim_id is not None and _root_of(r.quantity) is not None}
    cfr = {r.claim_id: r for r in tables.get(CFR_TABLE, ())}
    return {name: [_combined(r, one_root, cfr, cfr_words) if r.primary else r for r in rows]
            for name, rows in tables.items()}


def _combined(row: Row, one_root: dict, cfr: dict, cfr_words: str) -> Row:
    at = one_root.get(row.claim_id) if row.claim_id is not None else None      # a row of no paper value has none
    if at is None or row.readings or row.verdict == claims.NOT_COMPARED:     # no size to read another way
        return row
    root = _root_of(at.quantity)
    pooled, at_label = _labels(row.claim_id, root)
    listed = [replace(row, reading=pooled), replace(at, quantity=row.quantity, primary=True, reading=at_label)]
    if row.claim_id in cfr:
        listed.append(replace(cfr[row.claim_id], quantity=row.quantity, primary=True,
                              reading=reading_sets.under_continuation(at_label, cfr_words)))
    return Row.under_readings(listed, paper_reading=pooled)
