"""Paper-beside-ours rows of the transfer tables (DESIGN section 10).

Numbers are seed means of exact per-checkpoint values with their 95%
t-intervals (chips; chips^2 for contrast variances; logits^2 for update
variances; success and ratios unitless).  Where the paper bolds CP-GRPO as
the best arm of a game, the row declares that ordering; the variance ratio
(arm over independent) declares its side of 1.  Paper numbers the rules
exclude come from `kuhn_facts` and replace the ordinary row.
"""
from __future__ import annotations

from oscc_core.chapters.transfer.runs import variance_ratios
from oscc_core.learning import summary
from oscc_core.method.stats import t_interval
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row, impossible_instead, unshown_impossible

__all__ = ["measured_rows", "ratio_rows", "unshown_impossible"]

PAPER_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
             "ppo": "standard_ppo"}
#: (record key, claim column, better) of tab:measured-transfer.
COLUMNS = (("contrast_variance_exact", "contrast_variance", "low"), ("update_variance", "update_variance", "low"),
           ("player0_value", "player0_value", "high"), ("nash_conv", "nashconv", "low"),
           ("exploitability", "exploitability", "low"), ("task_success", "task_success", "high"))


def _relation(records: dict, arm: str, key: str, better: str) -> Relation:
    """The paper's bold marks: cp_grpo best in this game (against one arm for the other rows), held only when
    every paired per-seed difference's 95% interval lies on the stated side of 0."""
    high = better == "high"
    if arm == "cp_grpo":
        others = [a for a in records if a != "cp_grpo"]
        return Relation(f"cp_grpo {'highest' if high else 'lowest'} in this game (paired, 95%)",
                        summary.resolved_order(records, "cp_grpo", others, key, better))
    return Relation(f"cp_grpo {'>' if high else '<'} {arm} (paired, 95%)",
                    summary.resolved_order(records, "cp_grpo", [arm], key, better))


def measured_rows(game: str, records: dict, impossible: dict) -> list[Row]:
    """tab:measured-transfer for one game: every column of every arm, and the leakage count."""
    rows = []
    for arm, runs in records.items():
        cid = f"measured_transfer.{game}.{PAPER_ROW[arm]}"
        for key, column, better in COLUMNS:
            iv = summary.interval(records, arm, key)
            row = Row.compare(f"{game}, {arm}: {column.replace('_', ' ')}", f"{cid}.{column}", iv.mean, iv.low,
                              iv.high, _relation(records, arm, key, better))
            rows.append(impossible_instead(row, impossible))
        leaks = sum(rec["leakage"]["violations"] for rec in runs.values())
        rows.append(Row.count(f"{game}, {arm}: leakage violations (all seeds)", f"{cid}.leakage_violations", leaks))
    return rows


def ratio_rows(leduc: dict, kuhn: dict, seeds) -> list[Row]:
    """tab:app-p1-transfer: variance ratio (arm over independent, per seed, t-interval) and the seed counts."""
    rows = []
    for label, records, arm, relation in (("leduc_to_leduc.paired", leduc, "cp_grpo", "ratio < 1"),
                                          ("leduc_to_leduc.ind", leduc, "independent", None),
                                          ("leduc_to_kuhn.paired", kuhn, "cp_grpo", "ratio < 1"),
                                          ("leduc_to_kuhn.ppo", kuhn, "ppo", "paired ratio < PPO ratio")):
        ratios = variance_ratios(records, arm)
        cid = f"app_transfer.{label}"
        if arm == "independent":       # its own denominator: exactly 1 on every seed
            rows.append(Row.compare(f"{label}: variance ratio (1 by definition)", f"{cid}.variance_ratio",
                                    float(ratios.mean()), exact=1.0))
        else:
            iv = t_interval(ratios)
            holds = iv.mean < 1 if relation == "ratio < 1" else float(variance_ratios(records, "cp_grpo").mean()) \
                < iv.mean
            rows.append(Row.compare(f"{label}: variance ratio (arm / independent)", f"{cid}.variance_ratio", iv.mean,
                                    iv.low, iv.high, Relation(relation, holds)))
        rows.append(Row.count(f"{label}: seeds", f"{cid}.seeds", len(seeds)))
    return rows
