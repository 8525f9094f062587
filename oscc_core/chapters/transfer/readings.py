"""Our numbers under each reading of a paper quantity, and the one row per claim that combines them.

`bounds` lists, for every player-0 value and contrast variance of
tab:measured-transfer, the readings of what the printed number may measure
and the range the rules allow under each.  Here each reading gets our value
(seed mean and 95% interval over seeds of the same quantity, exact per
checkpoint) and a verdict: impossible under the rules where the paper's value
breaks that reading's bound, otherwise the verdict rule with the paper's
ordering (cp_grpo best in the game) evaluated on that reading's values.
`Row.under_readings` combines them: impossible only when every reading is;
one verdict where the readings agree; where they disagree, the verdict of the
reading the paper's text fixes (`bounds.PAPER_READING`: the pooled
contrast variance, the mean over held-out roots), flagged as depending on the
reading, or "depends on the reading" where the paper's text fixes none (a
row whose paper readings, one per construction its words allow, disagree
among themselves).

Two readings have no per-seed number of their own:

* a mean over the paper's held-out roots (`bounds.held_out_roots` per seed):
  its expectation is the whole-game self-play value, and the roots add each
  checkpoint's exact variance over the equally likely private-card deals
  divided by the root count (`held_out_interval`); the ordering compares arms
  on the same roots (the paper evaluates every arm on the same held-out roots),
  so a paired difference adds the variance over deals of the two checkpoints'
  difference;
* one ordered private-card pair: the paper names none, so the reading is a rule
  check only, *not compared*, with the range of our per-pair seed means.

Per run the records need, besides the learners' evaluation (`summary`):
`seat_return` [seat 0, seat 1] against the evaluation opponent (chips),
`root_values` {"player0_value": player 0's self-play value given each private-
card deal, `exact.evaluation.private_deals` order, chips}, `contrast_by_root`
{decision point: exact contrast variance of the arm's construction with the
checkpoint as continuation, chips^2} (in Kuhn every point, in Leduc the
chapter's contrast root), `contrast_pooled` (the same pooled over every
decision point, `pooled`), and in Kuhn `contrast_by_construction` and
`contrast_pooled_by_construction` {construction: the same under each coupling
construction}, for the readings that take the contrast under another
construction the paper's words allow (`bounds.ROW_CONSTRUCTIONS`); there the
other arms keep their own construction in the ordering, and the sample
variance's value is its expectation, the exact value at '' (`run_quantities`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from oscc_core.chapters.transfer import bounds as _bounds
from oscc_core.chapters.transfer import kuhn_facts, pooled
from oscc_core.chapters.transfer.bounds import ARM_OF_ROW, GAME, Bound, all_bounds, held_out_roots
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.evaluation import root_values
from oscc_core.learning.arms import get_learner_arm
from oscc_core.method.stats import contrast_pair, held_out_interval, log_t_interval, t_interval
from oscc_core.policy import table_to_policy
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import IMPOSSIBLE, Row

#: Record column of each reading-open claim column, and which side is better (the paper bolds the best arm).
COLUMNS = {"player0_value": "high", "contrast_variance": "low"}


# ----- per-run quantities ------------------------------------------------------------------
def run_quantities(game: str, arm: str, table: np.ndarray, evaluation, root: str = "") -> dict:
    """The quantities one run adds for the readings (see the module docstring); `root` is the decision point the
    chapter measures a Leduc contrast at (Kuhn: every decision point)."""
    out = {"seat_return": [float(s.whole) for s in evaluation.versus.seat_return],
           "root_values": {"player0_value": [float(x) for x in root_values(game, table[None])[0]]}}
    policy, coupling = table_to_policy(game, table), get_learner_arm(arm).coupling_arm
    if game == GAME:
        moments = {r: arm_moments(game, r, policy) for r in kuhn_facts.KUHN_ROOTS}
        out["contrast_by_root"] = {r: m[coupling].contrast_var(0, 1) for r, m in moments.items()}
        out["contrast_by_construction"] = {c: {r: m[c].contrast_var(0, 1) for r, m in moments.items()}
                                           for c in kuhn_facts.ARMS}
        out["contrast_pooled_by_construction"] = pooled.pooled_contrast(game, table, kuhn_facts.ARMS)
        out["contrast_pooled"] = out["contrast_pooled_by_construction"][coupling]
    else:
        m = arm_moments(game, root, policy)[coupling]
        out["contrast_by_root"] = {root: m.contrast_var(*contrast_pair(m.actions))}
        out["contrast_pooled"] = pooled.pooled_contrast(game, table, (coupling,))[coupling]
    out["pool_weights"] = pooled.pool_weights(game, table)
    return out


# ----- our value under a reading ------------------------------------------------------------
def reading_value(record: dict, key: tuple) -> float:
    """Our value of one run under the reading `key` (`bounds.Bound.key`) that has one number per run."""
    kind, arg = key[0], (key[1] if len(key) > 1 else None)
    if kind == "self_play":
        return record["player0_value"]
    if kind == "versus":
        return record["mean_return"] if arg == "mean" else record["seat_return"][arg]
    if kind == "root":
        if len(key) > 2:                     # another construction than the arm's own: its exact value
            return record["contrast_by_construction"][key[2]][arg]
        return record["contrast_by_root"][arg]
    if kind == "pooled":
        return record["contrast_pooled"] if arg is None else record["contrast_pooled_by_construction"][arg]
    if kind == "sampled":
        if arg is not None:                  # another construction: the expectation of its sample variance at ''
            return record["contrast_by_construction"][arg][kuhn_facts.KUHN_ROOTS[0]]
        return record["contrast_variance_sampled"]
    if kind in ("nash_conv", "exploitability"):
        return record[kind]
    raise ValueError(f"the reading {key!r} has no single value per run.")


def seed_values(records: dict, key: tuple) -> dict[str, dict[str, float]]:
    """{arm: {seed: our value under the reading}} for every arm of one game's records."""
    return {arm: {seed: reading_value(rec, key) for seed, rec in runs.items()} for arm, runs in records.items()}


