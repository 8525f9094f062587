"""The readings of the transfer section's paper numbers (`chapters.transfer.bounds`, `chapters.transfer.readings`).

Expected values come from OpenSpiel's Kuhn poker walked here (every deal, every pure strategy of a seat,
every deterministic continuation policy), from closed forms (Kuhn's equilibrium value -1/18; Popoviciu's
(range / 2)^2 over a contrast's support; the normal law of a mean over sampled roots, checked by simulating
the sampling), or from the claims file's printed numbers.  The combined verdict is checked against the
reading the paper's text fixes: scenarios are built where another reading, the most favourable one or one
listed first, would give another verdict than the paper's reading.  Rules get property-based
tests (hypothesis) with the paper's value replaced by generated numbers of four decimals (a printed number's
rounding is then half a unit in the fourth decimal).
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.chapters.transfer import bounds, kuhn_facts, readings
from oscc_core.method.stats import held_out_interval
from oscc_core.reporting import claims

KUHN_VALUE = -1.0 / 18.0                          # player 0's equilibrium value (Kuhn 1950)
RANKS = "JQK"
P0_STATES = ["0", "1", "2", "0pb", "1pb", "2pb"]
P1_STATES = ["0p", "1p", "2p", "0b", "1b", "2b"]
GROUPS = 4096
ROWS = ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo")
SHARED = {"cp_grpo_paired": True, "standard_grpo": True, "independent": False, "standard_ppo": False}
#: Constructions the paper's words allow besides the book's model: standard GRPO's "ordinary group construction"
#: shares the root, but need not share the opponent's hidden card.
OTHER_CONSTRUCTIONS = {"cp_grpo_paired": (), "independent": (), "standard_grpo": ("independent",),
                       "standard_ppo": ()}
#: four-decimal numbers (as the paper prints them): their printed rounding is 5e-5
four_decimals = st.integers(min_value=-99_999, max_value=99_999).filter(lambda n: n % 10).map(lambda n: n / 10_000)


def _game():
    return pyspiel.load_game("kuhn_poker")


def _uniform() -> dict:
    return {s: [0.5, 0.5] for s in P0_STATES + P1_STATES}


def _value(policy: dict, state=None, prob: float = 1.0) -> float:
    """E[u_0] when both players follow `policy` (OpenSpiel information-state string -> probabilities)."""
    state = _game().new_initial_state() if state is None else state
    if state.is_terminal():
        return prob * state.returns()[0]
    if state.is_chance_node():
        return sum(_value(policy, state.child(a), prob * p) for a, p in state.chance_outcomes())
    probs = policy[state.information_state_string()]
    return sum(_value(policy, state.child(a), prob * probs[a]) for a in state.legal_actions() if probs[a] > 0)


def _seat_values(seat: int) -> list[float]:
    """The value of every pure strategy of `seat` against the uniform policy (chips, for that seat)."""
    states = P0_STATES if seat == 0 else P1_STATES
    out = []
    for bets in itertools.product((0, 1), repeat=len(states)):
        policy = _uniform()
        policy.update({s: [1.0 - b, float(b)] for s, b in zip(states, bets)})
        out.append(_value(policy) * (1 if seat == 0 else -1))
    return out


def _deal_returns() -> dict[str, list[float]]:
    """{pair label: player 0's return at every terminal of that deal}."""
    out = defaultdict(list)
    for c0, c1 in itertools.permutations(range(3), 2):
        stack = [_game().new_initial_state().child(c0).child(c1)]
        while stack:
            s = stack.pop()
            if s.is_terminal():
                out[RANKS[c0] + RANKS[c1]].append(s.returns()[0])
            else:
                stack += [s.child(a) for a in s.legal_actions()]
    return out


def _contrast_support(root: str, shared: bool) -> list[float]:
    """Every value R_a - R_b (acting player's returns of the root's two branches) the construction can give:
    the same opponent card on both branches (shared) or any two consistent with the acting player's card."""
    out = []
    for c0, c1 in itertools.permutations(range(3), 2):
        base = _game().new_initial_state().child(c0).child(c1)
        for a in root:
            base = base.child(int(a))
        player = base.current_player()
        own = (c0, c1)[player]
        for other in [o for o in range(3) if o != own]:
            if shared and other != (c1, c0)[player]:
                continue
            cards = (own, other) if player == 0 else (other, own)
            second = _game().new_initial_state().child(cards[0]).child(cards[1])
            for a in root:
                second = second.child(int(a))
            returns = []
            for state in (base, second):
                branch = []
                for action in (0, 1):
                    stack, seen = [state.child(action)], []
                    while stack:
                        s = stack.pop()
                        if s.is_terminal():
                            seen.append(s.returns()[player])
                        else:
                            stack += [s.child(x) for x in s.legal_actions()]
                    branch.append(seen)
                returns.append(branch)
            out += [ra - rb for ra in returns[0][0] for rb in returns[1][1]]
    return out


def _popoviciu(values) -> float:
    return (max(values) - min(values)) ** 2 / 4


# ----- the ranges each reading allows --------------------------------------------------------------
@pytest.mark.parametrize("seat", [0, 1])
def test_the_versus_range_is_the_worst_and_best_pure_strategy_against_the_uniform_opponent(seat):
    values = _seat_values(seat)
    low, high = bounds.versus_range("kuhn", seat)
    assert (low, high) == pytest.approx((min(values), max(values)), abs=1e-12)


def test_a_pairs_range_is_the_lowest_and_highest_return_at_that_deal():
    returns = _deal_returns()
    got = bounds.pair_range("kuhn")
    assert set(got) == set(returns)
    for label, us in returns.items():
        assert got[label] == (min(us), max(us)), label


def _pot() -> float:
    """The largest |utility| of Kuhn poker, from OpenSpiel's terminal returns."""
    return max(abs(u) for us in _deal_returns().values() for u in us)


@pytest.mark.parametrize("row", ROWS)
def test_a_player0_value_is_read_as_self_play_then_held_out_roots_then_versus_uniform_then_one_pair(row):
    """The readings: the solver chapter's (whole-game self-play), the paper's (a mean over its held-out roots),
    against the uniform opponent (both seats, then seat 0), one private-card pair.  Player 1's self-play value
    is not a reading of a player-0 column."""
    got = [b.reading for b in bounds.value_bounds("kuhn", row)]
    roots = int(claims.claim("learning_boundary.policy_solver.heldout_roots_per_seed"))
    assert got == [bounds.SELF_PLAY, bounds.HELD_OUT.format(roots=roots), *bounds.VERSUS, bounds.PAIR]
    assert "held-out" in got[1] and f"{roots:,}" in got[1] and "the paper's reading" in got[1]
    assert "mean of both seats" in got[2] and "seat 0" in got[3]
    assert not any("player 1" in r for r in got)


@pytest.mark.parametrize("row", ROWS)
def test_the_self_play_band_is_minus_one_eighteenth_plus_or_minus_the_rows_nashconv(row):
    nc = float(claims.claim(f"measured_transfer.kuhn.{row}.nashconv"))
    first = bounds.value_bounds("kuhn", row)[0]
    assert (first.low, first.high) == pytest.approx((KUHN_VALUE - nc, KUHN_VALUE + nc), abs=1e-12)


def test_only_the_largest_pot_bounds_a_mean_over_held_out_roots_and_one_pair_lies_in_the_pairs_hull():
    """A mean over sampled deals can be any number in [-pot, pot]; one pair's value lies between the lowest and
    highest return of some deal (the hull of the per-pair ranges: [-2, 2] in Kuhn)."""
    by_key = {b.key[0]: b for b in bounds.value_bounds("kuhn", "cp_grpo_paired")}
    assert (by_key["held_out"].low, by_key["held_out"].high) == (-_pot(), _pot())
    returns = [u for us in _deal_returns().values() for u in us]
    assert (by_key["pairs"].low, by_key["pairs"].high) == (min(returns), max(returns))


@pytest.mark.parametrize("row", ROWS)
def test_a_contrast_variance_is_read_pooled_then_at_each_decision_point_root_first_then_as_a_sample_variance(row):
    """Only readings that are variances of the contrast the paper describes (pooled over the decision points,
    the paper's, or at one of them): no sum over decision points, no sum over seats."""
    got = [b.key for b in bounds.contrast_bounds(row, GROUPS)]
    own = [("pooled",), ("root", ""), ("root", "0"), ("root", "1"), ("root", "01"), ("sampled",)]
    others = [k for c in OTHER_CONSTRUCTIONS[row] for k in
              [("pooled", c)] + [("root", r, c) for r in ("", "0", "1", "01")] + [("sampled", c)]]
    assert got == own + others


@pytest.mark.parametrize("row", ROWS)
def test_each_row_is_read_first_under_the_construction_the_book_models_it_with(row):
    assert bounds.ROW_CONSTRUCTIONS[row][0] == kuhn_facts.ROW_ARM[row]
    assert bounds.ROW_CONSTRUCTIONS[row][1:] == OTHER_CONSTRUCTIONS[row]


def test_every_table_label_is_short_and_names_one_reading():
    """Tables show labels; each names one reading (no two readings share a label) and fits a narrow cell."""
    labels = readings.labels(GROUPS)
    assert len(set(labels.values())) == len(labels)
    assert all(0 < len(v) <= 32 for v in labels.values())


@pytest.mark.parametrize("root, expected", [("", 4.0), ("0", 2.25), ("1", 4.0), ("01", 4.0)])
def test_the_shared_constructions_bound_at_each_decision_point_is_popovicius_over_its_contrast(root, expected):
    """Kuhn's full coupling: (range / 2)^2 of its contrast's support, walked in OpenSpiel, is the maximum the
    proof finds (and the support bound cannot be beaten); the paper's CP-GRPO and GRPO values lie above it."""
    assert _popoviciu(_contrast_support(root, shared=True)) == pytest.approx(expected)
    for row in ("cp_grpo_paired", "standard_grpo"):
        [b] = [b for b in bounds.contrast_bounds(row, GROUPS) if b.key == ("root", root)]
        assert b.high == pytest.approx(expected, abs=1e-6)
        assert b.impossible


def test_a_sample_variance_of_the_shared_contrast_cannot_reach_the_papers_cp_grpo_value():
    """n values in a range of width w have a sample variance of at most n/(n-1) (w/2)^2; the full coupling's
    widest contrast (Popoviciu 4) gives 4 n/(n-1), below the paper's CP-GRPO contrast variance."""
    widest = max(_popoviciu(_contrast_support(r, shared=True)) for r in ("", "0", "1", "01"))
    [b] = [b for b in bounds.contrast_bounds("cp_grpo_paired", GROUPS) if b.key == ("sampled",)]
    assert b.high == pytest.approx(GROUPS / (GROUPS - 1) * widest)
    assert b.impossible


def test_no_nashconv_or_exploitability_of_the_section_breaks_its_bound():
    """Every printed exploitability is half its printed NashConv to the printing's rounding, and every NashConv
    lies in [0, 2 x the largest pot]: none of these numbers is impossible."""
    for game, rows in bounds.ROWS.items():
        top = 4.0 if game == "kuhn" else 26.0
        for row in rows:
            nc, ex = (float(claims.claim(f"measured_transfer.{game}.{row}.{k}"))
                      for k in ("nashconv", "exploitability"))
            assert abs(ex - nc / 2) <= claims.printed_rounding(ex) + claims.printed_rounding(nc) / 2
            assert 0 <= nc <= top
            assert not any(b.impossible for b in bounds.rule_bounds(game, row)), (game, row)


def test_the_kuhn_player0_values_break_their_band_exactly_when_outside_the_closed_form():
    for row in ROWS:
        base = f"measured_transfer.kuhn.{row}"
        v0, nc = float(claims.claim(f"{base}.player0_value")), float(claims.claim(f"{base}.nashconv"))
        outside = v0 - 1e-4 > KUHN_VALUE + nc or v0 + 1e-4 < KUHN_VALUE - nc
        assert bounds.value_bounds("kuhn", row)[0].impossible == outside


# ----- rules, over generated paper values ------------------------------------------------------------
def _patched(values: dict):
    real = claims.claim
    return mock.patch.object(claims, "claim", lambda cid, path=None: values.get(cid, real(cid, path)))


def _at_root(row: str = "cp_grpo_paired", root: str = "") -> bounds.Bound:
    return next(b for b in bounds.contrast_bounds(row, GROUPS) if b.key == ("root", root))


@given(st.integers(min_value=40_002, max_value=999_999).filter(lambda n: n % 10).map(lambda n: n / 10_000))
def test_a_paper_contrast_variance_above_the_proved_maximum_is_always_flagged(x):
    cid = "measured_transfer.kuhn.cp_grpo_paired.contrast_variance"
    with _patched({cid: x}):
        assert _at_root().impossible


@given(st.integers(min_value=0, max_value=39_999).map(lambda n: n / 10_000))
def test_a_paper_contrast_variance_below_the_proved_maximum_is_never_flagged(x):
    cid = "measured_transfer.kuhn.cp_grpo_paired.contrast_variance"
    with _patched({cid: x}):
        assert not _at_root().impossible


@given(four_decimals, st.integers(min_value=1, max_value=9_999).filter(lambda n: n % 10).map(lambda n: n / 10_000))
def test_a_kuhn_player0_value_is_flagged_exactly_when_outside_the_band_of_its_nashconv(v0, nc):
    band = (KUHN_VALUE - nc, KUHN_VALUE + nc)
    margin = max(band[0] - v0, v0 - band[1])
    assume(abs(margin - 1e-4) > 1e-5)              # away from the rounding slack (1e-4 + 1e-9)
    base = "measured_transfer.kuhn.independent"
    with _patched({f"{base}.player0_value": v0, f"{base}.nashconv": nc}):
        assert bounds.value_bounds("kuhn", "independent")[0].impossible == (margin > 1e-4)


def _rounding(x: float) -> float:
    """Half a unit in the last decimal the number is written with (0.015 -> 5e-4, 0.0109 -> 5e-5)."""
    text = f"{float(x):.12f}".rstrip("0").rstrip(".")          # fixed point: 9e-05 -> 0.00009
    return 0.5 * 10.0 ** -(len(text.split(".")[1]) if "." in text else 0)


@given(st.integers(min_value=1, max_value=39_999).filter(lambda n: n % 10).map(lambda n: n / 10_000),
       st.integers(min_value=-500, max_value=500))
def test_an_exploitability_is_flagged_exactly_when_it_is_not_half_the_nashconv(nc, off):
    """exploitability = NashConv / 2 up to the two printed roundings: half the NashConv is never flagged, and
    half plus off / 10^5 is flagged exactly when off / 10^5 exceeds the roundings."""
    base = "measured_transfer.kuhn.standard_ppo"
    ex = round(nc / 2 + off / 100_000, 5)
    slack = _rounding(ex) + _rounding(nc) / 2
    assume(abs(abs(ex - nc / 2) - slack) > 1e-7)
    with _patched({f"{base}.nashconv": nc, f"{base}.exploitability": ex}):
        assert bounds.rule_bounds("kuhn", "standard_ppo")[1].impossible == (abs(ex - nc / 2) > slack)
    with _patched({f"{base}.nashconv": nc, f"{base}.exploitability": round(nc / 2, 5)}):
        assert not bounds.rule_bounds("kuhn", "standard_ppo")[1].impossible


# ----- the held-out roots reading: a mean over sampled private-card deals ------------------------------
HELD_OUT = int(claims.claim("learning_boundary.policy_solver.heldout_roots_per_seed"))
DEALS = np.array([-1.0, -2.0, 1.0, -1.0, 2.0, 1.0])       # one checkpoint's values over Kuhn's six deals (chips)


def test_identical_seeds_give_the_normal_interval_of_a_mean_over_all_their_roots():
    """n seeds with the same checkpoint: the held-out number is a mean over n x roots equally likely deals, so
    its 95% interval is the value +- z_0.975 sigma / sqrt(n roots), sigma^2 the variance over deals."""
    v, sigma2, n = float(DEALS.mean()), float(DEALS.var()), 5
    mean, low, high = held_out_interval([v] * n, [sigma2] * n, HELD_OUT)
    half = stats.norm.ppf(0.975) * math.sqrt(sigma2 / (n * HELD_OUT))
    assert (mean, low, high) == pytest.approx((v, v - half, v + half), abs=1e-12)


def test_the_interval_of_identical_seeds_covers_ninety_five_percent_of_simulated_held_out_evaluations():
    """Sampling the roots: n seeds x `roots` deals drawn uniformly, averaged; 95% of 4,000 such numbers fall in
    the interval (a binomial 99.9% band around 0.95)."""
    rng, n, sims = np.random.default_rng(7), 5, 4000
    _, low, high = held_out_interval([DEALS.mean()] * n, [DEALS.var()] * n, HELD_OUT)
    draws = DEALS[rng.integers(0, DEALS.size, size=(sims, n * HELD_OUT))].mean(axis=1)
    inside = float(np.mean((draws >= low) & (draws <= high)))
    assert abs(inside - 0.95) < 3.3 * math.sqrt(0.95 * 0.05 / sims)


def test_varying_seeds_widen_the_t_interval_by_the_expected_variance_of_held_out_means():
    """Per seed the held-out mean is the exact value plus the mean of `roots` sampled deal deviations; over
    simulated evaluations, the mean sample variance of the held-out means is the variance the interval uses:
    s^2 of the exact values + mean sigma_s^2 / roots."""
    rng, sims = np.random.default_rng(11), 4000
    values, scale = np.array([0.1, -0.05, 0.2, 0.0, 0.15]), np.array([0.5, 1.0, 1.5, 1.0, 2.0])
    sigma2 = scale ** 2 * DEALS.var()
    mean, low, high = held_out_interval(values, sigma2, HELD_OUT)
    noise = (DEALS - DEALS.mean())[rng.integers(0, DEALS.size, size=(sims, values.size, HELD_OUT))].mean(axis=2)
    s2 = np.var(values + scale * noise, axis=1, ddof=1).mean()
    t = stats.t.ppf(0.975, values.size - 1)
    assert mean == pytest.approx(values.mean())
    assert ((high - low) / (2 * t)) ** 2 * values.size == pytest.approx(s2, rel=0.03)


# ----- our values under a reading, and the combined verdict --------------------------------------------
ARMS = ("cp_grpo", "independent", "grpo", "ppo")
SEEDS = ("13", "17", "23")
P0 = "measured_transfer.kuhn.cp_grpo_paired.player0_value"
LABELS = ("JQ", "JK", "QJ", "QK", "KJ", "KQ")


def _records(self_play: dict, versus: dict | None = None, at_root: dict | None = None,
             sampled: dict | None = None, spread: float = 0.1, signs: dict | None = None,
             by_construction: dict | None = None, pool: dict | None = None) -> dict:
    """Kuhn records of four arms x three seeds: per arm and seed the self-play value (the deals' values spread
    +-`spread` around it, with the arm's `signs` over the six deals), the return against uniform (`versus`,
    default far from every paper number), the contrast variance at '' (`at_root`) and its sample (`sampled`),
    the contrast variance at '' under each construction (`by_construction`: {construction: {arm: per seed}}), and
    the pooled contrast variance under every construction (`pool`, default 1.5 + the seed's tenth)."""
    out = {}
    for arm in ARMS:
        sign = np.asarray((signs or {}).get(arm, (1, -1, 1, -1, 1, -1)), dtype=np.float64)
        out[arm] = {}
        for i, seed in enumerate(SEEDS):
            x = self_play[arm][i]
            m = (versus or {}).get(arm, [x + 0.5] * 3)[i]
            c = (at_root or {}).get(arm, [1.0 + i / 10] * 3)[i]
            pooled = (pool or {}).get(arm, [1.5 + i / 10] * 3)[i]
            out[arm][seed] = {"player0_value": x, "seat_return": [m + 0.01, m - 0.01], "mean_return": m,
                              "root_values": {"player0_value": list(x + spread * sign)},
                              "per_pair": {"player0_value": {lab: x + k / 10 for k, lab in enumerate(LABELS)}},
                              "contrast_by_root": {"": c, "0": 1.5, "1": 2.0, "01": 2.5},
                              "contrast_by_construction": {
                                  k: {"": (by_construction or {}).get(k, {}).get(arm, [c] * 3)[i], "0": 1.5,
                                      "1": 2.0, "01": 2.5} for k in kuhn_facts.ARMS},
                              "contrast_variance_sampled": (sampled or {}).get(arm, [c] * 3)[i],
                              "contrast_variance_exact": c, "nash_conv": 0.2, "exploitability": 0.1,
                              "contrast_pooled": pooled,
                              "contrast_pooled_by_construction": {k: pooled for k in kuhn_facts.ARMS}}
    return out


def _by_reading(row) -> dict:
    return {r["reading"]: r["verdict"] for r in row.readings}


def _held_out_text() -> str:
    return bounds.HELD_OUT.format(roots=HELD_OUT)


def test_the_books_self_play_reading_excludes_the_papers_kuhn_cp_grpo_value():
    """The premise of the next tests: 0.0618 lies above -1/18 + the row's NashConv."""
    nc = float(claims.claim("measured_transfer.kuhn.cp_grpo_paired.nashconv"))
    assert float(claims.claim(P0)) - 1e-4 > KUHN_VALUE + nc


def test_the_papers_reading_gives_the_verdict_though_another_one_would_reproduce_the_number():
    """Self-play impossible; over held-out roots (the paper's reading) our interval (closed form) excludes the
    paper's value while cp_grpo is resolved highest: partly.  Against the uniform opponent our values sit on the
    paper's: reproduced there, which must not become the verdict (the most favourable reading would).  The
    readings disagree, so the row says its verdict depends on the reading."""
    paper = float(claims.claim(P0))
    records = _records({"cp_grpo": [0.01, 0.02, 0.03], "independent": [-0.5, -0.5, -0.49],
                        "grpo": [-0.6, -0.6, -0.59], "ppo": [-0.7, -0.7, -0.69]},
                       versus={"cp_grpo": [paper - 0.005, paper, paper + 0.005]})
    row = readings.claim_rows("kuhn", records, GROUPS)[P0]
    half = stats.t.ppf(0.975, 2) * math.sqrt((np.var([0.01, 0.02, 0.03], ddof=1) + 0.01 / HELD_OUT) / 3)
    assert 0.02 + half < paper                         # the held-out interval excludes the paper's value
    by_reading = _by_reading(row)
    assert by_reading[bounds.SELF_PLAY] == claims.IMPOSSIBLE
    assert by_reading[bounds.VERSUS[0]] == claims.REPRODUCED
    assert row.reading == _held_out_text() and row.verdict == by_reading[_held_out_text()] == claims.PARTLY
    assert row.interval == pytest.approx((0.02 - half, 0.02 + half))
    assert bounds.SELF_PLAY in row.reason and row.reading_dependent


def test_a_held_out_interval_holding_the_papers_value_reproduces_it_whatever_the_other_readings_say():
    records = _records({"cp_grpo": [0.05, 0.06, 0.07], "independent": [-0.5, -0.5, -0.49],
                        "grpo": [-0.6, -0.6, -0.59], "ppo": [-0.7, -0.7, -0.69]})
    row = readings.claim_rows("kuhn", records, GROUPS)[P0]
    by_reading = _by_reading(row)
    assert by_reading[bounds.VERSUS[0]] != claims.REPRODUCED
    assert row.reading == _held_out_text() and row.verdict == claims.REPRODUCED and row.reading_dependent


def test_the_held_out_ordering_compares_arms_on_the_same_roots():
    """cp_grpo above independent by 0.02 on every seed; the paper's independent value breaks the self-play band,
    so the held-out reading gives the row.  Deal values that move together cancel in the paired difference (its
    variance over deals is 0): resolved.  Opposite deal values (the difference is 0.02 +- 2 over the deals) add
    root noise 4 / roots, whose 95% band alone exceeds 0.02: not resolved."""
    cid = "measured_transfer.kuhn.independent.player0_value"
    base = {"cp_grpo": [0.02, 0.03, 0.04], "independent": [0.0, 0.01, 0.02], "grpo": [-1, -1, -1],
            "ppo": [-1, -1, -1]}
    assert stats.norm.ppf(0.975) * math.sqrt(4.0 / (HELD_OUT * 3)) > 0.02
    together = readings.claim_rows("kuhn", _records(base, spread=1.0), GROUPS)[cid]
    opposite = readings.claim_rows("kuhn", _records(base, spread=1.0, signs={"independent": (-1, 1, -1, 1, -1, 1)}),
                                   GROUPS)[cid]
    assert together.reading == opposite.reading == _held_out_text()
    assert together.relation_holds and together.relation_resolved is True
    assert opposite.relation_holds and opposite.relation_resolved is False


def test_one_private_card_pair_is_a_rule_check_showing_the_range_of_our_per_pair_means():
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    row = readings.claim_rows("kuhn", records, GROUPS)[P0]
    [pair] = [r for r in row.readings if r["reading"] == bounds.PAIR]
    assert pair["verdict"] == claims.NOT_COMPARED and pair["ours"] == "0.0000 to 0.5000"
    assert row.reading != bounds.PAIR


def test_a_player0_value_beyond_the_pot_is_impossible_under_every_reading():
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    with _patched({P0: _pot() + 0.5}):
        row = readings.claim_rows("kuhn", records, GROUPS)[P0]
    assert row.verdict == claims.IMPOSSIBLE
    assert len(row.readings) == 5 and all(r["verdict"] == claims.IMPOSSIBLE for r in row.readings)


def test_the_pooled_reading_decides_though_the_root_and_the_sample_would_give_other_verdicts():
    """A paper value of 1.0 for the independent arm: possible at '' and pooled.  Our '' values are three times that
    (partly: cp_grpo lower); our sample variances sit on 1.0 (reproduced there); our pooled values too.  The
    verdict is the pooled reading's, the paper's, whatever the listed order."""
    cid = "measured_transfer.kuhn.independent.contrast_variance"
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS},
                       at_root={"cp_grpo": [0.5, 0.5, 0.51], "independent": [3.0, 3.1, 3.2]},
                       sampled={"cp_grpo": [0.5, 0.5, 0.51], "independent": [0.99, 1.0, 1.01]},
                       pool={"cp_grpo": [0.5, 0.5, 0.51], "independent": [0.98, 1.0, 1.02],
                             "grpo": [3.0, 3.0, 3.0], "ppo": [3.0, 3.0, 3.0]})
    with _patched({cid: 1.0}):
        row = readings.claim_rows("kuhn", records, GROUPS)[cid]
    by_reading = _by_reading(row)
    assert by_reading[bounds.AT_ROOT.format(root="")] == claims.PARTLY
    assert row.reading == bounds.POOLED and row.verdict == by_reading[bounds.POOLED] == claims.REPRODUCED
    assert row.reading_dependent


