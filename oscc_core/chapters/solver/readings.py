"""Our numbers under every reading of a paper quantity whose meaning the paper leaves open, and the verdict under
each (`Row.under_readings`).

The paper's solver table prints a "player-0 value" and a "best-response value"
per arm, its appendix aggregates both over "held-out roots" (512 per seed), and
its policy table prints the uniform policy's "value" and "exploitability"
against held-out opponents.  The book's own reading is the whole-game
self-play number (the tables' primary rows); this module computes, for the
same checkpoints, every other reading `feasibility.READINGS` names:

* player 1's whole-game value (-v_0) and player 1's best-response value;
* player 0's value against the evaluation opponent (uniform), exact;
* a mean over held-out roots: each seed's checkpoint evaluated on 512 private-
  card deals drawn from the deal law.  Its expectation is the whole-game
  number; its spread adds the exact per-root variance of the checkpoint
  (sigma^2 over the equally likely deals) / 512 to the seed-to-seed variance,
  so the 95% interval is mean +- t_{n-1} sqrt((s^2 + mean sigma^2 / 512) / n)
  (a deterministic policy: mean +- 1.96 sigma / sqrt(512 n), n the paper's
  seed count);
* one ordered rank pair (a root stratum) or a set of them: the paper names no
  pair, so there is no single value of ours to compare; the row says the range
  of our per-pair seed means and is *not compared* unless the rules fix every
  per-pair value (the uniform policy), when it is checked like any number.

The readings are listed in order of plausibility (`feasibility.VALUE_READINGS`
and its kin): the book's whole-game reading, the paper's appendix reading (a
mean over held-out roots), then the others.  A reading whose bound the paper's
number breaks (`feasibility`) gives an impossible row that keeps our number
under that reading; the claim is impossible under the rules only when every
reading is (`Row.under_readings`).  Where the compared readings agree, the row
takes their verdict; where they disagree, it takes the verdict under the
reading the paper's text fixes (`feasibility.paper_readings`: the held-out
roots of its appendix), flagged as reading-dependent, and where the text fixes
no reading, or the readings it leaves open disagree among themselves, the row
"depends on the reading".  Never the most favourable reading; a rank-pair
reading only says whether the rules allow the number.

The uniform-policy row is also read as a learned arm with uniform behaviour
(`feasibility.LEARNED_UNIFORM_REASON`): the book runs no such arm, so that
reading is not compared, and no uniform number is impossible under every
reading.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from oscc_core.chapters.solver.feasibility import (
    BR_READINGS,
    READINGS,
    SEAT_OPEN_VALUE_READINGS,
    SEEDS_CLAIM,
    SHORT,
    UNIFORM,
    LEARNED_UNIFORM_REASON,
    UNIFORM_EXPLOITABILITY_READINGS,
    UNIFORM_ROW_READINGS,
    UNIFORM_VALUE_READINGS,
    VALUE_READINGS,
    impossible_row,
    paper_readings,
)
from oscc_core.exact.evaluation import best_response_tables, root_values
from oscc_core.games import get_game
from oscc_core.learning.arms import get_learner_arm
from oscc_core.method.pooled_contrast import pooled_contrast
from oscc_core.method.stats import held_out_interval, t_interval
from oscc_core.reporting import claims, reading_sets
from oscc_core.reporting.rows import Row

#: Roots per seed of the paper's held-out evaluation (the count it prints for its policy/solver endpoint).
HELD_OUT_ROOTS_CLAIM = "learning_boundary.policy_solver.heldout_roots_per_seed"
#: Arm of each row label of the paper's solver table ("cfr": the exact CFR+ reference).
SOLVER_ARM = {"cp_grpo_paired": "cp_grpo", "independent": "independent", "standard_grpo": "grpo",
              "standard_ppo": "ppo", "exact_cfr_plus": "cfr"}
#: Joins the readings a row's verdict rests on when the paper's text leaves several that agree (both seats).
READING_SEPARATOR = "; "
#: Record keys of the quantities a reading evaluates.
KEYS = ("player0_value", "player1_value", "seat0_return", "best_response_0", "best_response_1")


def _claims() -> dict[str, tuple[str, str, str, tuple[str, ...]]]:
    """{claim id: (arm, kind of quantity, "point" or "interval", reading keys)} of every paper quantity the
    chapter compares under several readings, in order of plausibility: the book's whole-game reading first, then
    the paper's appendix reading (a mean over held-out roots), then the others, rank pairs last."""
    out = {}
    for label, arm in SOLVER_ARM.items():
        base = f"measured_solver.{label}"
        out[f"{base}.player0_value"] = (arm, "value", "point", VALUE_READINGS)
        out[f"{base}.seed_interval"] = (arm, "value", "interval", VALUE_READINGS)
        out[f"{base}.best_response_value"] = (arm, "br", "point", BR_READINGS)
    out["app_solver.player_value.interval"] = ("cp_grpo", "value", "interval", SEAT_OPEN_VALUE_READINGS)
    out["app_solver.best_response_value.interval"] = ("cp_grpo", "br", "interval", BR_READINGS)
    out[f"{UNIFORM}.value"] = ("uniform", "value", "point", UNIFORM_VALUE_READINGS)
    out[f"{UNIFORM}.exploitability"] = ("uniform", "exploitability", "point", UNIFORM_EXPLOITABILITY_READINGS)
    for key in ("return_mean", "return_sd", "success_mean", "success_sd", "update_variance"):
        out[f"{UNIFORM}.{key}"] = ("uniform", "row", "point", UNIFORM_ROW_READINGS)
    return out


