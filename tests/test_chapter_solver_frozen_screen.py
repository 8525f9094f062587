"""The frozen-opponent one-step screen (chapter 05): exact margins and value changes against pyspiel,
sampled margins against the exact ones, the rollout count and the clipped-surrogate optimum.

The reference values are computed here independently: a recursive walk over pyspiel's Leduc states
(uniform play everywhere except player 0's first decision) and a brute-force grid maximisation of the
surrogate written from its formula.
"""
from functools import cache

import numpy as np
import pytest

from oscc_core.chapters.solver import frozen_screen as fs

pyspiel = pytest.importorskip("pyspiel")

SEED = 13
RANK_LABELS = "JQK"


@cache
def _leduc():
    return pyspiel.load_game("leduc_poker")


def _value(state, p_check: float) -> float:
    """Player 0's expected utility (chips) from `state`: player 0's first decision checks with p_check,
    every other decision is uniform over the legal actions, chance follows pyspiel's outcome law."""
    if state.is_terminal():
        return state.returns()[0]
    if state.is_chance_node():
        return sum(prob * _value(state.child(a), p_check) for a, prob in state.chance_outcomes())
    legal = state.legal_actions()
    if state.current_player() == 0 and len(state.history()) == 2:   # two private cards dealt, nothing else
        probs = {1: p_check, 2: 1.0 - p_check}                        # Call (check), Raise (bet)
    else:
        probs = {a: 1.0 / len(legal) for a in legal}
    return sum(prob * _value(state.child(a), p_check) for a, prob in probs.items() if prob > 0)


def _deals(pair: str) -> list[tuple[int, int]]:
    """Every (P0 card, P1 card) with these ranks (rank = card // 2), each equally likely."""
    a, b = (RANK_LABELS.index(c) for c in pair)
    return [(c0, c1) for c0 in range(6) for c1 in range(6) if c0 != c1 and c0 // 2 == a and c1 // 2 == b]


@cache
def pyspiel_pair_value(pair: str, p_check: float) -> float:
    """E[u_0 | rank pair] (chips) under that root policy, by enumerating the pair's deals in pyspiel."""
    values = []
    for c0, c1 in _deals(pair):
        state = _leduc().new_initial_state()
        state.apply_action(c0)
        state.apply_action(c1)
        values.append(_value(state, p_check))
    return float(np.mean(values))


def pyspiel_margin(pair: str) -> float:
    """E[R(check) - R(bet) | pair] (chips) under the uniform continuation."""
    return pyspiel_pair_value(pair, 1.0) - pyspiel_pair_value(pair, 0.0)


@pytest.fixture(scope="module")
def screen():
    return fs.run_screen(SEED)


def brute_force_optimum(margin: float, epsilon: float) -> float:
    """Maximiser of sum_i 1/2 * min(r_i A_i, clip(r_i) A_i) on a fine grid, nearest p = 1/2 on ties."""
    grid = np.linspace(0.0, 1.0, 40001)
    best, best_p = -np.inf, None
    for p in grid:
        total = 0.0
        for ratio, adv in ((2 * p, margin / 2), (2 * (1 - p), -margin / 2)):
            clipped = min(max(ratio, 1 - epsilon), 1 + epsilon)
            total += 0.5 * min(ratio * adv, clipped * adv)
        if total > best + 1e-12 or (abs(total - best) <= 1e-12 and abs(p - 0.5) < abs(best_p - 0.5)):
            best, best_p = max(best, total), p
    return float(best_p)


def test_exact_margin_of_every_pair_equals_pyspiel_enumeration():
    exact = fs.exact_margins()
    for pair in exact:
        assert exact[pair] == pytest.approx(pyspiel_margin(pair), abs=1e-10), pair


@pytest.mark.parametrize("mode", ["paired", "independent"])
def test_sampled_margin_95_interval_covers_exact_margin(screen, mode):
    m = screen["modes"][mode]
    for pair in screen["calibration_pairs"]:
        assert abs(m["margins"][pair] - pyspiel_margin(pair)) <= 1.96 * m["ses"][pair], pair


def test_rollouts_counted_are_six_pairs_times_n_times_two_branches():
    n = 64
    result = fs.run_screen(SEED, n_per_pair=n)
    assert result["modes"]["paired"]["rollouts"] == 6 * n * 2
    assert result["modes"]["independent"]["rollouts"] == 6 * n * 2
    assert result["rollouts"]["total"] == 2 * 6 * n * 2


@pytest.mark.parametrize("margin,epsilon", [(0.15, 0.2), (-0.3, 0.2), (0.07, 0.1), (-0.01, 0.35)])
def test_clear_sign_update_lands_on_brute_force_surrogate_optimum(margin, epsilon):
    p, clear = fs.choose_p(margin, se=abs(margin) / 10, epsilon=epsilon, z=1.96)
    assert clear
    assert p == pytest.approx(brute_force_optimum(margin, epsilon), abs=1e-4)
    assert fs.grid_maximiser(margin, epsilon) == pytest.approx(brute_force_optimum(margin, epsilon), abs=1e-4)


def test_unclear_sign_keeps_the_behaviour_policy():
    p, clear = fs.choose_p(0.04, se=0.03, epsilon=0.2, z=1.96)
    assert not clear and p == 0.5


@pytest.mark.parametrize("p", [0.65, 0.35])
def test_exact_value_change_on_k_pairs_equals_pyspiel(p):
    per_pair, law_average = fs.exact_value_change([p])
    pairs = ["KJ", "KQ", "KK"]
    expected = [pyspiel_pair_value(k, p) - pyspiel_pair_value(k, 0.5) for k in pairs]
    weights = np.array([len(_deals(k)) for k in pairs], dtype=float)
    assert per_pair[0] == pytest.approx(expected, abs=1e-10)
    assert law_average[0] == pytest.approx(float(np.dot(weights / weights.sum(), expected)), abs=1e-10)


def test_the_screens_counts_are_settings_adopted_at_the_papers_values(screen):
    rows = {r.claim_id: r for r in fs.screen_settings(screen)}
    for cid in ("learning_boundary.frozen_opponent.rollouts_per_seed",
                "retained_evidence.frozen_opponent.calibration_states",
                "retained_evidence.frozen_opponent.evaluation_states",
                "retained_evidence.frozen_opponent.comparisons_per_state"):
        assert rows[cid]["status"] == "adopted", cid
        assert "verdict" not in rows[cid].as_dict()
    assert not any(r.claim_id in rows for r in fs.screen_rows(screen))      # results and settings apart
