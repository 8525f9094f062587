"""Our batched games replayed action by action in OpenSpiel give the same game."""
import pyspiel
import pytest

from oscc_core.engine.trace import HandChance, sample_hands
from oscc_core.games import get_game

N_HANDS = 10_000


def _replay(game_name, hand):
    """Apply our hand to pyspiel, checking legal actions, info strings and returns; return mismatches."""
    state = pyspiel.load_game(get_game(game_name).openspiel_name).new_initial_state()
    state.apply_action(hand.cards[0])
    state.apply_action(hand.cards[1])
    for event in hand.events:
        if isinstance(event, HandChance):
            assert state.is_chance_node()
            state.apply_action(event.card)
            continue
        player, info, action = event.player, event.infostate, event.action
        assert state.current_player() == player
        assert state.information_state_string(player) == info
        ours = get_game(game_name).infostates
        legal = [a for a, ok in enumerate(ours.legal[ours.id_of[info]]) if ok]
        assert state.legal_actions() == legal
        state.apply_action(action)
    assert state.is_terminal()
    assert state.returns() == [hand.utility_p0, -hand.utility_p0]


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_random_play_replays_identically_in_openspiel(game):
    hands = sample_hands(game, N_HANDS, seed=11)
    for hand in hands:
        _replay(game, hand)


def test_leduc_replay_covers_both_rounds_and_folds():
    hands = sample_hands("leduc", N_HANDS, seed=11)
    assert sum(any(isinstance(e, HandChance) for e in h.events) for h in hands) > 1000
    assert sum(h.events[-1].action == 0 for h in hands) > 1000  # hands ending in a fold


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_information_state_sets_equal_openspiel(game):
    from open_spiel.python.policy import TabularPolicy
    theirs = TabularPolicy(pyspiel.load_game(get_game(game).openspiel_name)).state_lookup
    assert set(get_game(game).infostates.strings) == set(theirs)


def test_leduc_has_468_information_states_per_player():
    info = get_game("leduc").infostates
    assert (info.player == 0).sum() == 468 and (info.player == 1).sum() == 468
