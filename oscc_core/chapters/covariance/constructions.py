"""Why our reduction is smaller: exact contrast variances under other constructions than ours.

The paper leaves the continuation policy (which also defines the root law)
and the continuation budget open.  These functions enumerate the exact
contrast variance of the four paper arms (chips^2), their ratio full /
independent (unitless) and the reduction (percent) for several
continuations, roots and budgets, measure the distance of each to the
paper's numbers, and rerun the headline comparison by Monte Carlo under the
CFR+ continuation (the CFR+ alternative).
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.chapters.covariance.pair_rows import PAPER_ARM_VARIANCE, pair_relation, row
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.cfr import cfr_plus
from oscc_core.games import LEDUC, get_game
from oscc_core.method.stats import contrast_pair
from oscc_core.policy import resolve_policy, table_to_policy
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

PAPER_RATIO = "main_uncertainty.variance_ratio.cp_grpo_paired"
#: Roots of the construction grid: round one for each player, round two.
GRID_ROOTS = ("", "1", "2", "11|")
#: Budgets of the exact budget grid.
GRID_BUDGETS = (1, 2, 4, 8, 16, 32, 64)
#: CFR+ iterations of the weak-policy construction.
WEAK_CFR_ITERATIONS = 10


# --- the continuations compared ------------------------------------------------------------

def cfr_continuation(policy, source, cfr_iterations: int, game: str = LEDUC):
    """The CFR+ average policy after `cfr_iterations`: the run's own continuation when it is CFR+."""
    return policy if source == "cfr_plus" else cfr_plus(game, cfr_iterations)


def deterministic_policies(base_policy, game: str = LEDUC) -> dict:
    """Two deterministic continuations: the argmax of `base_policy` and 'always check/call'."""
    g = get_game(game)
    table = resolve_policy(g, base_policy)
    argmax = np.zeros_like(table)
    argmax[np.arange(len(table)), table.argmax(1)] = 1.0
    call = np.zeros_like(table)
    call[:, 1] = 1.0                       # Call (check) is legal at every Leduc decision
    return {"argmax of CFR+": table_to_policy(g, argmax), "always check/call": table_to_policy(g, call)}


def main_continuations(cfr_policy, cfr_iterations: int) -> dict:
    """Uniform (our default) and the near-equilibrium CFR+ policy, by display name."""
    return {"uniform": "uniform", f"CFR+ ({cfr_iterations} it.)": cfr_policy}


def continuations(cfr_policy, cfr_iterations: int, game: str = LEDUC) -> dict:
    """Every continuation of the construction grid: uniform, CFR+, weak CFR+ and two deterministic policies."""
    return {**main_continuations(cfr_policy, cfr_iterations),
            f"CFR+ ({WEAK_CFR_ITERATIONS} it.)": cfr_plus(game, WEAK_CFR_ITERATIONS),
            **deterministic_policies(cfr_policy, game)}


# --- exact reductions and their distance to the paper -----------------------------------------

def exact_reduction(root: str, continuation, budget: int = 1, game: str = LEDUC) -> dict | None:
    """Exact contrast variances of the four paper arms and the full/independent ratio; None if unreachable."""
    try:
        m = arm_moments(game, root, continuation, budget=budget)
    except ValueError:
        return None
    i, j = contrast_pair(m["full"].actions)
    v = {a: m[a].contrast_var(i, j) for a in PAPER_ARMS}
    ratio = v["full"] / v["independent"] if v["independent"] > 0 else float("nan")
    return {"contrast": f"{m['full'].actions[i]} - {m['full'].actions[j]}", **v, "ratio": ratio,
            "reduction_percent": 100 * (1 - ratio)}


def level_distance(variances: dict) -> float:
    """Mean |log(ours / paper)| over the four arms' contrast variances (0 = the paper's four numbers)."""
    terms = []
    for arm, cid in PAPER_ARM_VARIANCE.items():
        v = variances[arm]
        terms.append(abs(math.log(v / float(claims.claim(cid)))) if v > 0 else float("inf"))
    return float(np.mean(terms))


def construction_grid(continuations: dict, roots=GRID_ROOTS, budget: int = 1):
    """Exact reduction for every (continuation, root), with its distance to the paper's numbers.

    Columns: the four arms' exact contrast variances (chips^2), the ratio full /
    independent, the reduction (percent), the gap |ratio - paper ratio| and the
    level distance (``level_distance``).  Unreachable roots are listed as such.
    """
    import pandas as pd

    paper_ratio = float(claims.claim(PAPER_RATIO))
    out = []
    for name, policy in continuations.items():
        for root in roots:
            r = exact_reduction(root, policy, budget)
            if r is None:
                out.append({"continuation": name, "root": repr(root), "contrast": UNREACHABLE})
                continue
            out.append({"continuation": name, "root": repr(root), **r,
                        "ratio gap": abs(r["ratio"] - paper_ratio), "level distance": level_distance(r)})
    return pd.DataFrame(out)


#: The grids' columns as the chapter's tables show them: the arms named as in the prose, the reduction with its
#: unit (words wrap in a narrow column where "continuation_only" and "reduction_percent" would not).
SHOWN_COLUMNS = {"root_only": "root-only", "continuation_only": "continuation-only",
                 "reduction_percent": "reduction (%)"}


#: The contrast of a grid row whose root the continuation never reaches.
UNREACHABLE = "unreachable"


