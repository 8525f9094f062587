"""Where the paper's value lies against ours, in words (`oscc_core.reporting.why.size_sentence`): one sentence per
size test, written out here in full from the record's numbers."""
from __future__ import annotations

import pytest

from oscc_core.reporting import claims
from oscc_core.reporting.why import size_sentence

PREDICTION = "containment: the paper's value in our 95% prediction interval of one more seed"
ANY_OF = "containment: the paper's value in the 95% interval of at least one of our estimates"


@pytest.mark.parametrize("record, sentence", [
    ({"test": claims.CONTAINMENT, "paper": 2.0, "ours": 1.5, "95% interval": [1.0, 2.0]},
     "the paper's 2.000 lies inside our 95% interval [1.000, 2.000] (ours 1.500)"),
    ({"test": claims.CONTAINMENT, "paper": 0.5, "ours": 1.5, "interval": [1.0, 2.0]},
     "the paper's 0.5000 lies outside our 95% interval [1.000, 2.000] (ours 1.500)"),
    ({"test": PREDICTION, "paper": 3, "ours": 1.5, "95% interval": [1.0, 2.0]},
     "the paper's 3 lies outside our 95% prediction interval of one more seed [1.000, 2.000] (ours 1.500)"),
    ({"test": ANY_OF, "paper": 1.0, "ours": [1.0, 2.0], "95% interval": [1.0, 2.0]},
     "the paper's 1.000 lies inside our 95% interval of at least one of our estimates [1.000, 2.000] "
     "(ours [1.000, 2.000])"),
    ({"test": claims.WITHIN_TOLERANCE, "paper": 2.0, "ours": 2.0},
     "the paper's 2.000 and our 2.000 are equal, within the 5% of ours the size test allows"),
    ({"test": claims.WITHIN_TOLERANCE, "paper": 1.0, "ours": 0.0},
     "the paper's 1.000 against our 0: 5% of ours is 0, so the size test allows only 0 and the paper's value is "
     "beyond it"),
    ({"test": claims.WITHIN_TOLERANCE, "paper": 0.0, "ours": 0.0},
     "the paper's 0 and our 0 are equal, within the 5% of ours the size test allows"),
    ({"test": claims.WITHIN_TOLERANCE, "paper": 96.0, "ours": 100.0},
     "the paper's 96.00 and our 100.0 are 4% of ours apart, within the 5% of ours the size test allows"),
    ({"test": "equality of counts", "paper": 12, "ours": 12},
     "the paper counts 12, we count 12: equal"),
    ({"test": "equality of counts", "paper": 12, "ours": 12.0},
     "the paper counts 12, we count 12.00: equal"),
    ({"test": "equality of counts", "paper": "a", "ours": "b"}, "the paper counts a, we count b: different"),
    ({"test": "equality of counts", "paper": "a", "ours": "a"}, "the paper counts a, we count a: equal"),
    ({"test": "equality of counts", "paper": 12, "ours": "12.0"}, "the paper counts 12, we count 12.0: different"),
    ({"test": "bound: at most", "paper": 1.0, "ours": 0.5}, "ours 0.5000 against the paper's bound 1.000"),
    ({"test": "every one finite", "paper": [1.0, 2.0], "ours": "none"},
     "our finite values: none, the paper's: [1.000, 2.000]"),
    ({"test": "each end within 5%", "paper": [1.0, 2.0], "ours": [1.0, 2.1]},
     "the paper's ends [1.000, 2.000] against ours [1.000, 2.100], each within 5% or not"),
    ({"test": "something else", "paper": 1.0, "ours": 2.0}, "the paper's 1.000 beside our 2.000"),
    ({"test": None, "paper": 1.0, "ours": "—"}, None),
    ({"test": "something else", "paper": None, "ours": 2.0}, None),
    ({"test": "midpoint of the paper's range", "paper": 1.0, "ours": 2.0}, None),
    ({"paper": 1.0, "ours": 2.0}, "the paper's 1.000 beside our 2.000"),
])
def test_each_size_test_has_its_sentence(record, sentence):
    assert size_sentence(record) == sentence


def test_a_containment_record_without_an_interval_falls_back_to_beside():
    assert size_sentence({"test": claims.CONTAINMENT, "paper": 1.0, "ours": 2.0}) == "the paper's 1.000 beside our 2.000"


def test_the_test_name_is_read_without_regard_to_case():
    assert size_sentence({"test": "Containment: X", "paper": 1.0, "ours": 1.0, "95% interval": [0.5, 2.0]}) == \
        "the paper's 1.000 lies inside our 95% interval [0.500, 2.000] (ours 1.000)"
