"""One verdict per paper quantity on the chapter's page, and the chapter's closing counts on the values basis.

The paper prints several of this chapter's numbers in several places (independent sampling's contrast variance in the main table, the
coupling-factor table, the ablation table and the strata table); the claims file links the printings with
`same_as`, and `reporting.printings.unify` gives every printing the verdict of the group's deciding row (the
group's root: the main table's, with the relation the paper states there).  The chapter shows its tables one
after another, so `Page` unifies each table with every row shown before it, and refuses a table that would change
the verdict of a row already shown (a deciding row that comes after one of its printings).

`counts_frame` is the closing verdict-count table: the counts of `reporting.tally.chapter_tally` (each measured
value once, however often the paper prints it), the same counts the result box prints.
"""
from __future__ import annotations

from oscc_core.reporting import claims, printings
from oscc_core.reporting.tally import BY_CONSTRUCTION

#: How the closing table names each class of `tally.chapter_tally`, in order.
CLASS_LABELS = {"measurements": "measured values", "checks": "checks", "intervals": "the paper's intervals",
                BY_CONSTRUCTION: "true by construction"}
#: The row of the values not compared in size, counted again by the verdict of the ordering the paper states.
ORDERINGS_LABEL = "of the values not compared in size: the ordering the paper states"

__all__ = ["CLASS_LABELS", "Page", "counts_frame"]


class Page:
    """The rows the chapter has shown so far, every printing of a quantity with the verdict of its deciding row.

    `add(rows)` returns `rows` unified with everything shown before (`printings.unify`) and keeps them; it raises
    ValueError when the new rows would change the verdict of a row already shown."""

    def __init__(self, entries: dict | None = None):
        self.entries = claims.load_claims() if entries is None else entries
        self.rows: list = []

    def add(self, rows) -> list:
        rows = list(rows)
        before = [r.verdict for r in self.rows]
        out = printings.unify(self.rows + rows, self.entries)
        changed = [r.claim_id for r, v in zip(out, before) if r.verdict != v]
        if changed:
            raise ValueError(f"rows shown earlier would change their verdict ({changed[:3]}): show the deciding row "
                             "of a same_as group before its printings.")
        new = out[len(self.rows):]
        self.rows += new
        return new


def counts_frame(counted: dict):
    """The chapter's counts (`tally.chapter_tally`) as a table: each class of result by verdict (only the
    verdicts that occur), with totals; then the values not compared in size by the verdict of their ordering,
    how many verdicts depend on the reading, the further printings not counted again, and the settings by
    status.  Empty cells are "—"."""
    import pandas as pd

    classes = {label: counted[key] for key, label in CLASS_LABELS.items()}
    verdicts = [v for v in claims.VERDICTS if any(c.get(v) for c in classes.values())]
    rows = {label: {v: c.get(v, 0) for v in verdicts} for label, c in classes.items() if sum(c.values())}
    for r in rows.values():
        r["total"] = sum(r.values())
    rows["total"] = {k: sum(r[k] for r in rows.values()) for k in [*verdicts, "total"]}
    orderings = {v: n for v, n in (counted.get("orderings") or {}).items() if n}
    if orderings:
        rows[ORDERINGS_LABEL] = {**orderings, "total": sum(orderings.values())}
    rows["verdicts that depend on the reading"] = {"total": counted.get("reading dependent", 0)}
    rows["further printings, not counted again"] = {"total": counted["printings"]}
    for status, n in counted["settings"].items():
        rows[f"settings: {status}"] = {"total": n}
    columns = list(dict.fromkeys([*verdicts, *(k for r in rows.values() for k in r if k != "total"), "total"]))
    frame = pd.DataFrame([{c: r.get(c) for c in columns} for r in rows.values()], index=list(rows), columns=columns)
    frame.index.name = "counted"
    return frame.apply(lambda col: col.map(lambda x: "—" if x is None or x != x else f"{int(x):,}"))