READING_CLAIMS = _claims()


def evaluation_record(game, table: np.ndarray, evaluation) -> dict:
    """The numbers every reading needs for one checkpoint (chips): whole-game values, player 0's value against
    the evaluation opponent, the exact SD over private-card deals of each value ("root_sd") and the per-pair
    values ("pairs")."""
    g = get_game(game)
    r0, r1 = best_response_tables(g, table)
    roots = root_values(g, np.stack([table, r0, r1]))
    per_root = {"player0_value": roots[0], "best_response_0": roots[1], "best_response_1": -roots[2]}
    per_root["exploitability"] = (roots[1] - roots[2]) / 2
    e = evaluation
    return {"player0_value": e.player0_value.whole, "player1_value": -e.player0_value.whole,
            "seat0_return": e.versus.seat_return[0].whole, "seat_mean_return": e.versus.mean_return.whole,
            "best_response_0": e.best_response_values[0].whole, "best_response_1": e.best_response_values[1].whole,
            "nash_conv": e.nash_conv.whole, "exploitability": e.exploitability.whole,
            "root_sd": {k: float(np.std(v)) for k, v in per_root.items()},
            "pairs": {"player0_value": e.player0_value.by_pair(),
                      "best_response_0": e.best_response_values[0].by_pair(),
                      "best_response_1": e.best_response_values[1].by_pair()}}


def reading_records(game, runs, tables: np.ndarray, evaluations) -> dict:
    """{arm: {seed (string): evaluation_record}} of every run of the screen (average policies at T), each learned
    run's with "contrast_pooled": the exact contrast variance of its arm's construction pooled over every decision
    point, the paper's reading of a contrast variance (`method.pooled_contrast`, the transfer chapter's function)."""
    out: dict = {}
    for run, table, e in zip(runs, tables, evaluations):
        record = evaluation_record(game, table, e)
        coupling = get_learner_arm(run.arm).coupling_arm if run.arm in POOLED_ARMS else None
        if coupling is not None:
            record["contrast_pooled"] = pooled_contrast(game, table, (coupling,))[coupling]
        out.setdefault(run.arm, {})[str(run.seed)] = record
    return out


