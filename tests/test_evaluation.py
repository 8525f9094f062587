"""Exact evaluation of a checkpoint (`oscc_core.exact.evaluation`) and the t-interval over seeds.

Reference values are independent of the code under test: OpenSpiel
(`pyspiel.exploitability`, `pyspiel.expected_returns`,
`pyspiel.TabularBestResponse`, a tree walk over pyspiel states), the
literature (uniform exploitability, Kuhn value -1/18, Leduc value -0.0856),
counting of deals, and scipy's Student t.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from openspiel_reference import deal_values

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python.policy import python_policy_to_pyspiel_policy  # noqa: E402

from oscc_core.exact.evaluation import (  # noqa: E402
    KUHN_EQUILIBRIUM_VALUE,
    check_player0_value,
    equilibrium_value,
    evaluate_checkpoint,
    feasibility_band,
    rank_pairs,
)
from oscc_core.exact.exploitability import evaluate, nash_conv  # noqa: E402
from oscc_core.games import get_game  # noqa: E402
from oscc_core.interop.openspiel import load_openspiel_game, to_openspiel  # noqa: E402
from oscc_core.method.stats import student_t_quantile, t_interval  # noqa: E402
from oscc_core.policy import table_to_policy, uniform_policy  # noqa: E402

GAMES = ("kuhn", "leduc")
UNIFORM_EXPLOITABILITY = {"kuhn": 0.458333, "leduc": 2.373611}   # literature, six decimals
LITERATURE_TOLERANCE = 1e-6
OPENSPIEL_TOLERANCE = 1e-9
ROUNDING = 1e-12
LEDUC_GAME_VALUE = -0.0856                                         # four decimals
RANKS = "JQK"


def random_policy(name: str, rng: np.random.Generator, deterministic_share: float = 0.3) -> dict:
    """A random policy over the game's information states; some rows play one legal action only."""
    legal = get_game(name).infostates.legal
    weights = rng.exponential(size=legal.shape) * legal
    pure = rng.random(len(legal)) < deterministic_share
    pick = np.argmax(np.where(legal, rng.random(legal.shape), -1.0), axis=1)
    weights[pure] = 0.0
    weights[pure, pick[pure]] = 1.0
    return table_to_policy(name, weights / weights.sum(axis=1, keepdims=True))


def openspiel_policy(name: str, policy: dict):
    return python_policy_to_pyspiel_policy(to_openspiel(name, policy))


def root_history(name: str) -> str:
    return load_openspiel_game(name).new_initial_state().history_str()


