"""Paper-beside-ours rows of the transfer tables.

Numbers are seed means of exact per-checkpoint values with their 95%
intervals over seeds (chips; chips^2 for contrast variances; logits^2 for
update variances; success and ratios unitless).  Variances and variance
ratios are positive by definition: their intervals are on the log scale and
the rows are compared with ``positive=True``.  Where the paper bolds CP-GRPO
as the best arm of a game, the row declares that ordering, resolved only
when every paired per-seed difference's 95% interval lies on the stated side
of 0; the variance ratio declares its side of 1.  The player-0 values and the
contrast variances are compared under each reading of `readings` (one
combined row per claim, `readings.combined_row`); the variance ratios, a
ratio of two contrast variances, under the same two readings of a contrast
variance (pooled over every decision point, the paper's, and at the chapter's
root); an update variance under each step size the book measures, none of them
the paper's (it gives none; its size is not compared).  NashConv or exploitability numbers that break their bound come
from `readings.rule_rows`.  The seed counts of tab:app-p1-transfer are
settings.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.transfer.bounds import AT_ROOT, POOLED
from oscc_core.chapters.transfer.readings import order_relation, seed_interval
from oscc_core.chapters.transfer.runs import variance_ratios
from oscc_core.method.stats import t_interval
from oscc_core.reporting import reading_sets
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row

__all__ = ["ETA_FROZEN", "measured_rows", "ratio_rows", "setting_rows", "update_variance_row"]

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
#: The reading of an update variance's step size where the chapter is not given each arm's: the operating point's,
#: frozen on Leduc.  The paper gives no step size, so no reading of it is the paper's; with each arm's step size
#: (`etas`) and the update variances at every step size of the grid (`by_eta`) the rows read an update variance at
#: each, in the words of the learning chapter, which reads the same Leduc checkpoints (`reporting.reading_sets`).
ETA_FROZEN = ("step size eta of each arm chosen on Leduc's development seeds and frozen with the operating point "
              "before Kuhn, the step size each run trained with")
ETA_ONE_READING = ("the size of an update variance follows the step size, which the paper does not give, so it is not "
                   "compared; the Kuhn-tuned control (the converging learner's choices made on Kuhn) records "
                   "exploitability only, no update variance")
#: The two readings of a variance ratio's contrast variances (`bounds`): pooled (the paper's) and at one root.
RATIO_READINGS = {"pooled": POOLED, "root": AT_ROOT}
RATIO_ROWS = (("leduc_to_leduc.paired", "leduc", "cp_grpo"), ("leduc_to_leduc.ind", "leduc", "independent"),
              ("leduc_to_kuhn.paired", "kuhn", "cp_grpo"), ("leduc_to_kuhn.ppo", "kuhn", "ppo"))


def _column_row(game: str, arm: str, records: dict, key: str, column: str, better: str, positive: bool) -> Row:
    """One column of one arm of tab:measured-transfer: the seed mean with its 95% interval and the ordering."""
    values = {a: {seed: rec[key] for seed, rec in r.items()} for a, r in records.items()}
    iv = seed_interval(list(values[arm].values()), positive)
    return Row.compare(f"{game}, {arm}: {column.replace('_', ' ')}", f"measured_transfer.{game}.{PAPER_ROW[arm]}."
                       f"{column}", iv.mean, iv.low, iv.high, order_relation(values, arm, better), positive=positive)


def update_variance_row(game: str, arm: str, records: dict, etas: dict | None = None,
                        by_eta: dict | None = None) -> Row:
    """The update variance of `arm` under each step size the book measures: its own (`etas`: {arm: eta}; without
    it, `ETA_FROZEN`), then every step size of `by_eta` ({eta: {arm: {seed: {"update_variance": v}}}}), each with
    the ordering at that step size; no reading is the paper's (it gives no step size), and the size is not compared
    (`reporting.comparability`)."""
    own = _column_row(game, arm, records, "update_variance", "update_variance", "low", True)
    own = replace(own, reading=ETA_FROZEN if etas is None else reading_sets.eta_reading(arm=arm, etas=etas))
    if not by_eta:
        return replace(own, reason=ETA_ONE_READING if game == "kuhn" else own.reason)
    listed = [own] + [replace(_column_row(game, arm, at, "update_variance", "update_variance", "low", True),
                              reading=reading_sets.eta_reading(eta)) for eta, at in by_eta.items()]
    return Row.under_readings(listed)


def measured_rows(game: str, records: dict, replaced: dict, etas: dict | None = None,
                  by_eta: dict | None = None) -> list[Row]:
    """tab:measured-transfer for one game: every column of every arm, and the leakage count.  `replaced`
    (claim id -> row: the combined readings, impossible rule rows) takes the place of the ordinary row; an update
    variance is read at each step size the book measures (`update_variance_row`, with each arm's own `etas` and the
    grid's `by_eta`)."""
    rows = []
    for arm, runs in records.items():
        cid = f"measured_transfer.{game}.{PAPER_ROW[arm]}"
        for key, column, better, positive in COLUMNS:
            row = (update_variance_row(game, arm, records, etas, by_eta) if column == "update_variance" else
                   _column_row(game, arm, records, key, column, better, positive))
            rows.append(replaced.get(row.claim_id, row))
        leaks = sum(rec["leakage"]["violations"] for rec in runs.values())
        rows.append(Row.count(f"{game}, {arm}: leakage violations", f"{cid}.leakage_violations", leaks))
    return rows


def _ratio_reading(label: str, game: str, arm: str, records: dict, reading: str, key) -> Row:
    """One reading of a variance ratio (arm over independent per seed, log-scale interval) with its relation."""
    ratios, cid = variance_ratios(records, arm, key), f"app_transfer.{label}.variance_ratio"
    iv = seed_interval(ratios, positive=True)
    if arm == "cp_grpo":
        relation = Relation.side("ratio < 1", iv.mean, iv.low, iv.high, below=1.0)
    else:                          # the paired ratio below PPO's, seed by seed
        paired, own = (dict(zip(records[a], variance_ratios(records, a, key))) for a in ("cp_grpo", arm))
        diff = t_interval([paired[seed] - own[seed] for seed in own])
        relation = Relation("paired ratio < PPO ratio (paired, 95%)", diff.mean < 0, diff.high < 0)
    row = Row.compare(f"{label}: variance ratio (arm / independent)", cid, iv.mean, iv.low, iv.high, relation,
                      positive=True)
    return replace(row, reading=reading)


def ratio_rows(leduc: dict, kuhn: dict, root: str = "", leduc_root: str = "") -> list[Row]:
    """tab:app-p1-transfer: the variance ratio (arm over independent, per seed; log-scale interval), under the two
    readings of its contrast variances: pooled over every decision point (the paper's reading: its text fixes it,
    `bounds.PAPER_READING_BASIS`, so it decides where the two disagree) and at the chapter's root of the game (`root` in Kuhn, `leduc_root` in Leduc)."""
    rows = []
    for label, game, arm in RATIO_ROWS:
        records = leduc if game == "leduc" else kuhn
        cid = f"app_transfer.{label}.variance_ratio"
        if arm == "independent":       # its own denominator: exactly 1 on every seed, under every reading
            ratios = variance_ratios(records, arm)
            rows.append(Row.compare(f"{label}: variance ratio (1 by definition)", cid, float(ratios.mean()),
                                    exact=1.0).true_by_construction(SELF_RATIO))
            continue
        at = RATIO_READINGS["root"].format(root=leduc_root if game == "leduc" else root)
        readings = [_ratio_reading(label, game, arm, records, POOLED, "contrast_pooled"),
                    _ratio_reading(label, game, arm, records, at, "contrast_variance_exact")]
        rows.append(Row.under_readings(readings, paper_reading=POOLED))
    return rows


def setting_rows(seeds) -> list[Row]:
    """The seed counts of tab:app-p1-transfer: settings of the paper's run (adopted when ours is the same)."""
    return [Row.setting(f"{label}: seeds", f"app_transfer.{label}.seeds", len(seeds),
                        reason=f"we train {len(seeds)} seeds per arm")
            for label, _, _ in RATIO_ROWS]
