"""Policy-gradient geometry: Jacobian, noise trace and Proposition 3."""
import numpy as np
import pytest

from oscc_core.method import policy_gradient as gr


def _finite_difference_jacobian(probs, h=1e-6):
    theta = np.log(probs)
    m = len(theta)
    jac = np.zeros((m, m))
    for k in range(m):
        e = np.zeros(m)
        e[k] = h
        jac[k] = (gr.softmax(theta + e) - gr.softmax(theta - e)) / (2 * h)
    return jac  # jac[k, i] = d pi_i / d theta_k


def test_policy_jacobian_matches_finite_differences():
    p = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(gr.policy_jacobian(p), _finite_difference_jacobian(p), atol=1e-8)


def test_noise_trace_equals_trace_of_projected_covariance():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T
    g = gr.policy_jacobian(np.array([0.2, 0.5, 0.3]))
    assert gr.noise_trace(g, cov) == pytest.approx(np.trace(g @ cov @ g.T), rel=1e-12)


def test_proposition_3_difference_formula_holds_for_equal_marginals():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T
    other = cov.copy()
    other[0, 1] = other[1, 0] = cov[0, 1] - 0.7   # same diagonal, different coupling
    other[1, 2] = other[2, 1] = cov[1, 2] + 0.4
    g = gr.policy_jacobian(np.array([0.1, 0.6, 0.3]))
    lhs = gr.noise_trace(g, cov) - gr.noise_trace(g, other)
    assert lhs == pytest.approx(gr.noise_difference(g, cov, other), rel=1e-12)


def test_binary_noise_is_gradient_norm_times_contrast_variance():
    cov = np.array([[4.0, 1.5], [1.5, 3.0]])
    g = gr.policy_jacobian(np.array([0.3, 0.7]))
    assert gr.noise_trace(g, cov) == pytest.approx(gr.binary_noise(g, 4.0 + 3.0 - 3.0), rel=1e-12)


def test_three_actions_can_rank_couplings_differently_from_mean_contrast_variance():
    # Two couplings with equal diagonals: A couples actions 0 and 1, B couples 1 and 2 equally strongly.
    base = np.diag([4.0, 4.0, 4.0])
    a, b = base.copy(), base.copy()
    a[0, 1] = a[1, 0] = 2.0
    b[1, 2] = b[2, 1] = 2.0
    assert gr.mean_pairwise_contrast_variance(a) == pytest.approx(gr.mean_pairwise_contrast_variance(b))
    g = gr.policy_jacobian(np.array([0.45, 0.45, 0.10]))
    assert gr.noise_trace(g, a) != pytest.approx(gr.noise_trace(g, b))


def test_logits_for_rejects_zero_probability():
    with pytest.raises(ValueError, match="root policy"):
        gr.logits_for([0.0, 1.0])
