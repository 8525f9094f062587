"""The paper's clipped surrogate (Eq. paired-update): its value, gradient and gradient-ascent updates.

One comparison group plays every legal action a_1..a_m at one information
state with frozen branch returns R (chips).  With centred advantages
A_i = R_i - mean_j R_j, behaviour policy pi0 and importance ratios
r_i = pi_theta(a_i) / pi0(a_i) of a tabular softmax with logits theta, the
group's behaviour-weighted clipped surrogate is

    L_g(theta) = sum_i pi0_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i)     (chips).

A term is *clip-selected* when the min picks its clipped branch with a
different value: A_i > 0 and r_i > 1 + eps, or A_i < 0 and r_i < 1 - eps
(at r_i = 1 +- eps exactly both branches agree and the term is active).  A
clip-selected term is constant in theta; an active term pi0_i r_i A_i =
pi_theta(a_i) A_i has gradient A_i g_i(theta), g_i = d pi_theta(a_i) / d theta.
So grad L_g = G(theta) c with c = A * active, i.e.
grad_k = p_k c_k - p_k sum_i p_i c_i (chips per logit).  ``epsilon = inf``
switches clipping off.

Shapes: theta and behaviour probabilities are [m] (one information state,
broadcast over groups) or [n, m] (one row per group); returns are [n, m].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.method.policy_gradient import softmax


def advantages(returns: np.ndarray) -> np.ndarray:
    """[n, m] centred advantages A_i = R_i - mean_j R_j of each group (chips)."""
    returns = np.asarray(returns)
    return returns - returns.mean(axis=1, keepdims=True)


def clip_selected(ratio: np.ndarray, adv: np.ndarray, epsilon: float) -> np.ndarray:
    """[n, m] bool: the term's clipped branch is selected (A > 0 and r > 1 + eps, or A < 0 and r < 1 - eps)."""
    return ((adv > 0) & (ratio > 1 + epsilon)) | ((adv < 0) & (ratio < 1 - epsilon))


def clipped_surrogate(theta: np.ndarray, behaviour_probs: np.ndarray, returns: np.ndarray,
                      epsilon: float) -> np.ndarray:
    """[n] L_g = sum_i pi0_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i) of each group (chips)."""
    pi0 = np.asarray(behaviour_probs, dtype=np.float64)
    ratio = softmax(np.asarray(theta, dtype=np.float64)) / pi0
    adv = advantages(np.asarray(returns, dtype=np.float64))
    clipped = np.clip(ratio, 1 - epsilon, 1 + epsilon)
    return (pi0 * np.minimum(ratio * adv, clipped * adv)).sum(axis=-1)


def clipped_surrogate_gradient(theta: np.ndarray, behaviour_probs: np.ndarray, returns: np.ndarray,
                               epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-group gradient of the clipped surrogate: (gradients [n, m] chips per logit, active [n, m] bool).

    ``active`` is False where the term is clip-selected (its gradient is zero).
    """
    p = softmax(np.asarray(theta, dtype=np.float64))
    ratio = p / np.asarray(behaviour_probs, dtype=np.float64)
    adv = returns - returns.mean(axis=1, keepdims=True)
    clipped = clip_selected(ratio, adv, epsilon)
    c = adv * ~clipped
    return p * c - p * (p * c).sum(axis=-1, keepdims=True), ~clipped


@dataclass
class SurrogateAscent:
    """The end of `epochs` gradient-ascent steps of every group's own surrogate.

    theta    [n, m] final logits of each group
    clipped  [n] clip-selected (action, epoch) terms of each group
    ratio    [n, m] pi_theta / pi0 at the final logits
    """

    theta: np.ndarray
    clipped: np.ndarray
    ratio: np.ndarray


def surrogate_ascent(theta_start: np.ndarray, behaviour_probs: np.ndarray, returns: np.ndarray, epsilon: float,
                     learning_rate: float, epochs: int) -> SurrogateAscent:
    """Each group's own update: `epochs` steps theta += learning_rate * grad L_g(theta) on its frozen returns.

    theta_start and behaviour_probs are [n, m] (or [m]); returns [n, m] chips.
    Overflow is not an error: a group whose logits leave the finite range
    shows up in `finite_rows` of its update.
    """
    r = np.asarray(returns, dtype=np.float64)
    pi0 = np.asarray(behaviour_probs, dtype=np.float64)
    theta = np.array(theta_start, dtype=np.float64, copy=True)
    clipped = np.zeros(len(r), dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(epochs):
            grad, active = clipped_surrogate_gradient(theta, pi0, r, epsilon)
            clipped += (~active).sum(axis=1)
            theta = theta + learning_rate * grad
        ratio = softmax(theta) / pi0
    return SurrogateAscent(theta, clipped, ratio)


def tabular_batch_gradient(theta: np.ndarray, info: np.ndarray, behaviour_probs: np.ndarray, returns: np.ndarray,
                           epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradient of the batch-mean surrogate (1/n) sum_g L_g over a tabular policy's logits.

    theta [nI, m] logits of every information state; info [n] the state of each
    group; behaviour_probs [n, m]; returns [n, m].  Each group moves only its
    own state's logits.  Returns (batch gradient [nI, m], active [n, m],
    ratios [n, m] at theta).
    """
    grad, active = clipped_surrogate_gradient(theta[info], behaviour_probs, returns, epsilon)
    ratio = softmax(theta[info]) / behaviour_probs
    batch = np.zeros_like(theta)
    np.add.at(batch, info, grad / len(info))
    return batch, active, ratio


def finite_rows(u: np.ndarray) -> np.ndarray:
    """[n] bool: the group's update has only finite coordinates."""
    return np.isfinite(np.asarray(u, dtype=np.float64)).all(axis=1)


def finite_count(u: np.ndarray) -> int:
    """Number of groups whose update vector is finite in every coordinate."""
    return int(finite_rows(u).sum())


def clip_fraction(clipped: list[np.ndarray], terms_per_group: list[int]) -> float:
    """Share of clip-selected terms over batches: sum of clipped counts / sum of groups x terms per group."""
    return float(sum(int(c.sum()) for c in clipped) / sum(len(c) * t for c, t in zip(clipped, terms_per_group)))
