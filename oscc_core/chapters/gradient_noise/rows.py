"""Paper-beside-reproduction rows of tab:noise-transfer, tab:app-p1-clipping, tab:physical-cost-frontier and
the scalar screen's prose (values in each quantity's units: ratios unitless, noise in chips^2 per logit^2)."""
from __future__ import annotations

from dataclasses import replace

import math
from statistics import mean, stdev

import numpy as np

from oscc_core.chapters.gradient_noise import relations
from oscc_core.chapters.gradient_noise.arms import LABELS, PAPER_KEY, ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.pooled import PooledContrast
from oscc_core.chapters.gradient_noise.screen import ScreenResult
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.chapters.gradient_noise.updates import ratio_quantiles
from oscc_core.engine.arms import PAPER_ARMS, STATED_TEXT, in_stated_order
from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims, printings, reading_sets
from oscc_core.reporting.rows import NO_PAPER, NO_REFERENCE_RATIO, Relation, Row

WALL_TIME = ": wall time"   # suffix of the frontier rows of the paper's wall times
VERDICT_KINDS = tuple(claims.VERDICTS) + (NO_PAPER,)
CLIPPING_ROWS = {"connectivity control": "connectivity_control", "behaviour-lag grid": "behavior_lag_grid",
                 "learning-rate grid": "learning_rate_grid", "activated stress": "activated_stress"}


ORDER_TEXT = STATED_TEXT   # the relation the paper states for the fixed arms (engine.arms.STATED_BELOW)
#: Why the independent arm's ratios agree by construction.
SELF_RATIO = "the independent arm's variance divided by itself is 1 by definition, on every bootstrap replicate"
#: Why a cost ratio at the matched budget agrees by construction (why its size is not compared: the family's reason,
#: `comparability.reason_of("wall times")`).
MATCHED_BUDGET = "the arms run at a matched budget of physical draws, so their ratio is 1 up to the last group"
#: Why the zero-clipping control's clip fraction is 0 whatever we measure.
ONE_STEP_CONTROL = ("the control takes one step from the behaviour policy, so every probability ratio is 1 and no "
                    "term can clip")


def _lowest_text(what: str) -> str:
    return f"OSCC-Select lowest {what}: below every fixed arm"


def _lowest(what: str, values: dict[str, np.ndarray]) -> Relation:
    """OSCC-Select has the lowest `what` (bold in the paper): below every fixed arm (independent included), on the
    estimates; resolved when every paired difference is resolved (`relations.lowest`)."""
    return relations.lowest(_lowest_text(what), values, SELECT, PAPER_ARMS)


def exact_relation(what: str, exact: dict[str, float], arm: str) -> Relation:
    """The relation the paper states for `arm`'s `what`, decided on the exact values `exact` (arm -> value; no
    interval can contradict an exact value, so `resolved` is None): for a fixed arm, the relation the paper's prose
    states (both partial arms below independent, full lowest: `engine.arms.STATED_BELOW`), OSCC-Select below every
    fixed arm (bold)."""
    if arm == SELECT:
        return Relation(_lowest_text(what), all(exact[SELECT] < exact[b] for b in PAPER_ARMS))
    return Relation(f"{what}: {ORDER_TEXT}", in_stated_order({b: exact[b] for b in PAPER_ARMS}))