def seed_interval(values, positive: bool = False):
    """Mean and 95% interval over seeds: on the log scale for a quantity positive by definition (a variance)
    that varies over seeds, else the Student-t interval."""
    v = np.asarray(values, dtype=np.float64)
    if positive and v.mean() > 0 and np.ptp(v) > 0:
        return log_t_interval(v)
    return t_interval(v)


def _deal_values(records: dict, arm: str, seed: str) -> np.ndarray:
    return np.asarray(records[arm][seed]["root_values"]["player0_value"], dtype=np.float64)


def order_relation(values: dict[str, dict[str, float]], arm: str, better: str, noise=None) -> Relation:
    """The paper's bold mark: cp_grpo best in the game ("cp_grpo highest/lowest", when `arm` is cp_grpo) or
    better than `arm`.  holds: on the seed means; resolved: every paired per-seed difference (seeds matched by
    name) has its 95% interval on the stated side of 0 (Student t; with `noise(a, b, seed)`, the variance a
    held-out evaluation adds to the seed's difference, by `held_out_interval`)."""
    high = better == "high"
    others = [a for a in values if a != "cp_grpo"] if arm == "cp_grpo" else [arm]
    if arm == "cp_grpo":
        text = f"cp_grpo {'highest' if high else 'lowest'} in this game (paired, 95%)"
    else:
        text = f"cp_grpo {'>' if high else '<'} {arm} (paired, 95%)"
    holds, resolved = True, True
    for other in others:
        seeds = list(values["cp_grpo"])
        diffs = [values["cp_grpo"][s] - values[other][s] for s in seeds]
        if noise is None:
            iv = t_interval(diffs)
            mean, low, up = iv.mean, iv.low, iv.high
        else:
            mean, low, up = held_out_interval(diffs, [noise("cp_grpo", other, s) for s in seeds], 1)
        holds &= bool(mean > 0 if high else mean < 0)
        resolved &= bool(low > 0 if high else up < 0)
    return Relation(text, holds, resolved)


# ----- rows ------------------------------------------------------------------------------
def _held_out_row(bound: Bound, records: dict, row: str) -> Row:
    """Player 0's value as a mean over the paper's held-out roots: our whole-game values with the root noise."""
    roots, arm = held_out_roots(), ARM_OF_ROW[row]
    values = seed_values(records, ("self_play",))
    seeds = list(values[arm])
    mean, low, high = held_out_interval([values[arm][s] for s in seeds],
                                        [float(np.var(_deal_values(records, arm, s))) for s in seeds], roots)

    def noise(a: str, b: str, seed: str) -> float:
        return float(np.var(_deal_values(records, a, seed) - _deal_values(records, b, seed))) / roots
    relation = order_relation(values, arm, COLUMNS["player0_value"], noise)
    if bound.impossible:
        return bound.row(mean, (low, high))
    return replace(Row.compare(bound.quantity, bound.claim_id, mean, low, high, relation), reading=bound.reading)


def _pair_row(bound: Bound, records: dict, row: str) -> Row:
    """Player 0's value given one ordered private-card pair: a rule check, not compared (the paper names no pair);
    our per-pair seed means shown as their range."""
    runs = list(records[ARM_OF_ROW[row]].values())
    labels = runs[0]["per_pair"]["player0_value"]
    means = [float(np.mean([rec["per_pair"]["player0_value"][lab] for rec in runs])) for lab in labels]
    span = f"{min(means):.4f} to {max(means):.4f}"
    if bound.impossible:
        return bound.row(span, None)
    return replace(Row.not_compared(bound.quantity, bound.claim_id,
                                    f"the paper names no private-card pair, so there is no single number of ours to "
                                    f"compare; the rules allow its value for some pair, and our per-pair seed means "
                                    f"span {span} chips"), ours=span, reading=bound.reading)


