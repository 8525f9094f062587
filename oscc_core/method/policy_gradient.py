"""Policy-gradient geometry at a root: how return covariance becomes update noise.

For a tabular softmax policy at information state I with logits theta in R^m
(one per legal action), pi_i = softmax(theta)_i and

    g_i = d pi(a_i | I) / d theta,    G = [g_1, ..., g_m]  (m x m),
    G[k, i] = pi_i (delta_ik - pi_k).

For the complete-action, unclipped estimator with frozen branch returns R
(covariance Sigma, chips^2), the gradient covariance is G Sigma G^T and the
noise trace is N(Gamma; I) = tr(G Sigma G^T) = sum_ij <g_i, g_j> Sigma_ij
(chips^2 per unit logit^2).  Proposition 3: for two couplings with equal
branch marginals, N - N' = 2 sum_{i<j} <g_i, g_j> (Sigma_ij - Sigma'_ij);
with two actions g_2 = -g_1 and N = ||g_1||^2 Var(R_1 - R_2).
The clipped surrogate's gradient and update rule live in `oscc_core.learning.surrogate`.
"""
from __future__ import annotations

import numpy as np


def softmax(theta: np.ndarray) -> np.ndarray:
    z = np.exp(theta - theta.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def logits_for(probs) -> np.ndarray:
    """Logits whose softmax is `probs` (all entries must be positive)."""
    probs = np.asarray(probs, dtype=np.float64)
    if np.any(probs <= 0) or abs(probs.sum() - 1) > 1e-9:
        raise ValueError(f"root policy probabilities must be positive and sum to 1, got {probs.tolist()}.")
    return np.log(probs)


def policy_jacobian(probs) -> np.ndarray:
    """G with columns g_i = d pi_i / d theta for a softmax with probabilities `probs` ([m] -> [m, m])."""
    p = np.asarray(probs, dtype=np.float64)
    return np.diag(p) - np.outer(p, p)


def noise_trace(jacobian: np.ndarray, cov: np.ndarray) -> float:
    """N = sum_ij <g_i, g_j> Sigma_ij = tr(G Sigma G^T)."""
    gram = jacobian.T @ jacobian
    return float((gram * np.asarray(cov)).sum())


def noise_difference(jacobian: np.ndarray, cov: np.ndarray, cov_ref: np.ndarray) -> float:
    """Proposition 3's right-hand side: 2 sum_{i<j} <g_i, g_j> (Sigma_ij - Sigma'_ij)."""
    gram = jacobian.T @ jacobian
    delta = np.triu(np.asarray(cov) - np.asarray(cov_ref), k=1)
    return float(2 * (gram * delta).sum())


def binary_noise(jacobian: np.ndarray, contrast_var: float) -> float:
    """Two-action reduction: ||g_1||^2 Var(R_1 - R_2)."""
    return float(jacobian[:, 0] @ jacobian[:, 0] * contrast_var)


def stratum_noise(weights, jacobians, covs) -> float:
    """Noise over a stratum of roots, keeping each root's weight: sum_I w_I N(Gamma; I)."""
    w = np.asarray(weights, dtype=np.float64)
    return float(sum(wi * noise_trace(g, c) for wi, g, c in zip(w / w.sum(), jacobians, covs)))


def mean_pairwise_contrast_variance(cov: np.ndarray) -> float:
    """RV-Select's scalar criterion: the mean of Var(R_i - R_j) over pairs i < j."""
    cov = np.asarray(cov)
    m = len(cov)
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    return float(np.mean([cov[i, i] + cov[j, j] - 2 * cov[i, j] for i, j in pairs]))


def update_noise(gradients: np.ndarray) -> float:
    """Trace of the covariance of per-group gradients (sum of per-coordinate variances)."""
    return float(np.var(gradients, axis=0, ddof=1).sum())
