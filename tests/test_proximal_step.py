"""The converging learner's proximal step, against hand computations.

After the E epochs of an iteration, each state drawn k times among the groups the budget kept takes
theta <- (theta + c m) / (1 + c), c = alpha eta k / N; then (after the pull) the magnet moves
m <- m + kappa (theta - m) at every state.  The one-state example below is worked by hand:

    theta = (3, -1), m = (1, 1), alpha = 2, eta = 0.5, k = 2, N = 4:  c = 2 x 0.5 x 2 / 4 = 0.5
    pull:    theta = ((3, -1) + 0.5 (1, 1)) / 1.5 = (7/3, -1/3)
    magnet:  m = (1, 1) + 0.25 ((7/3, -1/3) - (1, 1)) = (4/3, 2/3)        (kappa = 0.25)

The magnet moved first would give m = (1.5, 0.5) and theta = (3.75 / 1.5, -0.75 / 1.5) = (2.5, -0.5); counting
the two draws of the groups the budget cut (k = 4, c = 1) would give theta = (2, 0).  Both engines are checked:
the torch path's step and the fused kernel, each on the hand example and on a whole Kuhn iteration whose
budget cuts it short.
"""
import numpy as np
import pytest
import torch

from oscc_core.engine import rng
from oscc_core.learning import proximal
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.learning.tabular import masked_softmax, to_numpy
from oscc_core.learning.visitation import decision_law, draw_decision_points

THETA, MAGNET = (3.0, -1.0), (1.0, 1.0)
ALPHA, ETA, KAPPA, N, K = 2.0, 0.5, 0.25, 4, 2
PULLED, MOVED = (7 / 3, -1 / 3), (4 / 3, 2 / 3)
ENGINES = ("torch", "fused")


def test_the_pull_takes_theta_plus_c_m_over_one_plus_c_with_c_alpha_eta_k_over_n():
    logits, magnet = torch.tensor([[THETA]], dtype=torch.float64), torch.tensor([[MAGNET]], dtype=torch.float64)
    proximal.pull(logits, magnet, torch.tensor([[float(K)]], dtype=torch.float64), ALPHA, ETA, N)
    assert torch.allclose(logits, torch.tensor([[PULLED]], dtype=torch.float64), rtol=1e-15, atol=0)


def test_the_magnet_moves_kappa_of_the_way_to_the_logits():
    magnet = torch.tensor([[MAGNET]], dtype=torch.float64)
    proximal.move_magnet(magnet, torch.tensor([[PULLED]], dtype=torch.float64), KAPPA)
    assert torch.allclose(magnet, torch.tensor([[MOVED]], dtype=torch.float64), rtol=1e-15, atol=0)


def test_a_state_not_drawn_keeps_its_logits_bit_for_bit():
    logits = torch.tensor([[THETA, (0.1, 0.7)]], dtype=torch.float64)
    before = logits.clone()
    proximal.pull(logits, torch.ones_like(logits), torch.tensor([[float(K), 0.0]]), ALPHA, ETA, N)
    assert torch.equal(logits[0, 1], before[0, 1]) and not torch.equal(logits[0, 0], before[0, 0])


def test_draw_counts_count_only_the_groups_the_budget_kept():
    infostate = torch.tensor([[0, 2, 2, 1, 2, 0]])
    keep = torch.tensor([[True, True, True, False, False, False]])           # the budget cut the last three
    counts = proximal.draw_counts(infostate, keep, 3)
    assert counts.tolist() == [[1.0, 0.0, 2.0]]


def _hand_learners(engine: str) -> Learners:
    """Kuhn learners whose first information state holds the hand example's logits and magnet (every other
    state at 0, not drawn)."""
    s = Schedule(decision_points=N, learning_rate=ETA, proximal_alpha=ALPHA, proximal_kappa=KAPPA)
    learners = Learners("kuhn", [RunSpec("cp_grpo", 1)], s, engine=engine)
    learners.logits[0, 0] = torch.tensor(THETA, dtype=torch.float64)
    learners.magnet[0, 0] = torch.tensor(MAGNET, dtype=torch.float64)
    return learners


