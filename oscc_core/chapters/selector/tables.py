"""The tables the selector notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units are those of the rows they show: probabilities, chips^2 (covariances,
contrast variances), noise units (chips^2 per unit logit^2) and counts.
"""
from __future__ import annotations

from oscc_core.method.strata import stratum_of
from oscc_core.reporting.claims import NOT_COMPARED
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


def _grouped(frame, headers: dict):
    """`frame` with two header rows: column -> (group, short name) from `headers`, in that order; a group's name
    spans its columns, so each column's own header stays short."""
    import pandas as pd

    out = frame[list(headers)].copy()
    out.columns = pd.MultiIndex.from_tuples(list(headers.values()))
    return out


#: The held-out table's columns under two header rows (units in the chapter's prose).
SUPPORT_HEADERS = {"selected arm": ("", "selected arm"),
                   "contrast variance (mean pairwise)": ("contrast variance", "estimate"),
                   "exact contrast variance": ("contrast variance", "exact"),
                   "gradient-noise trace": ("gradient-noise trace", "estimate"),
                   "exact noise trace": ("gradient-noise trace", "exact"),
                   "physical draws": ("physical draws", "calibration"),
                   "held-out draws per group": ("physical draws", "per held-out group")}
#: The other-root-policies table's columns: exact noise per arm, then each selector's choice.
OTHERS_HEADERS = {"N(independent)": ("exact noise trace", "independent"),
                  "N(root_only)": ("exact noise trace", "root-only"),
                  "N(continuation_only)": ("exact noise trace", "continuation-only"),
                  "N(full)": ("exact noise trace", "full"),
                  "OSCC-Select": ("selected arm", "OSCC"), "RV-Select": ("selected arm", "RV"),
                  "Oracle-Select": ("selected arm", "Oracle")}
#: The calibration-size sweep in two tables: the certificate, then false selection and cost.
SWEEP_HEADERS = ({"blocks": ("certificate", "blocks"), "radius r_n": ("certificate", "radius r_n"),
                  "certification rate": ("certificate", "certification rate"),
                  "median full gain LCB": ("certificate", "median full-arm LCB"),
                  "median full gain LCB low": ("certificate", "median 95% low"),
                  "median full gain LCB high": ("certificate", "median 95% high"),
                  "noise regret": ("selection", "noise regret"), "modal selection": ("selection", "modal choice")},
                 {"false-selection rate": ("false selection", "per decision"),
                  "family-wise false-selection rate": ("false selection", "family-wise"),
                  "family-wise false selections": ("false selection", "family-wise count"),
                  "family-wise upper 95%": ("false selection", "family-wise upper 95%"),
                  "physical draws": ("physical draws", "per repetition"),
                  "physical draws per stratum and arm": ("physical draws", "per stratum and arm")})


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
    """The held-out rows of both roots: the selected arm, contrast variance and noise (estimate and exact), and
    the physical draws (on the calibration groups, and per held-out group)."""
    return _grouped(_rounded(support, ["action support", "row"], drop=["choice"]), SUPPORT_HEADERS)


def others_table(rows: list[dict]):
    """Per root policy and stratum: the exact noise of each arm and the three selectors' choices."""
    return _grouped(_rounded(rows, ["root policy", "stratum"]), OTHERS_HEADERS)


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


#: The three-regime table in two, each under two header rows, so that each fits the text column: how the coupling
#: moves the branches (marginal difference, covariance, contrast variance), then the noise, the gain and its bound.
REGIME_HEADERS = ({"marginal difference": ("marginal difference", "estimate"),
                   "marginal difference 95% bound": ("marginal difference", "95% bound"),
                   "covariance": ("covariance", "estimate"), "exact covariance": ("covariance", "exact"),
                   "exact conditional covariance": ("covariance", "exact conditional"),
                   "contrast variance": ("contrast variance", "estimate"),
                   "exact contrast variance": ("contrast variance", "exact")},
                  {"noise trace": ("noise trace", "estimate"), "exact noise trace": ("noise trace", "exact"),
                   "exact gain": ("gain", "exact"), "gain LCB J": ("gain LCB", "J"), "gain LCB Q": ("gain LCB", "Q"),
                   "gain LCB K": ("gain LCB", "K"), "physical draws per group": ("physical draws", "per group"),
                   "physical draws (calibration)": ("physical draws", "calibration")})