def shown(frame):
    """A grid of this module (`construction_grid`, `mixed_construction_grid`, `budget_grid`) with its columns
    named for the page (`SHOWN_COLUMNS`); the grid itself keeps the record's names.  Where every reachable root
    has the same contrast (the prose names it), the contrast column goes and an unreachable root says so in its
    label, so that the table fits the text column."""
    out = frame.rename(columns=SHOWN_COLUMNS)
    if {"contrast", "root"} <= set(out.columns):
        unreachable = out["contrast"] == UNREACHABLE
        if out.loc[~unreachable, "contrast"].nunique() <= 1:
            out.loc[unreachable, "root"] = out.loc[unreachable, "root"] + f" ({UNREACHABLE})"
            out = out.drop(columns="contrast")
    return out


def nearest(grid, column: str) -> dict:
    """The grid row with the smallest value of `column` (ties: first), as a plain dict."""
    valid = grid[grid[column].notna()]
    return valid.loc[valid[column].idxmin()].to_dict()


def nearest_glue_values(grid) -> dict:
    """The constructions nearest the paper's ratio (``near_ratio_*``) and four variances (``near_level_*``)."""
    out = {}
    for prefix, column in (("near_ratio", "ratio gap"), ("near_level", "level distance")):
        r = nearest(grid, column)
        out[f"{prefix}_name"] = f"{r['continuation']} at root {r['root']}"
        for key in (*PAPER_ARMS, "ratio", "reduction_percent"):
            out[f"{prefix}_{key}"] = float(r[key])
    return out


def budget_grid(root: str, continuations: dict, budgets=GRID_BUDGETS):
    """Exact reduction as the continuation budget k grows, for each continuation (variances per rollout)."""
    import pandas as pd

    out = []
    for name, policy in continuations.items():
        for k in budgets:
            r = exact_reduction(root, policy, k)
            if r is not None:
                out.append({"continuation": name, "budget": k, "independent (per rollout)": r["independent"] / k ** 2,
                            "full (per rollout)": r["full"] / k ** 2, "ratio": r["ratio"],
                            "reduction_percent": r["reduction_percent"],
                            "ratio gap": abs(r["ratio"] - float(claims.claim(PAPER_RATIO)))})
    return pd.DataFrame(out)


def mixed_construction_grid(root: str, continuations: dict, top: int | None = None):
    """Exact variances when the independent arm and the coupled arms use *different* continuations.

    A properly paired experiment uses one continuation for every arm.  This
    table asks which mismatched combination (independent arm under
    continuation X, root_only / continuation_only / full under Y) comes
    closest to the paper's four variances; rows sorted by level distance,
    the first `top` kept.
    """
    import pandas as pd

    exact = {name: exact_reduction(root, policy) for name, policy in continuations.items()}
    exact = {k: v for k, v in exact.items() if v is not None}
    out = []
    for x, ex in exact.items():
        for y, ey in exact.items():
            v = {"independent": ex["independent"], "root_only": ey["root_only"],
                 "continuation_only": ey["continuation_only"], "full": ey["full"]}
            ratio = v["full"] / v["independent"] if v["independent"] > 0 else float("nan")
            out.append({"independent arm under": x, "coupled arms under": y, **v, "ratio": ratio,
                        "reduction_percent": 100 * (1 - ratio), "level distance": level_distance(v)})
    df = pd.DataFrame(out).sort_values(["level distance", "independent arm under", "coupled arms under"],
                                       kind="mergesort").reset_index(drop=True)
    df.index = pd.RangeIndex(1, len(df) + 1, name="rank")      # 1: the nearest to the paper's four variances
    return df if top is None else df.head(top)


def mixed_glue_values(mixed) -> dict:
    """The best mismatched construction (first row of `mixed_construction_grid`), by glue name."""
    best = mixed.iloc[0].to_dict()
    out = {"mixed_x": best["independent arm under"], "mixed_y": best["coupled arms under"]}
    for key in ("independent", "full", "ratio", "reduction_percent", "level distance"):
        out[f"mixed_{key.replace(' ', '_')}"] = float(best[key])
    return out


# --- the CFR+ alternative, by Monte Carlo ------------------------------------------------------

def cfr_alternative_audit(root: str, n_groups: int, seed: int, cfr_policy, device: str,
                          n_bootstrap: int) -> PairedAudit:
    """The headline comparison rerun with the CFR+ continuation (bootstrap purpose ``fixed_root/cfr_plus``)."""
    return paired_audit(root, HEADLINE_ARMS, n_groups, seed, cfr_policy, device, n_bootstrap, "fixed_root/cfr_plus")


def cfr_alternative_rows(audit: PairedAudit) -> list[Row]:
    """The CFR+ alternative beside the paper's headline: variances, ratio and covariance (the relations of the
    headline rows, resolved by this audit's intervals).  These are sensitivity rows (`Row.as_sensitivity`): the
    headline claims are compared with the chapter's own construction, and these never give them a verdict."""
    rows = [
        row("CFR+: independent variance", "main.independent.variance",
            audit.contrast_var("independent"), pair_relation("independent_variance", audit), positive=True),
        row("CFR+: full variance", "main.cp_grpo_paired.variance",
            audit.contrast_var("full"), pair_relation("paired_variance", audit),
            "main_uncertainty.contrast_variance.interval", positive=True),
        row("CFR+: variance ratio", PAPER_RATIO, audit.ratio(), pair_relation("variance_ratio", audit),
            "main_uncertainty.variance_ratio.interval", positive=True),
        row("CFR+: full covariance", "main_uncertainty.check_bet_covariance.cp_grpo_paired",
            audit.covariance("full"), pair_relation("covariance", audit),
            "main_uncertainty.check_bet_covariance.interval"),
    ]
    return [r.as_sensitivity() for r in rows]
