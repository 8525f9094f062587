"""The body of the results file ``04_selector.json`` (every number the notebook reports, in its units)."""
from __future__ import annotations

from oscc_core.reporting import tables as tab

from .action_support import RootSelection, two_action_record
from .calibration import N_COMPARISONS
from .regimes import Regimes


def results_payload(three: dict, run2: RootSelection, bounds: dict, support: list[dict], support_rows: list,
                    others: list[dict], scan, stress: Regimes, regime_cmp: list, sufficient: dict, sweep_cmp: list,
                    prose: list, summary, settings: list, findings) -> dict:
    """The results file's objects, keyed as the book's readers expect them: the comparison rows by table, the
    settings of the paper's runs (adopted or differs) apart, and the chapter's findings."""
    return {
        "three_action": three,
        "two_action": two_action_record(run2),
        "bounds": bounds, "n_comparisons": N_COMPARISONS,
        "action_support": [dict(r) for r in support],
        "action_support_rows": tab.rows_record(support_rows),
        "other_root_policies": others,
        "policy_scan": scan.to_dict(orient="records"),
        "regimes": stress.rows, "regime_selection": stress.choices, "regime_rows": tab.rows_record(regime_cmp),
        "calibration_sweep": stress.sweep_rows, "sufficient_groups": sufficient,
        "calibration_rows": tab.rows_record(sweep_cmp), "prose_rows": tab.rows_record(prose),
        "paper_settings": tab.rows_record(settings),
        "verdict_counts": summary.to_dict(orient="index"),
        "findings": findings.record(),
    }
