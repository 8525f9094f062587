"""Proposition 3 checked: exact per-state identities and their Monte-Carlo counterparts (chips^2 per logit^2).

For two couplings with equal branch marginals N - N' = 2 sum_{i<j} <g_i, g_j>
(Sigma_ij - Sigma'_ij), and with two actions N = ||g_1||^2 Var(R_1 - R_2).
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.gradient_noise.arms import LABELS
from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.chapters.gradient_noise.geometry import Geometry
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tables import round_frame

PROPOSITION = "0 (identity)"


def proposition3_exact(geom: Geometry) -> "object":
    """Per information state and arm: N(arm) - N(independent), Eq. geometry-difference's right side, residuals.

    Also the binary reduction ||g_1||^2 Var(R_1 - R_2) for two-action roots.
    All from exact covariances; residuals are floating-point rounding only.
    """
    import pandas as pd

    gram = geom.gram()
    out = []
    for k, (own, pub) in enumerate(geom.infos):
        ref = geom.exact["independent"][k].cov
        n_ref = float((gram[k] * ref).sum())
        for arm in PAPER_ARMS[1:]:
            cov = geom.exact[arm][k].cov
            n_arm = float((gram[k] * cov).sum())
            rhs = float(2 * (gram[k] * np.triu(cov - ref, 1)).sum())
            rec = {"own card": own, "public card": "—" if pub < 0 else pub, "arm": arm,
                   "N(arm)": n_arm, "N(ind)": n_ref, "N(arm) - N(ind)": n_arm - n_ref,
                   "2 sum <g_i,g_j> dCov": rhs, "difference residual": (n_arm - n_ref) - rhs}
            if len(geom.actions) == 2:
                g1 = geom.jac[k][:, 0]
                rec["||g1||^2 Var(R1-R2)"] = float(g1 @ g1) * geom.exact[arm][k].contrast_var(0, 1)
                rec["binary residual"] = n_arm - rec["||g1||^2 Var(R1-R2)"]
            out.append(rec)
    return pd.DataFrame(out)


def exact_table(geom: Geometry, digits: int = 6):
    """`proposition3_exact` as the chapter shows it: indexed by information state (own card, public card) and
    arm, the arms named as in the prose, the residuals against their tolerance (`reporting.tables.round_frame`)."""
    table = proposition3_exact(geom)
    table["arm"] = [LABELS[a] for a in table["arm"]]
    return round_frame(table, digits=digits, tiny_in_scientific=True).set_index(["own card", "public card", "arm"])


def proposition3_rows(geom: Geometry, audit: NoiseAudit, tolerance: float = 1e-12) -> list[dict]:
    """Proposition 3 checked exactly and on the Monte-Carlo covariances.

    Exact: the largest |N - N' - 2 sum_{i<j} <g_i,g_j>(Sigma_ij - Sigma'_ij)| over
    information states and arms (independent as Gamma'), and for two actions the
    largest |N - ||g_1||^2 Var(R_1 - R_2)|; both rounding only (tolerance
    relative to N).  Monte Carlo: the binary reduction is algebraic and holds
    for sample covariances too; the difference formula does not, because
    sample covariances of two arms have slightly different diagonals.  Its
    residual is exactly sum_i ||g_i||^2 (S_ii - S'_ii), whose expectation is
    zero (marginal preservation); its paired-bootstrap interval should cover 0.
    The Monte-Carlo sums over states use the audit's weights.
    """
    table = proposition3_exact(geom)
    scale = max(float(table["N(arm)"].abs().max()), 1.0)
    diff = float(table["difference residual"].abs().max())
    rows = [Row.identity("exact: max |N(arm) - N(ind) - 2 Σ<g_i,g_j> ΔCov| over I and arms", PROPOSITION, diff,
                         tolerance * scale)]
    if "binary residual" in table:
        b = float(table["binary residual"].abs().max())
        rows.append(Row.identity("exact: max |N - ||g1||² Var(R1-R2)| over I and arms", PROPOSITION, b,
                                 tolerance * scale))
    gram = geom.gram()
    ref = audit.boot.cov("R:independent")
    for arm in PAPER_ARMS[1:]:
        cov = audit.boot.cov(f"R:{arm}")
        lhs = audit.noise(arm) - audit.noise("independent")
        rhs = 2 * np.einsum("nij,rnij->rn", np.triu(np.ones_like(gram[0]), 1) * gram, cov - ref) @ audit.weights
        est = estimate(lhs - rhs, 0.0)
        rows.append(Row.covers(f"Monte Carlo, {arm}: N̂ - N̂(ind) - 2 Σ<g_i,g_j> ΔĈov", PROPOSITION, est))
    if len(geom.actions) == 2:
        worst = 0.0
        for arm in PAPER_ARMS:
            c = audit.boot.cov(f"R:{arm}")[0]
            g1 = np.einsum("nk,nk->n", geom.jac[:, :, 0], geom.jac[:, :, 0])
            binary = float(audit.weights @ (g1 * (c[:, 0, 0] + c[:, 1, 1] - 2 * c[:, 0, 1])))
            worst = max(worst, abs(float(audit.noise(arm)[0]) - binary))
        rows.append(Row.identity("Monte Carlo: max |N̂ - Σ w ||g1||² V̂ar(R1-R2 | I)| over arms", PROPOSITION, worst,
                                 tolerance * scale))
    return rows
