"""learning.surrogate: the paper's clipped surrogate, its gradient, clip selection and gradient-ascent updates.

Expected values are worked by hand, by finite differences of the objective,
or from the softmax Jacobian G = diag(pi) - pi pi^T (method.policy_gradient).
"""
import numpy as np
import pytest

from oscc_core.learning import surrogate as sg
from oscc_core.method import policy_gradient as gr


def test_two_action_gradient_and_value_match_a_hand_worked_example():
    # pi0 = (1/2, 1/2), pi = (0.55, 0.45): ratios 1.1 and 0.9 are inside [0.8, 1.2]; R = (2, 0) so A = (1, -1).
    p0, p = np.array([0.5, 0.5]), np.array([0.55, 0.45])
    returns = np.array([[2.0, 0.0]])
    grads, active = sg.clipped_surrogate_gradient(np.log(p), p0, returns, epsilon=0.2)
    assert active.all()
    # grad_k = p_k c_k - p_k sum_i p_i c_i with c = A: sum p c = 0.1
    np.testing.assert_allclose(grads, [[0.55 * 0.9, 0.45 * -1.1]], atol=1e-12)
    # L = 0.5 * 1.1 * 1 + 0.5 * 0.9 * (-1) = 0.1
    assert sg.clipped_surrogate(np.log(p), p0, returns, 0.2) == pytest.approx([0.1], abs=1e-12)


def test_gradient_matches_central_differences_of_the_clipped_objective():
    rng = np.random.default_rng(3)
    behaviour = np.array([0.2, 0.5, 0.3])
    theta = np.log(behaviour) + rng.normal(scale=0.3, size=(40, 3))
    returns = rng.integers(-6, 7, size=(40, 3)).astype(float)
    eps, h = 0.15, 1e-6
    ratio = gr.softmax(theta) / behaviour
    # central differences are only valid away from the kinks at 1 +- eps
    keep = (np.abs(ratio - (1 + eps)) > 1e-3).all(1) & (np.abs(ratio - (1 - eps)) > 1e-3).all(1)
    theta, returns = theta[keep], returns[keep]
    grads, active = sg.clipped_surrogate_gradient(theta, behaviour, returns, eps)
    assert (~active).any() and active.any()              # both regimes are exercised
    numeric = np.zeros_like(theta)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        numeric[:, k] = (sg.clipped_surrogate(theta + e, behaviour, returns, eps)
                         - sg.clipped_surrogate(theta - e, behaviour, returns, eps)) / (2 * h)
    np.testing.assert_allclose(grads, numeric, atol=1e-7)


def test_clip_selection_starts_strictly_beyond_one_plus_minus_epsilon():
    eps = 0.2
    adv = np.array([[1.0, -1.0]])
    at_edge = np.array([[1 + eps, 1 - eps]])
    assert not sg.clip_selected(at_edge, adv, eps).any()      # both branches of the min agree: active
    beyond = np.array([[np.nextafter(1 + eps, 2.0), np.nextafter(1 - eps, 0.0)]])
    assert sg.clip_selected(beyond, adv, eps).all()
    # on the other side of each edge the unclipped branch is the min, so the term stays active
    other_side = np.array([[np.nextafter(1 - eps, 0.0), np.nextafter(1 + eps, 2.0)]])
    assert not sg.clip_selected(other_side, adv, eps).any()
    assert not sg.clip_selected(beyond, np.zeros_like(adv), eps).any()     # a zero advantage never clips


def test_every_ratio_clipped_on_the_active_side_gives_a_zero_gradient():
    p0 = np.array([0.5, 0.5])
    theta = np.log(np.array([0.8, 0.2]))           # ratio 1.6 on action 0, 0.4 on action 1
    returns = np.array([[2.0, 0.0]])               # advantage +1 on action 0, -1 on action 1
    grads, active = sg.clipped_surrogate_gradient(theta, p0, returns, epsilon=0.2)
    assert not active.any()
    np.testing.assert_allclose(grads, 0.0)


