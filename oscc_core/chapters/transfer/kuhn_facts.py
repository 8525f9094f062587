"""Structural facts of Kuhn poker that bound the paper's transfer numbers, computed rather than asserted.

* Kuhn has no chance event after the first decision, so full coupling equals
  root-only and continuation-only equals independent (`four_arm_contrast_variances`
  shows the four exact contrast variances, chips^2, and the two residuals).
* Terminal utilities lie in a small set (`returns_support`, chips); from its
  largest |u| and its range follow the rule bounds: a budget-1 contrast
  |R_i - R_j| <= range, so Var(R_i - R_j) <= range^2; a branch return has
  Var(R) <= min(max|u|^2, (range / 2)^2), so two branches that share nothing
  have Var(R_i - R_j) = Var(R_i) + Var(R_j) <= twice that (`support_bounds`).
* `bound_search` finds the largest contrast variance any continuation policy
  reaches at a root, per arm (a numerical search: a lower estimate of the
  supremum, never a proof of it).
* `bound_table` / `impossible_rows` check every player-0 value, NashConv,
  exploitability and Kuhn contrast variance of tab:measured-transfer against
  those bounds and the value band [v* - NashConv, v* + NashConv] (chips).

A number is flagged only when it lies outside for every v* in the bracket
(Leduc's is a CFR+ bracket) and by more than the printed rounding (half a
unit in the last stored decimal of each paper number used).  A player-0 value
is read as the profile's value in self-play, as in the solver chapter.  The
Kuhn contrast variances are held to the search maximum of their arm's
construction at any single root (a per-group, budget-1 variance); none breaks
the rule bound range^2 on its own, so those flags rest on the search.
"""
from __future__ import annotations

import copy
import itertools
from functools import cache

import numpy as np

from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.evaluation import FEASIBILITY_ROUNDING, FeasibilityBand, equilibrium_value, feasibility_band
from oscc_core.games import TERMINAL, get_game
from oscc_core.games.deal_tables import terminal_utilities
from oscc_core.policy import table_to_policy, uniform_table
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

GAME = "kuhn"
ARMS = ("independent", "root_only", "continuation_only", "full")
UNSHARED = "fully_independent"       # two branches sharing nothing, not even the acting player's card
KUHN_ROOTS = ("", "0", "1", "01")     # every decision point of Kuhn (histories of action ids)
# the construction each Kuhn row of tab:measured-transfer measures (DESIGN.md sections 5 and 9)
ROW_ARM = {"cp_grpo_paired": "full", "independent": "independent", "standard_grpo": "root_only",
           "standard_ppo": "independent"}
LEDUC_ROWS = ("cp_grpo_paired", "independent")
SEARCH_RANDOM, SEARCH_SEED = 256, 0
REFINE_STEP, REFINE_TOL, REFINE_MAX_EVALS = 0.25, 1e-5, 3000


# ----- 1. the four arms ------------------------------------------------------------
def four_arm_contrast_variances(policy="uniform", root: str = "") -> dict[str, float]:
    """{arm: exact Var(R_Pass - R_Bet), chips^2} at a Kuhn root under `policy` ("uniform" or a policy dict),
    plus the residuals "full - root_only" and "continuation_only - independent" (0 up to rounding)."""
    m = arm_moments(GAME, root, policy)
    out = {arm: m[arm].contrast_var(0, 1) for arm in ARMS}
    out["full - root_only"] = out["full"] - out["root_only"]
    out["continuation_only - independent"] = out["continuation_only"] - out["independent"]
    return out


# ----- 2. the support of returns and the bounds it implies ----------------------------
def returns_support(game: str = GAME) -> set[float]:
    """Every terminal utility (chips) either player can receive, read from the game tree over all deals."""
    g = get_game(game)
    u = terminal_utilities(g)[:, g.tree.player == TERMINAL]
    return {float(x) for x in np.unique(np.concatenate([u.ravel(), -u.ravel()]))}


def support_bounds(game: str = GAME) -> dict[str, float]:
    """max |u| and range of the support (chips) and the bounds they imply (chips^2): `contrast` on any
    budget-1 Var(R_i - R_j), `branch` on Var(R), `unshared` on Var(R_i) + Var(R_j)."""
    s = np.array(sorted(returns_support(game)))
    max_abs, span = float(np.abs(s).max()), float(s.max() - s.min())
    branch = min(max_abs ** 2, (span / 2) ** 2)          # E[R^2] and Popoviciu; either bounds Var(R)
    return {"max_abs": max_abs, "range": span, "contrast": span ** 2, "branch": branch, "unshared": 2 * branch}


