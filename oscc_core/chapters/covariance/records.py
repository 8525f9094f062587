"""What the chapter writes into ``results/02_covariance.json``: per-arm records (the one-root audit's under
``arms``, the pooled all-roots audit's under ``pooled_roots``), the tables' rows, the findings.

Each claim id has exactly one primary row over the chapter's tables
(`one_primary_row` refuses a second): sensitivity, alternative-construction
and detail rows name their claim under "sensitivity of" and never give the
claims ledger its verdict.  Units as in the tables: means in chips, variances
and covariances in chips^2, ratios unitless, reductions in percent; counts of
groups, stream keys and draws.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.reporting import findings as fnd
from oscc_core.reporting import tables as tab
from oscc_core.reporting.tally import chapter_tally

STEM = "02_covariance"

#: The tables of the results file, in the chapter's order.
TABLES = ("settings", "fixed_root", "paper_intervals", "marginal_equivalence", "variance_identity",
          "coupling_factors", "coupling_calls", "update_variance", "seed_precision", "strata", "budget",
          "cfr_plus_alternative", "not_compared")


def arm_records(audit: PairedAudit) -> dict:
    """The results file's ``arms.<arm>`` objects: groups, valid groups, contrast moments with their intervals
    and exact values, covariances, branch moments, stream keys and draws, and the collection's digest."""
    out = {}
    i, j = audit.pair
    key = f"{i}-{j}"
    for arm, c in audit.collections.items():
        s = c.summary()
        pc = s["pairwise_contrasts"][key]
        ex = audit.exact[arm]
        cv = audit.contrast_var(arm)
        cov = audit.covariance(arm)
        out[arm] = {
            "groups": s["groups"], "valid_groups": s["valid_groups"], "failures": s["failures"],
            "contrast": list(audit.pair_names),
            "contrast_mean": pc["contrast_mean"], "contrast_var": pc["contrast_var"],
            "contrast_var_se": pc["contrast_var_se"], "contrast_var_interval": [cv.low, cv.high],
            "cov": s["cov"], "cov_pair": s["cov"][i][j], "cov_pair_interval": [cov.low, cov.high],
            "branch_means": s["branch_means"], "branch_vars": s["branch_vars"],
            "exact_contrast_var": ex.contrast_var(i, j), "exact_contrast_mean": ex.contrast_mean(i, j),
            "exact_cov": ex.cov.tolist(), "exact_branch_means": dict(zip(audit.actions, ex.mean.tolist())),
            "logical_keys": c.logical_keys, "physical_draws": c.physical_draws, "digest": c.digest,
        }
    return out


def one_primary_row(tables: dict[str, list]) -> dict[str, str]:
    """Claim id -> the table of its primary row; raises ValueError when a claim id has two primary rows."""
    ids = Counter(r.claim_id for rows in tables.values() for r in rows if r.primary and r.claim_id)
    doubled = sorted(cid for cid, n in ids.items() if n > 1)
    if doubled:
        raise ValueError(f"claim ids with more than one primary row: {doubled[:5]}; mark all but one "
                         "as sensitivity rows (Row.as_sensitivity).")
    return {r.claim_id: name for name, rows in tables.items() for r in rows if r.primary and r.claim_id}


def counted(tables: dict[str, list]) -> dict[str, list]:
    """The primary rows of each table: what the chapter's verdict and status counts count."""
    return {name: [r for r in rows if r.primary] for name, rows in tables.items()}


def payload(audit: PairedAudit, tables: dict[str, list], equivalence_records: list[dict],
            identity_records: dict, grid, budget_grid, findings: fnd.Findings, update_records: dict,
            pooled_record: dict, hypothesis: dict | None = None) -> dict:
    """The results file's payload: the one-root audit's arm records, the pooled all-roots audit
    (`pooled_record`, `pooled.record`), every table's rows, the exact grids, the update variance of each arm and
    seed at each step size (`update_records`, `updates.results_record`, logits^2), the chapter's counts (each
    measured value once: `reporting.tally.chapter_tally`, what the result box prints), the findings and the
    hypothesis of the mismatched construction (`hypothesis`, `findings.hypothesis_values` with its root: the
    landing page states it under the headline figure).  The equivalence records are the pooled audit's.

    `tables` maps the names of `TABLES` to their rows; refuses a claim id with two primary rows.
    """
    missing = [t for t in TABLES if t not in tables]
    if missing:
        raise ValueError(f"the results file needs the tables {missing}.")
    one_primary_row(tables)
    return {
        "arms": arm_records(audit),
        "pooled_roots": pooled_record,
        "contrast": list(audit.pair_names),
        "settings": tab.rows_record(tables["settings"]),
        "fixed_root": {"ratio": audit.ratio().as_dict(), "reduction_percent": audit.reduction().as_dict(),
                       "rows": tab.rows_record(tables["fixed_root"])},
        "marginal_equivalence": {"decisions": equivalence_records,
                                 "rows": tab.rows_record(tables["marginal_equivalence"])},
        "variance_identity": {"arms": identity_records, "rows": tab.rows_record(tables["variance_identity"])},
        "paper_intervals": tab.rows_record(tables["paper_intervals"]),
        "coupling_factors": tab.rows_record(tables["coupling_factors"]),
        "coupling_calls": tab.rows_record(tables["coupling_calls"]),
        "update_variance": {**update_records, "rows": tab.rows_record(tables["update_variance"])},
        "seed_precision": tab.rows_record(tables["seed_precision"]),
        "strata": tab.rows_record(tables["strata"]),
        "budget": tab.rows_record(tables["budget"]),
        "construction_grid": grid.to_dict(orient="records"),
        "budget_grid": budget_grid.to_dict(orient="records"),
        "cfr_plus_alternative": tab.rows_record(tables["cfr_plus_alternative"]),
        "not_compared": tab.rows_record(tables["not_compared"]),
        "verdict_counts": chapter_tally(STEM, [r for rows in tables.values() for r in rows]),
        fnd.RESULTS_KEY: findings.record(),
        **({"hypothesis": hypothesis} if hypothesis is not None else {}),
    }
