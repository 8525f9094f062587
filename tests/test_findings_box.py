"""A chapter's result box files each statement by the verdict computed for it (`oscc_core.reporting.findings`)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from oscc_core.reporting import claims
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict, sided_verdict

HOLDS, FAILS, OPEN_LINE = "holds", "does not hold", "impossible or open"
#: Where each verdict belongs, written out here by hand.
EXPECTED_LINE = {claims.REPRODUCED: HOLDS, claims.PARTLY: FAILS, claims.NOT_REPRODUCED: FAILS,
                 claims.INCONCLUSIVE: OPEN_LINE, claims.DEPENDS: OPEN_LINE, claims.IMPOSSIBLE: OPEN_LINE,
                 claims.NOT_COMPARED: OPEN_LINE, OPEN: OPEN_LINE}
LANDING = ("one bullet.", "another bullet.")


@given(st.lists(st.sampled_from(sorted(EXPECTED_LINE)), min_size=1, max_size=8))
def test_each_statement_stands_under_the_line_of_its_verdict_and_under_no_other(verdicts):
    statements = [Statement(f"Statement {i} ({v}).", v) for i, v in enumerate(verdicts)]
    box = dict(zip((HOLDS, FAILS, OPEN_LINE), Findings.filed(statements, LANDING).box))
    for s in statements:
        assert [line for line, text in box.items() if s.text in text] == [EXPECTED_LINE[s.verdict]]


def test_a_line_without_statements_says_so():
    box = Findings.filed([Statement("Proposition 3 holds.", claims.REPRODUCED)], LANDING).box
    assert box[0] == "Proposition 3 holds."
    assert box[1] == "None of the paper's statements this chapter checks fails on our numbers."
    assert box[2] == "Nothing here is impossible under the rules, unresolved or left open."


def test_an_ordering_resolved_against_the_paper_at_some_budgets_never_stands_under_holds():
    # the learning study: CP-GRPO resolved better at 1 budget and worse at 2 of 4
    verdict = sided_verdict(for_paper=1, against_paper=2)
    box = Findings.filed([Statement("Independent minus CP-GRPO: below 0 at 10x and 160x.", verdict)], LANDING).box
    assert verdict == claims.NOT_REPRODUCED and "below 0" in box[1] and "below 0" not in box[0]
    assert sided_verdict(2, 0) == claims.REPRODUCED and sided_verdict(0, 0) == claims.INCONCLUSIVE


def test_a_favourable_control_stands_under_holds_not_under_does_not_hold():
    box = Findings.filed([Statement("The Kuhn-tuned control reaches 0.02 chips, below the paper's.",
                                    relation_verdict(True, True))], LANDING).box
    assert "Kuhn-tuned" in box[0] and "Kuhn-tuned" not in box[1]


def test_a_relation_is_reproduced_when_resolved_inconclusive_when_not_and_not_reproduced_when_it_fails():
    assert relation_verdict(True) == claims.REPRODUCED
    assert relation_verdict(True, None) == claims.REPRODUCED           # decided on exact values
    assert relation_verdict(True, False) == claims.INCONCLUSIVE
    assert relation_verdict(False, True) == claims.NOT_REPRODUCED


def test_a_statement_needs_a_known_verdict_and_its_sentence_and_the_record_keeps_where_it_went():
    with pytest.raises(ValueError, match="verdict"):
        Statement("x", "holds")
    with pytest.raises(ValueError, match="sentence"):
        Statement(" ", claims.REPRODUCED)
    record = Findings.filed([Statement("It fails.", claims.NOT_REPRODUCED)], LANDING).record()
    assert record["statements"] == [{"text": "It fails.", "verdict": claims.NOT_REPRODUCED, "line": FAILS}]
