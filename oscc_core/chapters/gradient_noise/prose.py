"""The numbers the chapter's text quotes, by glue name (each function returns name -> value; `glue_values`
glues them).  Ratios are unitless, noise and update noise in chips^2 per logit^2."""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.gradient_noise.arms import ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.calibration import Selection
from oscc_core.chapters.gradient_noise.constructions import gradient_raised
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.geometry import Geometry
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.chapters.gradient_noise.updates import SettingGrid, UpdateSetting
from oscc_core.chapters.gradient_noise.pooled import POOLED_READING, PooledContrast, one_root_reading
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.reporting import comparability, reading_sets
from oscc_core.reporting.results import glue, residual_text

#: Glue name -> the comparability family whose reason the chapter's prose quotes (`reporting.comparability`).
FAMILY_GLUE = {"why_traces": "gradient-noise traces", "why_update_variance": "update variances",
               "why_wall_times": "wall times", "why_transitions": "transitions", "why_i_minus_p": "I−P endpoints"}


def glue_values(values: dict) -> None:
    """Glue every (name, value) without displaying it; floats are rounded by `reporting.results.glue`."""
    for name, value in values.items():
        glue(name, value, display=False)


def geometry_values(geom: Geometry, floor: float, weights: str) -> dict:
    return {"n_infos": len(geom.infos), "root_policy_label": geom.root_policy, "floored": geom.floored,
            "root_policy_floor": f"{floor:g}", "noise_weights": weights}


def selection_values(selection: Selection, calibration_groups: int, bound_factor: float) -> dict:
    return {"n_cal": f"{calibration_groups:,}", "block_size": selection.block_size,
            "pilot_blocks": selection.pilot_blocks, "bound_factor": bound_factor,
            "n_comparisons": selection.n_comparisons, "delta": selection.delta,
            "selection_text": ", ".join(f"{z}: {a}" for z, a in selection.by_stratum.items())}


def setting_values(main: UpdateSetting, n_groups: int) -> dict:
    """The noise-transfer setting and the groups per arm."""
    return {"main_lag": main.lag, "main_epochs": main.epochs, "main_lr": main.learning_rate,
            "main_eps": main.epsilon, "n_groups": f"{n_groups:,}"}


def transfer_values(audit: NoiseAudit, grid: SettingGrid) -> dict:
    """Every arm's three ratios with intervals and clip fraction, and the independent arm's noise levels."""
    main, free = grid.main, grid.main_free
    out = {}
    for a in ROW_ARMS:
        for q in ("return", "gradient", "update"):
            r = audit.ratio(q, a, main.name)
            out.update({f"{a}_{q}": r.value, f"{a}_{q}_low": r.low, f"{a}_{q}_high": r.high})
            if r.exact is not None:
                out[f"{a}_{q}_exact"] = r.exact
        out[f"{a}_clip"] = float(audit.clip_fraction(a, main.name)[0])
    per_info = np.stack([audit.geom.exact_noise(a, per_info=True) for a in PAPER_ARMS])
    out.update({
        "full_update_free": audit.ratio("update", "full", free.name).value,
        "ind_noise": float(audit.noise("independent")[0]),
        "ind_noise_exact": audit.exact_noise("independent"),
        "ind_update": float(audit.update_noise("independent", main.name)[0]),
        "ind_update_free": float(audit.update_noise("independent", free.name)[0]),
        "full_best_states": int((per_info.argmin(0) == PAPER_ARMS.index("full")).sum()),
    })
    return out


def clipping_values(audit: NoiseAudit, grid: SettingGrid) -> dict:
    """The control's update noise against the projected trace (their difference as an identity residual, "< 1e-12"),
    the stress with and without clipping, raw displacement variances (x 1e3) at the smallest and largest learning
    rate."""
    u_control = float(audit.update_noise("full", grid.control.name)[0])
    lr = grid.learning_rate
    raw = {s.name: (s.learning_rate * s.epochs) ** 2 * float(audit.update_noise("full", s.name)[0]) for s in lr}
    return {"u_control": u_control, "n_control_check": residual_text(u_control - float(audit.noise("full")[0])),
            "u_stress": float(audit.update_noise("full", grid.stress.name)[0]),
            "u_stress_free": float(audit.update_noise("full", grid.stress_free.name)[0]),
            "clip_stress": float(audit.clip_fraction("full", grid.stress.name)[0]),
            "raw_lr_low": 1e3 * raw[lr[0].name], "raw_lr_high": 1e3 * raw[lr[-1].name],
            "lr_low": lr[0].learning_rate, "lr_high": lr[-1].learning_rate}