def noise_transfer_rows(audit: NoiseAudit, setting: str) -> list[Row]:
    """tab:noise-transfer: return, gradient and update ratios, clip fraction and finite gradients per arm.

    Relations, as the paper states them: the fixed arms' ratios keep its prose's
    relation (both partial arms below independent, full lowest); OSCC-Select's
    the lowest (bold).  The return and gradient ratios have exact values, and their
    relations are decided on them (`exact_relation`); the update ratio has none,
    and its relations are resolved by the paired bootstrap of the ratios
    (`relations`).  The ratios are ratios of variances, compared as positive
    quantities.  The independent ratio is 1 by definition and the clip fractions
    describe optimizer support: no relation.
    """
    rows = []
    for q, col in (("return", "return_ratio"), ("gradient", "gradient_ratio"), ("update", "update_ratio")):
        values = {a: audit.ratio_values(q, a, setting) for a in ROW_ARMS}
        exact = {a: audit.ratio(q, a, setting).exact for a in ROW_ARMS}
        on_exact = all(x is not None for x in exact.values())
        order = relations.stated(f"{q} ratio: {ORDER_TEXT}", values)
        for a in ROW_ARMS:
            if a == "independent":
                rel = None
            elif on_exact:
                rel = exact_relation(f"{q} ratio", exact, a)
            else:
                rel = _lowest(f"{q} ratio", values) if a == SELECT else order
            row = Row.estimate(f"{LABELS[a]}: {q} ratio", f"noise_transfer.{PAPER_KEY[a]}.{col}",
                               audit.ratio(q, a, setting), rel, positive=True)
            rows.append(row.true_by_construction(SELF_RATIO) if a == "independent" else row)
    for a in ROW_ARMS:
        cf = estimate(audit.clip_fraction(a, setting))
        rows.append(Row.estimate(f"{LABELS[a]}: clip fraction", f"noise_transfer.{PAPER_KEY[a]}.clip_fraction", cf))
    for a in ROW_ARMS:
        u = audit.updates[a][setting]
        rows.append(Row.all_finite(f"{LABELS[a]}: finite gradients",
                                   f"noise_transfer.{PAPER_KEY[a]}.finite_gradients", int(u.finite.sum()),
                                   len(u.finite)))
    return rows


def update_variance_values(audit: NoiseAudit, arm: str, settings: list[str]) -> np.ndarray:
    """[R+1] mean update noise U over a grid of settings (each replicate averaged the same way)."""
    return np.mean([audit.update_noise(arm, s) for s in settings], axis=0)


def update_variance(audit: NoiseAudit, arm: str, settings: list[str]) -> Estimate:
    """Mean update noise U over a grid of settings (replicates averaged the same way)."""
    return estimate(update_variance_values(audit, arm, settings))


def clipping_rows(audit: NoiseAudit, groups: dict[str, list[str]], arm: str = "full") -> list[Row]:
    """tab:app-p1-clipping: ratio quantiles, clip-selected fraction, finite gradients, update variance.

    ``groups`` maps each paper row ("connectivity control", "behaviour-lag
    grid", ...) to the setting names pooled into it.  Update variance is the
    coupled (`arm`) update noise averaged over the row's settings, compared as
    a positive quantity.  Relations, as the paper states them: the
    connectivity control is the zero-clipping reference (clip fraction 0,
    resolved when no replicate departs from 0) with the lowest update variance
    (bold: below every stress row, resolved by the paired differences); each
    stress row activates clipping (> 0, resolved by its interval) and has a
    larger update variance than the control (resolved by the paired
    difference); the activated stress's is the paper's note as well (update
    variance increasing from the behaviour-lag grid to the activated stress).  The
    control's zero clipping holds by construction (`ONE_STEP_CONTROL`): its row says
    so and its relation decides nothing.  The ratio quantiles declare none and carry
    no interval.  Finite gradients: the paper prints a count of gradients that were
    all finite; a row reproduces when all of ours are finite too.
    """
    rows = []
    uv = {k: update_variance_values(audit, arm, groups[label]) for label, k in CLIPPING_ROWS.items()}
    stress = [k for k in uv if k != "connectivity_control"]
    for label, key in CLIPPING_ROWS.items():
        names = groups[label]
        ups = [audit.updates[a][s] for a in ("independent", arm) for s in names]
        lo, hi = ratio_quantiles(ups)
        rows.append(Row.quantile_pair(f"{label}: ratio quantiles (2.5%, 97.5%)", f"clipping.{key}.ratio_quantiles",
                                      lo, hi))
        cf_values = np.mean([audit.clip_fraction(a, s) for a in ("independent", arm) for s in names], axis=0)
        cf = estimate(cf_values)
        is_control = key == "connectivity_control"
        clip = (relations.zero("clip-selected fraction = 0 (zero-clipping control)", cf_values).constructed()
                if is_control else Relation.side("clip-selected fraction > 0 (stress activates clipping)", cf.value,
                                                 cf.low, cf.high, above=0.0))
        row = Row.estimate(f"{label}: clip-selected fraction", f"clipping.{key}.clip_selected_fraction", cf, clip)
        rows.append(row.true_by_construction(ONE_STEP_CONTROL) if is_control else row)
        fin = sum(int(u.finite.sum()) for u in ups)
        tot = sum(len(u.finite) for u in ups)
        rows.append(Row.all_finite(f"{label}: finite gradients", f"clipping.{key}.finite_gradients", fin, tot))
        est = estimate(uv[key], audit.exact_noise(arm) if is_control else None)
        if is_control:
            rel = relations.lowest("update variance: control below every stress row", uv, key, stress)
        elif key == "activated_stress":
            rel = relations.ordering("update variance rises: activated stress > behaviour-lag grid > connectivity "
                                     "control", uv, (key, "behavior_lag_grid", "connectivity_control"))
        else:
            rel = relations.above("update variance > connectivity control", uv[key], uv["connectivity_control"])
        rows.append(Row.estimate(f"{label}: update variance ({LABELS[arm]})", f"clipping.{key}.update_variance", est,
                                 rel, positive=True))
    return rows