#: The arms as the chapter's prose and figures name them.
ARM_WORDS = {"root_only": "root-only", "continuation_only": "continuation-only"}


def regime_tables(rows: list[dict]) -> list:
    """The three covariance regimes by regime (with its continuation map) and arm, in two tables (`REGIME_HEADERS`):
    the coupling's effect on the branches, then the noise, the gain with its lower bounds, and the cost."""
    frame = _frame(rows)
    frame["regime"] = [f"{r} ({m})" for r, m in zip(frame["regime"], frame["map"])]
    frame["arm"] = [ARM_WORDS.get(a, a) for a in frame["arm"]]
    frame = round_frame(frame, fill_missing=False).set_index(["regime", "arm"])
    return [_grouped(frame, headers) for headers in REGIME_HEADERS]


def choices_table(choices: list[dict]):
    return _frame(choices).set_index("regime")


def sweep_tables(rows: list[dict]) -> list:
    """The calibration-size sweep by regime (with its map) and groups per stratum, in two tables: the certificate
    (blocks, radius, certification rate, median full-arm bound) with the regret and the modal choice; then false
    selection (per decision, family-wise with its count and exact upper 95% bound) and the physical draws."""
    frame = _frame(rows)
    frame["regime"] = [f"{r} ({m})" for r, m in zip(frame["regime"], frame["map"])]
    frame = round_frame(frame, fill_missing=False).set_index(["regime", "groups per stratum"])
    return [_grouped(frame, headers) for headers in SWEEP_HEADERS]


def sufficient_table(rows: list[dict]):
    return _rounded(rows, "stratum")


def scan_table(summary):
    return round_frame(summary, fill_missing=False)


def comparison_table(rows: list):
    """Paper-beside-ours rows indexed by quantity; the optional columns empty in every row (most of ours carry
    no interval) are left out.  A row not compared in size shows no relative deviation: ours / paper - 1 of two
    quantities on different scales measures nothing."""
    records = [dict(r, **{"relative deviation": None}) if dict(r).get("verdict") == NOT_COMPARED else r
               for r in rows]
    return comparison_frame(records, drop_empty=True).set_index("quantity")


def comparison_tables(groups: dict) -> list[tuple[str, object]]:
    """One paper-beside-ours table per group (caption -> rows, e.g. `regimes.by_regime`): (caption, table)
    pairs, the caption naming what the group's rows share (their quantities leave it out)."""
    return [(caption, comparison_table(rows)) for caption, rows in groups.items()]


def settings_table(rows: list):
    """The settings of the paper's runs beside ours (status adopted or differs, with the reason), by quantity."""
    return comparison_frame(rows, drop_empty=True).set_index("quantity")


#: The rows of the closing verdict-count table: the classes `reporting.tally` counts, in its order and words.
TALLY_ROWS = (("measurements", "measured values"), ("checks", "checks"), ("intervals", "the paper's intervals"),
              ("by construction", "true by construction"))
#: The row that counts again, by the verdict of the ordering or sign the paper states for them, the values the
#: rows above count as not compared in size.
ORDERINGS_ROW = "their stated orderings and signs"


def tally_table(counted: dict):
    """The chapter's closing verdict-count table on the basis of its result box (`reporting.tally.chapter_tally`:
    each paper value once, however often printed): one row per class with values (measured values always), a
    column per verdict that occurs and the total; then the values not compared in size counted again by the
    verdict of the ordering the paper states for them.  The box's sentence (`tally.tally_text`) reads the same
    counts."""
    import pandas as pd

    from oscc_core.reporting import claims

    verdicts = list(claims.VERDICTS)
    records = {label: {v: counted[key][v] for v in verdicts} for key, label in TALLY_ROWS
               if key == "measurements" or sum(counted[key].values())}
    orderings = counted.get("orderings") or {}
    if sum(orderings.values()):
        records[ORDERINGS_ROW] = {v: orderings.get(v, 0) for v in verdicts}
    frame = pd.DataFrame.from_dict(records, orient="index")
    frame = frame[[v for v in verdicts if frame[v].any()]] if frame.values.any() else frame[verdicts[:1]]
    frame["total"] = frame.sum(axis=1)
    return frame
