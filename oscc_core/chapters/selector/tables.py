"""The tables the selector notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units are those of the rows they show: probabilities, chips^2 (covariances,
contrast variances), noise units (chips^2 per unit logit^2) and counts.
"""
from __future__ import annotations

from oscc_core.method.strata import stratum_of
from oscc_core.reporting.tables import comparison_frame, round_frame

from .calibration import Calibration
from .exact_root import ExactRoot, exact_gains
from .root_policy import RootPolicy


def _frame(records):
    import pandas as pd

    return pd.DataFrame(records)


def _rounded(records, index=None, drop=()):
    frame = round_frame(_frame(records).drop(columns=list(drop)), fill_missing=False)
    return frame if index is None else frame.set_index(index)


def policy_frame(policy: RootPolicy, exact: ExactRoot):
    """The root policy at each information state, with <g_Call, g_Raise> and the stratum (unrounded)."""
    out = []
    for info in exact.infos:
        p = policy.probs[info.infostate]
        gram = policy.jacobian(info.infostate).T @ policy.jacobian(info.infostate)
        rec = {"own card": info.own_card, "stratum": stratum_of(info.own_card), "weight": info.weight}
        rec.update({f"pi({a})": float(x) for a, x in zip(policy.actions, p)})
        if "Call" in policy.actions and "Raise" in policy.actions:
            i, j = policy.actions.index("Call"), policy.actions.index("Raise")
            rec["<g_Call, g_Raise>"] = float(gram[i, j])
        out.append(rec)
    return _frame(out)


def policy_table(policy: RootPolicy, exact: ExactRoot):
    return round_frame(policy_frame(policy, exact), fill_missing=False).set_index("own card")


def bounds_table(bounds: dict):
    """B, the pilot quantile and the natural bound per root (noise units)."""
    return round_frame(_frame(bounds).T, fill_missing=False)


def support_table(support: list[dict]):
    return _rounded(support, ["action support", "row"], drop=["choice"])


def others_table(rows: list[dict]):
    return _rounded(rows, ["root policy", "stratum"])


def certificate_frame(cal: Calibration, exact: ExactRoot, policy: RootPolicy):
    """Per stratum and candidate: mean score, lower bound, exact gain, certified; with the chosen arms."""
    gains = exact_gains(exact, policy)
    out = []
    for z, certs in cal.certificates.items():
        for c in certs:
            out.append({"stratum": z, "candidate": c.arm, "blocks": c.blocks, "mean clipped score": c.mean_gain,
                        "gain LCB": c.lower_bound, "exact gain": gains[z][c.arm],
                        "clipped blocks": c.clipped_scores, "certified": c.certified,
                        "OSCC-Select": cal.oscc[z], "RV-Select": cal.rv[z]})
    return _frame(out)


def certificate_table(cal: Calibration, exact: ExactRoot, policy: RootPolicy):
    return round_frame(certificate_frame(cal, exact, policy), fill_missing=False).set_index(["stratum", "candidate"])


def regime_table(rows: list[dict]):
    return _rounded(rows, ["regime", "arm"])


def choices_table(choices: list[dict]):
    return _frame(choices).set_index("regime")


def sweep_table(rows: list[dict]):
    return _rounded(rows, ["regime", "groups per stratum"], drop=["repetitions"])


def sufficient_table(rows: list[dict]):
    return _rounded(rows, "stratum")


def scan_table(summary):
    return round_frame(summary, fill_missing=False)


def comparison_table(rows: list):
    """Paper-beside-ours rows indexed by quantity."""
    return comparison_frame(rows).set_index("quantity")
