"""Whether a converging curve rises after its lowest point (`oscc_core.learning.study_design.curve_rise`), against
values worked by hand.

The rule (DESIGN section 8): over the budgets every seed recorded, the lowest point is the budget with the lowest
seed mean (the first one on a tie); the rise is the last budget's value minus the lowest budget's, paired over
seeds, with its 95% Student-t interval (n - 1 degrees of freedom); a curve *rises* exactly when that interval's
low end lies above 0.  One seed has no interval and never rises.  t quantiles here are from tables:
t(0.975, 1) = tan(0.475 pi) = 12.7062..., t(0.975, 2) = 4.302652729911275.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from oscc_core.learning.study_design import curve_rise

T2 = 4.302652729911275          # t(0.975, 2 degrees of freedom), printed tables
T1 = math.tan(math.pi * 0.475)  # t(0.975, 1): the Cauchy quantile


def curves(values: dict, field: str = "exploitability_average") -> dict:
    """{seed: {budget: record}} from {seed: {budget: value}}, budgets as the strings a study file holds."""
    return {str(s): {str(b): {field: v} for b, v in row.items()} for s, row in values.items()}


def test_the_lowest_point_is_the_budget_of_the_lowest_seed_mean_not_of_any_seeds_own_minimum():
    # seed 1's own minimum is at 1000 (0.30), seed 2's at 10 (0.40); the means are 0.95, 0.55, 0.60
    got = curve_rise(curves({1: {10: 1.5, 100: 0.5, 1000: 0.3}, 2: {10: 0.4, 100: 0.6, 1000: 0.9}}))
    assert (got["lowest_budget"], got["lowest_mean"]) == (100, pytest.approx(0.55))


def test_the_last_budget_is_the_largest_as_a_number_not_as_a_string():
    # as strings "50" sorts after "1000"; as numbers the last budget is 1000
    got = curve_rise(curves({1: {50: 0.9, 200: 0.5, 1000: 0.4}, 2: {50: 0.7, 200: 0.5, 1000: 0.2}}))
    assert (got["last_budget"], got["last_mean"]) == (1000, pytest.approx(0.3))
    assert got["lowest_budget"] == 1000


def test_a_tie_for_the_lowest_mean_goes_to_the_first_budget():
    # means 0.75, 0.5, 0.75, 0.5: budgets 20 and 40 tie (exact binary fractions), 20 comes first
    got = curve_rise(curves({1: {10: 0.75, 20: 0.25, 30: 0.5, 40: 0.5}, 2: {10: 0.75, 20: 0.75, 30: 1.0,
                                                                          40: 0.5}}))
    assert got["lowest_budget"] == 20
    # paired last - lowest: 0.25 and -0.25: mean 0, sd 0.25 * sqrt(2), standard error 0.25, half width t1 * 0.25
    assert (got["mean"], got["low"], got["high"], got["n"]) == (0.0, pytest.approx(-T1 * 0.25),
                                                                 pytest.approx(T1 * 0.25), 2)
    assert got["rises"] is False


def test_the_rise_is_the_paired_t_interval_of_last_minus_lowest_over_seeds():
    # lowest mean at 100 (0.5); last - lowest per seed: 0.1, 0.2, 0.3: mean 0.2, sd 0.1
    got = curve_rise(curves({1: {10: 1.0, 100: 0.5, 1000: 0.6}, 2: {10: 1.2, 100: 0.4, 1000: 0.6},
                             3: {10: 0.8, 100: 0.6, 1000: 0.9}}))
    half = T2 * 0.1 / math.sqrt(3)
    assert got["lowest_budget"] == 100 and got["n"] == 3
    assert (got["mean"], got["low"], got["high"]) == (pytest.approx(0.2), pytest.approx(0.2 - half),
                                                     pytest.approx(0.2 + half))


def test_a_rise_whose_interval_reaches_below_0_is_not_a_rise():
    # the interval above: 0.2 -+ 0.248 = [-0.048, 0.448]
    got = curve_rise(curves({1: {10: 1.0, 100: 0.5, 1000: 0.6}, 2: {10: 1.2, 100: 0.4, 1000: 0.6},
                             3: {10: 0.8, 100: 0.6, 1000: 0.9}}))
    assert got["low"] < 0 < got["mean"] and got["rises"] is False


def test_a_rise_whose_whole_interval_lies_above_0_rises():
    # last - lowest per seed: 0.2, 0.25, 0.3: mean 0.25, sd 0.05, half width 0.124: [0.126, 0.374]
    got = curve_rise(curves({1: {10: 1.0, 100: 0.5, 1000: 0.7}, 2: {10: 1.2, 100: 0.4, 1000: 0.65},
                             3: {10: 0.8, 100: 0.6, 1000: 0.9}}))
    assert got["low"] == pytest.approx(0.25 - T2 * 0.05 / math.sqrt(3)) and got["low"] > 0
    assert got["rises"] is True


def test_only_the_budgets_every_seed_recorded_count():
    # seed 2 alone recorded 500, where the curve would be lowest; the shared budgets are 10, 100, 1000
    got = curve_rise(curves({1: {10: 1.0, 100: 0.5, 1000: 0.6}, 2: {10: 1.0, 100: 0.5, 500: 0.0, 1000: 0.7}}))
    assert (got["lowest_budget"], got["last_budget"]) == (100, 1000)
    # seed 2 alone recorded 2000: the last shared budget stays 1000
    got = curve_rise(curves({1: {10: 1.0, 100: 0.5, 1000: 0.6}, 2: {10: 1.0, 100: 0.5, 1000: 0.7, 2000: 9.0}}))
    assert (got["last_budget"], got["last_mean"]) == (1000, pytest.approx(0.65))


def test_no_budget_shared_by_every_seed_gives_none():
    assert curve_rise(curves({1: {10: 1.0, 100: 0.5}, 2: {20: 1.0, 200: 0.5}})) is None


def test_one_seed_has_a_mean_change_but_no_interval_and_never_rises():
    got = curve_rise(curves({1: {10: 1.0, 100: 0.2, 1000: 0.9}}))
    assert (got["mean"], got["low"], got["high"], got["n"]) == (pytest.approx(0.7), None, None, 1)
    assert got["rises"] is False


def test_the_field_read_is_the_one_named():
    values = {1: {10: 1.0, 100: 0.5, 1000: 0.2}, 2: {10: 1.0, 100: 0.3, 1000: 0.4}}
    seeds = curves(values, "exploitability_last")
    for s in seeds.values():
        for rec in s.values():
            rec["exploitability_average"] = 7.0          # flat: it must not be the one read
    got = curve_rise(seeds, "exploitability_last")
    assert (got["lowest_budget"], got["lowest_mean"]) == (1000, pytest.approx(0.3))


# ----- properties -------------------------------------------------------------------------------------------------
values_ = st.floats(0.0, 3.0, allow_nan=False)


@st.composite
def seed_rows(draw, min_seeds=2):
    seeds = draw(st.integers(min_seeds, 6))
    budgets = draw(st.integers(2, 6))
    return [[draw(values_) for _ in range(budgets)] for _ in range(seeds)]


def as_curves(rows) -> dict:
    budgets = [10 * 2 ** j for j in range(len(rows[0]))]
    return curves({i + 1: dict(zip(budgets, row)) for i, row in enumerate(rows)})


@given(seed_rows(), st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=6, max_size=6))
def test_a_curve_whose_last_budget_has_its_lowest_mean_never_rises(rows, drops):
    # each seed's last value is at or below its own smallest earlier value: the last mean is the lowest (or tied)
    rows = [row[:-1] + [max(0.0, min(row[:-1]) - d)] for row, d in zip(rows, drops)]
    assert curve_rise(as_curves(rows))["rises"] is False


@given(seed_rows())
def test_a_last_budget_that_is_the_lowest_gives_a_change_of_exactly_0_and_no_rise(rows):
    rows = [row[:-1] + [-1.0 - i] for i, row in enumerate(rows)]      # last strictly lowest on every seed
    got = curve_rise(as_curves(rows))
    assert got["lowest_budget"] == got["last_budget"]
    assert (got["mean"], got["low"], got["high"]) == (0.0, 0.0, 0.0) and got["rises"] is False


@given(seed_rows(), st.sampled_from([0.0, 0.001, 0.25, 1.0]))
def test_an_equal_change_on_every_seed_is_an_interval_of_width_0_that_rises_only_above_0(rows, d):
    body = [row[:-1] for row in rows]
    means = np.mean(body, axis=0)
    k = int(np.flatnonzero(means == means.min())[0])           # the first budget of the lowest earlier mean
    rows = [row + [row[k] + d] for row in body]                 # the last: that budget's value + d on every seed
    got = curve_rise(as_curves(rows))
    assert got["lowest_budget"] == 10 * 2 ** k
    assert got["low"] == pytest.approx(d, abs=1e-12) and got["high"] == pytest.approx(d, abs=1e-12)
    assert got["rises"] is (d > 0)


@given(seed_rows())
def test_a_curve_rises_exactly_when_the_low_end_of_the_paired_interval_lies_above_0(rows):
    a = np.array(rows)
    means = a.mean(axis=0)
    k = int(np.flatnonzero(means == means.min())[0])
    change = a[:, -1] - a[:, k]
    n = len(change)
    low = change.mean() - stats.t.ppf(0.975, n - 1) * change.std(ddof=1) / math.sqrt(n)
    got = curve_rise(as_curves(rows))
    assert got["low"] == pytest.approx(low, abs=1e-9)
    if abs(low) > 1e-9:                                          # away from the floating-point tie at 0
        assert got["rises"] is bool(low > 0)