@pytest.mark.parametrize("row_name", ["cp_grpo_paired"])
def test_a_shared_construction_contrast_variance_of_the_paper_breaks_every_bound_but_the_pooled_one(row_name):
    """Above 4 n/(n-1) (Popoviciu over the shared contrast's widest support, walked in OpenSpiel), so above
    every decision point's maximum too; below 16, the range bound of a pooled variance: not impossible."""
    cid = f"measured_transfer.kuhn.{row_name}.contrast_variance"
    widest = max(_popoviciu(_contrast_support(r, shared=True)) for r in ("", "0", "1", "01"))
    assert GROUPS / (GROUPS - 1) * widest < float(claims.claim(cid)) < 16.0
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    row = readings.claim_rows("kuhn", records, GROUPS)[cid]
    assert row.verdict != claims.IMPOSSIBLE and len(row.readings) == 6 and row.reading == bounds.POOLED
    assert [r["verdict"] == claims.IMPOSSIBLE for r in row.readings] == [False] + [True] * 5


@given(st.lists(st.floats(min_value=-1, max_value=1), min_size=3, max_size=3),
       st.lists(st.floats(min_value=-1, max_value=1), min_size=3, max_size=3))
def test_swapping_the_arms_reverses_an_ordering(a, b):
    values = {"cp_grpo": dict(zip("xyz", a)), "other": dict(zip("xyz", b))}
    swapped = {"cp_grpo": values["other"], "other": values["cp_grpo"]}
    high, low = readings.order_relation(values, "other", "high"), readings.order_relation(swapped, "other", "low")
    diffs = np.subtract(a, b)
    assume(abs(diffs.mean()) > 1e-9)
    assert high.holds == (diffs.mean() > 0) == low.holds
    assert high.resolved == low.resolved