# ----- exploitability and values against OpenSpiel ---------------------------------
@pytest.mark.parametrize("name", GAMES)
def test_uniform_exploitability_matches_literature_and_openspiel(name):
    result = evaluate_checkpoint(name, uniform_policy(name))
    assert result.exploitability.whole == pytest.approx(UNIFORM_EXPLOITABILITY[name], abs=LITERATURE_TOLERANCE)
    reference = pyspiel.exploitability(load_openspiel_game(name), openspiel_policy(name, uniform_policy(name)))
    assert result.exploitability.whole == pytest.approx(reference, abs=OPENSPIEL_TOLERANCE)
    assert result.nash_conv.whole == pytest.approx(2 * reference, abs=OPENSPIEL_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
def test_player0_value_and_best_responses_of_random_profiles_match_openspiel(name):
    rng = np.random.default_rng(12)
    game = load_openspiel_game(name)
    for _ in range(3):
        policy = random_policy(name, rng)
        result = evaluate_checkpoint(name, policy)
        spiel = openspiel_policy(name, policy)
        values = pyspiel.expected_returns(game.new_initial_state(), spiel, -1, True)
        assert result.player0_value.whole == pytest.approx(values[0], abs=OPENSPIEL_TOLERANCE)
        for player in (0, 1):
            br = pyspiel.TabularBestResponse(game, player, spiel).value(root_history(name))
            assert result.best_response_values[player].whole == pytest.approx(br, abs=OPENSPIEL_TOLERANCE)
        # consistent with the existing exact engine
        assert result.nash_conv.whole == pytest.approx(nash_conv(name, policy), abs=ROUNDING)
        assert result.player0_value.whole == pytest.approx(evaluate(name, policy).values[0], abs=ROUNDING)


@pytest.mark.parametrize("name", GAMES)
def test_return_against_a_given_opponent_matches_openspiel_in_both_seats(name):
    rng = np.random.default_rng(5)
    policy, opponent = random_policy(name, rng), random_policy(name, rng)
    game = load_openspiel_game(name)
    mine, theirs = openspiel_policy(name, policy), openspiel_policy(name, opponent)
    seat0 = pyspiel.expected_returns(game.new_initial_state(), [mine, theirs], -1, True)[0]
    seat1 = pyspiel.expected_returns(game.new_initial_state(), [theirs, mine], -1, True)[1]
    versus = evaluate_checkpoint(name, policy, opponent=opponent).versus
    assert versus.opponent == "given"
    assert versus.seat_return[0].whole == pytest.approx(seat0, abs=OPENSPIEL_TOLERANCE)
    assert versus.seat_return[1].whole == pytest.approx(seat1, abs=OPENSPIEL_TOLERANCE)
    assert versus.mean_return.whole == pytest.approx((seat0 + seat1) / 2, abs=OPENSPIEL_TOLERANCE)


# ----- the split over ordered rank pairs -----------------------------------------------
def test_deal_law_over_rank_pairs_is_the_counted_one():
    kuhn, leduc = rank_pairs("kuhn"), rank_pairs("leduc")
    assert kuhn.labels == ("JQ", "JK", "QJ", "QK", "KJ", "KQ")
    np.testing.assert_allclose(kuhn.probability, np.full(6, 1 / 6), rtol=0, atol=ROUNDING)
    # Leduc: two suits per rank; an equal-rank pair has 2 * 1 of the 6 * 5 ordered card pairs, others 2 * 2
    expected = {f"{a}{b}": (2 if a == b else 4) / 30 for a in RANKS for b in RANKS}
    assert dict(zip(leduc.labels, leduc.probability)) == pytest.approx(expected, abs=ROUNDING)


def walk_values(name: str, by_player: dict) -> dict[tuple[int, int], float]:
    """Per ordered private-card deal (P0 card, P1 card): E[u_0] when player p plays by_player[p] (policy dicts),
    by a walk over pyspiel states (the public card by its chance outcomes)."""
    return deal_values(load_openspiel_game(name).get_type().short_name,
                       lambda player, info, legal: by_player[player][info])


def rank_of(name: str, card: int) -> int:
    return card // 2 if name == "leduc" else card


@pytest.mark.parametrize("name", GAMES)
def test_per_pair_player0_value_and_seat_return_equal_a_pyspiel_walk_over_the_pairs_deals(name):
    rng = np.random.default_rng(2024)
    policy, opponent = random_policy(name, rng), random_policy(name, rng)
    result = evaluate_checkpoint(name, policy, opponent=opponent)
    for split, by_player in ((result.player0_value, {0: policy, 1: policy}),
                             (result.versus.seat_return[0], {0: policy, 1: opponent})):
        deals: dict[str, list[float]] = defaultdict(list)
        for (c0, c1), v in walk_values(name, by_player).items():
            deals[RANKS[rank_of(name, c0)] + RANKS[rank_of(name, c1)]].append(v)
        want = {label: float(np.mean(v)) for label, v in deals.items()}     # deals of a pair are equally likely
        assert split.by_pair() == pytest.approx(want, abs=OPENSPIEL_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
def test_root_values_of_a_profile_and_its_best_responses_equal_a_pyspiel_walk_per_private_deal(name):
    from oscc_core.exact.evaluation import best_response_tables, private_deals, root_values
    from oscc_core.policy import policy_table

    policy = random_policy(name, np.random.default_rng(31))
    table = policy_table(name, policy)
    responses = best_response_tables(name, table)
    values = root_values(name, np.stack([table, *responses]))
    roots, _ = private_deals(name)
    for k, profile in enumerate([table, *responses]):
        as_dict = table_to_policy(name, profile)
        walk = walk_values(name, {0: as_dict, 1: as_dict})
        assert values[k] == pytest.approx([walk[(int(a), int(b))] for a, b in roots], abs=OPENSPIEL_TOLERANCE)
    game = load_openspiel_game(name)
    spiel = openspiel_policy(name, policy)
    for player in (0, 1):                          # the profiles earn OpenSpiel's best-response values
        br = pyspiel.TabularBestResponse(game, player, spiel).value(root_history(name))
        sign = 1.0 if player == 0 else -1.0
        assert sign * values[1 + player].mean() == pytest.approx(br, abs=OPENSPIEL_TOLERANCE)


# ----- feasibility -----------------------------------------------------------------------
def test_feasibility_band_holds_for_random_kuhn_profiles():
    rng = np.random.default_rng(99)
    for _ in range(20):
        result = evaluate_checkpoint("kuhn", random_policy("kuhn", rng))
        band = feasibility_band("kuhn", result.nash_conv.whole, -1 / 18)
        assert band.low == pytest.approx(-1 / 18 - result.nash_conv.whole)
        assert band.high == pytest.approx(-1 / 18 + result.nash_conv.whole)
        assert band.contains(result.player0_value.whole)
        assert check_player0_value("kuhn", result.player0_value.whole, result.nash_conv.whole)
    assert equilibrium_value("kuhn").value == KUHN_EQUILIBRIUM_VALUE == -1 / 18
    assert not check_player0_value("kuhn", -1 / 18 + 0.1 + 1e-6, 0.1)
    assert feasibility_band("kuhn", 0.1).violation(-1 / 18 - 0.3) == pytest.approx(0.2)


def test_leduc_equilibrium_bracket_contains_the_literature_value_and_the_band_holds():
    star = equilibrium_value("leduc")
    assert star.low <= star.value <= star.high and star.tolerance < 1e-3
    assert abs(star.value - LEDUC_GAME_VALUE) <= star.tolerance + 5e-5     # literature prints four decimals
    rng = np.random.default_rng(3)
    for _ in range(5):
        result = evaluate_checkpoint("leduc", random_policy("leduc", rng))
        assert feasibility_band("leduc", result.nash_conv.whole, star).contains(result.player0_value.whole)


# ----- task success by hand enumeration ---------------------------------------------------
def kuhn_success_by_enumeration(policy: dict, opponent: dict):
    """Per seat: {(P0 card, P1 card): P(u > 0) + P(u = 0)/2 of `policy`'s seat}, by a walk over pyspiel states."""
    game = load_openspiel_game("kuhn")
    out = [defaultdict(float), defaultdict(float)]
    for seat in (0, 1):
        by_player = {seat: policy, 1 - seat: opponent}
        for c0 in range(3):
            for c1 in range(3):
                if c1 == c0:
                    continue
                state = game.new_initial_state()
                state.apply_action(c0)
                state.apply_action(c1)
                stack = [(state, 1.0)]
                while stack:
                    s, p = stack.pop()
                    if s.is_terminal():
                        u = s.returns()[seat]
                        out[seat][(c0, c1)] += p * ((u > 0) + 0.5 * (u == 0))
                        continue
                    row = by_player[s.current_player()][s.information_state_string()]
                    stack.extend((s.child(a), p * row[a]) for a in s.legal_actions())
    return out


@pytest.mark.parametrize("which", ["uniform", "random"])
def test_kuhn_task_success_matches_a_hand_enumeration(which):
    policy = uniform_policy("kuhn") if which == "uniform" else random_policy("kuhn", np.random.default_rng(8))
    expected = kuhn_success_by_enumeration(policy, uniform_policy("kuhn"))
    versus = evaluate_checkpoint("kuhn", policy).versus
    assert versus.opponent == "uniform"
    for seat in (0, 1):
        assert versus.seat_success[seat].whole == pytest.approx(sum(expected[seat].values()) / 6, abs=ROUNDING)
        for (c0, c1), value in expected[seat].items():
            assert versus.seat_success[seat].by_pair()[RANKS[c0] + RANKS[c1]] == pytest.approx(value, abs=ROUNDING)
    # seat average keyed by (own card, opponent card): seat 1's (P0, P1) = (opponent, own)
    for own in range(3):
        for other in range(3):
            if own != other:
                mean = (expected[0][(own, other)] + expected[1][(other, own)]) / 2
                assert versus.task_success.by_pair()[RANKS[own] + RANKS[other]] == pytest.approx(mean, abs=ROUNDING)
    whole = (sum(expected[0].values()) + sum(expected[1].values())) / 12
    assert versus.task_success.whole == pytest.approx(whole, abs=ROUNDING)
    if which == "uniform":
        assert versus.seat_success[0].whole == pytest.approx(0.5625, abs=ROUNDING)   # (7/8 + 1/4) / 2 by hand
        assert versus.task_success.whole == pytest.approx(0.5, abs=ROUNDING)


# ----- t-intervals over seeds --------------------------------------------------------------
def test_t_interval_is_mean_plus_minus_t_sd_over_root_n():
    values = [0.1, 0.2, 0.15, 0.05, 0.3]
    interval = t_interval(values)
    t975 = 2.7764451051977934                                       # scipy.stats.t.ppf(0.975, 4)
    half = t975 * np.std(values, ddof=1) / math.sqrt(5)
    assert interval.t == pytest.approx(t975, rel=1e-12)
    assert (interval.low, interval.high) == pytest.approx((0.16 - half, 0.16 + half), rel=1e-12)
    with pytest.raises(ValueError, match="at least two"):
        t_interval([1.0])


def test_student_t_quantile_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 4, 7, 12, 30, 200):
        for p in (0.025, 0.6, 0.95, 0.975, 0.995):
            assert student_t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10)
