"""The tables the transfer notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units: chips for values, NashConv and exploitability; chips^2 for contrast
variances; logits^2 for update variances; success and ratios unitless.
"""
from __future__ import annotations

from oscc_core.chapters.transfer.runs import variance_ratios
from oscc_core.learning import summary
from oscc_core.reporting.results import residual_text
from oscc_core.reporting.tables import round_frame

COLUMNS = {"contrast_variance_exact": "contrast var. (exact)", "contrast_variance_sampled": "contrast var. (sampled)",
           "update_variance": "update var.", "player0_value": "value", "nash_conv": "NashConv",
           "exploitability": "exploit.", "task_success": "success", "mean_return": "return"}


def _frame(records, index=None):
    import pandas as pd

    frame = round_frame(pd.DataFrame(records), fill_missing=False)
    return frame if index is None else frame.set_index(index)


def operating_point_frame(record: dict):
    """The operating point's fields, flattened to (part, field, value) rows."""
    out = []
    for part in ("schedule", "step_size_rule", "evaluation", "solver"):
        out += [{"part": part, "field": k, "value": str(v)} for k, v in record[part].items()]
    out += [{"part": "arms", "field": a["name"], "value": f"samples {a['samples']}, hidden shared {a['share_hidden']}, "
             f"chance shared {a['share_chance']}, updates {a['updates']}"} for a in record["arms"]]
    return _frame(out, ["part", "field"])


def game_table(records: dict):
    """Per arm: seed mean ± SD of every whole-game quantity, and the leakage violations over all seeds."""
    out = []
    for arm, runs in records.items():
        row = {"arm": arm}
        for key, label in COLUMNS.items():
            v = summary.values(records, arm, key)
            row[label] = f"{v.mean():.4f} ± {v.std(ddof=1):.4f}"
        row["leakage violations"] = sum(rec["leakage"]["violations"] for rec in runs.values())
        out.append(row)
    return _frame(out, "arm")


def ratio_table(leduc: dict, kuhn: dict):
    """Per game and arm: the variance ratio as the paper forms it (the arm's contrast variance at its own
    checkpoint over the independent arm's at the independent arm's checkpoint, per seed; mean, min, max) and,
    beside it, the same-checkpoint ratio (the arm's construction over the independent construction, both at
    the arm's own checkpoint), which isolates the coupling from the difference between the policies."""
    out = []
    for game, records in (("leduc", leduc), ("kuhn", kuhn)):
        for arm in records:
            r = variance_ratios(records, arm)
            same = summary.values(records, arm, "contrast_variance_exact") / summary.values(
                records, arm, "contrast_variance_independent_exact")
            out.append({"game": game, "arm": arm, "ratio (mean)": float(r.mean()), "min": float(r.min()),
                        "max": float(r.max()), "same-checkpoint ratio (mean)": float(same.mean())})
    return _frame(out, ["game", "arm"])


def pair_tables(records: dict, keys=tuple(summary.EVALUATED)):
    """Per quantity and arm (rows) and ordered rank pair (columns): the seed mean of each per-pair value."""
    return _frame(summary.pair_rows(records, keys), ["quantity", "arm"])


def checkpoint_table(check: dict):
    return _frame([{"checkpoint": k, "ours": check["ours"][k], "pyspiel": check["pyspiel"][k],
                    "|difference|": f"{abs(check['ours'][k] - check['pyspiel'][k]):.1e}"} for k in check["ours"]],
                  "checkpoint")


def four_arm_frame(four: dict):
    """The four arms' exact contrast variances (chips^2) and the two structural differences (residual text)."""
    out = [{"arm or difference": k, "value": f"{v:.6f}" if " - " not in k else residual_text(v)}
           for k, v in four.items()]
    return _frame(out, "arm or difference")


def search_frame(search: dict):
    """Per construction: the largest contrast variance found (chips^2) and the bounds it respects."""
    out = [{"construction": arm, "largest found": res["max"],
            f"<= {search['contrast_bound']:g}": "yes" if res["respects_contrast_bound"] else "no",
            f"<= {search['unshared_bound']:g}": "yes" if res["respects_unshared_bound"] else "no"}
           for arm, res in search["arms"].items()]
    return _frame(out, "construction")


def bound_frame(entries: list[dict]):
    """Every checked paper number: its value, the range the bound allows, and whether it breaks it."""
    out = [{"claim id": e["claim_id"], "quantity": e["quantity"], "paper": e["paper"],
            "allowed": f"[{e['allowed'][0]:.4f}, {e['allowed'][1]:.4f}]", "kind": e["bound_kind"],
            "impossible": "yes" if e["impossible"] else "no"} for e in entries]
    return _frame(out)


def selector_frame(default: dict, large: dict):
    """Per Kuhn stratum: the frozen selector's play, strict and key-matched, at both Leduc calibration sizes,
    with the exact contrast variance of each arm there (chips^2)."""
    out = []
    for small, big in zip(default["kuhn"]["strata"], large["kuhn"]["strata"]):
        rec = {"Kuhn stratum": small["stratum"], "Leduc certificate for this key": small["certified_key"] or "none",
               "strict": small["strict"], "key-matched (default calibration)": small["key_matched"],
               "key-matched (large calibration)": big["key_matched"], "best arm (exact)": small["oracle"]}
        rec.update({f"Var({a})": v for a, v in (small["exact_contrast_variance"] or {}).items()})
        out.append(rec)
    return _frame(out, "Kuhn stratum")
