"""Paper numbers that no profile can produce under the rules of the game.

Two-player zero-sum, values in chips; for a profile with player-0 value v_0
(v_1 = -v_0), best-response values BR_0, BR_1 (each player's value when it
best-responds to the other seat) and NashConv = BR_0 + BR_1, with v* player
0's equilibrium value:

* v_0 lies in [v* - NashConv, v* + NashConv];
* BR_0 >= max(v_0, v*) and BR_1 >= max(-v_0, -v*), so, with BR_0 + BR_1 =
  NashConv, BR_0 <= NashConv + min(v_0, v*) and BR_1 <= NashConv - max(v_0, v*);
* exploitability = NashConv / 2 exactly (per seed, hence for seed means and
  their t-intervals too);
* the uniform policy is fixed by the rules, so its player-0 value and
  exploitability are single exact numbers.

v* is -1/18 in Kuhn and a CFR+ bracket in Leduc (`exact.evaluation.
equilibrium_value`); a number is outside a range only if it is outside for
every v* in the bracket, and only by more than the printed rounding of every
paper number the check uses (half a unit in the last decimal of the claim as
stored).  The paper does not say whose best-response value it prints, so both
readings are tested and a number is flagged only when both break.  A
player-0 value is read as the checkpoint's value in self-play (DESIGN.md
section 8); against another opponent only the lower end v* - NashConv binds.
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.exact.evaluation import (
    FEASIBILITY_ROUNDING,
    EquilibriumValue,
    equilibrium_value,
    evaluate_checkpoint,
    feasibility_band,
)
from oscc_core.games import LEDUC, get_game
from oscc_core.games.deal_tables import terminal_utilities
from oscc_core.policy import uniform_policy
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

SOLVER_ROWS = ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo", "exact_cfr_plus")
# tab:app-p1-solver is the CP-GRPO paired row of tab:measured-solver (its reported values are `same_as` it),
# so its NashConv interval is that row's
NASHCONV_INTERVAL = {"cp_grpo_paired": "app_solver.nashconv.interval"}
UNIFORM = "grpo_ppo.uniform_policy"
SEEDS_CLAIM = "grpo_ppo.footnote.seeds"



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


def _entry(claim_id: str, quantity: str, ranges, bound: str, slack: float, flag: bool = True, note: str = "",
           ours=None, broken: bool | None = None) -> dict:
    """One checked paper number: claim id, paper value, the rule bound and the range(s) it allows (chips).

    `broken` defaults to "outside every range"; an identity on an interval's ends passes its own test.
    """
    paper = claims.claim(claim_id)
    broken = outside(paper, ranges, slack) if broken is None else broken
    return {"claim_id": claim_id, "quantity": quantity, "paper": paper, "bound": bound,
            "allowed": [[float(lo), float(hi)] for lo, hi in ranges], "slack": float(slack),
            "ours": nearest_allowed(paper, ranges) if ours is None else ours,
            "broken": bool(broken), "impossible": bool(broken and flag), "note": note}


def _max_nash_conv(game) -> float:
    """The largest NashConv the rules allow (chips): each best response wins at most the largest pot."""
    return 2.0 * float(np.abs(terminal_utilities(get_game(game))).max())


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def solver_row_checks(row: str, equilibrium: EquilibriumValue, game: str = "leduc") -> list[dict]:
    """The checks (chips) of one row of tab:measured-solver: NashConv, exploitability, player-0 value,
    best-response value and the value's seed interval (bounded with the printed NashConv interval where
    there is one, CP-GRPO's in tab:app-p1-solver; otherwise shown, not flagged)."""
    base = f"measured_solver.{row}"
    v0, br, nc, ex = (float(claims.claim(f"{base}.{k}"))
                      for k in ("player0_value", "best_response_value", "nashconv", "exploitability"))
    r = claims.printed_rounding
    eps = FEASIBILITY_ROUNDING
    v_star = f"v* in [{equilibrium.low:.5f}, {equilibrium.high:.5f}]"
    out = [_entry(f"{base}.nashconv", f"{row}: NashConv", [(0.0, _max_nash_conv(game))],
                  f"0 <= NashConv <= 2 x the largest pot = {_max_nash_conv(game):g} chips", r(nc) + eps),
           _entry(f"{base}.exploitability", f"{row}: exploitability", [(nc / 2, nc / 2)],
                  f"exploitability = NashConv / 2 = {_fmt(nc / 2)} (the row's NashConv {nc:g})",
                  r(ex) + r(nc) / 2 + eps)]
    band = value_range(equilibrium, nc)
    out.append(_entry(f"{base}.player0_value", f"{row}: player-0 value", [band],
                      f"player-0 value <= v* + NashConv = {_fmt(band[1])} and >= v* - NashConv = {_fmt(band[0])} "
                      f"({v_star}, the row's NashConv {nc:g})", r(v0) + r(nc) + eps))
    value_ok = not out[-1]["broken"]
    # the row's own value tightens the best-response ranges only when it is itself feasible
    br_ranges = best_response_ranges(equilibrium, nc, v0 if value_ok else None)
    given = f"the row's player-0 value {v0:g} and NashConv {nc:g}" if value_ok else f"the row's NashConv {nc:g}"
    (a0, b0), (a1, b1) = br_ranges
    out.append(_entry(f"{base}.best_response_value", f"{row}: best-response value (either player)", br_ranges,
                      f"BR_0 in [{_fmt(a0)}, {_fmt(b0)}] and BR_1 in [{_fmt(a1)}, {_fmt(b1)}] given {given} "
                      f"({v_star}; BR_0 + BR_1 = NashConv, BR_0 >= max(v_0, v*), BR_1 >= max(-v_0, -v*))",
                      r(br) + r(nc) + (r(v0) if value_ok else 0.0) + eps))
    interval = claims.claim(f"{base}.seed_interval")
    nc_claim = NASHCONV_INTERVAL.get(row)
    nc_hi = float(claims.claim(nc_claim)[1]) if nc_claim else nc
    band_hi = value_range(equilibrium, nc_hi)
    source = f"the upper end {nc_hi:g} of the printed NashConv interval" if nc_claim else f"the row's NashConv {nc:g}"
    out.append(_entry(f"{base}.seed_interval", f"{row}: 95% seed interval of the player-0 value", [band_hi],
                      f"a seed mean of player-0 values lies in [v* - NashConv, v* + NashConv] = "
                      f"[{_fmt(band_hi[0])}, {_fmt(band_hi[1])}] ({v_star}, {source})",
                      max(r(x) for x in interval) + r(nc_hi) + eps, flag=nc_claim is not None,
                      note="" if nc_claim else "not flagged: the interval is of a seed mean and no NashConv "
                                               "interval is printed for this row, so the bound uses a point mean"))
    return out