#: The learned arms whose contrast variance the paper prints (tab:measured-independent: CP-GRPO, independent
#: rollouts, standard GRPO), read pooled over every decision point.
POOLED_ARMS = ("cp_grpo", "independent", "grpo")



@dataclass(frozen=True)
class Readings:
    """Our numbers under every reading (`records`: {arm: {seed: evaluation_record}}, the CFR+ reference under
    arm "cfr") and the rule checks of every (claim, reading) (`checks`, from `feasibility.feasibility_table`)."""

    records: dict
    checks: dict
    roots: int
    seeds: int

    @classmethod
    def build(cls, records: dict, checks: list[dict]) -> "Readings":
        return cls(records, {(c["claim_id"], c["reading"]): c for c in checks},
                   int(claims.claim(HELD_OUT_ROOTS_CLAIM)), int(claims.claim(SEEDS_CLAIM)))

    def _values(self, arm: str, key: str) -> np.ndarray:
        return np.array([rec[key] for rec in self.records[arm].values()], dtype=np.float64)

    def _interval(self, arm: str, key: str) -> tuple[float, float | None, float | None]:
        v = self._values(arm, key)
        if v.size == 1:
            return float(v[0]), None, None
        iv = t_interval(v)
        return iv.mean, iv.low, iv.high

    def _held_out(self, arm: str, key: str) -> tuple[float, float, float]:
        sds = [rec["root_sd"][key] for rec in self.records[arm].values()]
        return held_out_interval(self._values(arm, key), np.square(sds), self.roots, self.seeds)

    def _pair_range(self, arm: str, keys) -> tuple[float, float]:
        runs = list(self.records[arm].values())
        means = [np.mean([rec["pairs"][k][label] for rec in runs]) for k in keys for label in runs[0]["pairs"][k]]
        return float(min(means)), float(max(means))

    def _row(self, quantity: str, claim_id: str, shape: str, centre, low, high) -> Row:
        if shape == "interval":
            low, high = (centre, centre) if low is None else (low, high)
            return Row.quantile_pair(quantity, claim_id, low, high)
        return Row.compare(quantity, claim_id, centre, low, high)

    def reading_row(self, claim_id: str, reading: str, quantity: str) -> Row:
        """Our comparison of `claim_id` under one reading (not yet checked against the rules)."""
        arm, kind, shape, _ = READING_CLAIMS[claim_id]
        label = READINGS[reading]
        simple = {"whole_p0": "player0_value", "whole_p1": "player1_value", "versus": "seat0_return",
                  "versus_seats": "seat_mean_return", "br0": "best_response_0", "br1": "best_response_1",
                  "exploitability": "exploitability", "nash_conv": "nash_conv"}
        held = {"held_out": "player0_value", "br0_held_out": "best_response_0", "br1_held_out": "best_response_1",
                "expl_held_out": "exploitability"}
        if reading == "learned_uniform":
            row = Row.not_compared(quantity, claim_id, LEARNED_UNIFORM_REASON)
        elif reading in simple:
            row = self._row(quantity, claim_id, shape, *self._interval(arm, simple[reading]))
        elif reading in held:
            row = self._row(quantity, claim_id, shape, *self._held_out(arm, held[reading]))
        elif reading in ("gain0", "gain1"):
            player = int(reading[-1])
            v = self._values(arm, f"best_response_{player}") - (1 - 2 * player) * self._values(arm, "player0_value")
            iv = t_interval(v)
            row = self._row(quantity, claim_id, shape, iv.mean, iv.low, iv.high)
        else:   # one rank pair or a set of them: the paper names none
            keys = ("best_response_0", "best_response_1") if kind == "br" else ("player0_value",)
            lo, hi = self._pair_range(arm, keys)
            row = Row.not_compared(quantity, claim_id, f"the paper names no rank pair or set of pairs, so there is no "
                                   f"single number of ours to compare; our per-pair seed means span [{lo:.4f}, "
                                   f"{hi:.4f}] chips")
        return replace(row, reading=label)

    def combine(self, row: Row) -> Row:
        """`row` (the table's comparison under the book's reading) combined with every other reading of its claim,
        in the listed order (`combine_readings`).  A row whose claim has no other reading is returned unchanged."""
        spec = READING_CLAIMS.get(row.claim_id)
        if spec is None:
            return row
        own, *others = spec[3]
        listed = [self._checked(replace(row, reading=READINGS[own]), own)]
        listed += [self._checked(self.reading_row(row.claim_id, key, row.quantity), key) for key in others]
        return combine_readings(listed, *paper_readings(row.claim_id))

    def _checked(self, row: Row, reading: str) -> Row:
        entry = self.checks.get((row.claim_id, reading))
        if entry is None or not entry["impossible"]:
            return row
        ours = entry["ours"] if row.ours == "—" else row.ours
        return impossible_row(entry, row.quantity, ours, row.interval, row.exact)

    @staticmethod
    def table(rows: list[Row]) -> list[dict]:
        """One line per (paper quantity, reading), in the listed order of the readings: the claim, the paper's
        number, the reading (its few words, `feasibility.SHORT`), our number and 95% interval under it, the
        verdict under it, and "decides":
        "all" on every reading of a quantity whose readings agree (or that is impossible under all), "the paper's"
        on the reading the paper's text fixes where the readings disagree, and nothing on every reading of a quantity
        that depends on the reading."""
        short = {READINGS[k]: v for k, v in SHORT.items()}
        out = []
        for r in rows:
            if r.readings is None or r.printing_of or not all(x["reading"] in short for x in r.readings):
                continue
            for x in r.readings:
                paper = x["reading"] in r.reading.split(READING_SEPARATOR)
                decides = ("" if r.verdict == claims.DEPENDS else "the paper's" if r.reading_dependent and paper
                           else "" if r.reading_dependent else "all")
                out.append({"claim id": r.claim_id, "paper": claims.format_value(r.paper),
                            "reading": short[x["reading"]], "ours": _text(x["ours"]),
                            "95% interval": _text(x["interval"]), "verdict": x["verdict"], "decides": decides})
        return out


