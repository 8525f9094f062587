"""Properties of the verdict rule and the interval helpers, over generated numbers (hypothesis).

Each property is stated from the rule's definition, not from the code: the size test is "the paper's value
lies in our 95% interval"; a relation that fails or is not resolved never lets a row be reproduced; an
ordering decided on paired per-seed differences reverses when the arms swap.
"""
import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from oscc_core.learning import summary
from oscc_core.method import stats
from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation, verdict

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
relations = st.one_of(st.none(), st.builds(Relation, st.just("r"), st.booleans(),
                                           st.one_of(st.none(), st.booleans())))


@st.composite
def intervals(draw):
    """An estimate inside an interval of positive width (a zero-width interval is an exact value: the 5% test,
    `test_a_zero_width_interval_is_judged_as_an_exact_value_within_5_percent`)."""
    a, b = sorted((draw(finite), draw(finite)))
    assume(a < b)
    estimate = draw(st.floats(min_value=a, max_value=b, allow_nan=False))
    return estimate, a, b


@given(st.floats(min_value=1e-3, max_value=1e6), st.floats(min_value=0.0, max_value=0.2))
def test_a_zero_width_interval_is_judged_as_an_exact_value_within_5_percent(value, off):
    """No seed-to-seed spread (every seed the same number) is an exact value: the paper's value is reproduced when
    it lies within 5% of ours, whatever side."""
    assume(abs(off - 0.05) > 1e-9)       # the 5% boundary itself, to the last bit, is test_rule_boundaries_spec's
    paper = value * (1.0 + off)
    expected = claims.REPRODUCED if abs(paper / value - 1.0) <= 0.05 else claims.NOT_REPRODUCED
    assert verdict(paper, value, value, value) == expected


@given(intervals(), st.floats(min_value=1e-12, max_value=1.0), relations, st.booleans())
def test_a_paper_value_just_outside_the_interval_is_never_reproduced_nor_inconclusive(iv, gap, rel, above):
    estimate, low, high = iv
    paper = high + gap * (1.0 + abs(high)) if above else low - gap * (1.0 + abs(low))
    assume(paper > high if above else paper < low)
    assert verdict(paper, estimate, low, high, relation=rel) in (claims.PARTLY, claims.NOT_REPRODUCED)


@given(intervals(), relations, st.booleans())
def test_the_next_float_past_either_end_is_outside(iv, rel, above):
    estimate, low, high = iv
    paper = math.nextafter(high, math.inf) if above else math.nextafter(low, -math.inf)
    assert verdict(paper, estimate, low, high, relation=rel) not in (claims.REPRODUCED, claims.INCONCLUSIVE)


@given(intervals(), st.data())
def test_a_paper_value_inside_is_reproduced_exactly_when_no_declared_relation_is_unestablished(iv, data):
    estimate, low, high = iv
    paper = data.draw(st.floats(min_value=low, max_value=high, allow_nan=False))
    rel = data.draw(relations)
    expected = claims.REPRODUCED if rel is None or (rel.holds and rel.resolved is not False) else claims.INCONCLUSIVE
    assert verdict(paper, estimate, low, high, relation=rel) == expected


@given(intervals(), st.data())
def test_partly_needs_a_declared_relation_that_holds_and_is_not_contradicted(iv, data):
    estimate, low, high = iv
    rel = data.draw(relations)
    paper = high + 1.0 + abs(high)
    got = verdict(paper, estimate, low, high, relation=rel)
    assert (got == claims.PARTLY) == (rel is not None and rel.holds and rel.resolved is not False)


@given(st.floats(min_value=-100, max_value=-1e-9), st.floats(min_value=1e-9, max_value=100), finite, st.booleans())
def test_an_interval_that_spans_both_signs_never_reproduces_a_signed_claim(low, high, paper_offset, negative):
    estimate = 0.5 * (low + high)
    paper = low + (high - low) * (0.5 + 0.5 * math.tanh(paper_offset))   # somewhere inside [low, high]
    rel = (Relation.side("difference < 0", estimate, low, high, below=0.0) if negative
           else Relation.side("difference > 0", estimate, low, high, above=0.0))
    assert rel.resolved is False
    assert verdict(paper, estimate, low, high, relation=rel) != claims.REPRODUCED


