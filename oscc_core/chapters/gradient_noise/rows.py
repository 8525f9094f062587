"""Paper-beside-reproduction rows of tab:noise-transfer, tab:app-p1-clipping, tab:physical-cost-frontier and
the scalar screen's prose (values in each quantity's units: ratios unitless, noise in chips^2 per logit^2)."""
from __future__ import annotations

import math
from statistics import mean, stdev

import numpy as np

from oscc_core.chapters.gradient_noise.arms import LABELS, PAPER_KEY, ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.screen import ScreenResult
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.chapters.gradient_noise.updates import ratio_quantiles
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims
from oscc_core.reporting.rows import NO_PAPER, NOT_COMPARED, Row

WALL_TIME = ": wall time"   # suffix of the frontier rows of the paper's wall times
WALL_TIME_REASON = ("wall time depends on the machine; benchmarks/bench_collect.py measures the collector "
                    "against OpenSpiel on the same machine instead")
VERDICT_KINDS = tuple(claims.VERDICTS) + (NO_PAPER, NOT_COMPARED)
CLIPPING_ROWS = {"connectivity control": "connectivity_control", "behaviour-lag grid": "behavior_lag_grid",
                 "learning-rate grid": "learning_rate_grid", "activated stress": "activated_stress"}


def _ordered(values: dict[str, float]) -> bool:
    """independent > root_only > continuation_only > full (the paper's ordering of the fixed arms)."""
    v = [values[a] for a in PAPER_ARMS]
    return all(x > y for x, y in zip(v, v[1:]))


def noise_transfer_rows(audit: NoiseAudit, setting: str) -> list[dict]:
    """tab:noise-transfer: return, gradient and update ratios, clip fraction and finite gradients per arm.

    Direction: a ratio below 1 with the fixed arms in the paper's order
    (root-only > continuation-only > full); for OSCC-Select, a ratio whose
    interval reaches down to the lowest fixed arm.  Clip fraction: clipping
    is active (> 0) at the noise-transfer setting, as in the paper.
    """
    rows = []
    for q, col in (("return", "return_ratio"), ("gradient", "gradient_ratio"), ("update", "update_ratio")):
        est = {a: audit.ratio(q, a, setting) for a in ROW_ARMS}
        order = _ordered({a: est[a].value for a in PAPER_ARMS})
        for a in ROW_ARMS:
            if a == "independent":
                d = True
            elif a == SELECT:
                d = est[a].value < 1 and est[a].low <= min(est[b].value for b in PAPER_ARMS)
            else:
                d = est[a].value < 1 and order
            rows.append(Row.estimate(f"{LABELS[a]}: {q} ratio", f"noise_transfer.{PAPER_KEY[a]}.{col}", est[a], d))
    for a in ROW_ARMS:
        cf = estimate(audit.clip_fraction(a, setting))
        rows.append(Row.estimate(f"{LABELS[a]}: clip fraction", f"noise_transfer.{PAPER_KEY[a]}.clip_fraction", cf,
                                 cf.value > 0))
    for a in ROW_ARMS:
        u = audit.updates[a][setting]
        rows.append(Row.all_finite(f"{LABELS[a]}: finite gradients",
                                   f"noise_transfer.{PAPER_KEY[a]}.finite_gradients", int(u.finite.sum()),
                                   len(u.finite)))
    return rows


def update_variance(audit: NoiseAudit, arm: str, settings: list[str]) -> Estimate:
    """Mean update noise U over a grid of settings (replicates averaged the same way)."""
    return estimate(np.mean([audit.update_noise(arm, s) for s in settings], axis=0))