def _text(x) -> str:
    """A number (4 decimals), an interval "[low, high]" or a text as a table cell; "—" for none."""
    if x is None:
        return "—"
    if isinstance(x, (tuple, list)):
        return f"[{float(x[0]):.4f}, {float(x[1]):.4f}]"
    if isinstance(x, float):
        return f"{x:.4f}"
    return str(x)


def combine_readings(listed: list[Row], fixed: tuple[str, ...] = (), words: str = "") -> Row:
    """One quantity's rows under its readings (`listed`, each naming its reading by its `READINGS` text), combined
    by `Row.under_readings`, with the readings the paper's text leaves (`fixed`, keys of `READINGS`; `words`: what
    fixes them).  Where the compared ones among `fixed` agree, their reading is the paper's (the verdict where the
    readings disagree); where they disagree among themselves, or the text fixes nothing, none is.  With more than
    one reading left by the text, the reason says that the text fixes only what they share, and the row's reading
    names every compared one of them (joined by `READING_SEPARATOR`)."""
    labels = [READINGS[k] for k in fixed]
    left = [r for r in listed if r.reading in labels]
    compared = [r for r in left if r.verdict != claims.NOT_COMPARED]
    paper = compared[0].reading if compared and len({r.verdict for r in compared}) == 1 else None
    row = Row.under_readings(listed, paper_reading=paper)
    if not (row.reading_dependent and row.verdict != claims.DEPENDS):
        return row
    under = "; ".join(f"{r.verdict} under '{r.reading}'" for r in left)
    return replace(row, reading=READING_SEPARATOR.join(r.reading for r in compared),
                   reason=f"{words}: the verdict is the one under the reading{'s' if len(left) > 1 else ''} "
                          f"it leaves ({under}); {row.reason}")
