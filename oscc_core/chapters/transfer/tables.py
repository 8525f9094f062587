"""The tables the transfer notebook shows, as rounded pandas frames (text cells: the same on every CPU).

Units: chips for values, NashConv and exploitability; chips^2 for contrast
variances; logits^2 for update variances; success and ratios unitless.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.transfer.runs import variance_ratios
from oscc_core.learning import summary
from oscc_core.reporting import claims, study_tables
from oscc_core.reporting.results import residual_text
from oscc_core.reporting.rows import IMPOSSIBLE
from oscc_core.reporting.tables import comparison_frame, round_frame

#: Reading and reason a table shows for a claim the rules exclude under every reading.
EVERY_READING, EVERY_BOUND = "every reading", "outside every reading's range"
CHECK_TOLERANCE = 1e-9       # chips: ours and pyspiel's exploitability of a saved checkpoint agree below this

COLUMNS = {"contrast_pooled": "contrast var. (pooled)", "contrast_variance_exact": "contrast var. (root, exact)",
           "contrast_variance_sampled": "contrast var. (root, sampled)",
           "update_variance": "update var.", "player0_value": "value", "nash_conv": "NashConv",
           "exploitability": "exploit.", "task_success": "success", "mean_return": "return"}


def _frame(records, index=None):
    import pandas as pd

    frame = round_frame(pd.DataFrame(records), fill_missing=False)
    return frame if index is None else frame.set_index(index)


def operating_point_frame(record: dict):
    """The operating point's fields, flattened to (part, field, value) rows."""
    out = []
    for part in ("schedule", "step_sizes", "step_size_rule", "evaluation", "solver"):
        out += [{"part": part, "field": k, "value": str(v)} for k, v in record[part].items()]
    out += [{"part": "arms", "field": a["name"], "value": f"samples {a['samples']}, hidden shared {a['share_hidden']}, "
             f"chance shared {a['share_chance']}, updates {a['updates']}"} for a in record["arms"]]
    return _frame(out, ["part", "field"])


def tuning_frame(choice: dict):
    """eta (rows) x arm: the mean exploitability (chips) of the arm's average policies on the development seeds at
    the matched budget, the chosen eta starred (a grid extended past an edge shows its new values; "—": not
    tried for that arm)."""
    return study_tables.step_size_frame(choice, "—")


def _grid_text(grid: dict) -> str:
    return ", ".join(f"{k} {'/'.join(f'{x:g}' for x in grid[k])}" for k in ("eta", "alpha", "kappa"))