def test_the_torch_step_pulls_first_and_moves_the_magnet_after():
    learners = _hand_learners("torch")
    learners.draws.zero_()
    learners.draws[0, 0] = K
    learners._pull(torch.tensor([True]))                                   # step 6 of the iteration
    assert torch.allclose(learners.logits[0, 0], torch.tensor(PULLED, dtype=torch.float64), rtol=1e-15, atol=0)
    assert torch.allclose(learners.magnet[0, 0], torch.tensor(MOVED, dtype=torch.float64), rtol=1e-15, atol=0)
    assert torch.count_nonzero(learners.logits[0, 1:]) == 0                  # the other states were not drawn


def test_the_fused_kernel_pulls_first_moves_the_magnet_after_and_counts_only_kept_draws():
    from oscc_core.learning import fused as kernels

    flat, magnet = np.array([THETA]), np.array([MAGNET])
    points = np.zeros((1, 2 * K), dtype=np.int64)            # 2K draws of the one state; the budget kept K
    counts = np.zeros(1)
    kernels.pull_and_magnet(flat, magnet, points, np.array([K]), np.array([True]), 1, ALPHA, np.array([ETA]), N,
                            KAPPA, counts)
    assert counts.tolist() == [K]
    np.testing.assert_allclose(flat, [PULLED], rtol=1e-15, atol=0)
    np.testing.assert_allclose(magnet, [MOVED], rtol=1e-15, atol=0)


# ----- a whole iteration whose budget cuts it short ------------------------------------------------------
GROUP_CALLS = {"cp_grpo": 2, "grpo": 4}   # calls per group in Kuhn: both actions (2 legal everywhere); G = 4
KEPT, POINTS = 3, 8                       # the budget pays for 3 of the iteration's 8 groups


def _one_iteration(arm: str, engine: str, alpha: float, kappa: float, start: torch.Tensor, magnet: torch.Tensor):
    s = Schedule(decision_points=POINTS, learning_rate=ETA, decision_law="counterfactual", proximal_alpha=alpha,
                 proximal_kappa=kappa, budget=KEPT * GROUP_CALLS[arm])
    learners = Learners("kuhn", [RunSpec(arm, 7)], s, logits=start.clone(), engine=engine)
    learners.magnet.copy_(magnet)
    learners.step()
    assert learners.ledger.row(0)["groups"] == KEPT and bool(learners.spent[0])
    return learners


def _kept_draws(learners: Learners, start: torch.Tensor) -> np.ndarray:
    """[n_info] how often the iteration drew each state among its first KEPT groups (the law of its start)."""
    behaviour = masked_softmax(start, learners.legal)
    law = decision_law(learners.game, to_numpy(behaviour), "counterfactual")
    points = draw_decision_points(learners.game, law, learners.seeds, rng.SPLITS["train"],
                                  torch.arange(POINTS).unsqueeze(0))
    drawn = points.infostate[0].numpy()
    return np.bincount(drawn[:KEPT], minlength=start.shape[1]).astype(np.float64)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("arm", sorted(GROUP_CALLS))
def test_an_iteration_pulls_each_kept_draw_toward_the_magnet_after_its_epochs_then_moves_the_magnet(arm, engine):
    generator = torch.Generator().manual_seed(3)
    start = torch.randn((1, 12, 2), generator=generator, dtype=torch.float64)
    magnet = torch.randn((1, 12, 2), generator=generator, dtype=torch.float64)
    alpha, kappa = 1.5, 0.3
    plain = _one_iteration(arm, engine, 0.0, 0.0, start, magnet)            # the same iteration, no pull
    pulled = _one_iteration(arm, engine, alpha, kappa, start, magnet)
    theta = plain.logits[0].numpy()
    k = _kept_draws(pulled, start)
    c = (alpha * ETA * k / POINTS)[:, None]
    want = np.where(k[:, None] > 0, (theta + c * magnet[0].numpy()) / (1 + c), theta)
    np.testing.assert_allclose(pulled.logits[0].numpy(), want, rtol=1e-13, atol=1e-15)
    want_magnet = magnet[0].numpy() + kappa * (want - magnet[0].numpy())
    np.testing.assert_allclose(pulled.magnet[0].numpy(), want_magnet, rtol=1e-13, atol=1e-15)
