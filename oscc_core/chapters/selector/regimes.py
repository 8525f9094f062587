"""The three covariance regimes (tab:selector-stress): one continuation map each, at the two-action root.

Per (map, arm): the held-out covariance of the two branches and its exact
value (chips^2), the exact conditional covariance E_I Cov(R_1, R_2 | I),
the contrast variance (chips^2), the noise trace (noise units), the exact
gain over the independent arm and the gain's simultaneous lower bound per
stratum from the calibration sample.  The same pools feed the
calibration-size sweep.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.chance_maps import MAPS
from oscc_core.method.policy_gradient import mean_pairwise_contrast_variance
from oscc_core.method.selectors import FALLBACK
from oscc_core.reporting import claims
from oscc_core.reporting.paper_refs import readable
from oscc_core.reporting.rows import Relation, Row

from .action_support import side_of_independent
from .calibration import Calibration, calibrate, label
from .exact_root import ExactRoot, exact_rv_selection, exact_selection
from .pools import Pool, collect_pool, estimated_noise, pool_size_for
from .root_policy import RootPolicy
from .sweep import sweep

REGIMES = {"semantic": "positive", "relabelled": "near-zero", "antithetic": "negative"}


def regime_name(mp: str) -> str:
    """A map's regime with the map, e.g. "positive (semantic)": the head of its comparison rows' quantities."""
    return f"{REGIMES[mp]} ({mp})"


@dataclass
class Regimes:
    """Per map: the calibration, the held-out rows and choices; and the sweep rows of every map."""

    cals: dict                          # map -> Calibration
    rows: list[dict]                    # regime_rows
    choices: list[dict]                 # regime_selection_rows
    sweep_rows: list[dict]              # sweep.sweep rows, map by map


def regimes(p, exacts: dict[str, ExactRoot], policy: RootPolicy, bound: float, semantic_held_out: Pool) -> Regimes:
    """Collect one calibration pool per map at `binary_root` (large enough for the sweep), calibrate on it,
    run the calibration-size sweep on it, and evaluate on held-out groups (the semantic map's are given)."""
    root, cont = p.binary_root, p.continuation_policy
    n_sweep = max(pool_size_for(root, cont, max(p.sweep_sizes), p.sweep_repetitions),
                  pool_size_for(root, cont, p.calibration_groups, 1))
    cals, sweep_rows, held_out = {}, [], {}
    for mp in MAPS:
        pool = collect_pool(root, n_sweep, p.seed, cont, p.device, mp, "calibration")
        cals[mp] = calibrate(pool, exacts[mp], policy, p.calibration_groups, p.block_size, bound, p.delta,
                             p.cost_weight, noise_weights=p.noise_weights)
        sweep_rows += [{"map": mp, "regime": REGIMES[mp], **r} for r in sweep(
            pool, exacts[mp], policy, p.sweep_sizes, p.sweep_repetitions, p.block_size, bound, p.delta,
            p.cost_weight)]
        del pool
        held_out[mp] = semantic_held_out if mp == "semantic" else collect_pool(root, p.eval_groups, p.seed, cont,
                                                                               p.device, mp, "audit")
    rows = regime_rows(held_out, exacts, policy, cals, noise_weights=p.noise_weights)
    return Regimes(cals, rows, regime_selection_rows(held_out, exacts, policy, cals), sweep_rows)


def regime_rows(pools: dict, exacts: dict, policy: RootPolicy, cals: dict[str, Calibration], *,
                noise_weights: str) -> list[dict]:
    """One row per (map, arm): covariance, contrast variance, noise, gain and its lower bound per stratum."""
    out = []
    pair = branch_pair(exacts["semantic"].actions)
    for mp, pool in pools.items():
        ex, cal = exacts[mp], cals[mp]
        ind_means = pool.returns[FALLBACK][pool.valid].mean(0)
        for arm in PAPER_ARMS:
            cov = np.cov(pool.returns[arm][pool.valid], rowvar=False, ddof=1)
            mean = pool.returns[arm][pool.valid].mean(0)
            _, ex_cov = ex.moments(arm)
            diff = pool.returns[arm][pool.valid] - pool.returns[FALLBACK][pool.valid]     # paired by group
            half = 1.96 * diff.std(0, ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.full(diff.shape[1], np.inf)
            rec = {"map": mp, "regime": REGIMES[mp], "arm": arm,
                   "marginal difference": float(np.max(np.abs(mean - ind_means))),
                   "marginal difference 95% bound": float(np.max(np.abs(mean - ind_means) + half)),
                   "covariance": float(cov[pair]), "exact covariance": float(ex_cov[pair]),
                   "exact conditional covariance": ex.conditional_cov(arm, *pair),
                   "contrast variance": mean_pairwise_contrast_variance(cov), "exact contrast variance": ex.mpcv(arm),
                   "noise trace": estimated_noise(pool, ex, policy, arm, weights=noise_weights),
                   "exact noise trace": ex.noise(arm, policy),
                   "exact gain": ex.noise(FALLBACK, policy) - ex.noise(arm, policy),
                   "physical draws per group": float(pool.draws[arm][pool.valid].mean()),
                   "physical draws (calibration)": sum(cal.arm_draws[arm].values())}
            for z in ex.strata():
                c = next((c for c in cal.certificates[z] if c.arm == arm), None)
                rec[f"gain LCB {z}"] = 0.0 if c is None else c.lower_bound
            out.append(rec)
    return out


def branch_pair(actions: list[str]) -> tuple[int, int]:
    """The two branches whose covariance a coupling changes: both at a two-action root, else Call and Raise."""
    if len(actions) == 2:
        return 0, 1
    return actions.index("Call"), actions.index("Raise")


def regime_selection_rows(pools: dict, exacts: dict, policy: RootPolicy, cals: dict) -> list[dict]:
    """Per map: OSCC-Select's, RV-Select's and Oracle-Select's choice, and RV's with exact covariances."""
    out = []
    for mp in pools:
        ex, cal = exacts[mp], cals[mp]
        out.append({"map": mp, "regime": REGIMES[mp], "OSCC-Select": label(cal.oscc), "RV-Select": label(cal.rv),
                    "Oracle-Select": label(exact_selection(ex, policy)),
                    "RV with exact covariances": label(exact_rv_selection(ex))})
    return out


REGIME_CLAIMS = {("semantic", "independent"): "selector_stress.positive.independent",
                 ("semantic", "full"): "selector_stress.positive.full",
                 ("relabelled", "full"): "selector_stress.near_zero.full",
                 ("antithetic", "full"): "selector_stress.negative.full",
                 ("antithetic", "independent"): "selector_stress.fallback.independent"}


#: Why the independent rows' marginal difference and gain bound are 0 whatever we measure.
INDEPENDENT_ITSELF = ("our marginal difference is an arm's held-out branch means minus the independent arm's, so the "
                      "independent arm's is its means minus themselves, 0 by definition (the paper prints a non-zero "
                      "value for its independent rows, so it measures them against another reference)")
INDEPENDENT_GAIN = "the independent arm's gain over itself, and so its bound, is 0 by definition"
#: The paper's equivalence margin of a marginal difference (chips), predeclared in its marginal-preservation gate.
EQUIVALENCE_MARGIN = 0.05


#: The exact marginal difference of every admissible map and arm: marginal preservation (checked by enumeration).
EXACT_MARGINAL_DIFFERENCE = 0.0


def marginal_equivalence(row: dict, coupled: bool) -> Relation:
    """The paper's equivalence decision for a marginal difference, |difference| < 0.05 chips, decided on the exact
    difference (a relation with an exact value is decided on it): 0 for every map and arm, by marginal
    preservation for a coupled arm and by definition for the independent arm against itself, so it holds by
    construction and decides nothing; the Monte-Carlo estimate stays in the row beside it (`row` is kept for the
    callers that pass the arm's record)."""
    text = f"|marginal difference| < {EQUIVALENCE_MARGIN:g} (exact difference {EXACT_MARGINAL_DIFFERENCE:g})"
    return Relation(text, abs(EXACT_MARGINAL_DIFFERENCE) < EQUIVALENCE_MARGIN).constructed()


def regime_comparison(rows: list[dict], g1_norm2: float | None) -> list[Row]:
    """tab:selector-stress beside ours.

    The paper's 'fallback' row is matched with our independent arm under the antithetic map.  Its
    gain bound is in chips^2; ours (noise units) is divided by ||g_1||^2 (`g1_norm2`, only when the
    root policy is the same at every information state of a two-action root, where N = ||g_1||^2
    Var(R_1 - R_2)); the largest bound over the three strata (the most favourable stratum) is shown.
    Relations: contrast variance, covariance and noise on the same side of the independent arm as in
    the paper, decided on the exact values (enumeration), so `resolved` is None; the gain bound with the
    paper's sign (the selector's rule: full coupling when it is positive), on the calibration's bound; the
    marginal difference within the paper's equivalence margin, 0.05 chips, decided on the exact difference 0
    (`marginal_equivalence`: it holds by construction, and every marginal difference is a Monte-Carlo estimate of
    0, which `reporting.comparability` does not compare in size).  The independent arm's own rows declare no
    ordering; its marginal difference and gain bound are 0 by definition (`Row.true_by_construction`).
    """
    by = {(r["map"], r["arm"]): r for r in rows}
    paper_ind = "selector_stress.positive.independent"
    out = []
    for (mp, arm), cid in REGIME_CLAIMS.items():
        r, ind = by[(mp, arm)], by[(mp, "independent")]
        name = f"{regime_name(mp)}, {arm}"
        coupled = arm != "independent"

        def side(col, exact_col, cid=cid, r=r, ind=ind, coupled=coupled, arm=arm):
            if not coupled:
                return None
            return side_of_independent(arm, exact_col, float(claims.claim(f"{cid}.{col}")),
                                       float(claims.claim(f"{paper_ind}.{col}")), r[exact_col], ind[exact_col])

        out.append(Row.compare(f"{name}: contrast variance", f"{cid}.contrast_variance", r["contrast variance"],
                               relation=side("contrast_variance", "exact contrast variance"),
                               exact=r["exact contrast variance"]))
        out.append(Row.compare(f"{name}: covariance", f"{cid}.covariance", r["covariance"],
                               relation=side("covariance", "exact covariance"), exact=r["exact covariance"]))
        marginal = Row.compare(f"{name}: marginal difference (chips)", f"{cid}.marginal_difference",
                               r["marginal difference"], relation=marginal_equivalence(r, coupled),
                               exact=EXACT_MARGINAL_DIFFERENCE)
        out.append(marginal if coupled else marginal.true_by_construction(INDEPENDENT_ITSELF))
        out.append(Row.compare(f"{name}: gradient-noise trace", f"{cid}.gradient_noise_trace", r["noise trace"],
                               relation=side("gradient_noise_trace", "exact noise trace"),
                               exact=r["exact noise trace"]))
        paper_lcb = float(claims.claim(f"{cid}.simult_gain_lcb"))
        if not coupled:
            out.append(Row.compare(f"{name}: gain LCB (0 by definition)", f"{cid}.simult_gain_lcb", 0.0,
                                   exact=0.0).true_by_construction(INDEPENDENT_GAIN))
        elif g1_norm2:
            lcb = max(r[k] for k in r if k.startswith("gain LCB")) / g1_norm2
            out.append(Row.compare(f"{name}: largest stratum gain LCB (chips^2)", f"{cid}.simult_gain_lcb", lcb,
                                   relation=Relation(f"gain LCB {'>' if paper_lcb > 0 else '<='} 0",
                                                     (paper_lcb > 0) == (lcb > 0))))
        out.append(Row.compare(f"{name}: physical draws (calibration)", f"{cid}.physical_cost",
                               r["physical draws (calibration)"]))
    return out


PAPER_REGIME_SELECTION = {"semantic": "full", "relabelled": "independent", "antithetic": "independent"}


def selection_claim_rows(regime_choices: list[dict]) -> list[dict]:
    """The paper's selected coupling per regime (a string in tab:selector-stress) beside OSCC-Select's."""
    out = []
    for r in regime_choices:
        out.append(Row.same_text(f"{regime_name(r['map'])}: OSCC-Select's coupling", PAPER_REGIME_SELECTION[r["map"]],
                                 r["OSCC-Select"], f"{readable('tab:selector-stress')} (selected coupling column)",
                                 exact=r["Oracle-Select"]))
    return out


def by_regime(rows: list[Row]) -> dict[str, list[Row]]:
    """The regime comparison rows per regime (`regime_name`, maps in `MAPS` order), each quantity without the
    regime its table's caption names ("full: covariance")."""
    out = {}
    for mp in MAPS:
        head = regime_name(mp)
        part = [replace(r, quantity=r.quantity[len(head):].lstrip(",: ")) for r in rows if r.quantity.startswith(head)]
        if part:
            out[head] = part
    return out


def regime_glue(run: Regimes) -> dict:
    """Glue name -> value: exact conditional covariances and gains, and the selectors' choices, per map."""
    by_regime = {(r["map"], r["arm"]): r for r in run.rows}
    out = {}
    for mp in MAPS:
        for arm in ("continuation_only", "full"):
            out[f"ccov_{mp}_{arm}"] = by_regime[(mp, arm)]["exact conditional covariance"]
            out[f"gain_{mp}_{arm}"] = by_regime[(mp, arm)]["exact gain"]
        out[f"oscc_{mp}"] = next(c for c in run.choices if c["map"] == mp)["OSCC-Select"]
        out[f"oracle_{mp}"] = next(c for c in run.choices if c["map"] == mp)["Oracle-Select"]
    return out
