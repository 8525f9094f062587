"""The calls-to-threshold rules at their edges, and where a curve lies against a threshold
(`oscc_core.learning.calls_rules`).

Every expected value is worked by hand or enumerated in the test: a curve that starts exactly at the threshold
crosses at its first budget (no interpolation, its own gap); each seed that crosses between two stored budgets
counts once in that gap; two distinct crossings (n = 2) give the interval exp(mean of logs +- t * |log c1 - log c2|
/ 2), where t, Student's 97.5% quantile with one degree of freedom, is tan(0.475 pi) (the Cauchy quantile, in
closed form).  The properties compare each rule with a brute-force enumeration over the recorded budgets, with
values drawn from a few levels that include the threshold itself.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.learning import calls_rules as rules

#: Student's t quantile at 97.5% with one degree of freedom: the Cauchy law's, tan(pi (p - 1/2)).
T_ONE_DEGREE = math.tan(math.pi * (0.975 - 0.5))


def records(points: dict) -> dict:
    """{budget: exploitability} as a results file keeps a run: {"<budget>": {"exploitability_average": e}}."""
    return {str(b): {"exploitability_average": e} for b, e in points.items()}


# ----- a curve that starts exactly at the threshold --------------------------------------------------------------
def test_a_curve_that_starts_exactly_at_the_threshold_crosses_at_its_first_budget_in_a_gap_of_its_own():
    assert rules.crossing(records({100: 0.2, 1000: 0.1}), 0.2) == (100.0, 100, 100)


def test_a_curve_flat_at_the_threshold_crosses_at_its_first_budget():
    assert rules.crossing(records({100: 0.2, 1000: 0.2, 10_000: 0.2}), 0.2) == (100.0, 100, 100)


def test_a_curve_that_reaches_the_threshold_exactly_at_a_later_budget_crosses_there():
    # log 0.4 - log 0.2 of log 0.4 - log 0.2: the whole gap, so the crossing is the later budget, 1000
    assert rules.crossing(records({100: 0.4, 1000: 0.2}), 0.2) == (pytest.approx(1000.0, rel=1e-12), 100, 1000)
    assert rules.crossing(records({100: 0.4, 1000: 0.2}), 0.2, "linear") == (1000.0, 100, 1000)


def test_a_curve_just_above_the_threshold_everywhere_never_crosses():
    above = math.nextafter(0.2, 1.0)
    assert rules.crossing(records({100: above, 1000: above}), 0.2) is None


# ----- how often a gap between budgets is counted ----------------------------------------------------------------
def test_each_seed_crossing_in_a_gap_counts_once_there():
    one, two = records({100: 0.4, 1000: 0.1}), records({100: 0.8, 1000: 0.1})      # both cross in (100, 1000)
    late = records({100: 0.8, 1000: 0.4, 10_000: 0.1})                                # crosses in (1000, 10000)
    first = records({100: 0.1, 1000: 0.05})                                           # at or below from 100
    got = rules.calls_over_seeds([one, two, late, first, records({100: 0.5})], 0.2)
    assert got["gaps"] == {(100, 1000): 2, (1000, 10_000): 1, (100, 100): 1}
    assert (got["reached"], got["seeds"]) == (4, 5)


@given(st.integers(1, 12))
def test_n_seeds_crossing_in_one_gap_count_n_there(n):
    got = rules.calls_over_seeds([records({100: 0.4, 1000: 0.1})] * n, 0.2)
    assert got["gaps"] == {(100, 1000): n} and got["reached"] == n


# ----- the interval of the calls with exactly two crossings ------------------------------------------------------
def test_two_distinct_crossings_give_the_t_interval_of_their_logs_with_one_degree_of_freedom():
    # seeds crossing exactly at stored budgets 100 and 10,000: mean of logs log 1000, |difference| log 100
    got = rules.calls_over_seeds([records({100: 0.2}), records({10: 0.8, 10_000: 0.2})], 0.2)
    half = T_ONE_DEGREE * math.log(100) / 2
    assert got["calls"] == pytest.approx(1000.0, rel=1e-12)
    assert got["low"] == pytest.approx(1000 * math.exp(-half), rel=1e-9)
    assert got["high"] == pytest.approx(1000 * math.exp(half), rel=1e-9)


def test_two_distinct_crossings_under_an_arithmetic_mean_give_the_t_interval_of_the_calls():
    got = rules.calls_over_seeds([records({100: 0.2}), records({10: 0.8, 10_000: 0.2})], 0.2, "log", "arithmetic")
    half = T_ONE_DEGREE * 9900 / 2
    assert got["calls"] == pytest.approx(5050.0, rel=1e-12)
    assert (got["low"], got["high"]) == (pytest.approx(5050 - half, rel=1e-9), pytest.approx(5050 + half, rel=1e-9))


def test_one_crossing_or_two_equal_ones_give_no_interval():
    one = rules.calls_over_seeds([records({100: 0.2}), records({100: 0.5})], 0.2)
    assert (one["calls"], one["low"], one["high"]) == (pytest.approx(100.0, rel=1e-12), None, None)
    equal = rules.calls_over_seeds([records({100: 0.2})] * 2, 0.2)
    assert (equal["calls"], equal["low"], equal["high"]) == (pytest.approx(100.0, rel=1e-12), None, None)


@given(st.integers(2, 10**6), st.integers(1, 10**6))
def test_any_two_distinct_crossings_have_the_closed_form_interval(a, gap):
    b = a + gap                                     # two seeds reaching 0.2 exactly at stored budgets a < b
    got = rules.calls_over_seeds([records({a: 0.2}), records({1: 0.9, b: 0.2})], 0.2)
    centre, half = math.sqrt(a * b), T_ONE_DEGREE * abs(math.log(b) - math.log(a)) / 2
    assert got["low"] == pytest.approx(centre * math.exp(-half), rel=1e-9)
    assert got["high"] == pytest.approx(centre * math.exp(half), rel=1e-9)


# ----- where a curve settles, how many seeds end above, and a curve's minimum -------------------------------------
def test_exploitability_curve_reads_a_runs_records_in_budget_order():
    assert rules.exploitability_curve({"1000": {"exploitability_average": 0.1, "exploitability_last": 0.3},
                                       "100": {"exploitability_average": 0.4, "exploitability_last": 0.5}}) == \
        {100: 0.4, 1000: 0.1}
    assert rules.exploitability_curve({"100": {"exploitability_last": 0.5}}, "exploitability_last") == {100: 0.5}


def test_a_curve_that_dips_below_and_comes_back_settles_after_its_last_rise():
    curve = {100: 0.4, 200: 0.15, 400: 0.3, 800: 0.2, 1600: 0.1}
    assert rules.crossing(records(curve), 0.2)[1:] == (100, 200)          # first crossing: between 100 and 200
    assert rules.settled_at_or_below(curve, 0.2) == 800                    # 0.2 at 800 is at the threshold


def test_a_curve_that_ends_above_the_threshold_never_settles():
    assert rules.settled_at_or_below({100: 0.1, 200: 0.3}, 0.2) is None
    assert rules.settled_at_or_below({}, 0.2) is None


def test_a_curve_at_or_below_from_its_first_budget_settles_there_and_budgets_may_be_strings():
    assert rules.settled_at_or_below({"1000": 0.2, "100": 0.2, "10000": 0.05}, 0.2) == 100


def test_seeds_above_at_their_own_last_budget_are_counted_and_the_threshold_itself_is_not_above():
    curves = [{100: 0.1, 1000: 0.3}, {100: 0.5, 1000: 0.2}, {100: 0.5}, {100: 0.5, 10_000: 0.1}, {}]
    assert rules.seeds_above_at_end(curves, 0.2) == 2                      # the first and the third


def test_a_curves_minimum_is_its_smallest_value_at_the_first_budget_where_it_lies():
    assert rules.curve_minimum({"100": 0.3, "1000": 0.1, "400": 0.1, "2000": 0.2}) == (0.1, 400)
    assert rules.curve_minimum({}) is None


LEVELS = (0.05, 0.1, 0.2, 0.3)                  # the threshold is 0.2: some values lie exactly on it
curves_st = st.dictionaries(st.integers(1, 10_000), st.sampled_from(LEVELS), max_size=8)


@given(curves_st)
def test_the_settling_budget_is_the_first_from_which_every_later_value_is_at_or_below(curve):
    budgets = sorted(curve)
    expected = None
    for i, b in enumerate(budgets):                     # the first budget whose whole tail lies at or below
        if all(curve[c] <= 0.2 for c in budgets[i:]):
            expected = b
            break
    assert rules.settled_at_or_below(curve, 0.2) == expected


@given(curves_st)
def test_a_curve_that_settles_has_crossed_no_later_than_where_it_settles(curve):
    settled = rules.settled_at_or_below(curve, 0.2)
    if settled is not None:
        calls, _, after = rules.crossing(records(curve), 0.2)
        assert after <= settled and calls <= settled * (1 + 1e-12)


@given(st.lists(curves_st, max_size=6))
def test_seeds_above_at_the_end_are_those_whose_last_value_exceeds_the_threshold(curves):
    expected = sum(1 for c in curves if c and c[max(c)] > 0.2)
    assert rules.seeds_above_at_end(curves, 0.2) == expected


@given(curves_st)
def test_the_minimum_is_no_larger_than_any_value_and_no_earlier_budget_holds_it(curve):
    got = rules.curve_minimum(curve)
    if not curve:
        assert got is None
        return
    low, where = got
    assert curve[where] == low and all(v >= low for v in curve.values())
    assert all(curve[b] > low for b in curve if b < where)


# ----- what mutation testing found unpinned ------------------------------------------------------------------------
def test_crossings_one_call_apart_still_have_an_interval():
    # at the threshold from their first stored budgets, 100 and 101: crossings exactly 100 and 101, one call apart
    got = rules.calls_over_seeds([records({100: 0.2}), records({101: 0.2})], 0.2)
    half = T_ONE_DEGREE * math.log(101 / 100) / 2
    assert got["low"] == pytest.approx(math.sqrt(100 * 101) * math.exp(-half), rel=1e-9)


def test_a_curve_of_points_is_interpolated_in_log_log_unless_told_otherwise():
    assert rules.crossing_of_points([(1000, 0.1), (100, 0.4)], 0.2) == (pytest.approx(100 * 10 ** 0.5, rel=1e-12),
                                                                        100, 1000)
    assert rules.crossing_of_points([], 0.2) is None


def test_unknown_rules_are_refused_in_one_sentence_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"^interpolation must be one of log, linear, got 'cubic'\.$"):
        rules.crossing_of_points([(100, 0.4)], 0.2, "cubic")
    with pytest.raises(ValueError, match=r"^mean must be one of geometric, arithmetic, got 'harmonic'\.$"):
        rules.calls_over_seeds([], 0.2, "log", "harmonic")


def test_a_runs_curve_comes_in_increasing_budget_order_not_in_the_order_of_its_text():
    curve = rules.exploitability_curve({"1000": {"exploitability_average": 0.1},
                                        "200": {"exploitability_average": 0.2},
                                        "100": {"exploitability_average": 0.4}})
    assert list(curve) == [100, 200, 1000]
