"""The converging learner's options as specifications (`learning.loop.Schedule`, `learning.baseline`,
`learning.study_design.with_options`), each against values worked by hand.

- The history baseline's update rule, n <- n + 1 and B <- B + max(1 / n, floor) (T - B), with the targets
  T_k = v - (d_0 + ... + d_{k-1}), applied one sample after another in (lane, step) order: a small table worked
  by hand, on the torch path (`baseline.update`) and on the fused kernels' function (`_baseline_updates`), so a
  bug made in both engines fails here (the engines' agreement alone cannot see it).
- Every documented option range is accepted at its documented ends and refused just outside them (properties
  over the numbers around each end).
- The option set "none" turns every later option off, whatever the base schedule carried.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.learning import baseline as bl
from oscc_core.learning.fused_baseline import _baseline_updates
from oscc_core.learning.loop import Schedule
from oscc_core.learning.study_design import CONVERGING_OPTIONS, FAST_OPTIONS, with_options

#: The options' values at which they change nothing (`loop.LATER_DEFAULTS`), written out independently.
OFF = {"baseline": "none", "baseline_floor": 0.2, "alpha_decay": "constant", "alpha_horizon": 1.0,
       "average_power": 0}


# ----- the history baseline's update rule, by hand ---------------------------------------------------------------
def _two_lanes():
    """Run 0 of one row, cells 0..3.  Lane 0 passes cell 0 (d = 1.0) then cell 1 (d = 0.5); lane 1 passes cell 0
    (d = 2.0).  Corrected values v = (10, 20).  Targets: lane 0 at cell 0: 10, at cell 1: 10 - 1.0 = 9; lane 1 at
    cell 0: 20.  In (lane, step) order cell 0 sees 10 then 20, cell 1 sees 9."""
    i64 = lambda *x: torch.tensor(x, dtype=torch.int64)        # noqa: E731
    f64 = lambda *x: torch.tensor(x, dtype=torch.float64)      # noqa: E731
    records = [(i64(0, 1), i64(0, 0), i64(0, 0), f64(1.0, 2.0)),      # step 0 of both lanes
               (i64(0), i64(1), i64(1), f64(0.5))]                  # step 1 of lane 0
    return records, f64(10.0, 20.0), i64(0, 0)


def _torch_update(floor, values=(0.0, 0.0, 0.0, 0.0), counts=(0.0, 0.0, 0.0, 0.0)):
    records, v, run = _two_lanes()
    b = torch.tensor([values], dtype=torch.float64)
    n = torch.tensor([counts], dtype=torch.float64)
    bl.update(b, n, run, records, v, 2, floor)
    return b[0].tolist(), n[0].tolist()


def _fused_update(floor, values=(0.0, 0.0, 0.0, 0.0), counts=(0.0, 0.0, 0.0, 0.0)):
    """The same samples as the kernels keep them: point 0 has slots 0 (lane 0: cells 0, 1; targets 10, 9) and 1
    (lane 1: cell 0; target 20)."""
    cells = np.array([[[0, 1], [0, 0]]], dtype=np.int64)
    targets = np.array([[[10.0, 9.0], [20.0, 0.0]]])
    lengths = np.array([[2, 1]], dtype=np.int64)
    b, n = np.array([values], dtype=np.float64), np.array([counts], dtype=np.float64)
    _baseline_updates(b, n, 0, cells, targets, lengths, 0, 1, floor)
    return b[0].tolist(), n[0].tolist()


@pytest.mark.parametrize("update", [_torch_update, _fused_update], ids=["torch", "fused"])
def test_a_fresh_cell_takes_its_first_sample_and_then_the_mean_of_its_samples(update):
    # cell 0: n = 1, w = 1 -> 10; n = 2, w = max(1/2, 0.2) = 0.5 -> 10 + 0.5 (20 - 10) = 15.  cell 1: 9.
    assert update(0.2) == ([15.0, 9.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("update", [_torch_update, _fused_update], ids=["torch", "fused"])
def test_the_floor_keeps_the_step_from_falling_below_it(update):
    # floor 0.6: cell 0's second step is max(1/2, 0.6) = 0.6: 10 + 0.6 (20 - 10) = 16
    assert update(0.6) == ([16.0, 9.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("update", [_torch_update, _fused_update], ids=["torch", "fused"])
def test_a_cell_that_has_seen_samples_moves_by_one_over_its_count(update):
    # cell 0 at B = 4 after 3 samples: n = 4, w = 1/4: 4 + (10 - 4) / 4 = 5.5; n = 5, w = max(1/5, 0.2) = 0.2:
    # 5.5 + 0.2 (20 - 5.5) = 8.4.  Cell 1 at B = 1 after 9 samples: n = 10, w = max(0.1, 0.2): 1 + 0.2 (9 - 1) = 2.6
    values, counts = update(0.2, (4.0, 1.0, 7.0, 0.0), (3.0, 9.0, 2.0, 0.0))
    assert values == [pytest.approx(8.4, abs=1e-15), pytest.approx(2.6, abs=1e-15), 7.0, 0.0]
    assert counts == [5.0, 10.0, 2.0, 0.0]


def test_a_target_is_the_corrected_value_less_the_corrections_before_its_step():
    """Three steps of one lane with corrections d = (1, 2, 4) and v = 100: targets 100, 99 and 97 in three fresh
    cells (each takes its one sample whole)."""
    i64 = lambda *x: torch.tensor(x, dtype=torch.int64)        # noqa: E731
    records = [(i64(0), i64(k), i64(k), torch.tensor([d], dtype=torch.float64)) for k, d in enumerate((1., 2., 4.))]
    b, n = torch.zeros((1, 3), dtype=torch.float64), torch.zeros((1, 3), dtype=torch.float64)
    bl.update(b, n, i64(0), records, torch.tensor([100.0], dtype=torch.float64), 1, 0.2)
    assert b[0].tolist() == [100.0, 99.0, 97.0]


def test_each_lane_moves_its_own_runs_row():
    """Lanes of runs 1 and 0 (run [1, 0]) in cells 2 and 2: each row's cell 2 takes its own lane's target."""
    i64 = lambda *x: torch.tensor(x, dtype=torch.int64)        # noqa: E731
    records = [(i64(0, 1), i64(0, 0), i64(2, 2), torch.tensor([0.0, 0.0], dtype=torch.float64))]
    b, n = torch.zeros((2, 3), dtype=torch.float64), torch.zeros((2, 3), dtype=torch.float64)
    bl.update(b, n, i64(1, 0), records, torch.tensor([5.0, -3.0], dtype=torch.float64), 2, 0.2)
    assert b.tolist() == [[0.0, 0.0, -3.0], [0.0, 0.0, 5.0]] and n.tolist() == [[0, 0, 1], [0, 0, 1]]


# ----- documented ranges, at their ends ---------------------------------------------------------------------------
def _accepted(**option) -> bool:
    try:
        Schedule(**option)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("option", [dict(baseline_floor=1.0), dict(baseline_floor=1), dict(baseline_floor=5e-324),
                                    dict(alpha_horizon=5e-324), dict(alpha_horizon=1e300),
                                    dict(average_power=0), dict(average_power=4), dict(proximal_kappa=1.0),
                                    dict(proximal_kappa=1), dict(proximal_kappa=0.0), dict(proximal_alpha=0.0)],
                         ids=lambda o: "=".join(map(str, *o.items())))
def test_each_documented_range_is_accepted_at_its_ends(option):
    assert _accepted(**option)


@pytest.mark.parametrize("option", [dict(baseline_floor=0.0), dict(baseline_floor=math.nextafter(1.0, 2.0)),
                                    dict(baseline_floor=math.nan), dict(alpha_horizon=0.0),
                                    dict(alpha_horizon=math.inf), dict(average_power=-1), dict(average_power=5),
                                    dict(proximal_kappa=math.nextafter(1.0, 2.0)), dict(proximal_kappa=-5e-324),
                                    dict(proximal_alpha=-5e-324), dict(baseline_floor=True),
                                    dict(proximal_alpha=False)],
                         ids=lambda o: "=".join(map(str, *o.items())))
def test_each_documented_range_is_refused_just_outside_its_ends(option):
    with pytest.raises(ValueError, match=next(iter(option))):
        Schedule(**option)


around = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
    [0.0, -0.0, 5e-324, -5e-324, 1.0, math.nextafter(1.0, 2.0), math.nextafter(1.0, 0.0), math.inf, -math.inf]))


@given(around)
def test_the_baseline_floor_is_accepted_exactly_on_0_lt_floor_le_1(x):
    assert _accepted(baseline_floor=x) == (0.0 < x <= 1.0)


@given(around)
def test_the_alpha_horizon_is_accepted_exactly_on_positive_finite_numbers(x):
    assert _accepted(alpha_horizon=x) == (0.0 < x < math.inf)


@given(around)
def test_kappa_is_accepted_exactly_on_0_le_kappa_le_1(x):
    assert _accepted(proximal_kappa=x) == (0.0 <= x <= 1.0)


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=False), st.sampled_from([0.0, -0.0, -5e-324])))
def test_alpha_is_accepted_exactly_on_finite_numbers_at_or_above_0(x):
    assert _accepted(proximal_alpha=x) == (x >= 0.0)


@given(st.integers(-3, 8))
def test_the_average_power_is_accepted_exactly_on_the_integers_0_to_4(k):
    assert _accepted(average_power=k) == (0 <= k <= 4)


# ----- the option sets --------------------------------------------------------------------------------------------
def test_the_option_set_none_turns_every_later_option_off_whatever_the_base_carried():
    base = replace(Schedule(iterations=3, learning_rate=2.0), baseline="policy", baseline_floor=0.9,
                   alpha_decay="inverse_sqrt", alpha_horizon=7.0, average_power=3)
    none = with_options(base, "none")
    assert {k: getattr(none, k) for k in OFF} == OFF
    assert (none.iterations, none.learning_rate) == (3, 2.0)          # what is not an option stays


def test_the_option_set_fast_sets_exactly_the_fast_options():
    fast = with_options(Schedule(iterations=3), "fast")
    assert {k: getattr(fast, k) for k in OFF} == {"baseline": "history", "baseline_floor": 0.5,
                                                  "alpha_decay": "inverse_sqrt", "alpha_horizon": 30.0,
                                                  "average_power": 2} == FAST_OPTIONS
    assert {"none", "fast"} <= set(CONVERGING_OPTIONS) and CONVERGING_OPTIONS["none"] == {}


def test_an_unknown_option_set_is_refused_naming_the_sets():
    with pytest.raises(ValueError) as caught:
        with_options(Schedule(), "quick")
    message = str(caught.value)
    assert message.startswith("converging options must be one of none, fast") and message.endswith(", got 'quick'.")
    assert all(name in message for name in CONVERGING_OPTIONS)


def test_a_schedule_with_every_option_off_records_none_of_them_and_one_with_any_on_records_all():
    off = Schedule(iterations=3)
    assert not set(OFF) & set(off.as_dict())
    for name, value in (("baseline", "history"), ("baseline_floor", 1.0), ("alpha_decay", "inverse_sqrt"),
                        ("alpha_horizon", 2.0), ("average_power", 1)):
        record = replace(off, **{name: value}).as_dict()
        assert {k: record[k] for k in OFF} == {**OFF, name: value}, name


# ----- the schedule's weights, pulls and records, and its refusals word for word -------------------------------------
def test_the_average_weighs_iteration_t_by_t_plus_1_to_the_power():
    import numpy as np
    t = np.array([0, 1, 2, 9])
    assert Schedule(average_power=2).average_weights(t).tolist() == [1.0, 4.0, 9.0, 100.0]
    assert Schedule(average_power=3).average_weights(t).tolist() == [1.0, 8.0, 27.0, 1000.0]
    assert Schedule().average_weights(t).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_an_annealed_pull_is_alpha_over_the_root_of_t_plus_t0_over_t0():
    import numpy as np
    s = Schedule(proximal_alpha=2.0, alpha_decay="inverse_sqrt", alpha_horizon=4.0)
    assert s.alphas(np.array([0, 5, 12])).tolist() == [2.0, pytest.approx(4 / 3, rel=1e-15), 1.0]
    assert Schedule(proximal_alpha=2.0, alpha_horizon=4.0).alphas(np.array([0, 12])).tolist() == [2.0, 2.0]
    # a constant pull of 2.5 stays 2.5 at integer iteration counts (not rounded to the counts' integer type)
    assert Schedule(proximal_alpha=2.5).alphas(np.array([0, 50])).tolist() == [2.5, 2.5]


def test_a_schedule_pulls_when_alpha_or_kappa_is_above_0():
    assert not Schedule().proximal
    assert Schedule(proximal_alpha=5e-324).proximal and Schedule(proximal_kappa=0.1).proximal


def test_a_record_of_a_schedule_gives_the_schedule_back():
    for s in (Schedule(iterations=3), Schedule(iterations=3, average_power=1), with_options(Schedule(), "fast")):
        assert Schedule(**s.as_dict()) == s


@pytest.mark.parametrize("option, message", [
    (dict(baseline_floor=0.0), "baseline_floor must be a number in (0, 1], got 0.0."),
    (dict(alpha_horizon=0.0), "alpha_horizon must be a number in (0, inf), got 0.0."),
    (dict(alpha_horizon="2"), "alpha_horizon must be a number in (0, inf), got '2'."),
    (dict(average_power=5), "average_power must be an integer from 0 to 4, got 5."),
    (dict(proximal_alpha=-1.0), "proximal_alpha must be a finite number >= 0, got -1.0."),
    (dict(proximal_kappa=-1.0), "proximal_kappa must be a finite number >= 0, got -1.0."),
    (dict(proximal_alpha=float("inf")), "proximal_alpha must be a finite number >= 0, got inf."),
    (dict(proximal_kappa=1.5), "proximal_kappa must be at most 1 (the magnet moves a share of the way), got 1.5."),
    (dict(alpha_decay="linear"), "alpha_decay must be one of constant, inverse_sqrt, got 'linear'."),
    (dict(baseline="value"), "baseline must be one of none, history, policy, got 'value'."),
    (dict(decision_law="x"), "decision_law must be one of on_policy, counterfactual, uniform, got 'x'."),
])
def test_each_refusal_names_the_option_and_what_is_allowed(option, message):
    with pytest.raises(ValueError) as caught:
        Schedule(**option)
    assert str(caught.value) == message