def app_interval_checks(equilibrium: EquilibriumValue, game: str = "leduc") -> list[dict]:
    """The 95% intervals of tab:app-p1-solver against the ranges the printed NashConv interval allows."""
    nc_lo, nc_hi = (float(x) for x in claims.claim("app_solver.nashconv.interval"))
    r, eps = claims.printed_rounding, FEASIBILITY_ROUNDING
    value = claims.claim("app_solver.player_value.interval")
    band = value_range(equilibrium, nc_hi)
    ranges = best_response_ranges(equilibrium, nc_hi)
    ex = claims.claim("app_solver.exploitability.interval")
    slack = max(r(x) for x in ex) + max(r(nc_lo), r(nc_hi)) / 2 + eps
    return [
        _entry("app_solver.player_value.interval", "player value: 95% interval", [band],
               f"player-0 value in [v* - NashConv, v* + NashConv] = [{_fmt(band[0])}, {_fmt(band[1])}] with the "
               f"upper end {nc_hi:g} of the NashConv interval", max(r(x) for x in value) + r(nc_hi) + eps),
        _entry("app_solver.best_response_value.interval", "best-response value: 95% interval", ranges,
               f"BR_0 in [{_fmt(ranges[0][0])}, {_fmt(ranges[0][1])}] and BR_1 in [{_fmt(ranges[1][0])}, "
               f"{_fmt(ranges[1][1])}] with the upper end {nc_hi:g} of the NashConv interval",
               max(r(x) for x in claims.claim("app_solver.best_response_value.interval")) + r(nc_hi) + eps),
        _entry("app_solver.nashconv.interval", "NashConv: 95% interval", [(0.0, _max_nash_conv(game))],
               f"0 <= NashConv <= {_max_nash_conv(game):g} chips", r(nc_hi) + eps),
        _entry("app_solver.exploitability.interval", "exploitability: 95% interval", [(nc_lo / 2, nc_hi / 2)],
               f"exploitability = NashConv / 2 per seed, so its interval is [{_fmt(nc_lo / 2)}, {_fmt(nc_hi / 2)}]",
               slack, broken=_interval_mismatch(ex, (nc_lo / 2, nc_hi / 2), slack)),
    ]


