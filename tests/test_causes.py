"""The registry of causes (`oscc_core.reporting.causes`): every gap names one cause, with its own numbers.

Expected causes and numbers are written here by hand from the paper's printed values (read from the claims file)
and from numbers the tests choose; the ledger's refusal is checked on lines built here.
"""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from oscc_core.chapters.claims_ledger import ledger
from oscc_core.reporting import causes, claims, tally
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.ledger_lines import LedgerError
from oscc_core.reporting.rows import Row

HOLDS = Relation("paired variance < independent variance", True)       # decided on the exact values


def test_the_registry_holds_the_five_causes_the_issue_names_and_our_precision():
    names = [c.name for c in causes.CAUSES]
    assert names == ["the learner", "an open parameter", "another construction or unit", "the paper's own numbers",
                     "our precision", "unexplained"]
    assert all(len(c.sentence.split()) >= 10 for c in causes.CAUSES)      # a sentence, not a label


def test_a_gap_names_the_cause_declared_for_its_claim_with_its_own_numbers():
    r = Row.compare("independent", "main.independent.variance", 48.94, 48.55, 49.36, HOLDS, exact=48.88)
    assert r.verdict == claims.PARTLY and r["cause"] == "unexplained"
    evidence = r["cause evidence"]
    assert evidence.startswith("the paper's 41.12 against our 48.94 [48.55, 49.36], exact 48.88: ")
    assert "not sampling noise" in evidence and "chapter 02's construction tables" in evidence


def test_the_exact_value_rules_out_sampling_noise_only_where_our_interval_holds_it():
    r = Row.compare("independent", "main.independent.variance", 48.94, 48.55, 49.36, HOLDS, exact=50.0)
    assert "not sampling noise" not in r["cause evidence"]


def test_a_line_that_is_no_gap_names_no_cause():
    r = Row.compare("independent", "main.independent.variance", 41.0, 40.0, 42.0, HOLDS, exact=41.1)
    assert r.verdict == claims.REPRODUCED and "cause" not in r and "cause evidence" not in r


def with_reading(row: Row, reading: str) -> Row:
    from dataclasses import replace

    return replace(row, reading=reading)


def test_a_verdict_that_depends_on_the_reading_names_an_open_parameter_and_each_readings_number():
    q = with_reading(Row.compare("x", "strata.private_card_a.independent_variance", 41.30, 41.0, 41.5, HOLDS),
                     "own card Q")
    j = with_reading(Row.compare("x", "strata.private_card_a.independent_variance", 38.66, 38.0, 39.0, HOLDS),
                     "own card J")
    combined = Row.under_readings([q, j])
    assert combined.verdict == claims.DEPENDS and combined["cause"] == "an open parameter"
    assert "41.30 (reproduced) under 'own card Q'" in combined["cause evidence"]
    assert "38.66 (partly) under 'own card J'" in combined["cause evidence"]


def test_a_reading_under_which_the_rules_exclude_the_papers_value_makes_the_cause_the_papers_own_numbers():
    record = {"id": "measured_solver.cp_grpo_paired.player0_value", "verdict": claims.NOT_REPRODUCED,
              "paper": 0.2136, "ours": -0.1, "reading": "held-out roots",
              "readings": [{"reading": "whole game", "verdict": claims.IMPOSSIBLE, "ours": -0.1,
                            "reason": "player-0 value <= v* + NashConv = 0.1512"},
                           {"reading": "held-out roots", "verdict": claims.NOT_REPRODUCED, "ours": -0.1}]}
    name, evidence = causes.attribute(record)
    assert name == "the paper's own numbers"
    assert "impossible under the reading 'whole game'" in evidence and "0.1512" in evidence


def test_an_inconclusive_line_whose_relation_our_intervals_do_not_resolve_names_our_precision():
    r = Row.compare("mean difference", "fig_three_seed.mean_difference", -0.33, -0.75, 0.08,
                    Relation("mean difference < 0", True, False))
    assert r.verdict == claims.INCONCLUSIVE and r["cause"] == "our precision"
    assert "[-0.7500, 0.0800]" in r["cause evidence"] and "“mean difference < 0”" in r["cause evidence"]


