"""How the book writes a number (`oscc_core.reporting.numbers`): each case written out by hand."""
from __future__ import annotations

import math

import pytest

from oscc_core.reporting.numbers import (deviation_text, interval_of, interval_text, is_finite_number,
                                         significant_text, value_text)


@pytest.mark.parametrize("x, significant, text", [
    (48.94, 4, "48.94"), (0.02925, 4, "0.02925"), (61_440.0, 4, "61,440"), (6.68e-6, 4, "6.680e-06"),
    (-48.94, 4, "-48.94"), (1234.5678, 6, "1,234.57"), (0.5, 2, "0.50"), (123.0, 2, "123"),
    (9.9996, 4, "10.00"),                        # 10.00 once rounded: two decimals, not three
    (5e-13, 4, "0"), (-5e-13, 4, "0"), (1e-12, 4, "1.000e-12"),
    (math.inf, 4, "inf"), (-math.inf, 4, "-inf"), (math.nan, 4, "—"),
])
def test_a_number_to_its_significant_figures(x, significant, text):
    assert significant_text(x, significant) == text


@pytest.mark.parametrize("low, high, text", [
    (48.55, 49.36, "[48.55, 49.36]"), (0.5, 2.0, "[0.500, 2.000]"), (-2.0, 0.5, "[-2.000, 0.500]"),
    (1e-5, 2e-5, "[1.000e-05, 2.000e-05]"), (0.0, 0.0, "[0, 0]"), (1e-13, 2e-13, "[0, 0]"),
    (100.0, 12345.0, "[100, 12,345]"), (math.nan, 1.0, "[—, 1.000]"), (-math.inf, 1.0, "[-inf, 1.000]"),
])
def test_an_interval_at_the_decimals_of_its_larger_end(low, high, text):
    assert interval_text(low, high) == text


def test_an_interval_to_other_significant_figures():
    assert interval_text(0.5, 2.0, 2) == "[0.5, 2.0]"


@pytest.mark.parametrize("x, digits, text", [
    (0.794, 1, "+79.4%"), (-0.03, 1, "-3.0%"), (0.0, 1, "+0.0%"), (-0.00001, 1, "+0.0%"), (-0.00001, 3, "-0.001%"),
    (0.12345, 2, "+12.35%"), (None, 1, "—"), (math.nan, 1, "—"),
])
def test_a_relative_deviation_as_a_signed_percentage(x, digits, text):
    assert deviation_text(x, digits) == text


def test_a_relative_deviation_has_one_decimal_by_default():
    assert deviation_text(0.5) == "+50.0%"


def test_an_interval_with_a_non_finite_end_takes_the_significant_figures_asked_for():
    assert interval_text(math.nan, 1.0, 2) == "[—, 1.0]" and interval_text(1.0, math.inf, 2) == "[1.0, inf]"


def test_an_interval_whose_larger_end_is_exactly_the_zero_tolerance_is_written_in_scientific_notation():
    assert interval_text(1e-12, 1e-12) == "[1.000e-12, 1.000e-12]"


@pytest.mark.parametrize("value, text", [(61_440.0, "61,440"), (61_439.6, "61,439.6"), (61_439.96, "61,440"),
                                         (1234.56, "1,234.6"), (0.04, "0"), (7, "7")])
def test_a_mean_of_counts_is_a_whole_number_without_decimals_or_one_decimal(value, text):
    from oscc_core.reporting.numbers import mean_count_text
    assert mean_count_text(value) == text


@pytest.mark.parametrize("x, finite", [
    (1, True), (-2.5, True), (0.0, True), (True, False), (False, False), (math.inf, False), (math.nan, False),
    ("1", False), (None, False), ([1.0], False),
])
def test_a_finite_number_is_a_finite_real_and_never_a_bool(x, finite):
    assert is_finite_number(x) is finite


@pytest.mark.parametrize("x, text", [
    (61_440, "61,440"), (10 ** 12, "1,000,000,000,000"), (1 / 3, "0.3333"), (0.02925, "0.02925"), ([48.55, 49.36], "[48.55, 49.36]"), ((0.5, 2.0), "[0.500, 2.000]"),
    ([1.0, None], "[1.0, None]"), ([1.0, 2.0, 3.0], "[1.0, 2.0, 3.0]"), ("n/a", "n/a"), (None, "None"),
    (True, "True"), (math.inf, "inf"),
])
def test_a_ledger_value_as_text_counts_comma_grouped_floats_significant_pairs_as_intervals(x, text):
    assert value_text(x) == text


@pytest.mark.parametrize("record, interval", [
    ({"95% interval": [1.0, 2.0]}, (1.0, 2.0)), ({"interval": (0.5, 0.7)}, (0.5, 0.7)),
    ({"95% interval": [1.0, 2.0], "interval": [3.0, 4.0]}, (1.0, 2.0)),
    ({"95% interval": None, "interval": [3.0, 4.0]}, None), ({"interval": [1.0, math.nan]}, None),
    ({"interval": [1.0]}, None), ({"interval": [True, 2.0]}, None), ({}, None),
])
def test_a_records_interval_is_its_95_percent_interval_as_two_finite_numbers_or_none(record, interval):
    assert interval_of(record) == interval
