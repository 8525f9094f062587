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


# --- the one template, as properties over generated lines ----------------------------------------------------------
#: Values whose four-significant-figure text is written here by hand (the book's number format).
SHOWN = {0.5: "0.5000", 1.25: "1.250", 48.94: "48.94", 2.0: "2.000", -0.125: "-0.1250", 41.12: "41.12"}
GAPS = (claims.INCONCLUSIVE, claims.PARTLY, claims.DEPENDS, claims.NOT_REPRODUCED)
TESTS = (claims.CONTAINMENT, claims.WITHIN_TOLERANCE, None)


@st.composite
def lines(draw):
    """A ledger line as the ledger writes it: a verdict, the paper's value and ours (from `SHOWN`), perhaps an
    interval holding ours, an exact value, a relation, readings (flagged as reading dependent only when the
    verdict is, or when the paper's text fixes one reading and another gives another verdict), a cause on a gap,
    a printing pointer and a reading."""
    verdict = draw(st.sampled_from(claims.VERDICTS))
    paper, ours = draw(st.sampled_from(sorted(SHOWN))), draw(st.sampled_from(sorted(SHOWN)))
    low = draw(st.sampled_from([v for v in SHOWN if v <= ours]))
    high = draw(st.sampled_from([v for v in SHOWN if v >= ours]))
    interval = draw(st.sampled_from([None, [low, high]]))
    test = claims.CONTAINMENT if interval else draw(st.sampled_from(TESTS[1:]))
    record = {"verdict": verdict, "paper": paper, "ours": ours, "interval": interval, "test": test,
              "exact": draw(st.sampled_from([None, ours])), "reason": None,
              "reading": draw(st.sampled_from([None, "all roots", "η = 1"]))}
    if draw(st.booleans()):
        record.update({"relation": "paired < independent", "relation holds": draw(st.booleans()),
                       "relation resolved": draw(st.sampled_from([None, True, False])),
                       "relation by construction": draw(st.booleans())})
    if draw(st.booleans()):
        record["readings"] = [{"reading": f"r{i}", "verdict": draw(st.sampled_from(claims.COMPARED)), "ours": ours}
                              for i in range(draw(st.integers(1, 3)))]
        record["reading dependent"] = verdict == claims.DEPENDS or draw(st.booleans())
    if verdict in GAPS:
        record.update({"cause": "unexplained", "cause evidence": "no experiment of ours accounts for it"})
    if draw(st.booleans()):
        record["printing of"] = "main.x"
    if verdict in (claims.NOT_COMPARED, claims.IMPOSSIBLE):
        record["reason"] = "another design"
    return record


@given(lines())
def test_a_why_names_its_own_numbers_its_reading_and_the_cause_of_its_gap(record):
    text = why_text(record)
    assert f"the paper's {SHOWN[record['paper']]}" in text and SHOWN[record["ours"]] in text
    if record["reading"]:
        assert text.endswith(f"reading: {record['reading']}")
    if record["verdict"] in GAPS:
        assert "cause, unexplained: no experiment of ours accounts for it" in text
    else:
        assert "cause," not in text


@given(lines())
def test_a_why_never_reads_as_the_templates_old_defects(record):
    text = why_text(record)
    assert "are ours is" not in text and "no interval enters" not in text
    says_depends = "verdict depends on the reading" in text or "; depends on the reading" in text
    assert not says_depends or record["verdict"] == claims.DEPENDS or record.get("reading dependent")
    pointer = "a printing of main.x, whose verdict it shares"
    assert text.replace(pointer, "").strip("; ")           # never only the pointer to another entry


def test_a_zero_of_ours_gets_no_relative_distance():
    text = why_text({"verdict": claims.PARTLY, "test": claims.WITHIN_TOLERANCE, "paper": 0.00032, "ours": 0.0})
    assert text == ("the paper's 0.0003200 against our 0: 5% of ours is 0, so the size test allows only 0 and the "
                    "paper's value is beyond it")


def test_a_size_not_compared_still_shows_both_numbers_beside_the_reason():
    text = why_text({"verdict": claims.NOT_COMPARED, "paper": 0.0783, "ours": 0.8773, "reason": "another scale",
                     "relation": "OSCC-Select < RV-Select", "relation holds": True, "relation resolved": None,
                     "exact": 0.8786, "relation verdict": claims.REPRODUCED})
    assert text == ("another scale; the paper's 0.07830 beside our 0.8773; exact 0.8786; the relation the paper "
                    "states, “OSCC-Select < RV-Select”, holds (decided on the exact values) (ordering verdict: "
                    "reproduced)")


def test_a_causes_evidence_leaves_out_the_numbers_the_why_has_just_given():
    record = {"verdict": claims.PARTLY, "test": claims.CONTAINMENT, "paper": 41.12, "ours": 48.94,
              "interval": [48.55, 49.36], "exact": 48.88, "cause": "unexplained",
              "cause evidence": "the paper's 41.12 against our 48.94 [48.55, 49.36], exact 48.88: no construction fits"}
    assert why_text(record) == ("the paper's 41.12 lies outside our 95% interval [48.55, 49.36] (ours 48.94); exact "
                                "48.88; cause, unexplained: no construction fits")