def test_a_row_may_name_its_own_cause_with_evidence_its_numbers_alone_do_not_hold():
    r = Row.compare("exploitability", "measured_solver.cp_grpo_paired.exploitability", 1.19, 1.14, 1.25)
    own = r.with_cause(causes.LEARNER, "the converging learner reaches 0.2 chips after 108,000 calls")
    assert (own["cause"], own["cause evidence"]) == ("the learner",
                                                     "the converging learner reaches 0.2 chips after 108,000 calls")
    with pytest.raises(ValueError, match="cause"):
        r.with_cause(causes.Cause("luck", "it happened to come out so, and nothing else can be said"), "x")
    with pytest.raises(ValueError, match="evidence"):
        r.with_cause(causes.LEARNER, " ")


def test_an_own_cause_counts_only_while_the_verdict_is_a_gap():
    r = Row.compare("independent", "main.independent.variance", 41.0, 40.0, 42.0, HOLDS)
    assert "cause" not in r.with_cause(causes.UNEXPLAINED, "whatever")


def test_a_printing_or_a_same_value_line_takes_the_cause_of_the_entry_whose_row_it_takes():
    record = {"id": "abstract.cp_grpo.variance_reduction", "via": "main.caption.variance_reduction",
              "verdict": claims.PARTLY, "paper": 55.87, "ours": 23.35}
    assert causes.attribute(record)[0] == causes.attribution_of("main.caption.variance_reduction").cause.name


def test_an_undeclared_gap_has_no_cause():
    assert causes.attribute({"id": "impl_checks.replay.drift", "verdict": claims.NOT_REPRODUCED, "paper": 0,
                             "ours": 3}) is None


def _gap_line(cid: str, cause: str | None, evidence: str | None = "numbers") -> dict:
    return {"id": cid, "kind": "result", "verdict": claims.NOT_REPRODUCED, "status": None, "reason": None,
            "reading": "a reading", "cause": cause, "cause evidence": evidence, "section": "s", "via": None,
            "printing of": None, "basis": "row"}


def test_the_ledger_refuses_a_gap_line_without_a_cause_or_without_its_evidence():
    with pytest.raises(LedgerError, match="name no cause"):
        ledger.check_ledger([_gap_line("a.b", None)], ["a.b"], entries={"a.b": {}})
    with pytest.raises(LedgerError, match="name no cause"):
        ledger.check_ledger([_gap_line("a.b", "unexplained", " ")], ["a.b"], entries={"a.b": {}})
    with pytest.raises(LedgerError, match="name no cause"):
        ledger.check_ledger([_gap_line("a.b", "bad luck")], ["a.b"], entries={"a.b": {}})
    ledger.check_ledger([_gap_line("a.b", "unexplained")], ["a.b"], entries={"a.b": {}})


@given(st.lists(st.tuples(st.sampled_from(claims.VERDICTS), st.sampled_from([c.name for c in causes.CAUSES]),
                          st.integers(0, 2)), min_size=1, max_size=12))
def test_the_gaps_are_counted_by_cause_each_value_once(values):
    lines, want = [], {c.name: 0 for c in causes.CAUSES}
    for i, (verdict, cause, printings) in enumerate(values):
        gap = verdict in (claims.INCONCLUSIVE, claims.PARTLY, claims.DEPENDS, claims.NOT_REPRODUCED)
        own = {"id": f"v{i}", "kind": "result", "verdict": verdict, "status": None, "via": None,
               "printing of": None, "section": "s", "cause": cause}      # a stale cause on no gap: not counted
        lines.append(own)
        lines += [{**own, "id": f"v{i}p{j}", "via": f"v{i}"} for j in range(printings)]
        want[cause] += gap
    assert tally.tally(lines)["causes"] == want


def test_the_counts_sentence_gives_the_gaps_by_cause_most_first():
    counted = {"causes": {c.name: n for c, n in zip(causes.CAUSES, (3, 0, 0, 1, 0, 7))}}
    assert tally.causes_text(counted) == (" The 11 gaps by cause: 7 unexplained, 3 the learner, "
                                          "1 the paper's own numbers.")
    assert tally.causes_text({"causes": {c.name: 0 for c in causes.CAUSES}}) == ""
