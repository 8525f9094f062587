"""Rules at their boundaries, each against values worked out independently of the code.

- The size test without an interval passes when |paper - ours| <= 5% of |ours|: at exactly 5% it passes, one
  double beyond it fails, and the why sentence says "within" exactly when the verdict rule passes.  The values at
  exactly 5% are integers ours = 20 k and paper = 21 k (or 19 k), whose difference k is exact in binary, and
  the expected answer is decided in exact rational arithmetic (`fractions.Fraction`).
- A number is written plainly when, rounded to 4 significant figures, it lies in [1e-4, 1e9), in scientific
  notation otherwise: so 1e9 itself, and 999,999,999 (1.000e9 once rounded), are scientific.
- A relative deviation is shown only beside an interval that does not reach 0: an interval ending exactly at 0
  reaches it.
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.reporting import claims
from oscc_core.reporting.numbers import interval_text, significant_text
from oscc_core.reporting.rows import relative_deviation
from oscc_core.reporting.why import size_sentence


def _within_exactly(paper: float, ours: float) -> bool:
    """|paper - ours| <= |ours| / 20 in exact rational arithmetic."""
    return abs(Fraction(paper) - Fraction(ours)) <= abs(Fraction(ours)) / 20


def _says_within(paper: float, ours: float) -> bool:
    text = size_sentence({"test": claims.WITHIN_TOLERANCE, "paper": paper, "ours": ours})
    assert ("within the 5%" in text) != ("beyond the 5%" in text), text
    return "within the 5%" in text


# ----- exactly 5% ------------------------------------------------------------------------------------------------
def test_a_paper_value_exactly_5_percent_from_ours_is_reproduced_and_said_to_be_within():
    assert claims.size_agrees(105.0, 100.0) and claims.size_agrees(95.0, 100.0)
    assert claims.verdict(105.0, 100.0) == claims.REPRODUCED
    assert _says_within(105.0, 100.0) and _says_within(95.0, 100.0)
    assert "are 5% of ours apart, within the 5% of ours the size test allows" in size_sentence(
        {"test": claims.WITHIN_TOLERANCE, "paper": 105.0, "ours": 100.0})


def test_a_paper_value_one_double_beyond_5_percent_is_not_reproduced_and_said_to_be_beyond():
    beyond = math.nextafter(105.0, math.inf)
    assert not claims.size_agrees(beyond, 100.0)
    assert claims.verdict(beyond, 100.0) == claims.NOT_REPRODUCED
    assert not _says_within(beyond, 100.0)


exact_5_percent = st.tuples(st.integers(-2**40, 2**40).filter(bool), st.sampled_from([19, 21]),
                            st.sampled_from([-1, 0, 1]))


@given(exact_5_percent)
def test_at_exactly_5_percent_and_one_double_either_side_the_rule_and_the_sentence_give_the_exact_answer(case):
    k, twentieths, step = case
    ours = 20.0 * k
    paper = float(twentieths * k)                                  # exactly 5% of ours away
    for _ in range(abs(step)):                                     # or one double further out (or in)
        away = math.copysign(math.inf, paper - ours)
        paper = math.nextafter(paper, away if step > 0 else -away)
    expected = _within_exactly(paper, ours)
    assert claims.size_agrees(paper, ours) == expected
    assert _says_within(paper, ours) == expected
    assert (claims.verdict(paper, ours) == claims.REPRODUCED) == expected


@given(st.floats(-1e12, 1e12, allow_nan=False), st.floats(-1e12, 1e12, allow_nan=False).filter(bool))
def test_the_why_sentence_says_within_exactly_when_the_verdict_rule_reproduces(paper, ours):
    assert _says_within(paper, ours) == (claims.verdict(paper, ours) == claims.REPRODUCED)


# ----- 1e9 and 1e-4 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x, text", [(1e9, "1.000e+09"), (-1e9, "-1.000e+09"), (999_999_999.0, "1.000e+09"),
                                     (999_949_999.0, "999,949,999"), (123_456_789.0, "123,456,789"),
                                     (1.5e10, "1.500e+10"), (1e-4, "0.0001000"), (9.99949e-5, "9.999e-05"),
                                     (61_440.0, "61,440"), (0.02925, "0.02925")])
def test_numbers_are_plain_from_1e_minus_4_up_to_but_not_including_1e9(x, text):
    assert significant_text(x) == text


@given(st.floats(1e-11, 1e15))
def test_a_number_is_scientific_exactly_when_its_4_figure_rounding_lies_outside_1e_minus_4_to_1e9(x):
    rounded = float(f"{x:.3e}")                    # Python's own rounding to 4 significant figures
    scientific = not (1e-4 <= rounded < 1e9)
    assert ("e" in significant_text(x)) == scientific


def test_an_interval_is_scientific_once_its_larger_end_rounds_to_1e9():
    assert interval_text(5e8, 1e9) == "[5.000e+08, 1.000e+09]"
    assert interval_text(5e8, 999_949_999.0) == "[500,000,000, 999,949,999]"


# ----- an interval that ends exactly at 0 ------------------------------------------------------------------------
@pytest.mark.parametrize("interval", [(0.0, 2.0), (-2.0, 0.0), (-0.0, 2.0), (0.0, 0.0)])
def test_no_relative_deviation_beside_an_interval_that_ends_exactly_at_0(interval):
    sign = 1.0 if interval[1] > 0 else -1.0             # paper and ours of one sign: only the interval decides
    assert relative_deviation(sign * 1.0, sign * 1.5, interval) is None


def test_a_relative_deviation_beside_an_interval_that_stops_one_double_short_of_0():
    assert relative_deviation(2.0, 1.0, (5e-324, 2.0)) == -0.5
    assert relative_deviation(-2.0, -1.0, (-2.0, -5e-324)) == -0.5


@given(st.floats(1e-6, 1e6), st.floats(1e-6, 1e6), st.floats(0.0, 1e6))
def test_an_interval_reaching_0_from_either_side_has_no_deviation(paper, ours, width):
    assert relative_deviation(paper, ours, (0.0, width)) is None
    assert relative_deviation(-paper, -ours, (-width, 0.0)) is None