def frontier_cost_row(front: dict[str, FrontierArm], arm: str) -> Row:
    """The paper's wall time of `arm` on the frontier divided by independent sampling's, beside our ratio of their
    physical draws at the matched budget (the ratio of transitions stands in the reason).  A wall time's size is
    not compared (`comparability`, family "wall times": 1 by construction at matched budgets), and the row says it
    is true by construction.  Independent sampling's own ratio is 1 by definition: not compared."""
    key, ref = f"cost_frontier.{PAPER_KEY[arm]}.wall_time", "independent"
    if arm == ref:
        return Row.not_compared(f"{LABELS[arm]}{WALL_TIME} / independent's", key, NO_REFERENCE_RATIO)
    row = Row.ratio(f"{LABELS[arm]}{WALL_TIME} / independent's", key, f"cost_frontier.{PAPER_KEY[ref]}.wall_time",
                    front[arm].draws / front[ref].draws)
    steps = front[arm].transitions / front[ref].transitions
    own = f"ours is the ratio of physical draws at the matched budget; in transitions it is {steps:.3f}"
    return replace(row, reason=f"{row.reason}; {own}" if row.reason else own).true_by_construction(MATCHED_BUDGET)


def contrast_reading_rows(front: dict[str, FrontierArm], pooled: PooledContrast, root: str) -> dict[str, list[Row]]:
    """Arm -> the frontier's contrast variance under each reading (one row per reading, each naming it): the
    paper's, all roots pooled (`pooled`), first; then the frontier's root alone at the matched budget (`front`).
    Each reading's relation is the paper's (the fixed arms in its order, OSCC-Select the lowest), decided on that
    reading's exact values."""
    # in the words every chapter reads a contrast variance in (`reporting.reading_sets`)
    exact = {reading_sets.CONTRAST_POOLED: {a: pooled.contrast_var(a).exact for a in ROW_ARMS},
             reading_sets.contrast_at(root): {a: front[a].contrast_var.exact for a in ROW_ARMS}}
    estimates = {reading_sets.CONTRAST_POOLED: {a: pooled.contrast_var(a) for a in ROW_ARMS},
                 reading_sets.contrast_at(root): {a: front[a].contrast_var for a in ROW_ARMS}}
    out = {}
    for a in ROW_ARMS:
        cid = f"cost_frontier.{PAPER_KEY[a]}.contrast_variance"
        out[a] = [replace(Row.estimate(f"{LABELS[a]}: contrast variance", cid, estimates[reading][a],
                                       exact_relation("contrast variance", exact[reading], a), positive=True),
                          reading=reading) for reading in exact]
    return out


def reading_sensitivity_rows(readings: dict[str, list[Row]]) -> list[Row]:
    """Every reading's row of the frontier's contrast variances, as sensitivity rows (they name their claim under
    "sensitivity of" and never give a verdict), the reading leading the quantity."""
    return [replace(r, quantity=f"{reading_sets.short(r.reading)}: {r.quantity}").as_sensitivity()
            for rows in readings.values() for r in rows]


