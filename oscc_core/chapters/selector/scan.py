"""Where the two criteria disagree: the exact argmins over a grid of root policies at a three-action root.

For each root policy p on a grid of the probability simplex (the same p at
every information state): the exact noise of each arm (noise units), its
argmin, the argmin of the mean pairwise contrast variance (chips^2; it does
not depend on p) and the noise excess of the latter's arm (percent).
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.policy_gradient import policy_jacobian
from oscc_core.method.selectors import oracle_select

from .exact_root import ExactRoot
from .root_policy import RootPolicy


def simplex_grid(step: float) -> list[tuple[float, ...]]:
    """Interior points of the 3-action probability simplex on a grid of `step` (all entries >= step)."""
    k = round(1 / step)
    return [(i / k, j / k, (k - i - j) / k) for i in range(1, k) for j in range(1, k - i)]


def policy_scan(exact: ExactRoot, step: float = 0.05):
    """For each root policy p on the grid: the exact argmin of the noise trace and of the mean pairwise
    contrast variance, and the noise of each arm.  Returns a DataFrame in grid order."""
    import pandas as pd

    rv_arm = oracle_select({a: exact.mpcv(a) for a in PAPER_ARMS})
    ci, ri = exact.actions.index("Call"), exact.actions.index("Raise")
    out = []
    for p in simplex_grid(step):
        pol = RootPolicy("scan", exact.actions, {i.infostate: np.asarray(p) for i in exact.infos})
        noise = {a: exact.noise(a, pol) for a in PAPER_ARMS}
        arg = oracle_select(noise)
        g = policy_jacobian(np.asarray(p))
        gram = g.T @ g
        rec = {f"pi({a})": x for a, x in zip(exact.actions, p)}
        rec.update({"<g_Call, g_Raise>": float(gram[ci, ri]), "noise argmin": arg, "contrast-variance argmin": rv_arm,
                    "differ": arg != rv_arm,
                    "noise excess of RV's arm (%)": 100 * (noise[rv_arm] - noise[arg]) / noise[arg]})
        rec.update({f"N({a})": noise[a] for a in PAPER_ARMS})
        out.append(rec)
    return pd.DataFrame(out)


def scan_summary(scan):
    """Per (noise argmin, contrast-variance argmin): policies, the range of pi(Fold), the largest noise excess."""
    return scan.groupby(["noise argmin", "contrast-variance argmin"]).agg(
        policies=("differ", "size"), min_pi_fold=("pi(Fold)", "min"), max_pi_fold=("pi(Fold)", "max"),
        max_noise_excess_pct=("noise excess of RV's arm (%)", "max")).reset_index()


def scan_glue(scan) -> dict:
    """Glue name -> value: grid size, how many policies differ, the smallest pi(Fold) among them, argmin counts,
    and how many policies make continuation-only coupling the noise minimiser."""
    differ = scan["differ"]
    return {"scan_points": len(scan), "scan_differ": int(differ.sum()),
            "scan_differ_pct": 100 * float(differ.mean()),
            "scan_min_fold": float(scan.loc[differ, "pi(Fold)"].min()) if differ.any() else float("nan"),
            "scan_argmins": ", ".join(f"{k} ({v})" for k, v in scan.groupby("noise argmin").size().items()),
            "scan_continuation_only": int((scan["noise argmin"] == "continuation_only").sum())}
