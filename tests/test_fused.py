"""The fused CPU kernel computes exactly what the torch path computes."""
import numpy as np
import pytest
import torch

from oscc_core import collect
from oscc_core.engine.fused import moment_sums
from oscc_core.games import get_game
from oscc_core.policy import random_policy

ARMS = ["independent", "root_only", "continuation_only", "full", "policy_namespace"]
CASES = [("leduc", ""), ("leduc", "2"), ("leduc", "1"), ("leduc", "11|"), ("leduc", "121|2"), ("kuhn", ""),
         ("kuhn", "1")]



def _both_engines(*args, **kwargs):
    return (collect(*args, engine="torch", **kwargs), collect(*args, engine="fused", **kwargs))


def _assert_same(a, b):
    assert torch.equal(a.returns, b.returns)
    assert (a.group_draws is None) == (b.group_draws is None)
    assert a.group_draws is None or torch.equal(a.group_draws, b.group_draws)
    assert torch.equal(a.codes, b.codes)
    assert torch.equal(a.own_card, b.own_card) and torch.equal(a.public_card, b.public_card)
    assert a.stats == b.stats
    assert a.logical_keys == b.logical_keys and a.physical_draws == b.physical_draws
    assert a.digest == b.digest


@pytest.mark.parametrize("game,root", CASES)
@pytest.mark.parametrize("arm", ARMS)
def test_fused_engine_equals_torch_engine_under_uniform_continuation(game, root, arm):
    _assert_same(*_both_engines(game, root, arm, 3_000, seed=11, device="cpu"))


@pytest.mark.parametrize("game,root", [("leduc", ""), ("leduc", "2"), ("leduc", "21|"), ("kuhn", "")])
@pytest.mark.parametrize("arm", ["independent", "full"])
def test_fused_engine_equals_torch_engine_with_a_tabular_policy_and_a_budget(game, root, arm):
    policy = random_policy(game, seed=3)
    _assert_same(*_both_engines(game, root, arm, 2_000, seed=12, continuation=policy, device="cpu", budget=3))


def test_fused_engine_equals_torch_engine_under_a_branch_swap():
    _assert_same(*_both_engines("leduc", "2", "full", 3_000, seed=13, device="cpu", branch_order=[2, 0, 1]))


@pytest.mark.parametrize("continuation_map", ["relabelled", "antithetic"])
@pytest.mark.parametrize("root", ["", "2", "11|", "121|2"])
@pytest.mark.parametrize("arm", ARMS)
def test_fused_engine_equals_torch_engine_under_each_selector_stress_map(continuation_map, root, arm):
    _assert_same(*_both_engines("leduc", root, arm, 2_000, seed=15, device="cpu", continuation_map=continuation_map))


@pytest.mark.parametrize("continuation_map", ["relabelled", "antithetic"])
@pytest.mark.parametrize("arm", ["independent", "full"])
def test_a_map_changes_nothing_in_kuhn_which_deals_no_card_after_the_root_on_either_engine(continuation_map, arm):
    plain = collect("kuhn", "", arm, 1_000, seed=17, device="cpu", engine="torch")
    for mapped in _both_engines("kuhn", "", arm, 1_000, seed=17, device="cpu", continuation_map=continuation_map):
        assert torch.equal(mapped.returns, plain.returns) and mapped.physical_draws == plain.physical_draws


@pytest.mark.parametrize("continuation_map", ["relabelled", "antithetic"])
def test_fused_engine_equals_torch_engine_under_a_map_with_a_budget_a_policy_and_a_branch_swap(continuation_map):
    _assert_same(*_both_engines("leduc", "2", "full", 1_500, seed=16, device="cpu", budget=3,
                                continuation=random_policy("leduc", seed=4), branch_order=[2, 0, 1],
                                continuation_map=continuation_map, keep_draws=True))


@pytest.mark.parametrize("continuation_map", ["relabelled", "antithetic"])
def test_the_auto_engine_runs_a_selector_stress_map_on_the_fused_kernel(continuation_map, monkeypatch):
    from oscc_core.engine import collector
    monkeypatch.setattr(collector, "_collect_chunk", None)      # the torch path would fail
    collect("leduc", "", "full", 100, seed=1, device="cpu", continuation_map=continuation_map)


def test_fused_engine_keeps_the_same_per_group_draw_counts():
    a, b = _both_engines("leduc", "", "continuation_only", 3_000, seed=14, device="cpu", keep_draws=True)
    assert torch.equal(a.group_draws, b.group_draws)


def test_auto_engine_uses_the_torch_path_when_a_trace_is_requested():
    trace = []
    collect("leduc", "", "full", 100, seed=1, device="cpu", trace=trace)
    assert trace and trace[0]["events"], "the torch path records events; the fused kernel cannot"


def test_forcing_the_fused_engine_with_a_trace_is_a_value_error_naming_engine():
    with pytest.raises(ValueError, match="engine='fused' needs no trace"):
        collect("leduc", "", "full", 100, seed=1, device="cpu", engine="fused", trace=[])


def test_an_unknown_engine_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match=r"engine must be one of \['auto', 'torch', 'fused'\]"):
        collect("leduc", "", "full", 100, seed=1, device="cpu", engine="numpy")


def test_moment_sums_equal_python_integer_sums_over_valid_groups():
    gen = np.random.default_rng(0)
    returns = torch.as_tensor(gen.integers(-13, 14, size=(5_001, 3)), dtype=torch.int64)
    valid = torch.as_tensor(gen.random(5_001) < 0.9)
    n, sums, products, powers = moment_sums(returns, valid)
    rows = [list(map(int, r)) for r, ok in zip(returns.tolist(), valid.tolist()) if ok]
    assert n == len(rows)
    assert sums.tolist() == [sum(r[i] for r in rows) for i in range(3)]
    assert products.tolist() == [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    pairs = [(0, 1), (0, 2), (1, 2)]
    assert powers.tolist() == [[sum((r[i] - r[j]) ** p for r in rows) for p in (1, 2, 3, 4)] for i, j in pairs]


def test_device_moment_sums_equal_the_fused_moment_sums_and_python_integer_sums():
    from oscc_core.engine.gather import device_moment_sums
    gen = np.random.default_rng(1)
    returns = torch.as_tensor(gen.integers(-40, 41, size=(3_001, 3)), dtype=torch.int64)
    valid = torch.as_tensor(gen.random(3_001) < 0.8)
    n, sums, products, powers = device_moment_sums(returns, valid)
    rows = [r for r, ok in zip(returns.tolist(), valid.tolist()) if ok]
    assert n == len(rows)
    assert sums.tolist() == [sum(r[i] for r in rows) for i in range(3)]
    assert products.tolist() == [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    pairs = [(0, 1), (0, 2), (1, 2)]
    assert powers.tolist() == [[sum((r[i] - r[j]) ** p for r in rows) for p in (1, 2, 3, 4)] for i, j in pairs]


def test_the_fused_tables_hold_every_terminal_utility_without_overflow():
    from oscc_core.engine.fused import _game_arrays
    for name in ("kuhn", "leduc"):
        game = get_game(name)
        assert np.abs(_game_arrays(game)["utility"]).max() == np.abs(game.tree.contributions).max()
