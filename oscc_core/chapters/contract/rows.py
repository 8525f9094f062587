"""The chapter's paper-beside-reproduction rows (`reporting.rows.Row`), one builder per table.

Fraction-valued claims ('k/n') are compared as rates; counts and estimates by
the verdict rule of `reporting.claims`; intervals are 95% normal intervals,
except the apparent variance change, whose interval is computed on the log
scale of the variance ratio (`violation_controls`).  Settings of the paper's
run (how many states it audited, how many controls it ran) are `settings_rows`:
they get a status, adopted or differs, never a verdict.

Relations and their resolution: the apparent variance change of a control
declares "< 0" (the violation fakes a reduction), resolved by its 95%
interval (`Relation.side`); the seat-swap drift declares "at most the paper's
drift" on an exact value (our duplicate shares every stream, so its drift has
no sampling spread and no interval): its relation is unresolved by design
(`resolved` None).
"""
from __future__ import annotations

from fractions import Fraction

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.chapters.contract.violation_controls import Z95
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row
from oscc_core.reporting.tables import rows_record

STATES_CLAIM, CONTROLS_CLAIM = "method_obs.observation_audit.states", "text_safety.violation_conditions"


def _ci(x: float, se: float) -> tuple[float, float]:
    return (x - Z95 * se, x + Z95 * se)


def states_reason(oa: ObservationAudit, reachable: dict[str, int], visited: list[int]) -> str:
    """Why our audited-state count differs from the paper's: the subsets we tried, with their sizes."""
    paper = claims.claim(STATES_CLAIM)
    roots = ", ".join(repr(root) for root in reachable)
    below = ", ".join(f"{n:,}" for n in reachable.values())
    return (f"we audit every Leduc information state ({oa.states:,}, {oa.states_by_player[0]:,} per player); the "
            f"paper does not say which {paper:,} states it audited, and no natural subset has that many (at or "
            f"below the roots {roots}: {below}; visited by our runs: {min(visited):,} to {max(visited):,})")


def settings_rows(oa: ObservationAudit, controls: dict, reachable: dict[str, int], visited: list[int]) -> list[Row]:
    """The settings of the paper's contract audit beside ours: the states audited and the controls run."""
    n_paper = claims.claim(CONTROLS_CLAIM)
    return [
        Row.setting("observation audit: information states audited", STATES_CLAIM, oa.states,
                    reason=states_reason(oa, reachable, visited)),
        Row.setting("controlled violations run (one per condition)", CONTROLS_CLAIM, len(controls),
                    reason=None if len(controls) == n_paper else
                    f"this run has {len(controls)} controls: {', '.join(controls)}"),
    ]


def observation_rows(oa: ObservationAudit) -> list[Row]:
    """The observation audit's checks: no opponent-card exposure, every audited state verified."""
    return [
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
    """The branch-swap and seat-swap checks; the drift's relation is on an exact value (unresolved by design)."""
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


def fakes_a_reduction(c: dict) -> Relation:
    """The paper's relation for a control's apparent variance change: below 0, resolved by its 95% interval."""
    return Relation.side("apparent variance change < 0 (the violation fakes a reduction)", c["variance_change_pct"],
                         c["variance_change_pct_low"], c["variance_change_pct_high"], below=0.0)


def control_rows(name: str, c: dict) -> list[Row]:
    """One control's rows: affected groups, marginal shift, replay failure rate, apparent variance change."""
    lo, hi = _ci(c["marginal_shift"], c["marginal_shift_se"])
    p = c["replay_failure_rate"]
    rse = (p * (1 - p) / c["groups"]) ** 0.5
    return [
        Row.fraction(f"{name}: affected groups", f"safety.{name}.affected_groups", c["affected_groups"], c["groups"]),
        Row.compare(f"{name}: marginal shift", f"safety.{name}.marginal_shift", c["marginal_shift"], lo, hi),
        Row.compare(f"{name}: replay failure rate", f"safety.{name}.replay_failure_rate", p,
                    max(0.0, p - Z95 * rse), min(1.0, p + Z95 * rse)),
        Row.compare(f"{name}: apparent variance change (%)", f"safety.{name}.apparent_variance_change",
                    c["variance_change_pct"], c["variance_change_pct_low"], c["variance_change_pct_high"],
                    relation=fakes_a_reduction(c)),
    ]


def violation_rows(controls: dict) -> list[Row]:
    """tab:safety-violations: the worst condition's rejected groups, then per control affected groups, marginal
    shift, replay failure rate and apparent variance change."""
    worst = min(controls.values(), key=lambda c: Fraction(c["rejected"], c["groups"]))
    rows = [Row.fraction("rejected injected groups (worst condition)",
                         "text_rootbudget.safety.rejected_groups_per_condition", worst["rejected"], worst["groups"])]
    for name, c in controls.items():
        rows += control_rows(name, c)
    return rows


def comparisons_record(rows: list[Row]) -> list[dict]:
    """The comparison rows (or settings) as the results file records them."""
    return rows_record(rows)