@given(st.floats(min_value=-10, max_value=10), positive, st.data())
def test_a_positive_quantity_whose_interval_reaches_zero_is_never_reproduced(low, width, data):
    assume(low <= 0.0)
    high = low + width
    paper = data.draw(st.floats(min_value=low, max_value=high, allow_nan=False))
    assert verdict(paper, None, low, high, positive=True) != claims.REPRODUCED


@given(st.lists(st.floats(min_value=-50, max_value=50), min_size=2, max_size=40))
def test_prediction_interval_contains_the_interval_of_the_mean_and_is_wider_by_sqrt_n_plus_one(values):
    assume(np.ptp(values) > 1e-6)
    mean_iv, pred = stats.t_interval(values), stats.prediction_interval(values)
    n = len(values)
    assert pred.low <= mean_iv.low <= mean_iv.mean <= mean_iv.high <= pred.high
    assert math.isclose(pred.half_width, mean_iv.half_width * math.sqrt(n + 1), rel_tol=1e-9)


@given(st.lists(st.floats(min_value=0.0, max_value=1e4), min_size=2, max_size=30))
def test_a_log_scale_interval_of_a_variance_never_reaches_zero_and_holds_the_mean(values):
    assume(sum(values) > 0)
    iv = stats.log_t_interval(values)
    assert 0.0 < iv.low <= iv.mean <= iv.high
    assert math.isclose(iv.low * iv.high, iv.mean ** 2, rel_tol=1e-9)   # symmetric on the log scale


def _records(a_values, b_values):
    return {"a": {str(s): {"x": float(v)} for s, v in enumerate(a_values)},
            "b": {str(s): {"x": float(v)} for s, v in enumerate(b_values)}}


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=2, max_size=30), st.sampled_from(["low", "high"]))
def test_swapping_the_arms_reverses_a_resolved_ordering(pairs, better):
    records = _records([p[0] for p in pairs], [p[1] for p in pairs])
    worse = "high" if better == "low" else "low"
    a_better = summary.resolved_order(records, "a", ["b"], "x", better)
    assert a_better == summary.resolved_order(records, "b", ["a"], "x", worse)
    assert not (a_better and summary.resolved_order(records, "b", ["a"], "x", better))


@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=2, max_size=30))
def test_an_ordering_holds_only_when_the_paired_differences_interval_excludes_zero(pairs):
    diffs = np.array([a - b for a, b in pairs])
    assume(np.ptp(diffs) > 1e-9)
    records = _records([p[0] for p in pairs], [p[1] for p in pairs])
    n = len(diffs)
    half = stats.student_t_quantile(0.975, n - 1) * diffs.std(ddof=1) / math.sqrt(n)
    if abs(diffs.mean()) > half * (1 + 1e-9):            # decided, away from the boundary
        assert summary.resolved_order(records, "a", ["b"], "x", "low") == (diffs.mean() < 0)
    elif abs(diffs.mean()) < half * (1 - 1e-9):
        assert not summary.resolved_order(records, "a", ["b"], "x", "low")
        assert not summary.resolved_order(records, "a", ["b"], "x", "high")


missing = st.sampled_from([float("nan")])


@given(st.floats(min_value=-1e3, max_value=1e3, allow_nan=False), relations, st.booleans())
def test_a_missing_estimate_is_never_reproduced_partly_or_inconclusive(paper, rel, with_interval):
    # no number of ours: no size can agree and no relation can stand in for it, whatever relation is declared
    low, high = (float("nan"), float("nan")) if with_interval else (None, None)
    assert verdict(paper, float("nan"), low, high, relation=rel) == claims.NOT_REPRODUCED


def test_a_missing_estimate_with_a_relation_that_holds_is_not_reproduced_not_partly():
    holds = Relation("paired < independent", True, True)
    assert verdict(41.1158, float("nan"), relation=holds) == claims.NOT_REPRODUCED
    assert verdict(41.1158, 48.94, relation=holds) == claims.PARTLY          # the same relation with a number


@given(intervals(), relations)
def test_a_relation_true_by_construction_decides_nothing(iv, rel):
    estimate, low, high = iv
    constructed = Relation("draws grow with n", True, None, by_construction=True)
    for paper in (estimate, high + 1.0 + abs(high)):
        assert verdict(paper, estimate, low, high, relation=constructed) == verdict(paper, estimate, low, high)