def test_the_findings_count_the_claims_impossible_under_some_reading_and_under_every_reading():
    """With the paper's numbers: 9 break a bound under some reading (5 player-0 values outside the closed-form
    self-play band, 4 Kuhn contrast variances above the proved maxima at every point); none under every reading
    (each contrast variance is possible pooled, each value over held-out roots); the verdicts that depend on the
    reading are counted and decided by the paper's reading."""
    from oscc_core.chapters.transfer import findings, rows
    kuhn = _records({a: [0.1, 0.2, 0.3] for a in ARMS})
    combined = readings.claim_rows("kuhn", kuhn, GROUPS)
    leduc_deals = 6 * 5                     # ordered private cards from Leduc's six cards
    leduc = {a: {s: {**r, "per_pair": {"player0_value": {lab: -1.5 for lab in bounds.pair_range("leduc")}},
                     "root_values": {"player0_value": [r["player0_value"]] * leduc_deals}}
                 for s, r in kuhn[a].items()} for a in ("cp_grpo", "independent")}
    combined.update(readings.claim_rows("leduc", leduc, GROUPS))
    for records in (kuhn, leduc):
        for runs in records.values():
            for rec in runs.values():
                rec.update(contrast_variance_independent_exact=2.0, update_variance=0.1, task_success=0.5,
                           leakage={"violations": 0})
    measured = rows.measured_rows("leduc", leduc, combined) + rows.measured_rows("kuhn", kuhn, combined)
    ratios = rows.ratio_rows(leduc, kuhn)
    box = findings.transfer_findings(measured, ratios, combined, {}, 30, readings.labels(GROUPS)).box
    dependent = [r for r in list(combined.values()) + ratios if r.reading_dependent]
    assert box[2].startswith("9 paper numbers (4 contrast variances and 5 player-0 values) break a bound of the "
                             "rules under at least one reading, none under every reading")
    assert f"{len(dependent)} verdicts depend on the reading; for {len(dependent)} of them the paper's text " \
           f"fixes it" in box[2]
    assert box[0].startswith("All 30 checkpoints of both games show no leakage violation")


