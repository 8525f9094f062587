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
from oscc_core.engine.arms import PAPER_ARMS, in_paper_order
from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims
from oscc_core.reporting.rows import NO_PAPER, Relation, Row

WALL_TIME = ": wall time"   # suffix of the frontier rows of the paper's wall times
WALL_TIME_REASON = ("wall time depends on the machine; benchmarks/bench_collect.py measures the collector "
                    "against OpenSpiel on the same machine instead")
VERDICT_KINDS = tuple(claims.VERDICTS) + (NO_PAPER,)
CLIPPING_ROWS = {"connectivity control": "connectivity_control", "behaviour-lag grid": "behavior_lag_grid",
                 "learning-rate grid": "learning_rate_grid", "activated stress": "activated_stress"}


ORDER_TEXT = " > ".join(PAPER_ARMS)   # the paper's ordering of the fixed arms


def _lowest(est: Estimate, values: list[float], what: str) -> Relation:
    """OSCC-Select has the lowest `what` (bold in the paper): ours is not above the lowest fixed arm (its
    interval reaches down to it)."""
    return Relation(f"OSCC-Select lowest {what} (interval reaches the lowest fixed arm)", est.low <= min(values))


def noise_transfer_rows(audit: NoiseAudit, setting: str) -> list[dict]:
    """tab:noise-transfer: return, gradient and update ratios, clip fraction and finite gradients per arm.

    Relations, as the paper's table states them: the fixed arms' ratios in the
    order independent (1) > root_only > continuation_only > full; OSCC-Select's
    the lowest (bold), i.e. below 1 with an interval that reaches down to the
    lowest fixed arm.  The independent ratio is 1 by definition and the clip
    fractions describe optimizer support: no relation.
    """
    rows = []
    for q, col in (("return", "return_ratio"), ("gradient", "gradient_ratio"), ("update", "update_ratio")):
        est = {a: audit.ratio(q, a, setting) for a in ROW_ARMS}
        order = Relation(f"{q} ratio: {ORDER_TEXT}", in_paper_order({a: est[a].value for a in PAPER_ARMS}))
        for a in ROW_ARMS:
            if a == "independent":
                rel = None
            elif a == SELECT:
                low = _lowest(est[a], [est[b].value for b in PAPER_ARMS], f"{q} ratio")
                rel = Relation(f"{low.text}, < 1", low.holds and est[a].value < 1)
            else:
                rel = order
            rows.append(Row.estimate(f"{LABELS[a]}: {q} ratio", f"noise_transfer.{PAPER_KEY[a]}.{col}", est[a],
                                     rel))
    for a in ROW_ARMS:
        cf = estimate(audit.clip_fraction(a, setting))
        rows.append(Row.estimate(f"{LABELS[a]}: clip fraction", f"noise_transfer.{PAPER_KEY[a]}.clip_fraction", cf))
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
    Relations, as the paper states them: the connectivity control is the
    zero-clipping reference with the lowest update variance (bold); each
    stress row activates clipping (> 0) and has a larger update variance than
    the control.  The ratio quantiles declare none.  Finite gradients: the
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
        clip = (Relation("clip-selected fraction = 0 (zero-clipping control)", cf.value == 0) if is_control
                else Relation("clip-selected fraction > 0 (stress activates clipping)", cf.value > 0))
        rows.append(Row.estimate(f"{label}: clip-selected fraction", f"clipping.{key}.clip_selected_fraction", cf,
                                 clip))
        fin = sum(int(u.finite.sum()) for u in ups)
        tot = sum(len(u.finite) for u in ups)
        rows.append(Row.all_finite(f"{label}: finite gradients", f"clipping.{key}.finite_gradients", fin, tot))
        uv = update_variance(audit, arm, names)
        if is_control:
            uv = Estimate(uv.value, uv.low, uv.high, audit.exact_noise(arm), uv.se)
        rel = (Relation("update variance: control < every stress row", control < min(stressed)) if is_control
               else Relation("update variance > connectivity control", uv.value > control))
        rows.append(Row.estimate(f"{label}: update variance ({LABELS[arm]})", f"clipping.{key}.update_variance", uv,
                                 rel))
    return rows


def frontier_rows(front: dict[str, FrontierArm]) -> list[dict]:
    """tab:physical-cost-frontier: calls, transitions, wall time (not compared), contrast variance, noise trace."""
    rows = []
    order_v = Relation(f"contrast variance: {ORDER_TEXT}",
                       in_paper_order({a: front[a].contrast_var.value for a in PAPER_ARMS}))
    order_n = Relation(f"noise trace: {ORDER_TEXT}", in_paper_order({a: front[a].noise.value for a in PAPER_ARMS}))
    for a in ROW_ARMS:
        f = front[a]
        key = f"cost_frontier.{PAPER_KEY[a]}"
        rows.append(Row.compare(f"{LABELS[a]}: physical draws", f"{key}.physical_calls", f.draws, exact=None))
        rows.append(Row.compare(f"{LABELS[a]}: transitions", f"{key}.transitions", f.transitions))
        rows.append(Row.not_compared(f"{LABELS[a]}{WALL_TIME}", f"{key}.wall_time", WALL_TIME_REASON))
        sel_v = _lowest(f.contrast_var, [front[b].contrast_var.value for b in PAPER_ARMS], "contrast variance")
        sel_n = _lowest(f.noise, [front[b].noise.value for b in PAPER_ARMS], "noise trace")
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
                               f"text_bounded.scalar_screen.{label}.check_prob_delta", m, m - half, m + half))
    grads = sum(r.gradients for r in results)
    ok = sum(r.finite_nonzero for r in results)
    clipped = sum(r.clipped_terms for r in results)
    out.append(Row.compare("finite non-zero batch gradients (both arms, all seeds)",
                           "text_bounded.scalar_screen.finite_nonzero_gradients", ok,
                           relation=Relation("every batch gradient finite and non-zero", ok == grads)))
    out.append(Row.count("clip-selected terms (both arms, all seeds)",
                         "text_bounded.scalar_screen.selected_clipping", clipped))
    summary.update({"gradients": grads, "finite_nonzero": ok, "clipped_terms": clipped,
                    "terms": sum(r.terms for r in results),
                    "ratio_range": [min(r.ratio_range[0] for r in results), max(r.ratio_range[1] for r in results)]})
    return out, summary
