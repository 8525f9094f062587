"""The verdict rule's refusals word for word, which size test it names, and a row whose size test is on an interval
alone (`oscc_core.reporting.claims`)."""
from __future__ import annotations

import pytest

from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation


@pytest.mark.parametrize("args, error, message", [
    (("x", 1.0), TypeError, "paper_value must be a number, got 'x'."),
    ((1.0, "e"), TypeError, "estimate must be a number, got 'e'."),
    ((1.0, None, "a", 2.0), TypeError, "low must be a number, got 'a'."),
    ((1.0, None, 1.0, "b"), TypeError, "high must be a number, got 'b'."),
    ((1.0, None, 1.0, None), ValueError, "Give both ends of the 95% interval (low and high) or neither."),
    ((1.0, None, 2.0, 1.0), ValueError, "The interval is reversed: low=2.0 > high=1.0."),
    ((1.0,), ValueError, "Give an estimate or a 95% interval."),
])
def test_the_size_test_refuses_what_it_cannot_judge_in_one_sentence(args, error, message):
    with pytest.raises(error) as caught:
        claims.size_agrees(*args)
    assert str(caught.value) == message


@pytest.mark.parametrize("low, high, test", [(None, None, claims.WITHIN_TOLERANCE), (0.5, 1.0, claims.CONTAINMENT),
                                             (0.5, None, claims.CONTAINMENT), (None, 1.0, claims.CONTAINMENT)])
def test_the_size_test_is_within_5_percent_only_without_either_end(low, high, test):
    assert claims.size_test(low, high) == test


def test_an_interval_without_an_estimate_whose_relation_holds_is_partly_when_the_size_misses():
    assert claims.verdict(10.0, None, 1.0, 2.0, relation=Relation("a < b", True)) == claims.PARTLY
    assert claims.verdict(1.5, None, 1.0, 2.0, relation=Relation("a < b", True)) == claims.REPRODUCED


def test_the_verdict_refuses_a_relation_that_is_not_a_relation_in_one_sentence():
    with pytest.raises(TypeError) as caught:
        claims.verdict(1.0, 1.0, relation="x")
    assert str(caught.value) == "relation must be a Relation(text, holds) or None, got 'x'."
