"""Everything the chapter reports, as the JSON-ready payload of ``03_gradient_noise.json``.

Wall times are machine-dependent: they are shown in the chapter and never written here.
"""
from __future__ import annotations

from oscc_core.chapters.gradient_noise.arms import ROW_ARMS
from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.chapters.gradient_noise.calibration import Selection
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.geometry import Geometry
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.chapters.gradient_noise.updates import UpdateSetting, ratio_quantiles
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.strata import CARD_CLASSES
from oscc_core.reporting.tables import rows_record


def _setting_record(audit: NoiseAudit, s: UpdateSetting) -> dict:
    rec = {"setting": s.as_dict(), "arms": {}}
    for a in ROW_ARMS:
        u = audit.updates[a][s.name]
        lo, hi = ratio_quantiles([u])
        rec["arms"][a] = {"update_noise": estimate(audit.update_noise(a, s.name)).as_dict(),
                          "update_ratio": audit.ratio("update", a, s.name).as_dict(),
                          "clip_fraction": estimate(audit.clip_fraction(a, s.name)).as_dict(),
                          "finite_gradients": int(u.finite.sum()), "groups": len(u.finite),
                          "ratio_quantiles": [lo, hi]}
    return rec


def _selection_record(selection: Selection) -> dict:
    def by_stratum(d: dict) -> dict:
        return {CARD_CLASSES[z]: x for z, x in d.items()}

    return {"strata": by_stratum(selection.selection),
            "block_size": selection.block_size, "pilot_blocks": selection.pilot_blocks,
            "delta": selection.delta, "n_comparisons": selection.n_comparisons,
            "certificates": by_stratum({z: [{"arm": c.arm, "blocks": c.blocks, "mean_gain": c.mean_gain,
                                             "lower_bound": c.lower_bound, "clipped_scores": c.clipped_scores,
                                             "certified": c.certified} for c in certs]
                                        for z, certs in selection.certificates.items()}),
            "bound": by_stratum(selection.bound),
            "objective": by_stratum(selection.objective)}


def results_payload(geom: Geometry, audit: NoiseAudit, settings: list[UpdateSetting], main: str,
                    selection: Selection, front: dict[str, FrontierArm], screen: dict, grid, tables,
                    paper_settings: list, findings, pooled=None, readings: list | None = None) -> dict:
    """Everything the notebook reports, JSON-ready: the comparison tables, the settings of the paper's runs
    (adopted or differs, apart from the results), the all-roots pool of the frontier's contrast variances
    (`pooled`) with every reading's row (`readings`, sensitivity rows) and the chapter's findings."""
    arms = {}
    for a in ROW_ARMS:
        d = audit.data[a]
        arms[a] = {
            "groups": len(d.info),
            "noise_trace": estimate(audit.noise(a), audit.exact_noise(a)).as_dict(),
            "contrast_var": estimate(audit.contrast_var(a), audit.exact_contrast_var(a)).as_dict(),
            "conditional_contrast_var": estimate(audit.conditional_contrast_var(a)).as_dict(),
            "return_ratio": audit.ratio("return", a).as_dict(),
            "gradient_ratio": audit.ratio("gradient", a).as_dict(),
            "update_ratio": audit.ratio("update", a, main).as_dict(),
            "physical_draws": d.draws or None,
        }
    return {
        "root": geom.root.history, "actions": geom.actions, "contrast": [geom.actions[i] for i in geom.pair],
        "root_policy": geom.root_policy, "root_policy_floored_entries": geom.floored,
        "information_states": [{"own_card": o, "public_card": p, "weight": w, "root_policy": pr.tolist(),
                                "exact_noise": {a: geom.exact_noise(a, per_info=True)[k] for a in PAPER_ARMS}}
                               for k, ((o, p), w, pr) in enumerate(zip(geom.infos, geom.weight, geom.probs))],
        "arms": arms,
        "noise_transfer_setting": main,
        "settings": {s.name: _setting_record(audit, s) for s in settings},
        "selection": _selection_record(selection),
        "physical_cost_frontier": {a: {"groups": f.groups, "physical_draws": f.draws, "transitions": f.transitions,
                                       "draws_per_group": f.draws_per_group,
                                       "contrast_var": f.contrast_var.as_dict(), "noise_trace": f.noise.as_dict(),
                                       "batch_mean_noise": f.mean_noise.as_dict()} for a, f in front.items()},
        "scalar_screen": screen,
        # the frontier's contrast variances on the all-roots pool (the paper's reading), and every reading's row
        "pooled_contrast": None if pooled is None else pooled.record(),
        "contrast_variance_readings": rows_record(readings or []),
        "exact_ratio_grid": grid.reset_index().to_dict(orient="records"),
        # the paper's wall-time rows are stored as "not compared", with their reason, for the claims ledger
        "tables": {k: rows_record(v) for k, v in tables.items()},
        "paper_settings": rows_record(paper_settings),
        "findings": findings.record(),
    }
