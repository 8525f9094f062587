"""The chapter's paper-beside-reproduction rows (`reporting.rows.Row`), one builder per table.

Fraction-valued claims ('k/n') are compared as rates; counts and estimates by
the verdict rule of `reporting.claims`; intervals are 95% normal intervals.
"""
from __future__ import annotations

from fractions import Fraction

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: the columns of a comparison row the results file records (reason only where the row has one)
RECORDED_COLUMNS = ("quantity", "claim id", "paper", "ours", "95% interval", "relative deviation", "relation",
                    "relation holds", "verdict")


def _ci(x: float, se: float) -> tuple[float, float]:
    return (x - 1.96 * se, x + 1.96 * se)


def observation_rows(oa: ObservationAudit) -> list[Row]:
    return [
        Row.compare("observation audit: states audited", "method_obs.observation_audit.states", oa.states),
        Row.compare("observation audit: opponent-card exposures", "method_obs.observation_audit.opponent_card_exposures",
                    oa.exposures),
        Row.fraction("observation boundary: states verified", "release.observation_boundary.states_verified",
                     oa.verified, oa.states),
    ]


def implementation_rows(paired: dict, independent: dict) -> list[Row]:
    """tab:app-implementation-checks, pooled over seeds (the paper's column is one 5,120-group run)."""
    rows = []
    for col, res in (("paired", paired), ("independent", independent)):
        p = res["pooled"]
        lo, hi = _ci(p["marginal_shift"], p["marginal_shift_se"])
        rows += [
            Row.fraction(f"unique group key ({col})", f"impl_checks.unique_group_key.{col}", p["unique"], p["groups"]),
            Row.fraction(f"observation hash drift ({col})", f"impl_checks.observation_hash_drift.{col}",
                         p["obs_drift"], p["transitions"]),
            Row.fraction(f"stream counter gap ({col})", f"impl_checks.stream_counter_gap.{col}", p["gaps"], p["events"]),
            Row.fraction(f"branch-swap sign ({col})", f"impl_checks.branch_swap_sign.{col}", p["swap_reversed"],
                         p["groups"]),
            Row.compare(f"marginal return shift ({col})", f"impl_checks.marginal_return_shift.{col}",
                        p["marginal_shift"], lo, hi),
        ]
    return rows


def swap_rows(bs: dict, ss: dict) -> list[Row]:
    drift_paper = claims.claim("seat_swap.seat_swap.variance_rel_drift")
    return [
        Row.below("branch swap: variance residual", "seat_swap.branch_swap.variance_residual", bs["variance_residual"]),
        Row.fraction("branch swap: group count", "seat_swap.branch_swap.group_count", min(bs["valid"]), bs["groups"]),
        Row.compare("seat swap: variance relative drift", "seat_swap.seat_swap.variance_rel_drift",
                    ss["variance_rel_drift"],
                    relation=Relation(f"variance invariant: relative drift <= {drift_paper:g}",
                                      ss["variance_rel_drift"] <= drift_paper)),
        Row.fraction("seat swap: group count", "seat_swap.seat_swap.group_count", min(ss["valid"]), ss["groups"]),
    ]


def control_rows(name: str, c: dict) -> list[Row]:
    """One control's rows: affected groups, marginal shift, replay failure rate, apparent variance change."""
    lo, hi = _ci(c["marginal_shift"], c["marginal_shift_se"])
    p = c["replay_failure_rate"]
    rse = (p * (1 - p) / c["groups"]) ** 0.5
    vlo, vhi = _ci(c["variance_change_pct"], c["variance_change_pct_se"])
    return [
        Row.fraction(f"{name}: affected groups", f"safety.{name}.affected_groups", c["affected_groups"], c["groups"]),
        Row.compare(f"{name}: marginal shift", f"safety.{name}.marginal_shift", c["marginal_shift"], lo, hi),
        Row.compare(f"{name}: replay failure rate", f"safety.{name}.replay_failure_rate", p,
                    max(0.0, p - 1.96 * rse), min(1.0, p + 1.96 * rse)),
        Row.compare(f"{name}: apparent variance change (%)", f"safety.{name}.apparent_variance_change",
                    c["variance_change_pct"], vlo, vhi,
                    relation=Relation("apparent variance change < 0 (the violation fakes a reduction)",
                                      c["variance_change_pct"] < 0)),
    ]


def violation_rows(controls: dict) -> list[Row]:
    """tab:safety-violations: affected groups, marginal shift, replay failure rate, apparent variance change."""
    rows = [Row.compare("controlled violations", "text_safety.violation_conditions", len(controls))]
    worst = min(controls.values(), key=lambda c: Fraction(c["rejected"], c["groups"]))
    rows.append(Row.fraction("rejected injected groups (worst condition)",
                             "text_rootbudget.safety.rejected_groups_per_condition", worst["rejected"], worst["groups"]))
    for name, c in controls.items():
        rows += control_rows(name, c)
    return rows


def comparisons_record(rows: list[Row]) -> list[dict]:
    """The comparison rows as the results file records them."""
    return [{**{k: r[k] for k in RECORDED_COLUMNS}, **({"reason": r.reason} if r.reason else {})} for r in rows]
