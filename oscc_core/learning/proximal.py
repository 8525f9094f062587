"""The converging learner's two additions to the paper's iteration: the decision law and the proximal pull.

Neither is the paper's; both fill choices the paper leaves open, and both
default to "off" (the literal learner):

* the **decision law** from which the N decision points of an iteration are
  drawn (`DECISION_LAWS`): ``on_policy`` (a history's chance x both players'
  reach, the paper's visitation), ``counterfactual`` (chance x the
  opponent's reach only: CFR's weighting, under which a state the actor
  stopped visiting is still drawn) or ``uniform`` (every information state
  alike).  The hidden card's posterior given the state is the same under all
  three (the actor's own reach is constant over the opponent's cards), so
  rollouts and the call accounting do not change;
* a **proximal pull** toward a magnet, as in magnetic mirror descent: after
  the E epochs, each state drawn k times in this iteration takes
  theta <- (theta + c m) / (1 + c) with c = alpha * eta * k / N, and the magnet
  (logits, starting at 0: the uniform policy) moves m <- m + kappa (theta - m)
  at every state.  alpha = 0 switches the pull off; kappa = 0 keeps the magnet
  at the uniform policy.

The functions here are the reference for both engines; the fused kernels
compute the same numbers in the same order (bitwise, tested).
"""
from __future__ import annotations

import torch

ON_POLICY, COUNTERFACTUAL, UNIFORM = "on_policy", "counterfactual", "uniform"
#: The laws a decision point can be drawn from, the paper's first.
DECISION_LAWS = (ON_POLICY, COUNTERFACTUAL, UNIFORM)


def check_decision_law(name: str, law: str) -> str:
    """`law` when it is one of `DECISION_LAWS`, else ValueError naming the parameter `name`."""
    if law not in DECISION_LAWS:
        raise ValueError(f"{name} must be one of {', '.join(DECISION_LAWS)}, got {law!r}.")
    return law


def draw_counts(infostate: torch.Tensor, keep: torch.Tensor, n_info: int) -> torch.Tensor:
    """[R, n_info] float64: how often each information state was drawn among each run's kept groups
    (`infostate`, `keep` [R, N])."""
    counts = torch.zeros((infostate.shape[0], n_info), dtype=torch.float64, device=infostate.device)
    return counts.scatter_add_(1, infostate, keep.to(torch.float64))


def pull(logits: torch.Tensor, magnet: torch.Tensor, counts: torch.Tensor, alpha: float, eta, n: int) -> None:
    """theta <- (theta + c m) / (1 + c), c = alpha * eta * k / N, in place on logits [R, n_info, A]
    (counts k [R, n_info]; alpha and eta each a number or one per run [R]); a state not drawn (k = 0) keeps its
    logits bit for bit."""
    eta = torch.as_tensor(eta, dtype=torch.float64, device=logits.device).reshape(-1, 1)
    if isinstance(alpha, torch.Tensor):
        alpha = alpha.to(device=logits.device, dtype=torch.float64).reshape(-1, 1)
    c = (alpha * eta * counts / n).unsqueeze(-1)
    drawn = (counts > 0).unsqueeze(-1).expand_as(logits)
    pulled = (logits + c * magnet) / (1.0 + c)
    logits.copy_(torch.where(drawn, pulled, logits))


def move_magnet(magnet: torch.Tensor, logits: torch.Tensor, kappa: float) -> None:
    """m <- m + kappa (theta - m), in place at every state (a no-op when kappa = 0)."""
    if kappa:
        magnet += kappa * (logits - magnet)
