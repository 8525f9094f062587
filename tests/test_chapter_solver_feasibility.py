"""The rule bounds of chapter 05 (solver) that decide which paper numbers no profile can produce.

Values of random profiles come from OpenSpiel at test time (expected game
score, best-response improvements of `exploitability.nash_conv`); the
uniform policy's numbers from pyspiel or closed forms (Kuhn uniform NashConv
11/12; return 0 and success 1/2 by the symmetry of the two seats).
"""
from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as os_exploitability

from oscc_core.chapters.solver.feasibility import (
    best_response_ranges,
    feasibility_rows,
    feasibility_table,
    outside,

    uniform_reference,
    value_range,
)
from oscc_core.exact.evaluation import equilibrium_value
from oscc_core.reporting import claims

ROUNDING = 1e-9                      # chips
NUM_PROFILES = 20
KUHN_UNIFORM_NASH_CONV = 11 / 12     # chips (literature; also OpenSpiel's)
CFR_PLUS_WITNESS_ITERATIONS = 150    # enough for OpenSpiel's CFR+ to come within the reference row's NashConv


def random_profile(game, rng: np.random.Generator, deterministic_share: float = 0.3):
    """An OpenSpiel TabularPolicy with random rows over legal actions; some rows play one action only."""
    tabular = os_policy.TabularPolicy(game)
    for index, legal in enumerate(tabular.legal_actions_mask.astype(bool)):
        weights = rng.exponential(size=legal.size) * legal
        if rng.random() < deterministic_share:
            weights = np.zeros(legal.size)
            weights[rng.choice(np.flatnonzero(legal))] = 1.0
        tabular.action_probability_array[index] = weights / weights.sum()
    return tabular


def openspiel_numbers(game, tabular) -> tuple[float, float, float, float]:
    """(v_0, BR_0, BR_1, NashConv) of a profile by OpenSpiel (chips)."""
    v0 = float(expected_game_score.policy_value(game.new_initial_state(), [tabular, tabular])[0])
    result = os_exploitability.nash_conv(game, tabular, return_only_nash_conv=False)
    improvement = result.player_improvements
    return v0, v0 + float(improvement[0]), -v0 + float(improvement[1]), float(result.nash_conv)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_value_and_best_response_ranges_hold_for_random_profiles(name):
    game = pyspiel.load_game(f"{name}_poker")
    star = equilibrium_value(name)
    rng = np.random.default_rng(2024)
    for _ in range(NUM_PROFILES):
        v0, br0, br1, nash_conv = openspiel_numbers(game, random_profile(game, rng))
        assert not outside(v0, [value_range(star, nash_conv)], ROUNDING)
        for given in (None, v0):
            (lo0, hi0), (lo1, hi1) = best_response_ranges(star, nash_conv, given)
            assert lo0 - ROUNDING <= br0 <= hi0 + ROUNDING
            assert lo1 - ROUNDING <= br1 <= hi1 + ROUNDING


def test_a_kuhn_value_far_above_the_band_is_flagged():
    assert outside(0.5, [value_range(equilibrium_value("kuhn"), 0.01)])


def test_a_kuhn_value_inside_the_band_is_not_flagged():
    assert not outside(-1 / 18 + 0.009, [value_range(equilibrium_value("kuhn"), 0.01)])


def test_a_number_inside_one_reading_is_not_flagged_and_outside_both_is():
    readings = [(0.0, 1.0), (2.0, 3.0)]
    assert not outside(2.5, readings)
    assert outside(1.5, readings)
    assert not outside([0.9, 1.5], readings)       # an interval is flagged only when no point of it is allowed


def test_printed_rounding_is_half_a_unit_in_the_last_decimal():
    assert claims.printed_rounding(0.2368) == pytest.approx(5e-5)
    assert claims.printed_rounding(0.332) == pytest.approx(5e-4)
    assert claims.printed_rounding(26) == pytest.approx(0.5)


def test_uniform_leduc_exploitability_and_value_are_openspiels():
    game = pyspiel.load_game("leduc_poker")
    uniform = os_policy.UniformRandomPolicy(game)
    ours = uniform_reference("leduc")
    assert ours["exploitability"] == pytest.approx(pyspiel.exploitability(game, os_policy.python_policy_to_pyspiel_policy(
        os_policy.tabular_policy_from_callable(game, uniform))), abs=ROUNDING)
    assert ours["value"] == pytest.approx(
        expected_game_score.policy_value(game.new_initial_state(), [uniform, uniform])[0], abs=ROUNDING)


def test_uniform_kuhn_exploitability_is_half_the_literature_nash_conv():
    assert uniform_reference("kuhn")["exploitability"] == pytest.approx(KUHN_UNIFORM_NASH_CONV / 2, abs=ROUNDING)


def test_uniform_return_is_zero_and_success_one_half_against_a_uniform_opponent():
    ours = uniform_reference("leduc")
    assert ours["return_mean"] == pytest.approx(0.0, abs=ROUNDING)
    assert ours["success_mean"] == pytest.approx(0.5, abs=ROUNDING)


def test_every_flagged_number_is_an_impossible_row_naming_its_bound():
    table = feasibility_table("leduc")
    rows = feasibility_rows("leduc")
    assert [r["claim id"] for r in rows] == [c["claim_id"] for c in table if c["impossible"]]
    assert all(r["verdict"] == claims.IMPOSSIBLE and "breaks a bound" in r["reason"] for r in rows)


def test_a_cfr_plus_profile_within_the_reference_rows_nash_conv_lands_inside_its_allowed_value_range():
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(CFR_PLUS_WITNESS_ITERATIONS):
        solver.evaluate_and_update_policy()
    witness = os_policy.pyspiel_policy_to_python_policy(game, solver.tabular_average_policy())
    v0, _, _, nash_conv = openspiel_numbers(game, witness)
    entry = {c["claim_id"]: c for c in feasibility_table("leduc")}["measured_solver.exact_cfr_plus.player0_value"]
    assert nash_conv <= float(claims.claim("measured_solver.exact_cfr_plus.nashconv"))
    (low, high), = entry["allowed"]
    assert low <= v0 <= high