def reading_row(bound: Bound, records: dict, row: str, column: str) -> Row:
    """One reading of one claim: impossible under the rules when the paper's value breaks the reading's
    bound, else compared with our value under the reading (our interval, the paper's ordering), or, for one
    private-card pair, a rule check only (not compared)."""
    if bound.key[0] == "held_out":
        return _held_out_row(bound, records, row)
    if bound.key[0] == "pairs":
        return _pair_row(bound, records, row)
    arm, positive = ARM_OF_ROW[row], column == "contrast_variance"
    other = construction_of(bound.key)
    # the other arms keep their own construction: the paper's ordering compares its rows as each was run
    values = seed_values(records, own_key(bound.key))
    if other is not None:
        values[arm] = {seed: reading_value(rec, bound.key) for seed, rec in records[arm].items()}
    iv = seed_interval(list(values[arm].values()), positive)
    if bound.impossible:
        return bound.row(iv.mean, (iv.low, iv.high))
    compared = Row.compare(bound.quantity, bound.claim_id, iv.mean, iv.low, iv.high,
                           order_relation(values, arm, COLUMNS[column]), positive=positive)
    if other is not None and bound.key[0] == "sampled":
        compared = replace(compared, reason=f"ours is the exact per-group variance at {kuhn_facts.KUHN_ROOTS[0]!r} "
                                            f"under the {other} construction with each checkpoint as continuation, "
                                            f"the expectation of its sample variance (our sampled estimate is of "
                                            f"the arm's own construction)")
    return replace(compared, reading=bound.reading)


def construction_of(key: tuple) -> str | None:
    """The construction a contrast-variance reading names when it is not the arm's own, else None."""
    if key[0] == "root" and len(key) > 2:
        return key[2]
    if key[0] in ("sampled", "pooled") and len(key) > 1:
        return key[1]
    return None


def own_key(key: tuple) -> tuple:
    """The same reading under each arm's own construction."""
    return key[:2] if key[0] == "root" else key[:1] if key[0] in ("sampled", "pooled") else key


def combined_row(bounds: list[Bound], rows: list[Row]) -> Row:
    """One claim's row from its readings' rows (`Row.under_readings`): where the paper's text fixes the reading
    (`bounds.paper_bounds`: one reading per construction its words allow) and those readings agree, their
    verdict decides; where they disagree among themselves, the paper fixes no single reading and the row
    depends on the reading."""
    paper = {b.reading for b in _bounds.paper_bounds(bounds)}
    fixed = [r for r in rows if r.reading in paper]
    chosen = fixed[0].reading if fixed and len({r.verdict for r in fixed}) == 1 else None
    return Row.under_readings(rows, paper_reading=chosen)


def claim_rows(game: str, records: dict, groups: int, leduc_root: str = "") -> dict[str, Row]:
    """{claim id: the row combining its readings (`combined_row`)} for the player-0 values and the contrast
    variances of the game's rows of tab:measured-transfer."""
    out = {}
    for cid, bounds in all_bounds(groups, leduc_root).items():
        _, g, row, column = cid.split(".")
        if g == game and column in COLUMNS and ARM_OF_ROW[row] in records:
            out[cid] = combined_row(bounds, [reading_row(b, records, row, column) for b in bounds])
    return out


def rule_rows(game: str, records: dict, groups: int, leduc_root: str = "") -> dict[str, Row]:
    """{claim id: impossible row} for the NashConv and exploitability numbers that break their one bound."""
    out = {}
    for cid, bounds in all_bounds(groups, leduc_root).items():
        _, g, row, column = cid.split(".")
        if g == game and column not in COLUMNS and bounds[0].impossible and ARM_OF_ROW[row] in records:
            iv = seed_interval(list(seed_values(records, bounds[0].key)[ARM_OF_ROW[row]].values()))
            out[cid] = bounds[0].row(iv.mean, (iv.low, iv.high))
    return out


def labels(groups: int, leduc_root: str = "") -> dict[str, str]:
    """{reading text: its few-word label} of every reading of the section (tables show the label)."""
    return {b.reading: b.label for bs in all_bounds(groups, leduc_root).values() for b in bs}


def summary(rows: dict[str, Row]) -> list[dict]:
    """Per combined claim: its verdict, the reading it comes from, whether it depends on the reading, and how many
    readings are impossible."""
    out = []
    for cid, r in rows.items():
        listed = r.readings or ()
        out.append({"claim id": cid, "verdict": r.verdict, "reading": r.reading,
                    "reading dependent": r.reading_dependent,
                    "impossible readings": sum(x["verdict"] == IMPOSSIBLE for x in listed),
                    "readings": len(listed)})
    return out
