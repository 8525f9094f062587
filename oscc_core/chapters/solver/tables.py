"""The tables the solver notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units: chips for values, best responses, NashConv, exploitability, returns
and margins; chips^2 for contrast variances; logits^2 for update variances;
success and probabilities are unitless; counts are counts.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.solver.calibration import MATCH_TOLERANCE
from oscc_core.chapters.solver.feasibility import OPEN_BOUND, READINGS, SHORT
from oscc_core.chapters.solver.readings import Readings
from oscc_core.chapters.solver.rows import orderings
from oscc_core.chapters.solver.training import exploitabilities
from oscc_core.learning import summary
from oscc_core.method.stats import t_interval
from oscc_core.reporting import study_tables
from oscc_core.reporting.claims import IMPOSSIBLE
from oscc_core.reporting.results import residual_text
from oscc_core.reporting.tables import NotedFrame, comparison_frame, round_frame


def _frame(records, index=None):
    import pandas as pd

    frame = round_frame(pd.DataFrame(records), fill_missing=False)
    return frame if index is None else frame.set_index(index)


def calibration_table(cal: dict):
    """Per game: iterations, our exploitability, OpenSpiel's, their difference, reruns identical, first reach."""
    out = []
    for game, res in cal.items():
        reach = next(iter(res["targets"].values()))
        out.append({"game": game, "iterations": f"{res['iterations']:,}", "ours (chips)": res["max_exploitability"],
                    "OpenSpiel (chips)": res["openspiel"]["exploitability"],
                    "|ours - OpenSpiel|": residual_text(res["openspiel"]["abs_difference"], MATCH_TOLERANCE),
                    "reruns identical": "yes" if res["identical"] else "no",
                    "paper's value (chips)": reach["target"],
                    "first iteration at or below it": reach["first_reach"] or "never"})
    return _frame(out, "game")


def eta_table(choice: dict):
    """Per eta (rows) and learned arm (columns): the mean exploitability (chips) of the arm's average policy on
    the development seeds; each arm's chosen eta is marked with a star, a grid value the arm did not try
    (the grid is extended only at the edge an arm's choice sits on) is blank."""
    return study_tables.step_size_frame(choice, "")


def diagnostic_table(batch, seeds):
    """Per seed: final exploitability of the average and last policies of both arms, and their difference."""
    avg, last = exploitabilities(batch.game, batch.average), exploitabilities(batch.game, batch.last)
    out = []
    for s in seeds:
        i, j = batch.index("cp_grpo", s), batch.index("independent", s)
        out.append({"seed": s, "paired, average": avg[i], "independent, average": avg[j],
                    "independent - paired, average": avg[j] - avg[i], "paired, last": last[i],
                    "independent, last": last[j], "independent - paired, last": last[j] - last[i]})
    return _frame(out, "seed")


def diagnostic_exploitability(batch, seeds) -> dict:
    """{arm: {seed: final exploitability of the average policy}} (chips)."""
    avg = exploitabilities(batch.game, batch.average)
    return {arm: {s: float(avg[batch.index(arm, s)]) for s in seeds} for arm in ("cp_grpo", "independent")}


def sensitivity_records(panel: list[dict]) -> list[dict]:
    """Per eta: mean independent-minus-paired difference with its 95% t-interval, and the sign's resolution."""
    out = []
    for entry in panel:
        d = np.asarray(entry["differences"])
        iv = t_interval(d)
        out.append({"eta": entry["eta"], "seeds": len(d), "mean difference (chips)": iv.mean, "low": iv.low,
                    "high": iv.high, "seeds with independent lower": int((d < 0).sum()),
                    "sign resolved": "yes" if iv.high < 0 or iv.low > 0 else "no"})
    return out


def sensitivity_table(panel: list[dict]):
    return _frame(sensitivity_records(panel), "eta")


def frozen_margin_table(screen: dict):
    """Per calibration pair: sampled margin and SE of each mode beside the exact margin (chips)."""
    modes = screen["modes"]
    out = []
    for pair in screen["calibration_pairs"]:
        out.append({"pair (P0, P1)": pair, "exact margin": screen["exact_margins"][pair],
                    "paired margin": modes["paired"]["margins"][pair], "paired SE": modes["paired"]["ses"][pair],
                    "independent margin": modes["independent"]["margins"][pair],
                    "independent SE": modes["independent"]["ses"][pair]})
    return _frame(out, "pair (P0, P1)")


def frozen_update_table(screen: dict):
    """Per mode: pooled margin and SE, the chosen P(check), and the exact value change on the K pairs (chips)."""
    out = []
    for mode, m in screen["modes"].items():
        out.append({"mode": mode, "pooled margin": m["pooled_margin"], "pooled SE": m["pooled_se"],
                    "sign clear": "yes" if m["clear"] else "no", "P(check) after": m["p"],
                    **{f"delta {pair}": v for pair, v in m["exact_delta"]["pairs"].items()},
                    "delta, K pairs (deal law)": m["exact_delta"]["law_average"]})
    return _frame(out, "mode")


SCREEN_COLUMNS = {"mean_return": "return", "task_success": "success", "update_variance": "update var.",
                  "player0_value": "value", "best_response_0": "BR_0", "best_response_1": "BR_1",
                  "nash_conv": "NashConv", "exploitability": "exploit. (avg)", "exploitability_last": "exploit. (last)",
                  "contrast_variance_exact": "contrast var. (exact)", "contrast_variance_sampled": "contrast var. (sampled)"}