# ----- 3. the search over continuation policies -----------------------------------------
def _free_infostates(root: str) -> np.ndarray:
    """Ids of the information states whose policy can matter at `root`: all but the root's own
    (its action is fixed by the branch); ancestors set the root law, descendants the continuation."""
    g = get_game(GAME)
    node = int(g.tree.node_of_history(root))
    return np.flatnonzero(g.infostates.node != node)


def _objectives(root: str, free: np.ndarray, bet: np.ndarray) -> np.ndarray:
    """[contrast variance of each arm in ARMS, Var(R_Pass) + Var(R_Bet)] (chips^2) for Bet probabilities
    `bet` at the `free` information states; -inf where the root is unreachable under that policy."""
    g = get_game(GAME)
    table = uniform_table(g)
    table[free] = np.stack([1.0 - bet, bet], axis=1)
    try:
        m = arm_moments(g, root, table_to_policy(g, table))
    except ValueError:                                   # the policy never reaches this root
        return np.full(len(ARMS) + 1, -np.inf)
    diag = m["full"].cov.diagonal()                      # branch variances do not depend on the arm
    return np.array([m[a].contrast_var(0, 1) for a in ARMS] + [float(diag[0] + diag[1])])


def _refine(root: str, free: np.ndarray, bet: np.ndarray, k: int) -> tuple[np.ndarray, float, int]:
    """Coordinate (pattern) ascent of objective k from `bet`: try +-step on each coordinate, halve the step
    when no move improves; returns (policy, value, evaluations)."""
    best, evals, step = _objectives(root, free, bet)[k], 1, REFINE_STEP
    while step > REFINE_TOL and evals < REFINE_MAX_EVALS:
        moved = False
        for i, d in itertools.product(range(len(bet)), (step, -step)):
            trial = bet.copy()
            trial[i] = min(max(trial[i] + d, 0.0), 1.0)
            if trial[i] == bet[i]:
                continue
            value, evals = _objectives(root, free, trial)[k], evals + 1
            if value > best:
                bet, best, moved = trial, value, True
        step = step if moved else step / 2
    return bet, float(best), evals


@cache
def _search(root: str, n_random: int, seed: int) -> dict:
    g = get_game(GAME)
    free = _free_infostates(root)
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=len(free))))   # every deterministic policy
    interior = np.random.default_rng(seed).random((n_random, len(free)))
    candidates = np.concatenate([corners, interior])
    values = np.stack([_objectives(root, free, c) for c in candidates])           # [N, arms + 1]
    bounds, out, evals = support_bounds(GAME), {}, len(candidates)
    for k, name in enumerate(ARMS + (UNSHARED,)):
        bet, best, n = _refine(root, free, candidates[int(np.argmax(values[:, k]))].copy(), k)
        evals += n
        out[name] = {"max": best, "policy": {g.infostates.strings[i]: float(p) for i, p in zip(free, bet)},
                     "respects_contrast_bound": best <= bounds["contrast"] + FEASIBILITY_ROUNDING,
                     "respects_unshared_bound": best <= bounds["unshared"] + FEASIBILITY_ROUNDING}
    return {"root": root, "free_infostates": [g.infostates.strings[i] for i in free], "evaluations": evals,
            "contrast_bound": bounds["contrast"], "unshared_bound": bounds["unshared"], "arms": out}


def bound_search(arms=ARMS, n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED, root: str = "") -> dict:
    """The largest contrast variance (chips^2) continuation policies reach at a Kuhn root, per arm.

    Searches Bet probabilities at every information state but the root's own
    (2^9 deterministic policies, `n_random` uniform interior points from
    numpy's Generator with `seed`, then coordinate ascent from the best).
    Returns {root, free_infostates, evaluations, contrast_bound, unshared_bound,
    arms: {arm: {max, policy, respects_contrast_bound, respects_unshared_bound}}};
    `arms` also holds "fully_independent", the largest Var(R_Pass) + Var(R_Bet),
    the construction the unshared bound is about.  Our "independent" arm still
    shares the acting player's card, so the unshared bound need not hold for it.
    """
    unknown = set(arms) - set(ARMS)
    if unknown:
        raise ValueError(f"arms must be among {ARMS}, got {sorted(unknown)}.")
    found = copy.deepcopy(_search(root, int(n_random), int(seed)))   # callers may edit what they get
    return {**found, "arms": {a: found["arms"][a] for a in tuple(arms) + (UNSHARED,)}}


def arm_maxima(n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED) -> dict[str, dict]:
    """{arm: {max, root}}: the largest contrast variance found at any Kuhn decision point (chips^2), the
    per-group bound a paper value of the arm's construction is held to whichever roots it pools."""
    out = {}
    for arm in ARMS:
        best = max((bound_search(ARMS, n_random, seed, r)["arms"][arm]["max"], r) for r in KUHN_ROOTS)
        out[arm] = {"max": best[0], "root": best[1]}
    return out


