"""Calls to a threshold under the study's rule and under the alternative (`oscc_core.learning.calls_rules`).

Expected values are worked by hand: crossings of curves whose exploitability halves or quarters between two stored
budgets a decade apart (log-log crossings at 10^(1/2) and 10^(2/3) of the first budget, linear ones by the chord),
their geometric and arithmetic means.  The property tests use a power law, on which log-log interpolation is exact
and the chord of a convex curve crosses later than the curve, by at most the gap between the stored budgets.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.learning import calls_rules
from oscc_core.learning.study_design import calls_to, curve_budgets


def curve(points: dict) -> dict:
    return {str(b): {"exploitability_average": e} for b, e in points.items()}


#: Three seeds at budgets 100 and 1000: A halves twice (0.4 -> 0.1), B falls eightfold (0.8 -> 0.1), C never
#: reaches 0.2 (0.5 -> 0.3).
A, B, C = curve({100: 0.4, 1000: 0.1}), curve({100: 0.8, 1000: 0.1}), curve({100: 0.5, 1000: 0.3})


def test_a_crossing_by_hand_in_log_log_and_linear():
    # A: log 0.4 - log 0.2 = log 2 of log 4 -> half the decade: 100 * 10^(1/2); the chord: 100 + 0.2/0.3 * 900
    assert calls_rules.crossing(A, 0.2)[0] == pytest.approx(100 * 10 ** 0.5, rel=1e-12)
    assert calls_rules.crossing(A, 0.2, "linear")[0] == pytest.approx(700.0, rel=1e-12)
    # B: log 4 of log 8 -> two thirds of the decade; the chord: 100 + 0.6/0.7 * 900
    assert calls_rules.crossing(B, 0.2)[0] == pytest.approx(100 * 10 ** (2 / 3), rel=1e-12)
    assert calls_rules.crossing(B, 0.2, "linear")[0] == pytest.approx(100 + 6 / 7 * 900, rel=1e-12)
    assert calls_rules.crossing(C, 0.2) is None
    assert calls_rules.crossing(A, 0.5) == (100.0, 100, 100)          # at or below it from the first budget


def test_the_rule_effect_of_three_seeds_by_hand():
    got = calls_rules.rule_effect([A, B, C], 0.2)
    study = 100 * 10 ** (7 / 12)                        # geometric mean of 10^(1/2) and 10^(2/3), times 100
    other = (700 + 100 + 6 / 7 * 900) / 2               # = 5500 / 7
    assert got["study"] == pytest.approx(study, rel=1e-12)
    assert got["alternative"] == pytest.approx(5500 / 7, rel=1e-12) == other
    assert got["relative_difference"] == pytest.approx(5500 / 7 / study - 1, rel=1e-12)   # about +105%
    # the interpolation alone: the geometric mean of the two chords' crossings, 700 and 100 + 6/7 * 900
    assert got["interpolation_difference"] == pytest.approx(math.sqrt(700 * (100 + 6 / 7 * 900)) / study - 1,
                                                            rel=1e-12)
    assert (got["reached"], got["seeds"]) == (2, 3)


def test_no_seed_reaching_the_threshold_has_no_figure_and_no_difference():
    got = calls_rules.rule_effect([C], 0.2)
    assert got == {"study": None, "alternative": None, "relative_difference": None,
                   "interpolation_difference": None, "reached": 0, "seeds": 1}


def test_the_study_summarys_calls_to_is_the_log_log_crossing():
    assert calls_to(A, 0.2) == calls_rules.crossing(A, 0.2)[0]
    assert calls_to(C, 0.2) is None


def test_an_unknown_interpolation_or_mean_is_refused_naming_it():
    with pytest.raises(ValueError, match="interpolation"):
        calls_rules.crossing(A, 0.2, "cubic")
    with pytest.raises(ValueError, match="mean"):
        calls_rules.calls_over_seeds([A], 0.2, "log", "harmonic")


def power_law(scale: float, rate: float, budgets) -> dict:
    return curve({b: scale * b ** -rate for b in budgets})


@given(rate=st.floats(0.2, 1.5), threshold=st.floats(0.05, 0.5), per_decade=st.integers(1, 200))
def test_on_a_power_law_log_log_is_exact_and_the_chord_crosses_later_by_at_most_one_gap(rate, threshold,
                                                                                         per_decade):
    budgets = curve_budgets(6144, (1, 10, 100), per_decade)
    # a scale that puts the exact crossing inside the recorded range: e(b) = threshold at b* = 10^4.5
    exact = 10 ** 4.5
    c = threshold * exact ** rate
    runs = power_law(c, rate, budgets)
    log, b0, b1 = calls_rules.crossing(runs, threshold)
    assert log == pytest.approx(exact, rel=1e-9)
    linear = calls_rules.crossing(runs, threshold, "linear")[0]
    assert exact * (1 - 1e-9) <= linear <= b1 * (1 + 1e-9)          # convex: the chord lies above the curve
    effect = calls_rules.rule_effect([runs, runs], threshold)       # equal seeds: the two means agree
    assert 0 <= effect["relative_difference"] <= b1 / b0 - 1 + 1e-9


@given(rate=st.floats(0.2, 1.5), threshold=st.floats(0.05, 0.5))
def test_dense_budgets_make_the_two_rules_agree_on_a_power_law(rate, threshold):
    budgets = curve_budgets(6144, (1, 10, 100), 2000)                # neighbours about 0.1% apart
    runs = power_law(threshold * 10 ** (4.5 * rate), rate, budgets)
    assert abs(calls_rules.rule_effect([runs], threshold)["relative_difference"]) < 2e-3


def test_a_geometric_and_an_arithmetic_mean_part_when_the_seeds_part():
    # Two seeds crossing exactly at stored budgets 100 and 10,000 (the threshold is their value there):
    # the geometric mean is 1000, the arithmetic 5050, whatever the interpolation.
    one, two = curve({100: 0.2, 1000: 0.1}), curve({100: 0.8, 10_000: 0.2})
    got = calls_rules.rule_effect([one, two], 0.2)
    assert got["study"] == pytest.approx(1000.0, rel=1e-12)
    assert got["alternative"] == pytest.approx(5050.0, rel=1e-12)
    assert got["interpolation_difference"] == pytest.approx(0.0, abs=1e-12)     # crossings at stored budgets
    assert math.isclose(got["relative_difference"], 4.05, rel_tol=1e-12)