def clipping_rows(audit: NoiseAudit, groups: dict[str, list[str]], arm: str = "full") -> list[dict]:
    """tab:app-p1-clipping: ratio quantiles, clip-selected fraction, finite gradients, update variance.

    ``groups`` maps each paper row ("connectivity control", "behaviour-lag
    grid", ...) to the setting names pooled into it.  Update variance is the
    coupled (`arm`) update noise averaged over the row's settings.
    Directions: ratio quantiles straddle 1; the connectivity control has no
    clipping and the lowest update variance; each stress row clips (> 0) and
    has a larger update variance than the control.  Finite gradients: the
    paper prints a count of gradients that were all finite; a row reproduces
    when all of ours are finite too.
    """
    rows = []
    control = update_variance(audit, arm, groups["connectivity control"]).value
    stressed = [update_variance(audit, arm, groups[k]).value for k in CLIPPING_ROWS if k != "connectivity control"]
    for label, key in CLIPPING_ROWS.items():
        names = groups[label]
        ups = [audit.updates[a][s] for a in ("independent", arm) for s in names]
        lo, hi = ratio_quantiles(ups)
        rows.append(Row.quantile_pair(f"{label}: ratio quantiles (2.5%, 97.5%)", f"clipping.{key}.ratio_quantiles",
                                      lo, hi))
        cf = estimate(np.mean([audit.clip_fraction(a, s) for a in ("independent", arm) for s in names], axis=0))
        is_control = key == "connectivity_control"
        rows.append(Row.estimate(f"{label}: clip-selected fraction", f"clipping.{key}.clip_selected_fraction", cf,
                                 (cf.value == 0) if is_control else (cf.value > 0)))
        fin = sum(int(u.finite.sum()) for u in ups)
        tot = sum(len(u.finite) for u in ups)
        rows.append(Row.all_finite(f"{label}: finite gradients", f"clipping.{key}.finite_gradients", fin, tot))
        uv = update_variance(audit, arm, names)
        if is_control:
            uv = Estimate(uv.value, uv.low, uv.high, audit.exact_noise(arm), uv.se)
        d = (control < min(stressed)) if is_control else uv.value > control
        rows.append(Row.estimate(f"{label}: update variance ({LABELS[arm]})", f"clipping.{key}.update_variance", uv,
                                 d))
    return rows


def frontier_rows(front: dict[str, FrontierArm]) -> list[dict]:
    """tab:physical-cost-frontier: calls, transitions, wall time (not compared), contrast variance, noise trace."""
    rows = []
    order_v = _ordered({a: front[a].contrast_var.value for a in PAPER_ARMS})
    order_n = _ordered({a: front[a].noise.value for a in PAPER_ARMS})
    for a in ROW_ARMS:
        f = front[a]
        key = f"cost_frontier.{PAPER_KEY[a]}"
        rows.append(Row.compare(f"{LABELS[a]}: physical draws", f"{key}.physical_calls", f.draws, exact=None))
        rows.append(Row.compare(f"{LABELS[a]}: transitions", f"{key}.transitions", f.transitions,
                                direction_agrees=None))
        rows.append(Row.not_compared(f"{LABELS[a]}{WALL_TIME}", f"{key}.wall_time", WALL_TIME_REASON))
        sel_v = f.contrast_var.value <= min(front[b].contrast_var.value for b in PAPER_ARMS) or \
            f.contrast_var.low <= min(front[b].contrast_var.value for b in PAPER_ARMS)
        sel_n = f.noise.low <= min(front[b].noise.value for b in PAPER_ARMS)
        rows.append(Row.estimate(f"{LABELS[a]}: contrast variance", f"{key}.contrast_variance", f.contrast_var,
                                 (sel_v if a == SELECT else order_v)))
        rows.append(Row.estimate(f"{LABELS[a]}: gradient-noise trace", f"{key}.gradient_noise_trace", f.noise,
                                 (sel_n if a == SELECT else order_n)))
    return rows


#: Two-sided 97.5% Student-t quantiles by degrees of freedom (the screen's seed interval).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def screen_rows(results: list[ScreenResult]) -> tuple[list[dict], dict]:
    """The paper's scalar-screen prose: mean P(Call) change per arm (5-seed t interval), gradients, clipping."""
    out, summary = [], {}
    by_arm = {}
    for r in results:
        by_arm.setdefault(r.arm, []).append(r)
    for arm, label in (("full", "paired"), ("independent", "independent")):
        rs = by_arm[arm]
        v = [r.delta_p for r in rs]
        m = mean(v)
        half = T975.get(len(v) - 1, 1.96) * stdev(v) / math.sqrt(len(v)) if len(v) > 1 else float("nan")
        summary[arm] = {"delta_p_mean": m, "low": m - half, "high": m + half, "per_seed": v}
        out.append(Row.compare(f"{LABELS[arm]}: mean change of P(check) over the screen",
                               f"text_bounded.scalar_screen.{label}.check_prob_delta", m, m - half, m + half,
                               m > 0))
    grads = sum(r.gradients for r in results)
    ok = sum(r.finite_nonzero for r in results)
    clipped = sum(r.clipped_terms for r in results)
    out.append(Row.compare("finite non-zero batch gradients (both arms, all seeds)",
                           "text_bounded.scalar_screen.finite_nonzero_gradients", ok, direction_agrees=ok == grads))
    out.append(Row.count("clip-selected terms (both arms, all seeds)",
                         "text_bounded.scalar_screen.selected_clipping", clipped))
    summary.update({"gradients": grads, "finite_nonzero": ok, "clipped_terms": clipped,
                    "terms": sum(r.terms for r in results),
                    "ratio_range": [min(r.ratio_range[0] for r in results), max(r.ratio_range[1] for r in results)]})
    return out, summary
