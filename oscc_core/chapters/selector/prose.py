"""The selector claims the paper states in its abstract and prose, beside our values.

A restatement of a table value reuses that table's row; a setup value (a
size or a count) is compared with our parameter.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

SECTION = "selector"

#: claim id -> (quantity, key into `setup_values`): the paper's setup values that we compare with ours.
SETUP_CLAIMS = {
    "abstract.multi_action.action_count": ("actions at the three-action root", "action_count"),
    "abstract.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "abstract.calibration.groups_max": ("largest calibration size", "groups_max"),
    "setup.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "setup.calibration.groups_max": ("largest calibration size", "groups_max"),
    "text_action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "text_action_support.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "text_action_support.calibration.groups_max": ("largest calibration size", "groups_max"),
    "fig_action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "figures_table.action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "fig_calibration_size.group_counts": ("calibration sizes measured", "group_counts"),
    "fig_calibration_size.lcb_positive_at": ("smallest size with a positive median full-arm bound", "lcb_positive_at"),
}


def setup_values(p, action_count: int, positive_at: int | None) -> dict:
    """key -> (our value, the relation the paper states for it or None): the values `SETUP_CLAIMS` refers to.

    Setup values (sizes, counts) declare no relation; the paper says the median full-arm bound becomes
    positive within the measured sizes."""
    return {"action_count": (action_count, None),
            "groups_min": (min(p.sweep_sizes), None), "groups_max": (max(p.sweep_sizes), None),
            "groups_per_stratum": (p.calibration_groups, None),
            "group_counts": (len(p.sweep_sizes), None),
            "lcb_positive_at": (positive_at if positive_at is not None else float("nan"),
                                Relation("the median full-arm bound turns positive within the measured sizes",
                                         positive_at is not None))}


def index_rows(*tables) -> dict:
    """claim id -> row, over comparison tables (for the prose claims that restate a table value)."""
    return {r["claim id"]: r for t in tables for r in t if r.get("claim id")}


def prose_rows(index: dict, values: dict, section: str = SECTION) -> list[Row]:
    """Every claim of `section` not already in a table: a setup claim (`SETUP_CLAIMS`) against `values`;
    a restatement (same_as) reuses the table's row."""
    out = []
    for cid, entry in claims.load_claims().items():
        if entry["section"] != section or cid in index:
            continue
        if cid in SETUP_CLAIMS:
            quantity, key = SETUP_CLAIMS[cid]
            ours, relation = values[key]
            out.append(Row.compare(quantity, cid, ours, relation=relation))
        elif entry.get("same_as") in index:
            base = index[entry["same_as"]]
            row = Row.compare(base["quantity"], cid, base["ours"], *(base.get("95% interval") or (None, None)),
                              relation=base.declared_relation if isinstance(base, Row) else None,
                              exact=base.get("exact"))
            out.append(replace(row, quantity=f"{base['quantity']} (restated: {entry['source']})"))
    return out