def test_unclipped_gradient_at_the_behaviour_policy_is_the_projected_returns():
    p = np.array([0.2, 0.5, 0.3])
    returns = np.array([[1.0, -2.0, 3.0], [0.0, 4.0, -1.0]])
    grads, active = sg.clipped_surrogate_gradient(np.log(p), p, returns, epsilon=0.2)
    assert active.all()
    np.testing.assert_allclose(grads, returns @ gr.policy_jacobian(p).T, atol=1e-12)


def test_row_wise_gradient_is_the_jacobian_times_the_active_advantages():
    rng = np.random.default_rng(0)
    behaviour = np.array([0.3, 0.5, 0.2])
    theta = np.log(behaviour) + rng.normal(scale=0.4, size=(6, 3))
    returns = rng.integers(-5, 6, size=(6, 3)).astype(float)
    grads, active = sg.clipped_surrogate_gradient(theta, np.tile(behaviour, (6, 1)), returns, 0.2)
    assert not active.all()
    adv = returns - returns.mean(axis=1, keepdims=True)
    for k in range(6):
        jac = gr.policy_jacobian(gr.softmax(theta[k]))
        np.testing.assert_allclose(grads[k], jac @ (adv[k] * active[k]), atol=1e-12)


def test_ascent_stops_once_both_terms_clip_and_counts_the_clipped_terms():
    # Epoch 1 at pi0 = (1/2, 1/2) with A = (1, -1): grad = (0.5, -0.5); a step of 10 gives theta = (5, -5),
    # where the ratios (about 2 and 9e-5) are clipped on the active side, so epochs 2 and 3 change nothing.
    p0 = np.array([[0.5, 0.5]])
    end = sg.surrogate_ascent(np.log(p0), p0, np.array([[2.0, 0.0]]), 0.2, learning_rate=10.0, epochs=3)
    np.testing.assert_allclose(end.theta, np.log(p0) + [[5.0, -5.0]], atol=1e-12)
    assert end.clipped.tolist() == [4]
    np.testing.assert_allclose(end.ratio, gr.softmax(np.log(p0) + [[5.0, -5.0]]) / p0, rtol=1e-12)


def test_one_epoch_from_the_behaviour_policy_moves_by_the_projected_returns():
    rng = np.random.default_rng(1)
    p0 = np.tile([0.25, 0.35, 0.4], (5, 1))
    returns = rng.normal(size=(5, 3))
    end = sg.surrogate_ascent(np.log(p0), p0, returns, 0.2, learning_rate=0.01, epochs=1)
    expected = returns @ gr.policy_jacobian(p0[0]).T
    np.testing.assert_allclose((end.theta - np.log(p0)) / 0.01, expected, atol=1e-10)
    assert end.clipped.sum() == 0


def test_tabular_batch_gradient_averages_each_states_groups_over_the_whole_batch():
    rng = np.random.default_rng(2)
    theta = np.log(np.array([[0.5, 0.5], [0.3, 0.7], [0.6, 0.4]]))
    info = np.array([0, 2, 2, 0, 2])
    behaviour = gr.softmax(theta)[info]
    returns = rng.normal(size=(5, 2))
    batch, active, ratio = sg.tabular_batch_gradient(theta, info, behaviour, returns, 0.2)
    assert active.all()
    np.testing.assert_allclose(ratio, 1.0)
    adv = returns - returns.mean(1, keepdims=True)
    expected = np.zeros((3, 2))
    for g, k in enumerate(info):
        expected[k] += gr.policy_jacobian(gr.softmax(theta[k])) @ adv[g] / len(info)
    np.testing.assert_allclose(batch, expected, atol=1e-12)
    assert (batch[1] == 0).all()                    # a state with no group does not move


def test_finite_rows_flag_any_non_finite_coordinate():
    u = np.array([[1.0, -1.0], [np.nan, 0.0], [np.inf, 1.0], [0.0, 0.0], [2.0, -np.inf]])
    assert sg.finite_rows(u).tolist() == [True, False, False, True, False]
    assert sg.finite_count(u) == 2


def test_clip_fraction_pools_terms_over_batches():
    # batch 1: 3 groups x 4 terms, 4 clipped; batch 2: 2 groups x 2 terms, 1 clipped -> 5 / 16
    assert sg.clip_fraction([np.array([1, 0, 3]), np.array([0, 1])], [4, 2]) == pytest.approx(5 / 16)