# ----- 4. value band and the paper's numbers ------------------------------------------
def value_band(nash_conv: float, game: str = GAME) -> FeasibilityBand:
    """[v* - NashConv, v* + NashConv] (chips), widened by the bracket of v* (exact -1/18 in Kuhn)."""
    return feasibility_band(game, nash_conv, equilibrium_value(game))



def value_outside_band(value: float, nash_conv: float, game: str = GAME, slack: float = FEASIBILITY_ROUNDING) -> bool:
    """True when a player-0 value (chips) lies outside the band of a profile with this NashConv by > slack."""
    return value_band(nash_conv, game).violation(value) > slack


def _entry(claim_id: str, quantity: str, low: float, high: float, bound: str, slack: float, kind: str,
           broken: bool | None = None) -> dict:
    """One checked paper number against the range [low, high] a bound allows."""
    paper = float(claims.claim(claim_id))
    broken = (paper < low - slack or paper > high + slack) if broken is None else broken
    return {"claim_id": claim_id, "quantity": quantity, "paper": paper, "bound": bound, "bound_kind": kind,
            "allowed": [float(low), float(high)], "slack": float(slack),
            "ours": float(min(max(paper, low), high)), "impossible": bool(broken)}


def _row_checks(game: str, row: str) -> list[dict]:
    """NashConv range, exploitability = NashConv / 2 and the value band for one row (chips)."""
    base = f"measured_transfer.{game}.{row}"
    v0, nc, ex = (float(claims.claim(f"{base}.{k}")) for k in ("player0_value", "nashconv", "exploitability"))
    r, eps, eq = claims.printed_rounding, FEASIBILITY_ROUNDING, equilibrium_value(game)
    band = value_band(nc, game)
    top = 2 * support_bounds(game)["max_abs"]             # each best response wins at most the largest pot
    v_star = f"v* in [{eq.low:.5f}, {eq.high:.5f}] ({eq.source})"
    return [
        _entry(f"{base}.nashconv", f"{game} {row}: NashConv", 0.0, top,
               f"0 <= NashConv <= 2 x the largest |utility| = {top:g} chips", r(nc) + eps, "rule"),
        _entry(f"{base}.exploitability", f"{game} {row}: exploitability", nc / 2, nc / 2,
               f"exploitability = NashConv / 2 = {nc / 2:.5f} (the row's NashConv {nc:g})",
               r(ex) + r(nc) / 2 + eps, "rule"),
        _entry(f"{base}.player0_value", f"{game} {row}: player-0 value", band.low, band.high,
               f"player-0 value in [v* - NashConv, v* + NashConv] = [{band.low:.4f}, {band.high:.4f}] "
               f"({v_star}, the row's NashConv {nc:g})", r(v0) + r(nc) + eps, "rule"),
    ]


def _contrast_check(row: str, maxima: dict) -> dict:
    """A Kuhn contrast variance (chips^2) against the search maximum of its arm and the rule bound."""
    cid, arm = f"measured_transfer.kuhn.{row}.contrast_variance", ROW_ARM[row]
    rule, found = support_bounds(GAME)["contrast"], maxima[arm]
    high = min(rule, found["max"])
    slack = claims.printed_rounding(claims.claim(cid)) + FEASIBILITY_ROUNDING
    return _entry(cid, f"kuhn {row}: contrast variance ({arm} construction)", 0.0, high,
                  f"budget-1 Var(R_Pass - R_Bet) <= {rule:g} chips^2 (|contrast| <= the range of returns) and "
                  f"<= {found['max']:.4f}, the largest a search over every continuation policy finds for the "
                  f"{arm} arm at any Kuhn decision point (all deterministic policies, random interior ones and "
                  f"coordinate ascent; reached at root {found['root']!r}; a per-group variance)", slack, "search")


def bound_table(n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED) -> list[dict]:
    """Every checked paper number of the transfer section: {claim_id, quantity, paper, bound, bound_kind,
    allowed [low, high], slack, ours (nearest allowed number), impossible}."""
    maxima = arm_maxima(n_random, seed)
    out = [c for row in ROW_ARM for c in _row_checks("kuhn", row) + [_contrast_check(row, maxima)]]
    return out + [c for row in LEDUC_ROWS for c in _row_checks("leduc", row)]


def impossible_rows(n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED) -> list[Row]:
    """One `Row.impossible` per transfer number that breaks a bound (the bound named in the row)."""
    return [Row.impossible(c["quantity"], c["claim_id"], c["ours"], c["bound"])
            for c in bound_table(n_random, seed) if c["impossible"]]
