"""The exact solver (values, reaches, best response, NashConv, CFR+) against OpenSpiel.

Reference numbers come from OpenSpiel at test time (pyspiel.nash_conv,
BestResponsePolicy, expected_game_score, CFRPlusSolver, a tree walk over
pyspiel states) or from the literature (Kuhn value -1/18, Leduc value
-0.0856, uniform NashConv 11/12 and 1709/360), never from our own code.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import best_response as os_best_response  # noqa: E402
from open_spiel.python.algorithms import expected_game_score  # noqa: E402

from oscc_core import best_response, cfr_plus, exploitability, nash_conv, uniform_policy  # noqa: E402
from oscc_core.exact.exploitability import evaluate  # noqa: E402
from oscc_core.games import get_game  # noqa: E402

GAMES = ("kuhn", "leduc")
NASH_CONV_TOLERANCE = 1e-9
UNIFORM_NASH_CONV = {"kuhn": 11 / 12, "leduc": 1709 / 360}
KUHN_GAME_VALUE = -1 / 18          # player 0's equilibrium value (Kuhn 1950)
LEDUC_GAME_VALUE = -0.0856         # player 0's equilibrium value, four decimals
GAME_VALUE_TOLERANCE = 1e-3
NUM_RANDOM_POLICIES = 20


# ----- helpers: everything on the reference side goes through OpenSpiel ------
def openspiel_game(name: str):
    return pyspiel.load_game(get_game(name).openspiel_name)


def random_policy(name: str, rng: np.random.Generator, deterministic_share: float = 0.3) -> dict:
    """A random policy over OpenSpiel's information states; some rows play one action only."""
    tabular = os_policy.TabularPolicy(openspiel_game(name))
    policy = {}
    for state, index in tabular.state_lookup.items():
        legal = tabular.legal_actions_mask[index].astype(bool)
        weights = rng.exponential(size=legal.size) * legal
        if rng.random() < deterministic_share:
            weights = np.zeros(legal.size)
            weights[rng.choice(np.flatnonzero(legal))] = 1.0
        policy[state] = list(weights / weights.sum())
    return policy


def first_legal_action_policy(name: str) -> dict:
    tabular = os_policy.TabularPolicy(openspiel_game(name))
    policy = {}
    for state, index in tabular.state_lookup.items():
        row = np.zeros(tabular.legal_actions_mask.shape[1])
        row[np.flatnonzero(tabular.legal_actions_mask[index])[0]] = 1.0
        policy[state] = list(row)
    return policy


def python_tabular(name: str, policy: dict):
    """Our dict as an OpenSpiel python TabularPolicy, filled row by row here (not via our interop)."""
    tabular = os_policy.TabularPolicy(openspiel_game(name))
    for state, index in tabular.state_lookup.items():
        tabular.action_probability_array[index] = policy[state]
    return tabular


def pyspiel_policy(policy: dict):
    return pyspiel.TabularPolicy({s: [(a, float(p)) for a, p in enumerate(row)] for s, row in policy.items()})


def openspiel_nash_conv(name: str, policy: dict) -> float:
    return pyspiel.nash_conv(openspiel_game(name), pyspiel_policy(policy))


def openspiel_values(name: str, policy: dict) -> np.ndarray:
    game = openspiel_game(name)
    tabular = python_tabular(name, policy)
    return np.asarray(expected_game_score.policy_value(game.new_initial_state(), [tabular, tabular]))


def openspiel_tree_walk(name: str, policy: dict):
    """Per information state: owner's reach, chance*opponent reach, counterfactual action values."""
    num_actions = get_game(name).num_actions
    own, opponent_chance = {}, defaultdict(float)
    action_values = defaultdict(lambda: np.zeros(num_actions))

    def walk(state, reach, chance):
        if state.is_terminal():
            return np.asarray(state.returns())
        if state.is_chance_node():
            return sum(p * walk(state.child(a), reach, chance * p) for a, p in state.chance_outcomes())
        player = state.current_player()
        key = state.information_state_string(player)
        own[key] = reach[player]
        opponent_chance[key] += chance * reach[1 - player]
        value = np.zeros(2)
        for action in state.legal_actions():
            prob = policy[key][action]
            child_reach = list(reach)
            child_reach[player] *= prob
            child_value = walk(state.child(action), child_reach, chance)
            action_values[key][action] += chance * reach[1 - player] * child_value[player]
            value += prob * child_value
        return value

    walk(openspiel_game(name).new_initial_state(), [1.0, 1.0], 1.0)
    return own, opponent_chance, action_values


