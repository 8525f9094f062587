"""Paper numbers that no profile can produce under the rules of the game, under each reading of the number.

Two-player zero-sum, values in chips; for a profile with player-0 value v_0
(v_1 = -v_0), best-response values BR_0, BR_1 (each player's value when it
best-responds to the other seat) and NashConv = BR_0 + BR_1, with v* player
0's equilibrium value:

* v_0 lies in [v* - NashConv, v* + NashConv] (so v_1 in [-v* - NashConv,
  -v* + NashConv]);
* BR_0 >= max(v_0, v*) and BR_1 >= max(-v_0, -v*), so, with BR_0 + BR_1 =
  NashConv, BR_0 <= NashConv + min(v_0, v*) and BR_1 <= NashConv - max(v_0, v*);
* exploitability = NashConv / 2 exactly (per seed, hence for seed means and
  their t-intervals too);
* against the uniform opponent, player 0's value is at most its best-response
  value against uniform, and no value anywhere exceeds the largest pot;
* the uniform policy is fixed by the rules, so every number of it (per seat,
  per rank pair, per private-card deal) is a single exact number.

The paper leaves open what its "value" and "best-response value" are (its
appendix aggregates them over held-out roots), so each is checked under every
reading the chapter can compute (`READINGS`): the whole-game self-play value
of player 0 (the book's reading) or of player 1, player 0's value against the
evaluation opponent, a mean over held-out roots (private-card deals), one rank
pair or a set of them; a best-response value as player 0's or player 1's,
whole game, over held-out roots or per pair; an exploitability as NashConv / 2,
as NashConv, as one player's gain, per pair or over held-out roots.  Only
readings the rules bound can break: a mean over sampled roots or a value on
one rank pair of a trained policy is bounded only by the largest pot.  The
uniform-policy row is read as the fixed uniform policy (every number fixed by
the rules) and as a learned arm with uniform behaviour (the paper prints an
update variance and seed SDs for it, so its arm may update): the rules fix no
number of such an arm, and the book runs none (`LEARNED_UNIFORM_REASON`).

Where the paper's text fixes a reading, `PAPER_READINGS` names it with the
words that fix it (`paper_readings`).

v* is -1/18 in Kuhn and a CFR+ bracket in Leduc (`exact.evaluation.
equilibrium_value`); a number is outside a range only if it is outside for
every v* in the bracket, and only by more than the printed rounding of every
paper number the check uses (half a unit in the last decimal of the claim as
stored).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from oscc_core.exact.evaluation import (
    FEASIBILITY_ROUNDING,
    EquilibriumValue,
    best_response_tables,
    equilibrium_value,
    evaluate_checkpoint,
    feasibility_band,
    root_values,
)
from oscc_core.games import LEDUC, get_game
from oscc_core.games.deal_tables import terminal_utilities
from oscc_core.policy import policy_table, uniform_policy
from oscc_core.reporting import claims, reading_sets
from oscc_core.reporting.rows import Row

SOLVER_ROWS = ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo", "exact_cfr_plus")
# tab:app-p1-solver is the CP-GRPO paired row of tab:measured-solver (its reported values are `same_as` it),
# so its NashConv interval is that row's
NASHCONV_INTERVAL = {"cp_grpo_paired": "app_solver.nashconv.interval"}
#: Rows of tab:measured-solver that are one deterministic policy: their "seed interval" is a point.
DETERMINISTIC_ROWS = ("exact_cfr_plus",)
UNIFORM = "grpo_ppo.uniform_policy"
SEEDS_CLAIM = "grpo_ppo.footnote.seeds"
HELD_OUT_CLAIM = "learning_boundary.policy_solver.heldout_roots_per_seed"
#: How the bound of a reading that only the largest pot bounds begins.
OPEN_BOUND = "no rule bound but the largest pot"

#: Every reading of a paper quantity the chapter computes, by key.
READINGS = {
    "whole_p0": reading_sets.VALUE_SELF_PLAY,
    "whole_p1": "whole-game self-play value of player 1",
    "versus": reading_sets.VALUE_VERSUS_SEAT0,
    "versus_seats": reading_sets.VALUE_VERSUS_SEATS,
    "held_out": reading_sets.held_out_value(int(claims.claim("learning_boundary.policy_solver.heldout_roots_per_seed"))),
    "pairs": reading_sets.VALUE_PAIR,
    "br0": "player 0's whole-game best-response value",
    "br1": "player 1's whole-game best-response value",
    "br0_held_out": "player 0's best-response value, mean over the held-out roots",
    "br1_held_out": "player 1's best-response value, mean over the held-out roots",
    "br_pairs": "either best-response value on one rank pair, or the mean over a set of pairs",
    "exploitability": "NashConv / 2 of the whole game",
    "nash_conv": "NashConv of the whole game (the sum of both players' gains)",
    "gain0": "player 0's gain from best-responding, BR_0 - v_0",
    "gain1": "player 1's gain from best-responding, BR_1 - v_1",
    "expl_pairs": "NashConv / 2 on one rank pair, or the mean over a set of pairs",
    "expl_held_out": "NashConv / 2, mean over the held-out roots",
    "whole": "whole game",
    "fixed_uniform": "the uniform policy itself, fixed (it never updates, so the rules fix its numbers)",
    "learned_uniform": "a learned arm with uniform behaviour (its policy updates, so the rules fix none of its "
                       "numbers)",
}
#: A few words for each reading, for tables (one reading each; the readings table lists what each stands for).
SHORT = {"whole_p0": "self-play, player 0", "whole_p1": "self-play, player 1", "versus": "player 0 vs uniform",
         "versus_seats": "vs uniform, both seats", "held_out": "held-out roots", "pairs": "rank pairs",
         "br0": "BR_0, whole game", "br1": "BR_1, whole game", "br0_held_out": "BR_0, held-out roots",
         "br1_held_out": "BR_1, held-out roots", "br_pairs": "BR, rank pairs", "exploitability": "NashConv / 2",
         "nash_conv": "NashConv", "gain0": "gain of player 0", "gain1": "gain of player 1",
         "expl_pairs": "NashConv / 2, rank pairs", "expl_held_out": "NashConv / 2, held-out roots",
         "whole": "whole game", "fixed_uniform": "fixed uniform policy",
         "learned_uniform": "learned, uniform behaviour"}
#: The readings of each kind of paper quantity, the book's whole-game reading first, then the reading the paper's
#: appendix states (a mean over held-out roots), then the others, the rank pairs (a rule check: the paper names no
#: pair) last.  `Row.under_readings` gives the verdict all compared readings agree on; where they disagree, the
#: verdict under the reading the paper's text fixes (`PAPER_READINGS`), else "depends on the reading".
VALUE_READINGS = ("whole_p0", "held_out", "versus_seats", "versus", "pairs")   # the transfer chapter's, in order
SEAT_OPEN_VALUE_READINGS = ("whole_p0", "held_out", "whole_p1", "versus_seats", "versus", "pairs")
#: The readings only the largest pot bounds for a trained policy (`open_readings`).
OPEN_READINGS = ("held_out", "versus", "pairs", "br0_held_out", "br1_held_out", "br_pairs")
BR_READINGS = ("br0", "br0_held_out", "br1", "br1_held_out", "br_pairs")
UNIFORM_VALUE_READINGS = ("whole_p0", "held_out", "whole_p1", "versus", "versus_seats", "learned_uniform", "pairs")
UNIFORM_EXPLOITABILITY_READINGS = ("exploitability", "expl_held_out", "nash_conv", "gain0", "gain1",
                                   "learned_uniform", "expl_pairs")
#: The other numbers of the uniform-policy row (return and success, their SDs, the update variance).
UNIFORM_ROW_READINGS = ("fixed_uniform", "learned_uniform")
#: Why the reading of a learned arm with uniform behaviour has no number of ours.
LEARNED_UNIFORM_REASON = ("the paper's uniform-policy row prints an update variance and standard deviations over "
                          "seeds, so its arm may update while it behaves uniformly; the paper does not say what such "
                          "an arm learns, and the book runs no such arm, so there is no number of ours to compare")
#: Where the paper's words fix the aggregation of a value or best-response value: the appendix's solver table.
HELD_OUT_TEXT = ("the paper's text fixes the aggregation: its appendix solver table gives 'held-out roots' as the "
                 "aggregation object of the player value and the best-response value, its solver protocol "
                 "'enumerates the same held-out roots used by the policy evaluation', and its solver table reports "
                 "learners and the CFR+ reference 'under the same held-out root convention'")


def paper_readings(claim_id: str) -> tuple[tuple[str, ...], str]:
    """(the reading keys the paper's text leaves for `claim_id`, the words that fix them): the mean over held-out
    roots for player values and their seed intervals (player 0's: the solver table heads the column 'player-0
    value', and the appendix's interval repeats CP-GRPO's), either seat's mean over held-out roots for a
    best-response value (the text names no seat), the held-out mean of the fixed or the learned uniform arm for
    the uniform policy's value (its column is the solver table's value: CP-GRPO's 0.2136 is printed in both); ()
    where the text fixes nothing (the uniform policy's exploitability is an 'evaluator summary', its other numbers
    name no reading)."""
    if claim_id.endswith((".player0_value", ".seed_interval")) or claim_id == "app_solver.player_value.interval":
        return ("held_out",), HELD_OUT_TEXT
    if claim_id.endswith("best_response_value") or claim_id == "app_solver.best_response_value.interval":
        return ("br0_held_out", "br1_held_out"), HELD_OUT_TEXT + "; it names no seat"
    if claim_id == f"{UNIFORM}.value":
        return ("held_out", "learned_uniform"), (HELD_OUT_TEXT + "; the uniform policy's value stands in the same "
                                                 "column as CP-GRPO's 0.2136, but the text does not say whether "
                                                 "the uniform arm is fixed or learned")
    return (), ""


def value_range(equilibrium: EquilibriumValue, nash_conv: float) -> tuple[float, float]:
    """[v*_low - NashConv, v*_high + NashConv] (chips): every player-0 value a profile with this NashConv can have
    (`exact.evaluation.feasibility_band` with the given v*, whose game it already fixes)."""
    band = feasibility_band(LEDUC, nash_conv, equilibrium)
    return band.low, band.high


def best_response_ranges(equilibrium: EquilibriumValue, nash_conv: float, value: float | None = None
                         ) -> tuple[tuple[float, float], tuple[float, float]]:
    """((low, high) of BR_0, (low, high) of BR_1) in chips for a profile with this NashConv (and player-0 value).

    Without `value` only v* and NashConv bind: BR_0 in [v*, v* + NashConv],
    BR_1 in [-v*, NashConv - v*]; widened over the bracket of v*.
    """
    lo, hi = equilibrium.low, equilibrium.high
    if value is None:
        return (lo, hi + nash_conv), (-hi, nash_conv - lo)
    return (max(value, lo), nash_conv + min(value, hi)), (max(-value, -hi), nash_conv - max(value, lo))


def outside(paper, ranges, slack: float = FEASIBILITY_ROUNDING) -> bool:
    """True when the paper's number (or every point of its interval [a, b]) lies outside every range by > slack."""
    a, b = (paper, paper) if np.isscalar(paper) else paper
    return all(b < lo - slack or a > hi + slack for lo, hi in ranges)


def nearest_allowed(paper, ranges) -> float:
    """The number any range allows that is closest to the paper's number (or to its interval)."""
    a, b = (paper, paper) if np.isscalar(paper) else paper
    candidates = [min(max(a, lo), hi) if a > hi else max(min(b, hi), lo) for lo, hi in ranges]
    return float(min(candidates, key=lambda x: max(a - x, x - b, 0.0)))


def _entry(claim_id: str, reading: str, quantity: str, ranges, bound: str, slack: float, flag: bool = True,
           note: str = "", ours=None, broken: bool | None = None) -> dict:
    """One checked paper number under one reading (a key of `READINGS`): claim id, paper value, the rule bound
    and the range(s) it allows (chips).

    `broken` defaults to "outside every range"; an identity on an interval's ends passes its own test.
    """
    paper = claims.claim(claim_id)
    broken = outside(paper, ranges, slack) if broken is None else broken
    return {"claim_id": claim_id, "reading": reading, "quantity": quantity, "paper": paper, "bound": bound,
            "allowed": [[float(lo), float(hi)] for lo, hi in ranges], "slack": float(slack),
            "ours": nearest_allowed(paper, ranges) if ours is None else ours,
            "broken": bool(broken), "impossible": bool(broken and flag), "note": note}


def largest_pot(game) -> float:
    """The most any player can win or lose in one hand (chips)."""
    return float(np.abs(terminal_utilities(get_game(game))).max())


def _max_nash_conv(game) -> float:
    """The largest NashConv the rules allow (chips): each best response wins at most the largest pot."""
    return 2.0 * largest_pot(game)


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def _paper_slack(claim_id: str) -> float:
    value = claims.claim(claim_id)
    values = value if isinstance(value, list) else [value]
    return max(claims.printed_rounding(x) for x in values) + FEASIBILITY_ROUNDING


def open_readings(claim_id: str, keys, game: str = "leduc") -> list[dict]:
    """The readings of `keys` that the rules bound only by the pot (a trained policy's value against the
    uniform opponent, over sampled held-out roots, or on one rank pair): each number inside the pot is allowed."""
    pot = largest_pot(game)
    br_uniform = uniform_reference(game)["best_response_0"]
    out = []
    for key in keys:
        if key == "versus":
            ranges, bound = [(-pot, br_uniform)], (f"a player-0 policy against the uniform opponent wins at most "
                                                   f"player 0's best-response value against it, {_fmt(br_uniform)}")
        else:
            ranges, bound = [(-pot, pot)], (f"{OPEN_BOUND}, {pot:g} chips: a value over "
                                            f"sampled roots or on one rank pair of a trained policy is not fixed "
                                            f"by its whole-game numbers")
        out.append(_entry(claim_id, key, READINGS[key], ranges, bound, _paper_slack(claim_id)))
    return out


def solver_row_checks(row: str, equilibrium: EquilibriumValue, game: str = "leduc") -> list[dict]:
    """The checks (chips) of one row of tab:measured-solver: NashConv, exploitability, player-0 value,
    best-response value (as player 0's and as player 1's: BR_0 + BR_1 = NashConv, BR_0 >= max(v_0, v*),
    BR_1 >= max(-v_0, -v*)) and the value's seed interval (bounded with the printed
    NashConv interval where there is one, CP-GRPO's in tab:app-p1-solver, or as a point for a deterministic
    policy; otherwise shown, not flagged), each under its whole-game reading, then the open readings."""
    base = f"measured_solver.{row}"
    v0, br, nc, ex = (float(claims.claim(f"{base}.{k}"))
                      for k in ("player0_value", "best_response_value", "nashconv", "exploitability"))
    r = claims.printed_rounding
    eps = FEASIBILITY_ROUNDING
    v_star = f"v* in [{equilibrium.low:.5f}, {equilibrium.high:.5f}]"
    out = [_entry(f"{base}.nashconv", "whole", f"{row}: NashConv", [(0.0, _max_nash_conv(game))],
                  f"0 <= NashConv <= 2 x the largest pot = {_max_nash_conv(game):g} chips", r(nc) + eps),
           _entry(f"{base}.exploitability", "exploitability", f"{row}: exploitability", [(nc / 2, nc / 2)],
                  f"exploitability = NashConv / 2 = {_fmt(nc / 2)} (the row's NashConv {nc:g})",
                  r(ex) + r(nc) / 2 + eps)]
    band = value_range(equilibrium, nc)
    out.append(_entry(f"{base}.player0_value", "whole_p0", f"{row}: player-0 value", [band],
                      f"player-0 value <= v* + NashConv = {_fmt(band[1])} and >= v* - NashConv = {_fmt(band[0])} "
                      f"({v_star}, the row's NashConv {nc:g})", r(v0) + r(nc) + eps))
    value_ok = not out[-1]["broken"]
    # the row's own value tightens the best-response ranges only when it is itself feasible
    br_ranges = best_response_ranges(equilibrium, nc, v0 if value_ok else None)
    given = f"the row's player-0 value {v0:g} and NashConv {nc:g}" if value_ok else f"the row's NashConv {nc:g}"
    slack = r(br) + r(nc) + (r(v0) if value_ok else 0.0) + eps
    for player, (a, b) in enumerate(br_ranges):
        out.append(_entry(f"{base}.best_response_value", f"br{player}", f"{row}: best-response value",
                          [(a, b)], f"BR_{player} in [{_fmt(a)}, {_fmt(b)}] given {given} ({v_star})", slack))
    interval = claims.claim(f"{base}.seed_interval")
    nc_claim = NASHCONV_INTERVAL.get(row)
    nc_hi = float(claims.claim(nc_claim)[1]) if nc_claim else nc
    band_hi = value_range(equilibrium, nc_hi)
    deterministic = row in DETERMINISTIC_ROWS
    source = (f"the upper end {nc_hi:g} of the printed NashConv interval" if nc_claim else
              f"the row's NashConv {nc:g}; one deterministic policy, so its seed interval is one point"
              if deterministic else f"the row's NashConv {nc:g}")
    flag = nc_claim is not None or deterministic
    out.append(_entry(f"{base}.seed_interval", "whole_p0", f"{row}: 95% seed interval of the player-0 value",
                      [band_hi], f"a seed mean of player-0 values lies in [v* - NashConv, v* + NashConv] = "
                      f"[{_fmt(band_hi[0])}, {_fmt(band_hi[1])}] ({v_star}, {source})",
                      max(r(x) for x in interval) + r(nc_hi) + eps, flag=flag,
                      note="" if flag else "not flagged: the interval is of a seed mean and no NashConv "
                                           "interval is printed for this row, so the bound uses a point mean"))
    for claim_id, keys in ((f"{base}.player0_value", VALUE_READINGS), (f"{base}.seed_interval", VALUE_READINGS),
                           (f"{base}.best_response_value", BR_READINGS)):
        out += open_readings(claim_id, [k for k in keys if k in OPEN_READINGS], game)
    return out


def app_interval_checks(equilibrium: EquilibriumValue, game: str = "leduc") -> list[dict]:
    """The 95% intervals of tab:app-p1-solver against the ranges the printed NashConv interval allows; the player
    value's seat is open there, so it is read as player 0's and as player 1's."""
    nc_lo, nc_hi = (float(x) for x in claims.claim("app_solver.nashconv.interval"))
    r, eps = claims.printed_rounding, FEASIBILITY_ROUNDING
    value_id, br_id = "app_solver.player_value.interval", "app_solver.best_response_value.interval"
    value_slack = max(r(x) for x in claims.claim(value_id)) + r(nc_hi) + eps
    band = value_range(equilibrium, nc_hi)
    ranges = best_response_ranges(equilibrium, nc_hi)
    ex = claims.claim("app_solver.exploitability.interval")
    slack = max(r(x) for x in ex) + max(r(nc_lo), r(nc_hi)) / 2 + eps
    out = [
        _entry(value_id, "whole_p0", "player value: 95% interval", [band],
               f"player-0 value in [v* - NashConv, v* + NashConv] = [{_fmt(band[0])}, {_fmt(band[1])}] with the "
               f"upper end {nc_hi:g} of the NashConv interval", value_slack),
        _entry(value_id, "whole_p1", "player value: 95% interval", [(-band[1], -band[0])],
               f"player-1 value in [-v* - NashConv, -v* + NashConv] = [{_fmt(-band[1])}, {_fmt(-band[0])}] with "
               f"the upper end {nc_hi:g} of the NashConv interval", value_slack)]
    br_slack = max(r(x) for x in claims.claim(br_id)) + r(nc_hi) + eps
    for player, (a, b) in enumerate(ranges):
        out.append(_entry(br_id, f"br{player}", "best-response value: 95% interval", [(a, b)],
                          f"BR_{player} in [{_fmt(a)}, {_fmt(b)}] with the upper end {nc_hi:g} of the NashConv "
                          f"interval", br_slack))
    out += [
        _entry("app_solver.nashconv.interval", "whole", "NashConv: 95% interval", [(0.0, _max_nash_conv(game))],
               f"0 <= NashConv <= {_max_nash_conv(game):g} chips", r(nc_hi) + eps),
        _entry("app_solver.exploitability.interval", "exploitability", "exploitability: 95% interval",
               [(nc_lo / 2, nc_hi / 2)],
               f"exploitability = NashConv / 2 per seed, so its interval is [{_fmt(nc_lo / 2)}, {_fmt(nc_hi / 2)}]",
               slack, broken=_interval_mismatch(ex, (nc_lo / 2, nc_hi / 2), slack)),
    ]
    return (out + open_readings(value_id, [k for k in SEAT_OPEN_VALUE_READINGS if k in OPEN_READINGS], game)
            + open_readings(br_id, [k for k in BR_READINGS if k in OPEN_READINGS], game))


def _interval_mismatch(paper, expected, slack: float) -> bool:
    """True when an interval's ends differ from the ends an identity fixes by more than slack."""
    return bool(abs(paper[0] - expected[0]) > slack or abs(paper[1] - expected[1]) > slack)


def uniform_reference(game: str = "leduc") -> dict:
    """The uniform policy's exact numbers (chips; success unitless): player-0 value in self-play, both
    best-response values, NashConv, exploitability, player 0's return against a uniform opponent, return and
    task success against it averaged over both seats; per rank pair ("pairs") and per private-card deal
    ("roots") the value, best-response values and NashConv / 2."""
    g = get_game(game)
    ev = evaluate_checkpoint(g, uniform_policy(g), "uniform")
    table = policy_table(g, uniform_policy(g))
    r0, r1 = best_response_tables(g, table)
    roots = root_values(g, np.stack([table, r0, r1]))
    return {"value": ev.player0_value.whole, "best_response_0": ev.best_response_values[0].whole,
            "best_response_1": ev.best_response_values[1].whole, "nash_conv": ev.nash_conv.whole,
            "exploitability": ev.exploitability.whole, "seat0_return": ev.versus.seat_return[0].whole,
            "return_mean": ev.versus.mean_return.whole, "success_mean": ev.versus.task_success.whole,
            "pairs": {"value": ev.player0_value.pair, "exploitability": ev.exploitability.pair,
                      "probability": ev.pairs.probability},
            "roots": {"value": roots[0], "exploitability": (roots[1] - roots[2]) / 2}}


def set_means(values, probability) -> np.ndarray:
    """Every deal-law mean of `values` over a non-empty set of rank pairs (sorted, distinct to 1e-12): what a
    number aggregated over some root strata of a fixed policy can be."""
    values, probability = np.asarray(values, dtype=np.float64), np.asarray(probability, dtype=np.float64)
    out = [float(np.dot(probability[list(c)], values[list(c)]) / probability[list(c)].sum())
           for k in range(1, len(values) + 1) for c in itertools.combinations(range(len(values)), k)]
    return np.unique(np.round(out, 12))


def _exact(claim_id: str, reading: str, quantity: str, values, what: str) -> dict:
    """A reading under which the uniform policy's number is one of `values` (fixed by the rules)."""
    values = np.unique(np.round(np.asarray(values, dtype=np.float64).ravel(), 12))
    ranges = [(v, v) for v in values]
    shown = (f"exactly {values[0]:.6f}" if len(values) == 1 else
             f"one of {len(values)} numbers between {values[0]:.4f} and {values[-1]:.4f}")
    return _entry(claim_id, reading, quantity, ranges, f"the uniform policy is fixed by the rules: {what} is "
                  f"{shown} chips", _paper_slack(claim_id), ours=nearest_allowed(claims.claim(claim_id), ranges))


def uniform_checks(game: str = "leduc") -> list[dict]:
    """The uniform-policy row of tab:measured-grpo-ppo against its exact numbers, its value and exploitability
    under every reading."""
    u = uniform_reference(game)
    cid_v, cid_e = f"{UNIFORM}.value", f"{UNIFORM}.exploitability"
    quantity_v, quantity_e = "uniform policy: value", "uniform policy: exploitability"
    roots = u["roots"]["value"]
    prob = u["pairs"]["probability"]
    gain0, gain1 = u["best_response_0"] - u["value"], u["best_response_1"] + u["value"]
    out = [_exact(cid_v, "whole_p0", quantity_v, [u["value"]], "its self-play value of player 0"),
           _exact(cid_v, "whole_p1", quantity_v, [-u["value"]], "its self-play value of player 1"),
           _exact(cid_v, "versus", quantity_v, [u["seat0_return"]],
                  "player 0's value with it against a uniform opponent"),
           _exact(cid_v, "versus_seats", quantity_v, [u["return_mean"]],
                  "its value against a uniform opponent, mean of both seats"),
           _entry(cid_v, "held_out", quantity_v, [(roots.min(), roots.max())],
                  f"a mean of per-root values lies between the smallest and the largest, [{_fmt(roots.min())}, "
                  f"{_fmt(roots.max())}] (each fixed by the rules; a sample of roots reaches any mean in between)",
                  _paper_slack(cid_v)),
           _exact(cid_v, "pairs", quantity_v, set_means(u["pairs"]["value"], prob),
                  "its value on a rank pair or a set of pairs (deal-law mean)"),
           _exact(cid_e, "exploitability", quantity_e, [u["exploitability"]], "its NashConv / 2"),
           _exact(cid_e, "nash_conv", quantity_e, [u["nash_conv"]], "its NashConv"),
           _exact(cid_e, "gain0", quantity_e, [gain0], "player 0's gain BR_0 - v_0 against it"),
           _exact(cid_e, "gain1", quantity_e, [gain1], "player 1's gain BR_1 - v_1 against it"),
           _exact(cid_e, "expl_pairs", quantity_e, set_means(u["pairs"]["exploitability"], prob),
                  "its NashConv / 2 on a rank pair or a set of pairs"),
           _entry(cid_e, "expl_held_out", quantity_e, [(u["roots"]["exploitability"].min(),
                                                        u["roots"]["exploitability"].max())],
                  f"a mean of per-root NashConv / 2 lies between the smallest and the largest, "
                  f"[{_fmt(u['roots']['exploitability'].min())}, {_fmt(u['roots']['exploitability'].max())}] "
                  f"(each fixed by the rules)", _paper_slack(cid_e))]
    seeds = int(claims.claim(SEEDS_CLAIM))
    for key, what in (("return_mean", "return"), ("success_mean", "task success")):
        cid = f"{UNIFORM}.{key}"
        sd = float(claims.claim(cid.replace("_mean", "_sd")))
        t = (float(claims.claim(cid)) - u[key]) / (sd / math.sqrt(seeds)) if sd > 0 else math.inf
        out.append(_entry(cid, "versus_seats", f"uniform policy: {what} (seed mean)", [(u[key], u[key])],
                          f"against a uniform opponent, averaged over both seats, the {what} is exactly "
                          f"{u[key]:.6f}", claims.printed_rounding(claims.claim(cid)) + FEASIBILITY_ROUNDING,
                          flag=False, ours=u[key],
                          note=f"not flagged: printed with a seed SD {sd:g} (a sampled estimate; "
                               f"t = {t:.2f} over {seeds} seeds) against the paper's held-out opponents"))
    return out


def feasibility_table(game: str = "leduc") -> list[dict]:
    """Every checked paper number under every reading: {claim_id, reading (a key of `READINGS`), quantity, paper,
    bound, allowed ([[low, high]], chips), slack, ours (nearest allowed number or our exact value), broken,
    impossible, note}."""
    name = get_game(game).name
    tabled = claims.claim_entry(f"measured_solver.{SOLVER_ROWS[0]}.nashconv")["game"]
    if name != tabled:
        raise ValueError(f"the paper's solver tables are {tabled} numbers; got game {name!r}.")
    equilibrium = equilibrium_value(name)
    rows = [c for row in SOLVER_ROWS for c in solver_row_checks(row, equilibrium, game)]
    return rows + app_interval_checks(equilibrium, name) + uniform_checks(name)


def impossible_readings(table: list[dict]) -> dict[tuple[str, str], dict]:
    """{(claim id, reading key): entry} of every checked number that breaks a bound of the rules."""
    return {(c["claim_id"], c["reading"]): c for c in table if c["impossible"]}


def impossible_row(entry: dict, quantity: str, ours, interval=None, exact=None) -> Row:
    """`Row.impossible` of a broken entry: our value under the reading stays, the reason names the bound."""
    return Row.impossible(quantity, entry["claim_id"], ours, entry["bound"], READINGS[entry["reading"]],
                          interval=interval, exact=exact)


def feasibility_rows(game: str = "leduc") -> list[Row]:
    """One `Row.impossible` per (paper number, reading) that breaks a bound of the rules (bound and reading named
    in the row; ours: the nearest number the bound allows)."""
    return [impossible_row(c, c["quantity"], c["ours"]) for c in feasibility_table(game) if c["impossible"]]
