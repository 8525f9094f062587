"""Rules at their boundaries, where a moved rule changes the book's numbers without failing the other tests.

* fixed-rounding exp (`fixed_math`) at underflow: exactly the C library's result on both sides of the last
  double whose exp rounds to zero, and zero (not garbage bits) far below it, where 2**k leaves the normal range;
  clamped, finite, above the overflow point;
* the fixed-order sums with one column (`reductions.sum_last_axis`, the learners' `_state_total`) or one term
  per row (`ordered_index_add`'s rank slices), and without touching their input;
* the learners' value table: an iteration in which no ppo run takes part leaves it as it is, its -0.0 entries
  included, on the torch path and the fused CPU kernels (the GPU kernels: `test_kernel_guards`), while an
  iteration with a ppo run adds 0.0 to every entry, as the torch path's `+=` does;
* a study on a device: which tasks train together in one batch (those that differ at most in step size, in
  the order of their first task), told by what each batch holds;
* a collection's kept columns on the GPU's code path (`gather.KeptColumns` with a side stream), on the CPU: in
  host memory allocated pinned, never the chunk's own tensors, also for a collection of one chunk; on a CUDA
  machine, a real one-chunk collection's columns are pinned CPU tensors.

Expected values are independent: the C library's exp, left-to-right sums in plain Python, `index_add_`, the
task lists written out by hand.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from oscc_core.fixed_math import exp_scalar, exp_tensor
from oscc_core.reductions import sum_last_axis

SMALLEST_SUBNORMAL = 5e-324


# ----- exp at its ends ---------------------------------------------------------------------------------------------
def _last_zero() -> float:
    """The largest double whose exp the C library rounds to zero (found by bisection over doubles)."""
    lo, hi = -746.0, -745.0
    while math.nextafter(lo, 0.0) != hi:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if math.exp(mid) > 0 else (mid, hi)
    return lo


def _both(x: float) -> tuple[float, float]:
    return exp_scalar(x), exp_tensor(torch.tensor([x], dtype=torch.float64)).item()


def test_exp_is_zero_up_to_the_last_double_the_c_library_rounds_to_zero_and_the_smallest_subnormal_after():
    zero = _last_zero()
    after = math.nextafter(zero, 0.0)
    assert (math.exp(zero), math.exp(after)) == (0.0, SMALLEST_SUBNORMAL)       # the oracle's boundary
    assert _both(zero) == (0.0, 0.0)
    assert _both(after) == (SMALLEST_SUBNORMAL, SMALLEST_SUBNORMAL)


@pytest.mark.parametrize("x", [-745.2, -746.0, -800.0, -1100.0, -1416.0, -1420.0, -1450.0, -1499.0, -1500.0, -2100.0, -1e4,
                               -1e308,
                               -math.inf])
def test_exp_far_below_underflow_is_exactly_zero_in_every_engine(x):
    assert _both(x) == (0.0, 0.0)


@pytest.mark.parametrize("x", [709.78, 709.8, 710.0, 1e4, 1e308])
def test_exp_above_the_overflow_point_is_clamped_finite_and_the_same_in_every_engine(x):
    scalar, tensor = _both(x)
    assert scalar == tensor == exp_scalar(709.78) and math.isfinite(scalar)
    assert abs(scalar - math.exp(709.78)) <= 2 * math.ulp(math.exp(709.78))


# ----- fixed-order sums with one column or one term ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_single_column_sums_to_itself_in_a_new_array(dtype):
    a = np.array([[3], [-2], [7]], dtype=dtype)
    total = sum_last_axis(a)
    assert total.tolist() == [3, -2, 7] and total.dtype == dtype
    total += 1
    assert a.tolist() == [[3], [-2], [7]], "the sum shares memory with its input"


def test_no_columns_sum_to_zeros_of_the_leading_shape_and_type():
    total = sum_last_axis(np.zeros((2, 3, 0), dtype=np.int64))
    assert total.shape == (2, 3) and total.dtype == np.int64 and not total.any()


def test_summing_columns_leaves_the_input_unchanged():
    a = np.array([[1e16, 1.0, -1e16], [0.5, 0.25, 0.125]])
    kept = a.copy()
    assert sum_last_axis(a).tolist() == [(1e16 + 1.0) + -1e16, (0.5 + 0.25) + 0.125]
    assert np.array_equal(a, kept)


@pytest.mark.parametrize("columns", [1, 2, 5])
def test_a_states_law_total_adds_its_cells_left_to_right_and_is_one_under_the_uniform_law(columns):
    from oscc_core.learning.fused_kernels import COUNTERFACTUAL_LAW, UNIFORM_LAW, _state_total
    weights = np.random.default_rng(columns).standard_normal((3, columns)) * 10.0 ** np.arange(columns)
    for row in range(3):
        expected = weights[row, 0]
        for c in weights[row, 1:].tolist():
            expected = expected + c
        assert _state_total(weights, row, COUNTERFACTUAL_LAW) == expected
        assert _state_total(weights, row, UNIFORM_LAW) == 1.0


def test_rank_slices_with_one_term_per_row_add_every_term():
    from oscc_core.learning.ordered_sum import ordered_index_add
    target = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)
    index, source = torch.tensor([2, 0]), torch.tensor([[0.5, 0.25], [10.0, 20.0]], dtype=torch.float64)
    got = ordered_index_add(target.clone(), index, source, ranked=True)
    assert got.tolist() == [[11.0, 22.0], [3.0, 4.0], [5.5, 6.25]]


# ----- the value table's signed zeros ------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["torch", "fused"])
@pytest.mark.parametrize("case", ["no-ppo-run", "ppo-run-spent"])
def test_iterations_without_a_ppo_run_leave_a_value_table_of_negative_zeros_as_it_is(engine, case):
    from test_kernel_guards import ZERO_CASES, zero_values_after
    values, work = zero_values_after(engine, *ZERO_CASES[case])
    assert work > 0
    assert np.all(values == 0.0) and np.all(np.signbit(values)), "a table no ppo run used became +0.0"


@pytest.mark.parametrize("engine", ["torch", "fused"])
def test_an_iteration_with_a_ppo_run_adds_zero_to_every_entry_so_negative_zeros_become_positive(engine):
    from test_kernel_guards import zero_values_after
    values, _ = zero_values_after(engine, (("cp_grpo", 3), ("grpo", 5)) + (("ppo", 7),), ())
    untouched = values[:2]                       # the other runs' rows: moved by 0.0 only
    assert np.all(untouched == 0.0) and not np.any(np.signbit(untouched))


# ----- which tasks a study on a device trains together ------------------------------------------------------------
def test_a_study_on_a_device_batches_the_tasks_that_differ_at_most_in_step_size_in_first_task_order(
        tmp_path, monkeypatch):
    from oscc_core.learning.loop import Schedule
    from oscc_core.learning.study import Task
    from oscc_core.learning.study_design import learner_schedule
    from oscc_core.reporting import study_runner

    base = learner_schedule("converging", Schedule(decision_points=4), 8.0, 0.5, 0.1)
    a = Task.make("kuhn", "converging", "cp_grpo", (1, 2), base, (100, 400))
    c = Task.make("kuhn", "converging", "grpo", (1,), replace(base, proximal_kappa=0.01), (100, 400))
    b = Task.make("kuhn", "converging", "ppo", (3,), replace(base, learning_rate=2.0), (100, 400))
    d = Task.make("kuhn", "converging", "cp_grpo", (4,), base, (100, 500))
    e = Task.make("leduc", "converging", "cp_grpo", (1,), base, (100, 400))
    f = Task.make("kuhn", "tune-converging", "independent", (5, 6), replace(base, learning_rate=16.0), (100, 400))
    batches = []

    def record(tasks, device):
        batches.append(([(t.game, t.learner, t.arm, t.seeds, t.learning_rate) for t in tasks], str(device)))
        return [{"task": t.record(), "runs": {}} for t in tasks]

    monkeypatch.setattr(study_runner, "run_tasks_together", record)
    study_runner.run_tasks([a, c, b, d, e, f], tmp_path, device="meta")
    assert batches == [
        ([("kuhn", "converging", "cp_grpo", (1, 2), 8.0), ("kuhn", "converging", "ppo", (3,), 2.0),
          ("kuhn", "tune-converging", "independent", (5, 6), 16.0)], "meta"),
        ([("kuhn", "converging", "grpo", (1,), 8.0)], "meta"),
        ([("kuhn", "converging", "cp_grpo", (4,), 8.0)], "meta"),
        ([("leduc", "converging", "cp_grpo", (1,), 8.0)], "meta")]


# ----- kept columns on the GPU's code path ------------------------------------------------------------------------
class StandInStream:
    """What `KeptColumns` asks of a CUDA side stream, on the CPU."""

    def __init__(self):
        self.device, self.synchronized = torch.device("cpu"), False

    def wait_stream(self, other):
        pass

    def synchronize(self):
        self.synchronized = True


@pytest.fixture
def gpu_path(monkeypatch):
    """KeptColumns' CUDA branch made to run on the CPU; returns the data pointers of host memory allocated
    pinned (this CPU build of torch cannot pin: such a tensor is made unpinned and its pointer noted)."""
    from oscc_core.engine import gather
    pinned, real_empty = set(), torch.empty

    def empty(*args, pin_memory=False, **kwargs):
        t = real_empty(*args, **kwargs)
        if pin_memory:
            pinned.add(t.data_ptr())
        return t

    monkeypatch.setattr(gather.torch, "empty", empty)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: "the current stream")
    monkeypatch.setattr(torch.cuda, "stream", lambda stream: contextlib.nullcontext())
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda self, stream: None)
    return pinned


def _chunk(start: int, groups: int) -> dict:
    ids = torch.arange(start, start + groups, dtype=torch.int64)
    return {"returns": torch.stack([ids, -ids], 1), "codes": ids % 3}


@pytest.mark.parametrize("chunks", [[(0, 6)], [(0, 4), (4, 2)]], ids=["one-chunk", "two-chunks"])
def test_on_the_gpus_path_kept_columns_are_copied_into_pinned_host_memory(gpu_path, chunks):
    from oscc_core.engine.gather import KeptColumns
    kept = KeptColumns(("returns", "codes"), 6, torch.device("cpu"))
    kept.stream = StandInStream()
    added = [_chunk(start, n) for start, n in chunks]
    for (start, _), chunk in zip(chunks, added):
        kept.add(start, chunk)
    columns = kept.columns()
    assert kept.stream.synchronized
    whole = _chunk(0, 6)
    for name in ("returns", "codes"):
        assert torch.equal(columns[name], whole[name])
        assert columns[name].data_ptr() in gpu_path, f"{name} is not in memory allocated pinned"
        assert all(columns[name].data_ptr() != c[name].data_ptr() for c in added), f"{name} is the chunk's own"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")
@pytest.mark.cuda
def test_a_one_chunk_collection_on_cuda_keeps_its_columns_in_pinned_host_memory():
    from oscc_core.engine.collector import collect
    c = collect("leduc", "", "full", 64, 21, device="cuda", chunk_size=64, keep_draws=True)
    for column in (c.returns, c.codes, c.own_card, c.public_card, c.group_draws):
        assert column.device.type == "cpu" and column.is_pinned()