# ----- NashConv and exploitability ---------------------------------------------
@pytest.mark.parametrize("name", GAMES)
def test_nash_conv_of_uniform_policy_matches_openspiel_and_literature(name):
    ours = nash_conv(name, uniform_policy(name))
    assert ours == pytest.approx(openspiel_nash_conv(name, uniform_policy(name)), abs=NASH_CONV_TOLERANCE)
    assert ours == pytest.approx(UNIFORM_NASH_CONV[name], abs=NASH_CONV_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
def test_nash_conv_of_first_legal_action_policy_matches_openspiel(name):
    policy = first_legal_action_policy(name)
    assert nash_conv(name, policy) == pytest.approx(openspiel_nash_conv(name, policy), abs=NASH_CONV_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
def test_nash_conv_of_random_policies_matches_openspiel(name):
    rng = np.random.default_rng(20240601)
    for _ in range(NUM_RANDOM_POLICIES):
        policy = random_policy(name, rng)
        assert nash_conv(name, policy) == pytest.approx(openspiel_nash_conv(name, policy), abs=NASH_CONV_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
def test_exploitability_matches_openspiel_exploitability(name):
    policy = random_policy(name, np.random.default_rng(7))
    expected = pyspiel.exploitability(openspiel_game(name), pyspiel_policy(policy))
    assert exploitability(name, policy) == pytest.approx(expected, abs=NASH_CONV_TOLERANCE)


# ----- best response -------------------------------------------------------------
@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("player", [0, 1])
def test_best_response_value_matches_openspiel(name, player):
    policy = random_policy(name, np.random.default_rng(100 + player))
    game = openspiel_game(name)
    reference = os_best_response.BestResponsePolicy(game, player, python_tabular(name, policy))
    expected = reference.value(game.new_initial_state())
    assert best_response(name, policy, player).value == pytest.approx(expected, abs=NASH_CONV_TOLERANCE)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("player", [0, 1])
def test_best_response_policy_earns_the_best_response_value(name, player):
    policy = random_policy(name, np.random.default_rng(200 + player))
    response = best_response(name, policy, player)
    assert openspiel_values(name, response.policy)[player] == pytest.approx(response.value, abs=NASH_CONV_TOLERANCE)


def test_best_response_policy_keeps_the_opponent_policy():
    policy = random_policy("leduc", np.random.default_rng(3))
    response = best_response("leduc", policy, 0)
    opponent_states = [s for s in policy if "[Observer: 1]" in s]
    assert all(response.policy[s] == pytest.approx(policy[s]) for s in opponent_states)


def test_best_response_rejects_a_player_that_is_not_0_or_1():
    with pytest.raises(ValueError, match="player"):
        best_response("kuhn", uniform_policy("kuhn"), 2)


# ----- exact evaluation ------------------------------------------------------------
@pytest.mark.parametrize("name", GAMES)
def test_expected_utilities_match_openspiel_policy_value(name):
    policy = random_policy(name, np.random.default_rng(11))
    np.testing.assert_allclose(evaluate(name, policy).values, openspiel_values(name, policy), atol=1e-12)


@pytest.mark.parametrize("name", GAMES)
def test_reaches_and_counterfactual_values_match_an_openspiel_tree_walk(name):
    policy = random_policy(name, np.random.default_rng(12))
    own, opponent_chance, action_values = openspiel_tree_walk(name, policy)
    result = evaluate(name, policy)
    strings = get_game(name).infostates.strings
    np.testing.assert_allclose(result.own_reach, [own[s] for s in strings], atol=1e-12)
    np.testing.assert_allclose(result.opponent_chance_reach, [opponent_chance[s] for s in strings], atol=1e-12)
    np.testing.assert_allclose(result.action_values, [action_values[s] for s in strings], atol=1e-12)


# ----- CFR+ ----------------------------------------------------------------------------
def openspiel_cfr_plus(name: str, iterations: int) -> tuple[float, dict]:
    """Exploitability and average policy {state: row} of pyspiel.CFRPlusSolver.

    Both are read while the solver is alive: its average policy refers to the solver's memory.
    """
    game = openspiel_game(name)
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    num_actions = get_game(name).num_actions
    rows = {}
    for state in get_game(name).infostates.strings:
        probabilities = dict(average.get_state_policy(state))
        rows[state] = [probabilities.get(a, 0.0) for a in range(num_actions)]
    return pyspiel.exploitability(game, average), rows


@pytest.fixture(scope="module")
def leduc_cfr_plus_1000():
    return cfr_plus("leduc", 1000)


def test_cfr_plus_leduc_100_iterations_exploitability_within_10_percent_of_openspiel():
    expected, _ = openspiel_cfr_plus("leduc", 100)
    assert exploitability("leduc", cfr_plus("leduc", 100)) == pytest.approx(expected, rel=0.10)


@pytest.mark.parametrize("name", GAMES)
def test_cfr_plus_average_policy_equals_openspiel_after_20_iterations(name):
    _, reference = openspiel_cfr_plus(name, 20)
    ours = cfr_plus(name, 20)
    for state, row in ours.items():
        np.testing.assert_allclose(row, reference[state], atol=1e-9)


def test_cfr_plus_kuhn_value_after_1000_iterations_is_minus_one_eighteenth():
    value = openspiel_values("kuhn", cfr_plus("kuhn", 1000))[0]
    assert value == pytest.approx(KUHN_GAME_VALUE, abs=GAME_VALUE_TOLERANCE)


def test_cfr_plus_leduc_value_after_1000_iterations_is_minus_0_0856(leduc_cfr_plus_1000):
    value = openspiel_values("leduc", leduc_cfr_plus_1000)[0]
    assert value == pytest.approx(LEDUC_GAME_VALUE, abs=GAME_VALUE_TOLERANCE)


def test_cfr_plus_curve_matches_openspiel_exploitability_at_requested_iterations():
    policy, curve = cfr_plus("leduc", 10, curve_at=[1, 10])
    assert sorted(curve) == [1, 10]
    for t, value in curve.items():
        expected, _ = openspiel_cfr_plus("leduc", t)
        assert value == pytest.approx(expected, abs=NASH_CONV_TOLERANCE)


@pytest.mark.parametrize("iterations, curve_at", [(-1, None), (1.5, None), (10, [0]), (10, [11])])
def test_cfr_plus_rejects_bad_iterations_and_curve_points(iterations, curve_at):
    with pytest.raises(ValueError, match="iterations|curve_at"):
        cfr_plus("kuhn", iterations, curve_at=curve_at)


# ----- bad input: ValueError naming the offending information state --------------------
LEDUC_STATE = "[Observer: 1][Private: 3][Round 1][Player: 1][Pot: 4][Money: 97 99][Round1: 2][Round2: ]"


def policy_with(row=None, drop=False) -> dict:
    policy = uniform_policy("leduc")
    if drop:
        del policy[LEDUC_STATE]
    else:
        policy[LEDUC_STATE] = row
    return policy


ENTRY_POINTS = {
    "nash_conv": lambda policy: nash_conv("leduc", policy),
    "exploitability": lambda policy: exploitability("leduc", policy),
    "best_response": lambda policy: best_response("leduc", policy, 0),
    "evaluate": lambda policy: evaluate("leduc", policy),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_policy_missing_an_information_state_is_rejected_by_name(entry):
    with pytest.raises(ValueError, match="missing") as error:
        ENTRY_POINTS[entry](policy_with(drop=True))
    assert repr(LEDUC_STATE) in str(error.value)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_policy_with_a_negative_probability_is_rejected_by_name(entry):
    with pytest.raises(ValueError, match="negative") as error:
        ENTRY_POINTS[entry](policy_with([0.5, 0.7, -0.2]))
    assert repr(LEDUC_STATE) in str(error.value)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_policy_with_a_non_normalised_row_is_rejected_by_name(entry):
    with pytest.raises(ValueError, match="sums to") as error:
        ENTRY_POINTS[entry](policy_with([0.2, 0.3, 0.3]))
    assert repr(LEDUC_STATE) in str(error.value)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_policy_with_mass_on_an_illegal_action_is_rejected_by_name(entry):
    opening = "[Observer: 0][Private: 0][Round 1][Player: 0][Pot: 2][Money: 99 99][Round1: ][Round2: ]"
    policy = uniform_policy("leduc")
    policy[opening] = [0.2, 0.4, 0.4]   # fold is illegal when not facing a bet
    with pytest.raises(ValueError, match="illegal") as error:
        ENTRY_POINTS[entry](policy)
    assert repr(opening) in str(error.value)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_policy_for_the_wrong_game_is_rejected_by_name(entry):
    with pytest.raises(ValueError, match="wrong game") as error:
        ENTRY_POINTS[entry](uniform_policy("kuhn"))
    assert any(repr(s) in str(error.value) for s in uniform_policy("kuhn"))