def frontier_values(front: dict[str, FrontierArm]) -> dict:
    """Exact batch-mean noise at equal draws relative to independent, groups and per-group noise."""
    eff = {a: f.noise.exact * f.draws_per_group for a, f in front.items()}
    return {"eff_full": eff["full"] / eff["independent"], "eff_select": eff[SELECT] / eff["independent"],
            "groups_ind": f"{front['independent'].groups:,}", "groups_full": f"{front['full'].groups:,}",
            "fr_noise_ind": front["independent"].noise.value, "fr_noise_select": front[SELECT].noise.value}


def screen_sign_text(summary: dict) -> str:
    """Which arms' seed intervals of the P(check) change lie above 0 (the rise the paper reports is decided)."""
    above = [label for arm, label in (("full", "paired"), ("independent", "independent"))
             if summary[arm]["low"] > 0]
    if not above:
        return "neither arm's interval lies above 0, so the rise is not decided"
    if len(above) == 2:
        return "both arms' intervals lie above 0, so the rise is decided"
    return f"only the {above[0]} arm's interval lies above 0"


def screen_values(summary: dict, groups: int, learning_rate: float) -> dict:
    return {"screen_groups": groups, "screen_lr": learning_rate,
            "screen_clip_fraction": summary["clipped_terms"] / summary["terms"],
            "screen_full": summary["full"]["delta_p_mean"], "screen_ind": summary["independent"]["delta_p_mean"],
            "screen_sign": screen_sign_text(summary)}


def grid_values(grid) -> dict:
    """The construction with the lowest full-arm gradient ratio, and the cells where rho_G exceeds rho_R."""
    best = grid["ρ_G CP-GRPO full"].idxmin()
    raised = gradient_raised(grid)
    return {"n_raised": len(raised), "n_cells": 3 * len(grid),
            "raised_text": "; ".join(f"{a} under {c}" for c, a in raised) or "none",
            "best_construction": best, "best_rho_r": float(grid.loc[best, "ρ_R CP-GRPO full"]),
            "best_rho_g": float(grid.loc[best, "ρ_G CP-GRPO full"])}


def comparability_values() -> dict:
    """Why the chapter's traces, update variances, wall times, transitions and I − P endpoints are not compared in
    size: each family's reason as `reporting.comparability` declares it (the rows and the claims ledger give the
    same sentence)."""
    return {name: comparability.reason_of(family) for name, family in FAMILY_GLUE.items()}


def pooled_values(pooled: PooledContrast, root: str) -> dict:
    """The all-roots pool of the frontier's contrast variances: its roots, groups and weighting, the readings'
    names, and the independent arm's pooled estimate and interval."""
    ind = pooled.contrast_var("independent")
    return {"pooled_roots": len(pooled.histories), "pooled_groups": f"{int(pooled.groups.sum()):,}",
            "pooled_weighting": pooled.weighting, "pooled_reading": POOLED_READING,
            "root_reading": one_root_reading(root), "pooled_ind": ind.value, "pooled_ind_low": ind.low,
            "pooled_ind_high": ind.high}


def _primary(rows: list, cid: str):
    return next(r for r in rows if r.claim_id == cid and r.primary)


def reading_values(frontier_rows: list, pooled: PooledContrast) -> dict:
    """What the readings of the frontier's contrast variances give: independent sampling's value and verdict under
    each reading, how many of the arms' verdicts depend on the reading, and how the fixed arms are ordered on the
    pool (`findings.pooled_order_text`)."""
    from oscc_core.chapters.gradient_noise.findings import pooled_order_text

    contrast = [r for r in frontier_rows if r.primary and r.claim_id.endswith(".contrast_variance")]
    ind = _primary(frontier_rows, "cost_frontier.independent.contrast_variance")
    by_reading = {r["reading"]: r for r in ind.readings}
    root = next(r for name, r in by_reading.items() if name != reading_sets.CONTRAST_POOLED)
    return {"ind_verdict_pooled": by_reading[reading_sets.CONTRAST_POOLED]["verdict"],
            "ind_verdict_root": root["verdict"],
            "root_ind": root["ours"], "root_ind_low": root["interval"][0], "root_ind_high": root["interval"][1],
            "n_contrast_dependent": sum(r.reading_dependent for r in contrast), "n_contrast": len(contrast),
            "pooled_order": pooled_order_text(pooled)}


def ordering_values(frontier_rows: list, clip_rows: list) -> dict:
    """Whether the orderings the paper states for quantities not compared in size hold on our numbers: the noise
    traces' order of the fixed arms and OSCC-Select's minimum (exact values), and the update variance's rise from
    the zero-clipping control to the activated stress."""
    order = _primary(frontier_rows, "cost_frontier.root_only.gradient_noise_trace").relation_holds
    select = _primary(frontier_rows, "cost_frontier.oscc_select.gradient_noise_trace").relation_holds
    rises = _primary(clip_rows, "clipping.activated_stress.update_variance").relation_holds
    return {"trace_order": "keep" if order else "do not keep", "trace_select": "is" if select else "is not",
            "uv_order": "holds" if rises else "fails"}
