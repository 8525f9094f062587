"""The learners' fused CPU engine computes bitwise what the torch engine computes."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from oscc_core.games import get_game
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.loop import Learners, RunSpec, Schedule

FUSED_ARMS = ["cp_grpo", "independent", "uniform", "grpo"]
SEEDS = (13, 17, 23)


def _both(game, runs, schedule, iterations, group_base=None):
    out = []
    for engine in ("torch", "fused"):
        learners = Learners(game, runs, schedule, engine=engine)
        assert learners.engine == engine
        for t in range(iterations):
            learners.step(None if group_base is None else group_base + 1000 * t)
        out.append(learners)
    return out


def _assert_identical(a: Learners, b: Learners) -> None:
    assert torch.equal(a.logits, b.logits)
    assert torch.equal(a.values, b.values)
    if a.schedule.proximal:                   # the draws feed the pull (without one, only the torch path keeps them)
        assert torch.equal(a.draws, b.draws)
    assert np.array_equal(a.average_tables(), b.average_tables())
    assert np.array_equal(a.cumulative, b.cumulative)
    assert np.array_equal(a.last_tables(), b.last_tables())
    for f in FIELDS:
        assert torch.equal(a.ledger.counts[f], b.ledger.counts[f]), f
    assert torch.equal(a.spent, b.spent) and torch.equal(a.active(), b.active())
    assert a.iteration == b.iteration


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
@pytest.mark.parametrize("arm", FUSED_ARMS)
def test_each_arm_is_bitwise_the_torch_engine(game, arm):
    # learning rate 4 moves the policy far enough that the clip binds
    sched = Schedule(iterations=6, decision_points=24, epochs=3, learning_rate=4.0, group_size=5)
    a, b = _both(game, [RunSpec(arm, 13)], sched, 6)
    _assert_identical(a, b)
    if arm != "uniform":
        assert a.logits.abs().max() > 0


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
@pytest.mark.parametrize("budget", [None, 100, 170])
def test_mixed_batches_with_and_without_a_budget(game, budget):
    # the first seed's runs at the schedule's step size, the others at their own (a study's batched tasks)
    runs = [RunSpec(arm, seed, None if seed == SEEDS[0] else 1.5) for arm in FUSED_ARMS for seed in SEEDS]
    sched = Schedule(iterations=5, decision_points=16, epochs=2, learning_rate=3.0, group_size=3, budget=budget)
    a, b = _both(game, runs, sched, 6)
    _assert_identical(a, b)
    assert int(a.ledger.counts["clipped_terms"].sum()) > 0
    if budget is not None:
        assert bool(a.spent.any())
        assert int(a.ledger.counts["physical_calls"].max()) <= budget


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
def test_ppo_alone_is_bitwise_the_torch_engine(game):
    sched = Schedule(iterations=5, decision_points=20, epochs=3, learning_rate=4.0)
    a, b = _both(game, [RunSpec("ppo", 13), RunSpec("ppo", 29)], sched, 5)
    _assert_identical(a, b)
    assert a.values.abs().max() > 0 and int(a.ledger.counts["clipped_terms"].sum()) > 0


def test_a_given_value_table_with_negative_zeros_is_updated_as_the_torch_engine_updates_it():
    sched = Schedule(iterations=2, decision_points=8, epochs=1)
    out = []
    for engine in ("torch", "fused"):
        values = torch.zeros(2, len(get_game("kuhn").infostates), dtype=torch.float64)
        values[1] = -0.0                       # the cp_grpo run's values: the torch path adds 0.0 to every row
        learners = Learners("kuhn", [RunSpec("ppo", 3), RunSpec("cp_grpo", 3)], sched, values=values, engine=engine)
        learners.step()
        out.append(learners.values)
    assert torch.equal(out[0], out[1]) and torch.equal(out[0].view(torch.int64), out[1].view(torch.int64))


@pytest.mark.parametrize("budget", [None, 200])
def test_batches_with_ppo_runs_are_bitwise_the_torch_engine(budget):
    runs = [RunSpec("ppo", 13), RunSpec("cp_grpo", 13), RunSpec("ppo", 17), RunSpec("grpo", 17)]
    sched = Schedule(iterations=4, decision_points=12, epochs=2, learning_rate=2.0, budget=budget)
    a, b = _both("leduc", runs, sched, 4)
    _assert_identical(a, b)
    assert a.values.abs().max() > 0


def test_explicit_group_ids_and_another_split():
    runs = [RunSpec("cp_grpo", 5), RunSpec("grpo", 6)]
    sched = Schedule(iterations=3, decision_points=10, epochs=2)
    a, b = (Learners("leduc", runs, sched, engine=e) for e in ("torch", "fused"))
    for t in range(3):
        base = torch.tensor([7 * t, 100 + t])
        a.step(base, split=2)
        b.step(base, split=2)
    _assert_identical(a, b)


def test_fused_runs_do_not_depend_on_their_batch():
    sched = Schedule(iterations=4, decision_points=16, epochs=2, learning_rate=2.0, budget=300)
    run = RunSpec("grpo", 29)
    alone = Learners("leduc", [run], sched, engine="fused")
    batch = Learners("leduc", [RunSpec("cp_grpo", 3), run, RunSpec("uniform", 29)], sched, engine="fused")
    for _ in range(5):
        alone.step()
        batch.step()
    assert torch.equal(alone.logits[0], batch.logits[1])
    assert np.array_equal(alone.average_tables()[0], batch.average_tables()[1])
    assert alone.ledger.row(0) == batch.ledger.row(1)


def test_engine_choice():
    sched = Schedule(iterations=1, decision_points=4)
    assert Learners("kuhn", [RunSpec("cp_grpo", 1)], sched).engine == "fused"
    assert Learners("kuhn", [RunSpec("cp_grpo", 1)], sched, engine="torch").engine == "torch"
    with pytest.raises(ValueError):
        Learners("kuhn", [RunSpec("cp_grpo", 1)], sched, engine="numba")


def test_given_logits_with_negative_zeros_and_edits_between_steps():
    game_rows, actions = 936, 3
    start = torch.randn((2, game_rows, actions), dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    start[:, ::7] = -0.0
    runs = [RunSpec("cp_grpo", 3), RunSpec("independent", 4)]
    sched = Schedule(iterations=4, decision_points=16, epochs=2, learning_rate=2.0)
    a, b = (Learners("leduc", runs, sched, logits=start.clone(), engine=e) for e in ("torch", "fused"))
    for t in range(4):
        for learners in (a, b):
            learners.step()
            learners.logits[:, 10 * t] += 0.25          # an outside edit: its rows' pi_t must be renewed
    _assert_identical(a, b)
    assert torch.equal(torch.signbit(a.logits), torch.signbit(b.logits))


def test_float32_logits_stay_on_the_torch_engine():
    sched = Schedule(iterations=1, decision_points=4)
    logits = torch.zeros((1, 12, 2), dtype=torch.float32)
    assert Learners("kuhn", [RunSpec("cp_grpo", 1)], sched, logits=logits).engine == "torch"
    with pytest.raises(ValueError):
        Learners("kuhn", [RunSpec("cp_grpo", 1)], sched, logits=logits, engine="fused")


@pytest.mark.parametrize("law", ["counterfactual", "uniform"])
@pytest.mark.parametrize("arm", FUSED_ARMS + ["ppo"])
def test_each_arm_under_the_converging_options_is_bitwise_the_torch_engine(arm, law):
    sched = Schedule(iterations=5, decision_points=16, epochs=2, learning_rate=4.0, group_size=3,
                     decision_law=law, proximal_alpha=2.0, proximal_kappa=0.2)
    a, b = _both("leduc", [RunSpec(arm, 13), RunSpec("cp_grpo", 17)], sched, 5)
    _assert_identical(a, b)
    assert torch.equal(a.magnet, b.magnet)
    if arm != "uniform":
        assert a.magnet[0].abs().max() > 0


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
def test_mixed_batches_with_a_budget_under_the_converging_options(game):
    runs = [RunSpec(arm, seed, None if seed == SEEDS[0] else 1.5) for arm in FUSED_ARMS for seed in SEEDS]
    sched = Schedule(iterations=6, decision_points=16, epochs=2, learning_rate=3.0, group_size=3, budget=170,
                     decision_law="counterfactual", proximal_alpha=0.5, proximal_kappa=0.0)
    a, b = _both(game, runs, sched, 7)
    _assert_identical(a, b)
    assert torch.equal(a.magnet, torch.zeros_like(a.magnet))       # kappa 0: the magnet stays uniform


def test_runs_with_their_own_step_sizes_in_one_batch_are_the_runs_trained_alone():
    sched = Schedule(iterations=5, decision_points=16, epochs=2, learning_rate=1.0, group_size=3,
                     decision_law="counterfactual", proximal_alpha=1.0, proximal_kappa=0.1)
    runs = [RunSpec("cp_grpo", 3, 8.0), RunSpec("grpo", 3, 64.0), RunSpec("ppo", 4, 0.5), RunSpec("independent", 5)]
    a, b = _both("leduc", runs, sched, 5)
    _assert_identical(a, b)
    for r, run in enumerate(runs):
        eta = sched.learning_rate if run.learning_rate is None else run.learning_rate
        alone = Learners("leduc", [RunSpec(run.arm, run.seed)], replace(sched, learning_rate=eta), engine="torch")
        for _ in range(5):
            alone.step()
        assert torch.equal(alone.logits[0], b.logits[r]) and torch.equal(alone.magnet[0], b.magnet[r]), run
