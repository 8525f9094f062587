"""Chapter 06 leakage check: a checkpoint's lookups see no hidden card, and a leak is caught."""
import numpy as np
import pytest
import torch
from openspiel_reference import information_states

from oscc_core.chapters.transfer import leakage
from oscc_core.engine.violations import CONTROLS
from oscc_core.games import KUHN, LEDUC, get_game
from oscc_core.policy import uniform_table


def random_table(game, seed: int) -> np.ndarray:
    """A random policy on the legal actions of every information state (both seats)."""
    legal = get_game(game).infostates.legal
    w = np.random.default_rng(seed).random(legal.shape) * legal
    return w / w.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("game, states", [(KUHN, 12), (LEDUC, 936)])
def test_every_openspiel_information_state_is_audited(game, states):
    expected = information_states(get_game(game).openspiel_name)
    out = leakage.leakage_violations(game, uniform_table(game))
    assert len(expected) == states and out["states"] == states


@pytest.mark.parametrize("game, points, lookups", [
    (KUHN, 6 * 4, 6 * 4 * 2),                          # 6 deals x 4 decision nodes; the opponent holds 1 of 2 cards
    (LEDUC, 120 * 36, 120 * (6 * 5 * 4 + 30 * 4)),     # round one: 5 opponent x 4 public cards; round two: 4
])
@pytest.mark.parametrize("policy", ["uniform", "random"])
def test_no_violation_for_uniform_and_random_checkpoints(game, points, lookups, policy):
    table = uniform_table(game) if policy == "uniform" else random_table(game, 7)
    out = leakage.leakage_violations(game, table)
    assert out["violations"] == 0 and out["observation_exposures"] == 0 and out["lookup_changes"] == 0
    assert (out["decision_points"], out["lookups_checked"]) == (points, lookups)


@pytest.mark.parametrize("game", [KUHN, LEDUC])
def test_the_opponent_card_in_the_policy_key_is_caught(game):
    out = leakage.leakage_violations(game, random_table(game, 3), CONTROLS["opponent_card_in_policy_key"])
    assert out["observation_exposures"] == out["states"]
    assert out["address_changes"] == out["decision_points"] and out["action_changes"] > 0
    assert out["violations"] == out["states"] + out["lookup_changes"] > 0


@pytest.mark.parametrize("game", [KUHN, LEDUC])
def test_a_lookup_reading_the_opponents_row_is_caught(game, monkeypatch):
    # a tampered lookup: the engine's step is handed the seats' cards swapped, so it reads the row of the
    # opponent's card; the perturbation check (b) alone must see it
    real = leakage.engine_step

    def swapped(game, node, c0, c1, public, *args):
        return real(game, node, c1, c0, public, *args)

    monkeypatch.setattr(leakage, "engine_step", swapped)
    out = leakage.leakage_violations(game, random_table(game, 5))
    assert out["observation_exposures"] == 0
    assert out["row_changes"] == out["decision_points"] and out["lookup_changes"] == out["decision_points"]
    assert out["violations"] > 0


def test_a_table_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="shape"):
        leakage.leakage_violations(KUHN, uniform_table(LEDUC))


def test_decision_counters_follow_the_public_tree():
    game = get_game(LEDUC)
    before = leakage.decisions_before(game)
    assert before[game.tree.node_of_history("")] == 0
    assert torch.as_tensor(before).max() == 8          # four betting actions per round at most
