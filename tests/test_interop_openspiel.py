"""Policy exchange with OpenSpiel's TabularPolicy."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402

from oscc_core import uniform_policy  # noqa: E402
from oscc_core.games import get_game  # noqa: E402
from oscc_core.interop.openspiel import from_openspiel, to_openspiel  # noqa: E402

GAMES = ("kuhn", "leduc")


def random_policy(name: str, rng: np.random.Generator) -> dict:
    legal = get_game(name).infostates.legal
    policy = {}
    for state, mask in zip(get_game(name).infostates.strings, legal):
        weights = rng.exponential(size=mask.size) * mask
        policy[state] = list(weights / weights.sum())
    return policy


@pytest.mark.parametrize("name", GAMES)
def test_round_trip_through_openspiel_returns_the_same_policy(name):
    policy = random_policy(name, np.random.default_rng(5))
    back = from_openspiel(name, to_openspiel(name, policy))
    assert back.keys() == policy.keys()
    for state in policy:
        np.testing.assert_allclose(back[state], policy[state], atol=0)


def decision_states(game) -> dict:
    """One OpenSpiel state for every information state of the game, found by walking the whole tree."""
    found, stack = {}, [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            found.setdefault(state.information_state_string(), state)
        stack.extend(state.child(a) for a in state.legal_actions())
    return found


@pytest.mark.parametrize("name, infostates", [("kuhn", 12), ("leduc", 936)])
def test_to_openspiel_gives_openspiel_the_same_action_probabilities(name, infostates):
    policy = random_policy(name, np.random.default_rng(6))
    tabular = to_openspiel(name, policy)
    states = decision_states(pyspiel.load_game(get_game(name).openspiel_name))
    assert len(states) == infostates and states.keys() == policy.keys()
    for key, state in states.items():
        probabilities = tabular.action_probabilities(state)
        expected = policy[key]
        assert set(probabilities) == set(state.legal_actions())
        assert [probabilities.get(a, 0.0) for a in range(len(expected))] == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("name", GAMES)
def test_from_openspiel_of_openspiel_uniform_policy_is_our_uniform_policy(name):
    tabular = os_policy.TabularPolicy(pyspiel.load_game(get_game(name).openspiel_name))
    ours, uniform = from_openspiel(name, tabular), uniform_policy(name)
    assert ours.keys() == uniform.keys()
    for state in uniform:
        np.testing.assert_allclose(ours[state], uniform[state], atol=1e-15)


def test_from_openspiel_rejects_a_policy_for_another_game():
    kuhn_tabular = os_policy.TabularPolicy(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="tabular_policy"):
        from_openspiel("leduc", kuhn_tabular)


def test_importing_the_interop_module_does_not_import_openspiel():
    code = "import sys, oscc_core.interop.openspiel; sys.exit('pyspiel' in sys.modules or 'open_spiel' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
