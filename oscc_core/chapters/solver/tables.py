"""The tables the solver notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units: chips for values, best responses, NashConv, exploitability, returns
and margins; chips^2 for contrast variances; logits^2 for update variances;
success and probabilities are unitless; counts are counts.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.solver.calibration import MATCH_TOLERANCE
from oscc_core.chapters.solver.feasibility import OPEN_BOUND, READINGS, SHORT
from oscc_core.chapters.solver.readings import READING_SEPARATOR, Readings
from oscc_core.chapters.solver.rows import orderings
from oscc_core.chapters.solver.training import exploitabilities
from oscc_core.learning import summary
from oscc_core.method.stats import t_interval
from oscc_core.reporting import study_tables
from oscc_core.reporting import claims
from oscc_core.reporting.claims import DEPENDS, IMPOSSIBLE
from oscc_core.reporting.numbers import mean_count_text, significant_text
from oscc_core.reporting.results import residual_text
from oscc_core.reporting.tally import BY_CONSTRUCTION, chapter_tally
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
    """The cost ledger: one row per ledger count (its name in words) and the clip fraction (clipped terms /
    terms), one column per arm: the seed mean of each count (`mean_count_text`).  Arms as columns keep the
    table within the text column however many counts the ledger keeps."""
    import pandas as pd

    out = {}
    for arm, runs in records.items():
        ledgers = pd.DataFrame([rec["ledger"] for rec in runs.values()])
        column = {k.replace("_", " "): mean_count_text(v) for k, v in ledgers.mean().items()}
        terms = ledgers["terms"].sum()
        column["clip fraction"] = f"{ledgers['clipped_terms'].sum() / terms:.4f}" if terms else "—"
        out[arm] = column
    frame = pd.DataFrame(out)
    frame.index.name = "seed mean per run"
    return frame


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


def short_reading(label: str | None) -> str | None:
    """A reading in a few words: `feasibility.SHORT` for the readings of values, 'eta 8' or 'own eta (8)' for an
    update variance's step size, 'epsilon 0.25' for the frozen screen's clip range (with '(ours)' on the
    chapter's own)."""
    if label is None:
        return None
    if READING_SEPARATOR in label:
        return READING_SEPARATOR.join(short_reading(part) for part in label.split(READING_SEPARATOR))
    short = {READINGS[k]: v for k, v in SHORT.items()}
    if label in short:
        return short[label]
    if label.startswith("eta chosen per arm"):
        return f"own eta ({label.split(': ', 1)[1].split(')')[0]})"
    if label.startswith("eta = "):
        return f"eta {label.split()[2]}"
    if label.startswith("clip epsilon = "):
        return f"epsilon {label.split()[3]}" + (" (ours)" if "frozen_epsilon" in label else "")
    return label


def readings_text(row) -> str:
    """A row's verdict under each of its readings, grouped by verdict, in a few words ('not reproduced: eta 2, eta
    4; reproduced: eta 8')."""
    by: dict = {}
    for x in row["readings"]:
        by.setdefault(x["verdict"], []).append(short_reading(x["reading"]))
    return "; ".join(f"{v}: {', '.join(names)}" for v, names in by.items())


def _short_reasons(row) -> dict:
    """A row as a table shows it: a value true by construction says so in its reason (the table keeps one column
    fewer), and a row compared under several readings names its reading and the verdict under each in a few words
    (the results file keeps every reading's bound, number and verdict)."""
    out = dict(row)
    if out.get("by construction"):                       # one note column fewer: the reason says it
        built = f"true by construction: {out.pop('by construction')}"
        out["reason"] = built if not out.get("reason") else f"{built}; {out['reason']}"
    if not row.get("readings"):
        return out
    out["reading"] = short_reading(row.get("reading"))
    every = readings_text(row)
    if row["verdict"] == DEPENDS:
        out["reading"] = f"{out['reading']} (ours; the paper fixes none)"
        out["reason"] = f"by reading: {every}"
    elif row.get("reading dependent"):
        out["reading"] = f"{out['reading']} (fixed by the paper's text)"
        out["reason"] = f"the verdict under the reading the paper's text fixes; by reading: {every}"
    elif row["verdict"] == IMPOSSIBLE:
        out["reading"] = "every reading"
        out["reason"] = f"impossible under every reading: {every} (bounds in the appendix)"
    else:
        out["reason"] = f"the same verdict under every compared reading: {every}"
    return out


def compared_frame(rows):
    """`comparison_frame` of a paper table's primary rows, a row compared under several readings shown with the
    short names of its readings (the sensitivity rows are `sensitivity_frame`'s)."""
    return comparison_frame([_short_reasons(r) for r in rows if r.primary], drop_empty=True)


def sensitivity_frame(rows):
    """`comparison_frame` of the sensitivity rows among `rows` (they name their claim under "sensitivity of" and
    never give its verdict)."""
    return comparison_frame([_short_reasons(r) for r in rows if not r.primary], drop_empty=True)


def reading_lines(rows, part: str = ""):
    """One line per (paper quantity, reading) of the rows compared under several readings whose claim id contains
    `part` (printings left out): the claim, the paper's number, the reading in a few words, our number and 95%
    interval under it, and the verdict under it (the step-size readings of the update variances, the clip ranges
    of the frozen screen)."""
    import pandas as pd

    out = [{"claim id": r.claim_id, "paper": claims.format_value(r.paper), "reading": short_reading(x["reading"]),
            "ours": _cell(x["ours"]), "95% interval": _cell(x["interval"]), "verdict": x["verdict"]}
           for r in rows if r.primary and r.readings and part in (r.claim_id or "") and r.printing_of is None
           for x in r.readings]
    return pd.DataFrame(out).set_index(["claim id", "paper", "reading"])


def readings_summary(rows, part: str, leave_out: str | None = None) -> str:
    """Each primary row whose claim id contains `part` (and not `leave_out`) and that is compared under several
    readings, with its verdict and the verdict under each reading, in a sentence ('cp_grpo: depends on the reading
    (not reproduced: own eta (4), eta 2; reproduced: eta 8)')."""
    return "; ".join(f"{r.quantity.split(':')[0]}: {r.verdict} ({readings_text(r)})" for r in rows
                     if r.primary and r.readings and part in (r.claim_id or "") and r.printing_of is None
                     and not (leave_out and leave_out in r.claim_id))


def _cell(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, (tuple, list)):
        return f"[{significant_text(float(x[0]))}, {significant_text(float(x[1]))}]"
    return significant_text(float(x)) if isinstance(x, (int, float)) else str(x)


def verdict_counts(stem: str, rows):
    """The chapter's counts on the values basis (`reporting.tally.chapter_tally`, what its result box prints): one
    line per class (measured values, checks, the paper's intervals, values true by construction) and one for the
    orderings of values not compared in size (by their relation's verdict), a column per verdict, and a total;
    printings, reading-dependent verdicts and settings are in the sentence beside it (`tally.tally_text`)."""
    import pandas as pd

    counted = chapter_tally(stem, rows)
    lines = {label: counted[name] for name, label in (("measurements", "measured values"), ("checks", "checks"),
                                                       ("intervals", "the paper's intervals"),
                                                       (BY_CONSTRUCTION, "true by construction"))}
    lines["orderings of values not compared in size"] = counted["orderings"]
    frame = pd.DataFrame.from_dict(lines, orient="index").fillna(0).astype(int)
    frame = frame.loc[:, (frame != 0).any(axis=0)]
    frame["total"] = frame.sum(axis=1)
    frame.index.name = "values, each counted once"
    return frame.loc[frame["total"] > 0]
