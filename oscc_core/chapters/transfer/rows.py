"""Paper-beside-ours rows of the transfer tables.

Numbers are seed means of exact per-checkpoint values with their 95%
intervals over seeds (chips; chips^2 for contrast variances; logits^2 for
update variances; success and ratios unitless).  Variances and variance ratios
are positive by definition: their intervals are on the log scale and the rows
are compared with ``positive=True``.  Where the paper bolds CP-GRPO as the best
arm of a game, the row declares that ordering, resolved only when every paired
per-seed difference's 95% interval lies on the stated side of 0; the variance
ratio declares its side of 1.  The player-0 values and the Kuhn contrast
variances are compared under each reading of `readings` (one combined row per
claim: the verdict of the first possible, compared reading in the listed
order); NashConv or exploitability numbers that break their bound come from
`readings.rule_rows`.  The seed counts of tab:app-p1-transfer are settings.
"""
from __future__ import annotations

from oscc_core.chapters.transfer.readings import order_relation, seed_interval
from oscc_core.chapters.transfer.runs import variance_ratios
from oscc_core.method.stats import t_interval
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row

__all__ = ["measured_rows", "ratio_rows", "setting_rows"]

PAPER_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
             "ppo": "standard_ppo"}
#: (record key, claim column, better, positive) of tab:measured-transfer.
COLUMNS = (("contrast_variance_exact", "contrast_variance", "low", True),
           ("update_variance", "update_variance", "low", True),
           ("player0_value", "player0_value", "high", False), ("nash_conv", "nashconv", "low", False),
           ("exploitability", "exploitability", "low", False), ("task_success", "task_success", "high", False))
#: (label of tab:app-p1-transfer, game, arm) of the variance-ratio rows.
#: Why the reference arm's ratio to itself agrees by construction.
SELF_RATIO = "the reference arm's variance divided by itself is 1 on every seed by definition"
RATIO_ROWS = (("leduc_to_leduc.paired", "leduc", "cp_grpo"), ("leduc_to_leduc.ind", "leduc", "independent"),
              ("leduc_to_kuhn.paired", "kuhn", "cp_grpo"), ("leduc_to_kuhn.ppo", "kuhn", "ppo"))


def measured_rows(game: str, records: dict, replaced: dict) -> list[Row]:
    """tab:measured-transfer for one game: every column of every arm, and the leakage count.  `replaced`
    (claim id -> row: the combined readings, impossible rule rows) takes the place of the ordinary row."""
    rows = []
    for arm, runs in records.items():
        cid = f"measured_transfer.{game}.{PAPER_ROW[arm]}"
        for key, column, better, positive in COLUMNS:
            values = {a: {seed: rec[key] for seed, rec in r.items()} for a, r in records.items()}
            iv = seed_interval(list(values[arm].values()), positive)
            row = Row.compare(f"{game}, {arm}: {column.replace('_', ' ')}", f"{cid}.{column}", iv.mean, iv.low,
                              iv.high, order_relation(values, arm, better), positive=positive)
            rows.append(replaced.get(row.claim_id, row))
        leaks = sum(rec["leakage"]["violations"] for rec in runs.values())
        rows.append(Row.count(f"{game}, {arm}: leakage violations", f"{cid}.leakage_violations", leaks))
    return rows


def ratio_rows(leduc: dict, kuhn: dict) -> list[Row]:
    """tab:app-p1-transfer: the variance ratio (arm over independent, per seed; log-scale interval)."""
    rows = []
    for label, game, arm in RATIO_ROWS:
        records = leduc if game == "leduc" else kuhn
        ratios, cid = variance_ratios(records, arm), f"app_transfer.{label}.variance_ratio"
        if arm == "independent":       # its own denominator: exactly 1 on every seed
            rows.append(Row.compare(f"{label}: variance ratio (1 by definition)", cid, float(ratios.mean()),
                                    exact=1.0).true_by_construction(SELF_RATIO))
            continue
        iv = seed_interval(ratios, positive=True)
        if arm == "cp_grpo":
            relation = Relation.side("ratio < 1", iv.mean, iv.low, iv.high, below=1.0)
        else:                          # the paired ratio below PPO's, seed by seed
            paired, own = (dict(zip(records[a], variance_ratios(records, a))) for a in ("cp_grpo", arm))
            diff = t_interval([paired[seed] - own[seed] for seed in own])
            relation = Relation("paired ratio < PPO ratio (paired, 95%)", diff.mean < 0, diff.high < 0)
        rows.append(Row.compare(f"{label}: variance ratio (arm / independent)", cid, iv.mean, iv.low, iv.high,
                                relation, positive=True))
    return rows


def setting_rows(seeds) -> list[Row]:
    """The seed counts of tab:app-p1-transfer: settings of the paper's run (adopted when ours is the same)."""
    return [Row.setting(f"{label}: seeds", f"app_transfer.{label}.seeds", len(seeds),
                        reason=f"we train {len(seeds)} seeds per arm")
            for label, _, _ in RATIO_ROWS]