def test_the_tables_show_every_reading_and_reason_of_a_combined_row_in_a_few_words():
    """A table cell of more than 32 characters becomes a note under the table; a combined row's reading is its
    label, and a row the rules exclude under every reading says so in a few words (its reasons run to
    thousands of characters in the results file)."""
    from oscc_core.chapters.transfer import tables
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    with _patched({"measured_transfer.kuhn.cp_grpo_paired.contrast_variance": 16.01}):
        combined = readings.claim_rows("kuhn", records, GROUPS)
    frame = tables.rows_frame(list(combined.values()), readings.labels(GROUPS))
    assert not frame.notes or all(column == "relation" for _, column, _ in frame.notes)
    every = frame.loc["kuhn, cp_grpo: contrast variance"]
    assert every["reading"] == "every reading" and every["verdict"] == claims.IMPOSSIBLE
    assert len(combined["measured_transfer.kuhn.cp_grpo_paired.contrast_variance"].reason) > 1000
    assert frame.loc["kuhn, cp_grpo: player0 value", "reading"] == bounds.LABEL["held_out"]


def test_standard_grpo_breaks_every_bound_of_one_point_and_of_the_shared_sample_but_not_the_pooled_ones():
    """The paper's 11.4637 breaks every bound of the root-only construction (the book's model) at each decision
    point and as a sample, and the independent one's at each point, but not the independent construction's
    sample bound (n/(n-1) times Popoviciu's (range / 2)^2 over the unshared contrast's widest support, walked in
    OpenSpiel: 16 n/(n-1)) nor either pooled bound (16).  The row takes the pooled readings' verdict where they
    agree, names the book's construction, and lists the readings it is impossible under."""
    cid = "measured_transfer.kuhn.standard_grpo.contrast_variance"
    paper = float(claims.claim(cid))
    widest = max(_popoviciu(_contrast_support(r, shared=False)) for r in ("", "0", "1", "01"))
    assert widest == pytest.approx(16.0)
    [sampled] = [b for b in bounds.contrast_bounds("standard_grpo", GROUPS) if b.key == ("sampled", "independent")]
    assert sampled.high == pytest.approx(GROUPS / (GROUPS - 1) * widest) and paper < sampled.high
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    row = readings.claim_rows("kuhn", records, GROUPS)[cid]
    impossible = {r["reading"] for r in row.readings if r["verdict"] == claims.IMPOSSIBLE}
    possible = [r["reading"] for r in row.readings if r["verdict"] != claims.IMPOSSIBLE]
    assert len(row.readings) == 12 and len(impossible) == 9
    assert possible == [bounds.POOLED + ", root_only construction", bounds.POOLED + ", independent construction",
                        sampled.reading]
    assert row.verdict != claims.IMPOSSIBLE and row.reading == possible[0]
    for reading in impossible:
        assert reading in row.reason


def test_standard_grpo_would_be_impossible_if_the_paper_printed_a_value_above_the_range_bound():
    cid = "measured_transfer.kuhn.standard_grpo.contrast_variance"
    records = _records({a: [0.0, 0.0, 0.0] for a in ARMS})
    with _patched({cid: 16.01}):
        row = readings.claim_rows("kuhn", records, GROUPS)[cid]
    assert row.verdict == claims.IMPOSSIBLE and len(row.readings) == 12
