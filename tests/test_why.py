"""Why a comparison got its verdict (`oscc_core.reporting.why`): sentences built from the row's own numbers."""
from __future__ import annotations

import math

from hypothesis import given, strategies as st

from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row, relative_deviation
from oscc_core.reporting.why import why_text


def test_a_containment_verdict_names_the_papers_value_our_interval_and_the_relation():
    r = Row.compare("independent", "main.independent.variance", 48.94, 48.55, 49.36, exact=48.88,
                    relation=Relation("paired variance < independent variance", True, True))
    text = r["why"]
    assert "the paper's 41.12 lies outside our 95% interval [48.55, 49.36] (ours 48.94)" in text
    assert "exact 48.88" in text and "“paired variance < independent variance”, holds (resolved at 95%)" in text


def test_a_tolerance_verdict_says_how_far_apart_and_whether_within_five_percent():
    text = Row.compare("exploitability", "learning_boundary.exact_calibration.leduc_max_exploitability",
                       0.002299)["why"]
    assert "the paper's 0.01518 and our 0.002299 are 560% of ours apart, beyond the 5% of ours" in text


def test_a_relation_decided_on_exact_values_and_one_that_fails_say_so():
    exact = why_text({"test": claims.CONTAINMENT, "paper": 1.0, "ours": 2.0, "95% interval": [1.5, 2.5],
                      "exact": 2.1, "verdict": claims.PARTLY, "relation": "a < b", "relation holds": True,
                      "relation resolved": None})
    assert "“a < b”, holds (decided on the exact values)" in exact
    plain = why_text({"test": claims.WITHIN_TOLERANCE, "paper": 1.0, "ours": 2.0, "verdict": claims.PARTLY,
                      "relation": "a < b", "relation holds": True, "relation resolved": None})
    assert "“a < b”, holds (decided on our values, which carry no interval here)" in plain
    fails = why_text({"verdict": claims.NOT_REPRODUCED, "relation": "a < b", "relation holds": False})
    assert "“a < b”, fails on our numbers" in fails


def test_a_reading_dependent_line_lists_each_readings_verdict():
    text = why_text({"verdict": claims.DEPENDS, "reason": None, "reading": "all roots",
                     "readings": [{"reading": "all roots", "verdict": "partly"},
                                  {"reading": "root ''", "verdict": "reproduced"}]})
    assert "reading: all roots" in text and "depends on the reading (all roots: partly; root '': reproduced)" in text


def test_a_setting_says_its_reason_and_a_printing_names_what_it_prints():
    assert why_text({"status": claims.ADOPTED}) == "our run uses the paper's setting"
    text = why_text({"status": claims.DIFFERS, "reason": "one root", "printing of": "main.x"})
    assert text == "a printing of main.x, whose verdict it shares; one root"


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: abs(x) > 1e-9)


@given(finite, finite, st.one_of(st.none(), st.tuples(finite, finite).map(sorted)))
def test_a_relative_deviation_is_given_only_away_from_zero(paper, ours, interval):
    d = relative_deviation(paper, ours, None if interval is None else tuple(interval))
    straddles = interval is not None and interval[0] <= 0.0 <= interval[1]
    if (paper > 0) != (ours > 0) or straddles:
        assert d is None
    else:
        assert math.isclose(d, ours / paper - 1.0)


def test_no_deviation_beside_a_value_whose_interval_covers_zero():
    # the contract chapter's marginal return shift: the paper's 0.0018 beside ours -0.026 [-0.069, 0.017]
    assert relative_deviation(0.0018, -0.02599609375, (-0.06905842987, 0.01706624237)) is None
    assert relative_deviation(41.1158, 48.94, (48.55, 49.36)) is not None


def test_a_clause_a_reason_repeats_is_said_once():
    text = why_text({"verdict": claims.NOT_COMPARED, "printing of": "a.b",
                     "reason": "a printing of a.b, whose verdict it shares; another design"})
    assert text == "a printing of a.b, whose verdict it shares; another design"