def frontier_rows(front: dict[str, FrontierArm], pooled: PooledContrast, root: str) -> list[Row]:
    """tab:physical-cost-frontier: transitions, wall time, contrast variance and noise trace; the budget of physical
    calls is a setting (`paper_settings.frontier_settings`).

    Transitions, wall times and noise traces are not compared in size (`reporting.comparability`: the families
    "transitions", "wall times" and "gradient-noise traces"); a wall time's ratio is 1 by construction at the
    matched budget (`frontier_cost_row`).  The contrast variance is compared under two readings
    (`Row.under_readings`): all roots pooled, the paper's (`pooled`), and the frontier's root alone at the matched
    budget, a sensitivity reading; where they disagree the pooled reading gives the verdict and the row says it
    depends on the reading.  The noise traces are read at the frontier's root `root` alone (a trace needs the
    root policy's gradients at one root).  Relations, as the paper states them: for the fixed arms its prose's
    relation (both partial arms below independent, full lowest), OSCC-Select the lowest (bold), decided on the exact
    values (`exact_relation`).
    """
    rows = []
    readings = contrast_reading_rows(front, pooled, root)
    exact_noise = {a: front[a].noise.exact for a in ROW_ARMS}
    for a in ROW_ARMS:
        f = front[a]
        key = f"cost_frontier.{PAPER_KEY[a]}"
        rows.append(Row.compare(f"{LABELS[a]}: transitions", f"{key}.transitions", f.transitions))
        rows.append(frontier_cost_row(front, a))
        rows.append(Row.under_readings(readings[a], paper_reading=reading_sets.CONTRAST_POOLED))
        rows.append(Row.estimate(f"{LABELS[a]}: gradient-noise trace (root {root!r})", f"{key}.gradient_noise_trace",
                                 f.noise, exact_relation("noise trace", exact_noise, a), positive=True))
    return rows


#: Two-sided 97.5% Student-t quantiles by degrees of freedom (the screen's seed interval).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def screen_rows(results: list[ScreenResult]) -> tuple[list[Row], dict]:
    """The paper's scalar-screen prose: mean P(check) change per arm (t interval over the seeds), gradients,
    clipping.  The paper prints a rise of the check probability (a positive change): the row declares
    "mean change > 0", resolved only when the seed interval lies above 0."""
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
                               relation=Relation.side("P(check) rises: mean change > 0", m, m - half, m + half,
                                                      above=0.0)))
    grads = sum(r.gradients for r in results)
    ok = sum(r.finite_nonzero for r in results)
    clipped = sum(r.clipped_terms for r in results)
    out.append(Row.compare("finite non-zero batch gradients (both arms, all seeds)",
                           "text_bounded.scalar_screen.finite_nonzero_gradients", ok,
                           relation=Relation("every batch gradient finite and non-zero", ok == grads))
               .true_by_construction(f"the screen's settings fix the number of batch gradients ({grads:,}: arms x "
                                     "seeds x iterations x epochs); only that none is infinite or zero is measured"))
    out.append(Row.count("clip-selected terms (both arms, all seeds)",
                         "text_bounded.scalar_screen.selected_clipping", clipped))
    summary.update({"gradients": grads, "finite_nonzero": ok, "clipped_terms": clipped,
                    "terms": sum(r.terms for r in results),
                    "ratio_range": [min(r.ratio_range[0] for r in results), max(r.ratio_range[1] for r in results)]})
    return out, summary


def one_verdict(tables: dict[str, list[Row]]) -> None:
    """Check that every printing of one paper quantity reads the same across the chapter's tables: `unify` over
    all of them together changes no verdict (each table was unified before it was shown).  Raises naming the
    first printing that differs."""
    found = [r for t in tables.values() for r in t]
    for before, after in zip(found, printings.unify(found)):
        if before.verdict != after.verdict:
            raise ValueError(f"{before.claim_id!r} reads {before.verdict!r} in its table but {after.verdict!r} as a "
                             f"printing of {after.printing_of!r}: unify the tables together before showing them.")
