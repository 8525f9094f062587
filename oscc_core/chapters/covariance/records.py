"""What the chapter writes into ``results/02_covariance.json``: per-arm records and the tables' rows.

Units as in the tables: means in chips, variances and covariances in
chips^2, ratios unitless, reductions in percent; counts of groups, stream
keys and draws.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.reporting import tables as tab


def arm_records(audit: PairedAudit) -> dict:
    """The results file's ``arms.<arm>`` objects (DESIGN.md section 6)."""
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


def payload(audit: PairedAudit, tables: dict[str, list], equivalence_records: list[dict],
            identity_records: dict, grid, budget_grid) -> dict:
    """The results file's payload: arm records, every table's rows, the exact grids and the verdict counts.

    `tables` maps the table names (fixed_root, marginal_equivalence, variance_identity,
    coupling_factors, seed_precision, strata, budget, cfr_plus_alternative) to their rows.
    """
    return {
        "arms": arm_records(audit),
        "contrast": list(audit.pair_names),
        "fixed_root": {"ratio": audit.ratio().as_dict(), "reduction_percent": audit.reduction().as_dict(),
                       "rows": tab.rows_record(tables["fixed_root"])},
        "marginal_equivalence": {"decisions": equivalence_records,
                                 "rows": tab.rows_record(tables["marginal_equivalence"])},
        "variance_identity": {"arms": identity_records, "rows": tab.rows_record(tables["variance_identity"])},
        "coupling_factors": tab.rows_record(tables["coupling_factors"]),
        "seed_precision": tab.rows_record(tables["seed_precision"]),
        "strata": tab.rows_record(tables["strata"]),
        "budget": tab.rows_record(tables["budget"]),
        "construction_grid": grid.to_dict(orient="records"),
        "budget_grid": budget_grid.to_dict(orient="records"),
        "cfr_plus_alternative": tab.rows_record(tables["cfr_plus_alternative"]),
        "verdict_counts": tab.verdict_summary(tables).to_dict(orient="index"),
    }