def _interval_mismatch(paper, expected, slack: float) -> bool:
    """True when an interval's ends differ from the ends an identity fixes by more than slack."""
    return bool(abs(paper[0] - expected[0]) > slack or abs(paper[1] - expected[1]) > slack)


def uniform_reference(game: str = "leduc") -> dict:
    """The uniform policy's exact numbers (chips; success unitless): player-0 value in self-play, NashConv,
    exploitability, and return and task success against a uniform opponent averaged over both seats."""
    ev = evaluate_checkpoint(game, uniform_policy(game), "uniform")
    return {"value": ev.player0_value.whole, "nash_conv": ev.nash_conv.whole,
            "exploitability": ev.exploitability.whole, "return_mean": ev.versus.mean_return.whole,
            "success_mean": ev.versus.task_success.whole}


def uniform_checks(game: str = "leduc") -> list[dict]:
    """The uniform-policy row of tab:measured-grpo-ppo against its exact numbers."""
    exact = uniform_reference(game)
    seeds = int(claims.claim(SEEDS_CLAIM))
    out = []
    for key, what in (("value", "player-0 value in self-play"), ("exploitability", "exploitability")):
        cid = f"{UNIFORM}.{key}"
        out.append(_entry(cid, f"uniform policy: {what}", [(exact[key], exact[key])],
                          f"the uniform policy is fixed by the rules: its {what} is exactly {exact[key]:.6f} chips",
                          claims.printed_rounding(claims.claim(cid)) + FEASIBILITY_ROUNDING, ours=exact[key]))
    for key, what in (("return_mean", "return"), ("success_mean", "task success")):
        cid = f"{UNIFORM}.{key}"
        sd = float(claims.claim(cid.replace("_mean", "_sd")))
        t = (float(claims.claim(cid)) - exact[key]) / (sd / math.sqrt(seeds)) if sd > 0 else math.inf
        out.append(_entry(cid, f"uniform policy: {what} (seed mean)", [(exact[key], exact[key])],
                          f"against a uniform opponent, averaged over both seats, the {what} is exactly "
                          f"{exact[key]:.6f}", claims.printed_rounding(claims.claim(cid)) + FEASIBILITY_ROUNDING,
                          flag=False, ours=exact[key],
                          note=f"not flagged: printed with a seed SD {sd:g} (a sampled estimate; "
                               f"t = {t:.2f} over {seeds} seeds) against the paper's held-out opponents"))
    return out


def feasibility_table(game: str = "leduc") -> list[dict]:
    """Every checked paper number: {claim_id, quantity, paper, bound, allowed ([[low, high]] per reading,
    chips), slack, ours (nearest allowed number or our exact value), broken, impossible, note}."""
    name = get_game(game).name
    tabled = claims.claim_entry(f"measured_solver.{SOLVER_ROWS[0]}.nashconv")["game"]
    if name != tabled:
        raise ValueError(f"the paper's solver tables are {tabled} numbers; got game {name!r}.")
    equilibrium = equilibrium_value(name)
    rows = [c for row in SOLVER_ROWS for c in solver_row_checks(row, equilibrium, game)]
    return rows + app_interval_checks(equilibrium, name) + uniform_checks(name)


def feasibility_rows(game: str = "leduc") -> list[Row]:
    """One `Row.impossible` per paper number that breaks a bound of the rules (the bound named in the row)."""
    return [Row.impossible(c["quantity"], c["claim_id"], c["ours"], c["bound"])
            for c in feasibility_table(game) if c["impossible"]]