def converging_frame(record: dict):
    """The converging operating point's fields: the learner's two additions, each arm's choices, the rule that
    chose them on Leduc (short text cells; the full record is in the results file)."""
    sched, rule = record["schedule"], record["step_size_rule"]
    out = [{"part": "learner", "field": k, "value": str(sched[k])} for k in
           ("decision_law", "decision_points", "epochs", "epsilon", "group_size")]
    out += [{"part": "choices", "field": arm, "value": ", ".join(f"{k} {c[k]:g}" for k in ("eta", "alpha", "kappa"))}
            for arm, c in record["choices"].items()]
    out += [{"part": "rule", "field": "dev_seeds", "value": ", ".join(map(str, rule["dev_seeds"]))},
            {"part": "rule", "field": "tuning budget", "value": f"{rule['tune_multiples']['converging']} x "
                                                                   f"{rule['budget']:,} calls"},
            {"part": "rule", "field": "grid", "value": _grid_text(rule["grids"]["converging"])}]
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
    checkpoint over the independent arm's at the independent arm's checkpoint, per seed; mean, min, max) with the
    contrast variances pooled over every decision point (the paper's reading) and at the chapter's root and,
    beside them, the same-checkpoint ratio at the root (the arm's construction over the independent construction,
    both at the arm's own checkpoint), which isolates the coupling from the difference between the policies."""
    out = []
    for game, records in (("leduc", leduc), ("kuhn", kuhn)):
        for arm in records:
            pool, r = variance_ratios(records, arm, "contrast_pooled"), variance_ratios(records, arm)
            same = summary.values(records, arm, "contrast_variance_exact") / summary.values(
                records, arm, "contrast_variance_independent_exact")
            out.append({"game": game, "arm": arm, "pooled ratio (mean)": float(pool.mean()), "pooled min":
                        float(pool.min()), "pooled max": float(pool.max()), "ratio at the root (mean)":
                        float(r.mean()), "same-checkpoint ratio at the root (mean)": float(same.mean())})
    return _frame(out, ["game", "arm"])


def pair_tables(records: dict, keys=tuple(summary.EVALUATED)):
    """Per quantity and arm (rows) and ordered rank pair (columns): the seed mean of each per-pair value."""
    return _frame(summary.pair_rows(records, keys), ["quantity", "arm"])


def _shown(row, labels: dict):
    """The row as a table shows it: a compared row's reason left to the results file and the appendix (for a
    combined row: the readings under which the paper's value is impossible, each with its bound); the reading as
    its few-word label; a row the rules exclude under every reading says so in a few words (each reading's
    bound is in the results file, and its range in the appendix)."""
    changes = {}
    if row.verdict in claims.COMPARED:
        changes["reason"] = None
    if row.reading is not None:
        every = row.readings is not None and len(row.readings) > 1 and \
            all(x["verdict"] == IMPOSSIBLE for x in row.readings)
        changes["reading"] = EVERY_READING if every else labels.get(row.reading, row.reading)
        if every:
            changes["reason"] = EVERY_BOUND
    return replace(row, **changes) if changes else row


def rows_frame(rows: list, labels: dict | None = None):
    """A comparison table indexed by quantity, readings shown by their labels (`readings.labels`; the full
    texts are in the results file and the legend); impossible, not-compared and setting rows keep their reason."""
    return comparison_frame([_shown(r, labels or {}) for r in rows], drop_empty=True).set_index("quantity")


def legend_frame(labels: dict):
    """The readings' labels and what each takes the paper's number to measure (the tables show the label)."""
    seen = {}
    for reading, label in labels.items():
        seen.setdefault(label, reading)
    return _frame([{"label": k, "reading": v} for k, v in seen.items()], "label")


def checkpoint_table(check: dict, tolerance: float = CHECK_TOLERANCE):
    """Per saved checkpoint: our exploitability, pyspiel's, and their difference against `tolerance` (chips;
    "< 1e-09" when below it: the rounding noise below differs between CPUs)."""
    return _frame([{"checkpoint": k, "ours": check["ours"][k], "pyspiel": check["pyspiel"][k],
                    "|difference|": residual_text(abs(check["ours"][k] - check["pyspiel"][k]), tolerance)}
                   for k in check["ours"]], "checkpoint")


def four_arm_frame(four: dict):
    """The four arms' exact contrast variances (chips^2) and the two structural differences (residual text)."""
    out = [{"arm or difference": k, "value": f"{v:.6f}" if " - " not in k else residual_text(v)}
           for k, v in four.items()]
    return _frame(out, "arm or difference")


def maxima_frame(certified: dict):
    """Per decision point and construction: the proved maximum of the per-group budget-1 contrast variance
    (chips^2, branch and bound), the largest value a policy was found to reach, whether every box closed, and
    the plain search's largest value (`bounds.maxima_record`)."""
    out = [{"decision point": repr(root), "construction": arm, "proved maximum": res["upper"],
            "reached by a policy": res["best"], "every box closed": "yes" if res["complete"] else "no",
            "plain search": res["search"]}
           for root, arms in certified.items() for arm, res in arms.items()]
    return _frame(out, ["decision point", "construction"])


def readings_frame(rows: dict, entries: list[dict]):
    """Every reading of every reading-open claim, in the listed order: the range the rules allow, our value under it
    (95% interval over seeds; the range of our per-pair means for one private-card pair) and the verdict under it
    (impossible under the rules where the paper's value breaks the range).  Readings by their labels."""
    listed = {(e["claim_id"], e["reading"]): e for e in entries}
    out = []
    for cid, row in rows.items():
        for r in row.readings or ():
            e = listed[(cid, r["reading"])]
            (low, high), ours = e["allowed"], r["ours"]
            lo, hi = r["interval"] if r["interval"] is not None else (None, None)
            out.append({"claim id": cid, "reading": e["label"], "paper": row.paper,
                        "allowed": f"[{low:.4f}, {high:.4f}]", "ours": ours if isinstance(ours, str) else f"{ours:.4f}",
                        "95% interval": "—" if lo is None else f"[{lo:.4f}, {hi:.4f}]", "verdict": r["verdict"]})
    return _frame(out, ["claim id", "reading"])


def readings_summary(rows: dict, labels: dict):
    """Per reading-open claim: how many of its readings the paper's value is impossible under, the verdict, the
    reading it comes from (the paper's where its text fixes one) and whether it depends on the reading."""
    out = [{"claim id": cid, "readings": len(row.readings or ()),
            "impossible under": sum(r["verdict"] == IMPOSSIBLE for r in row.readings or ()),
            "verdict": row.verdict, "from the reading": _shown(row, labels).reading,
            "depends on the reading": "yes" if row.reading_dependent else "no"} for cid, row in rows.items()]
    return _frame(out, "claim id")


#: The classes of values the closing table counts (`reporting.tally`), as its rows name them.
TALLY_CLASSES = {"measurements": "measured values", "checks": "checks", "intervals": "the paper's intervals",
                 "by construction": "true by construction"}


def tally_frame(counted: dict):
    """The chapter's closing verdict counts on the values basis (`reporting.tally.chapter_tally`: each paper value
    once, however often printed), the same counts as its result box: one row per class of values by verdict, then
    the values whose verdict depends on the reading, the orderings judged for values not compared in size, the
    further printings and the settings by status ("—": does not apply)."""
    verdicts = [v for v in claims.VERDICTS if any(counted[c][v] for c in TALLY_CLASSES)]
    out = []
    for key, label in TALLY_CLASSES.items():
        n = sum(counted[key].values())
        if n or key == "measurements":
            out.append({"values": label, **{v: counted[key][v] for v in verdicts}, "total": n})
    blank = {v: "—" for v in verdicts}
    out.append({"values": "of these, depend on the reading", **blank, "total": counted["reading dependent"]})
    orderings = counted.get("orderings") or {}
    if sum(orderings.values()):
        out.append({"values": "orderings of values not compared in size",
                    **{v: orderings.get(v, "—") for v in verdicts}, "total": sum(orderings.values())})
    out.append({"values": "further printings, not counted again", **blank, "total": counted["printings"]})
    for status, n in counted["settings"].items():
        out.append({"values": f"settings: {status}", **blank, "total": n})
    frame = _frame(out, "values")
    return frame.astype(str)


#: The arms as the chapter's prose names them (a name in words wraps in a narrow column).
ARM_WORDS = {"root_only": "root-only", "continuation_only": "continuation-only"}


def selector_frame(default: dict, large: dict):
    """Per Kuhn stratum: the frozen selector's play, strict and key-matched, at both Leduc calibration sizes,
    with the exact contrast variance of each arm there (chips^2).  Two header rows (what is shown, then which)
    keep each header short, so that the table fits the text column."""
    import pandas as pd

    def word(arm):
        return ARM_WORDS.get(arm, arm) if isinstance(arm, str) else arm

    out, columns = [], {}
    for small, big in zip(default["kuhn"]["strata"], large["kuhn"]["strata"]):
        rec = {("Leduc certificate", "for this key"): word(small["certified_key"]) or "none",
               ("frozen selector's arm", "strict"): word(small["strict"]),
               ("frozen selector's arm", "key-matched (default calibration)"): word(small["key_matched"]),
               ("frozen selector's arm", "key-matched (large calibration)"): word(big["key_matched"]),
               ("best arm", "exact"): word(small["oracle"])}
        rec.update({("exact contrast variance (chips²)", word(a)): v
                    for a, v in (small["exact_contrast_variance"] or {}).items()})
        columns.update(dict.fromkeys(rec))
        out.append(rec)
    frame = round_frame(pd.DataFrame([{k: r.get(k) for k in columns} for r in out]), fill_missing=False)
    frame.columns = pd.MultiIndex.from_tuples(list(columns))
    frame.index = pd.Index([small["stratum"] for small in default["kuhn"]["strata"]], name="Kuhn stratum")
    return frame