def screen_table(records: dict):
    """Per arm: seed mean and SD of every whole-game quantity of the screen."""
    out = []
    for arm in records:
        row = {"arm": arm}
        for key, label in SCREEN_COLUMNS.items():
            v = summary.values(records, arm, key)
            row[label] = f"{v.mean():.4f} ± {v.std(ddof=1):.4f}"
        out.append(row)
    return _frame(out, "arm")


def ledger_table(records: dict):
    """Per arm: seed mean of every ledger count, and the clip fraction (clipped terms / terms)."""
    import pandas as pd

    out = []
    for arm, runs in records.items():
        ledgers = pd.DataFrame([rec["ledger"] for rec in runs.values()])
        row = {"arm": arm, **{k: f"{v:,.1f}" for k, v in ledgers.mean().items()}}
        terms = ledgers["terms"].sum()
        row["clip fraction"] = f"{ledgers['clipped_terms'].sum() / terms:.4f}" if terms else "—"
        out.append(row)
    return _frame(out, "arm")


def pair_tables(records: dict, keys=tuple(summary.EVALUATED)):
    """Per quantity and arm (rows) and ordered rank pair (columns): the seed mean of each per-pair value."""
    return _frame(summary.pair_rows(records, keys), ["quantity", "arm"])


def checkpoint_table(ours: dict, openspiel: dict, tolerance: float = MATCH_TOLERANCE):
    """Per saved checkpoint: our exploitability and pyspiel's recomputation from the file (chips), and their
    difference shown against `tolerance` (rounding noise differs between CPUs; the tolerance does not)."""
    return _frame([{"checkpoint": k, "ours": ours[k], "pyspiel": openspiel[k],
                    "|difference|": residual_text(abs(ours[k] - openspiel[k]), tolerance)} for k in ours],
                  "checkpoint")


def _allowed_text(ranges) -> str:
    """What a bound allows, short: the range(s), or for a fixed policy the count and span of its numbers."""
    if len(ranges) > 3:
        return f"{len(ranges)} numbers in [{ranges[0][0]:.4f}, {ranges[-1][1]:.4f}]"
    return "; ".join(f"{lo:.4f}" if lo == hi else f"[{lo:.4f}, {hi:.4f}]" for lo, hi in ranges)


def feasibility_frame(entries: list[dict], only_bounded: bool = False):
    """Every checked paper number under each reading (its few words, `feasibility.SHORT`): its value, the rule
    bound, what the bound allows, and whether it breaks it; `only_bounded` drops the readings that only the
    largest pot bounds."""
    out = [{"claim id": e["claim_id"], "reading": SHORT[e["reading"]], "paper": str(e["paper"]),
            "bound": e["bound"], "allowed": _allowed_text(e["allowed"]),
            "impossible": "yes" if e["impossible"] else "no"} for e in entries
           if not (only_bounded and e["bound"].startswith(OPEN_BOUND))]
    return _frame(out)


def readings_table(rows):
    """Per paper quantity compared under several readings, one line per reading in the listed order
    (`Readings.table`), indexed by claim, paper value and reading; the legend of the readings' few words is
    listed under the table as notes."""
    import pandas as pd

    records = Readings.table(rows)
    frame = NotedFrame(pd.DataFrame(records).set_index(["claim id", "paper", "reading"]))
    full = {v: READINGS[k] for k, v in SHORT.items()}
    used = list(dict.fromkeys(r["reading"] for r in records))
    frame.notes = [(label, "reading", full[label]) for label in used]
    return frame


def scale_table(batch, seeds):
    """Exploitability (chips) of each arm's average policy at the curve's iterations, mean over seeds."""
    out = []
    for t in sorted(batch.curve_average):
        row = {"iteration": t}
        for arm in ("cp_grpo", "independent"):
            idx = [batch.index(arm, s) for s in seeds]
            row[f"{arm}, average"] = float(batch.curve_average[t][idx].mean())
            row[f"{arm}, last"] = float(batch.curve_last[t][idx].mean())
        out.append(row)
    return _frame(out, "iteration")


def orderings_table(records: dict):
    """Each ordering the paper states (rows.PAPER_ORDERINGS): whether it holds on our seed means and whether every
    paired per-seed difference behind it is resolved at 95%."""
    return _frame(orderings(records))


def _short_reasons(row) -> dict:
    """A row as a table shows it: a row compared under several readings names its readings in a few words (the
    results file keeps every reading's bound and verdict)."""
    out = dict(row)
    if row.get("readings"):
        short = {READINGS[k]: v for k, v in SHORT.items()}
        impossible = [short[x["reading"]] for x in row["readings"] if x["verdict"] == IMPOSSIBLE]
        if row.get("reading") in short:
            out["reading"] = short[row["reading"]]
        if impossible and row["verdict"] != IMPOSSIBLE:
            out["reason"] = (f"impossible as {' and '.join(impossible)}; {row['verdict']} as {out['reading']} "
                             f"(every reading in the readings table)")
        elif impossible:
            out["reason"] = f"impossible under every reading: {'; '.join(impossible)} (bounds in the appendix)"
            out["reading"] = "every reading"
    return out


def compared_frame(rows):
    """`comparison_frame` of a paper table's rows, a row compared under several readings shown with the short
    names of its readings."""
    return comparison_frame([_short_reasons(r) for r in rows], drop_empty=True)
