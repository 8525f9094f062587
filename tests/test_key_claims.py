"""The landing page's verdict and key-claims table say what the ledger's lines say, worked by hand."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.claims_ledger import key_claims
from oscc_core.reporting import claims


def _line(**fields) -> dict:
    base = {"id": "x", "paper": 41.1158, "ours": 48.94181554, "interval": [48.550627, 49.355375], "exact": None,
            "verdict": "partly", "relation": None, "relation holds": None, "relation resolved": None,
            "reading": None, "readings": None, "reason": None}
    return {**base, **fields}


def test_every_key_claim_is_an_entry_of_the_claims_file():
    entries = claims.load_claims()
    assert all(cid in entries for cid, _ in key_claims.KEY_CLAIMS)
    assert 6 <= len(key_claims.KEY_CLAIMS) <= 8


def test_the_table_stops_on_a_key_claim_missing_from_the_ledger():
    with pytest.raises(ValueError, match="key claims missing from the ledger"):
        key_claims.key_lines([_line(id=key_claims.KEY_CLAIMS[0][0])])


def test_why_says_the_relation_then_the_size_then_the_cause_and_leaves_the_reading_to_its_detail_line():
    line = _line(exact=48.87879181, relation="paired variance < independent variance", reading="all roots",
                 cause="unexplained", **{"relation holds": True, "relation resolved": True})
    assert key_claims.why(line) == ("“paired variance < independent variance” holds; the paper's value lies outside "
                                    "our 95% interval; cause: unexplained")
    assert key_claims.reading_detail(line) == "reading: all roots"


def test_why_says_inside_when_the_paper_value_is_in_our_interval():
    assert key_claims.why(_line(paper=48.6, verdict="reproduced")) == "the paper's value lies inside our 95% interval"


def test_why_flags_a_relation_that_holds_on_the_estimate_but_is_not_resolved():
    line = _line(relation="a < b", **{"relation holds": True, "relation resolved": False})
    assert key_claims.why(line).startswith("“a < b” holds, unresolved at 95%")


def test_why_without_an_interval_gives_the_ratio_or_the_percentage():
    # 1.194 / 0.1184 = 10.08: "10.1 times"; 0.6667 / 0.995 - 1 = -33.0%
    assert key_claims.why(_line(paper=0.1184, ours=1.194, interval=None)) == "ours is 10.1 times the paper's"
    assert key_claims.why(_line(paper=0.995, ours=0.6666666667, interval=None)) == "ours is 33% lower than the paper's"


def test_a_key_claims_why_is_never_cut_and_a_long_reading_stands_cut_in_its_detail_line_whole_in_its_tooltip():
    long_reading = "choices the paper leaves open: " + "a choice, " * 60
    ledger = [_line(id=cid, reading=long_reading, cause="the learner") for cid, _ in key_claims.KEY_CLAIMS]
    table = key_claims.key_claims_html(ledger)
    assert table.count("cause: the learner<div") == len(ledger)                   # the why itself, whole
    assert table.count(f'title="reading: {long_reading}">reading: choices the paper leaves open: a choice,') == \
        len(ledger)
    detail = table.split('<div class="oscc-why-detail"')[1].split("</div>")[0]
    assert detail.endswith(" …") and len(detail.split(">", 1)[1]) <= key_claims.DETAIL_CHARACTERS + 2


def test_an_impossible_key_claim_counts_the_readings_under_which_the_rules_exclude_it():
    line = _line(verdict=claims.IMPOSSIBLE, readings=[{}, {}, {}])
    assert "under all 3 readings" in key_claims.why(line)


def test_the_counts_sentence_compares_all_but_the_not_compared_and_counts_reading_dependent_verdicts():
    counted = {"measurements": {claims.REPRODUCED: 3, claims.INCONCLUSIVE: 1, claims.PARTLY: 4, claims.DEPENDS: 2,
                                claims.NOT_REPRODUCED: 5, claims.IMPOSSIBLE: 2, claims.NOT_COMPARED: 6},
               "reading dependent": 7}
    text = key_claims.counts_sentence(counted)
    assert text.startswith("Of the 23 values the paper measures we compare 17 in size: 3 are reproduced, 4 hold")
    assert "5 are not reproduced, 1 are inconclusive, 2 depend on the reading of the paper's words and 2 are " \
           "impossible" in text
    assert text.endswith("7 verdicts of the whole ledger depend on the reading.")


def _bottom_ledger(red_ours=23.35, red_interval=(22.6, 24.1), resolved=True, learn_verdict="not reproduced",
                   guarantees="reproduced") -> list[dict]:
    red = _line(id=key_claims.REDUCTION, paper=55.87, ours=red_ours, interval=list(red_interval), verdict="partly",
                relation="variance reduction > 0", cause="unexplained",
                **{"relation holds": red_ours > 0, "relation resolved": resolved})
    learn = _line(id=key_claims.LEARNING, paper=0.1184, ours=1.194, verdict=learn_verdict, cause="the learner")
    rest = [_line(id=cid, verdict=guarantees) for cid, _ in key_claims.GUARANTEES]
    return [red, learn, *rest]


def test_the_bottom_line_says_what_holds_what_does_not_and_why_in_one_sentence():
    text = key_claims.bottom_line(_bottom_ledger())
    assert text == ("Coupling lowers the variance of an action contrast, the audit rejects every deliberate violation, "
                    "no information state exposes the opponent's card, the selector's false selection stays within "
                    "Theorem 1's bound and no checkpoint leaks a hidden card, as the paper says; its sizes do not "
                    "hold: the reduction is 23.35% against its 55.87% (unexplained: no experiment of ours accounts "
                    "for it) and CP-GRPO's Leduc exploitability is 1.194 chips against its 0.1184 (the learner: the "
                    "learner the paper describes stalls far from equilibrium at its budget).")


def test_the_bottom_line_names_only_what_our_numbers_reproduce_as_holding():
    text = key_claims.bottom_line(_bottom_ledger(resolved=False, guarantees="not reproduced"))
    assert text.startswith("None of the paper's guarantees holds on our numbers; its sizes do not hold")
    assert "lowers" not in text


def test_the_opening_puts_the_bottom_line_first_and_then_the_counts_with_the_gaps_by_cause():
    counted = {"measurements": {v: 1 for v in claims.VERDICTS}, "reading dependent": 0,
               "causes": {"the learner": 2, "unexplained": 3}}
    text = key_claims.verdict_text(counted, _bottom_ledger())
    assert text.startswith("Coupling lowers") and text.index("Of the 7 values") > text.index("as the paper says")
    assert text.endswith("The 5 gaps by cause: 3 unexplained, 2 the learner.")


def test_the_table_prints_the_paper_value_as_printed_and_ours_to_four_figures():
    ledger = [_line(id=cid, verdict="partly") for cid, _ in key_claims.KEY_CLAIMS]
    table = key_claims.key_claims_html(ledger)
    assert table.count("<tr>") == len(key_claims.KEY_CLAIMS) + 1
    assert "<td>41.1158</td><td>48.94 [48.55, 49.36]</td><td>partly</td>" in table


@given(st.floats(0.01, 100.0), st.floats(0.01, 100.0))
def test_the_deviation_phrase_says_within_five_percent_exactly_when_the_size_test_passes(paper, ours):
    phrase = key_claims.deviation_phrase(paper, ours)
    assert ("within 5% of ours" in phrase) == claims.size_agrees(paper, ours)


def test_a_key_claim_of_a_chapter_not_run_shows_a_dash_and_says_so():
    ledger = [_line(id=cid, verdict=None, ours=None, interval=None) for cid, _ in key_claims.KEY_CLAIMS]
    table = key_claims.key_claims_html(ledger)
    assert table.count(">its chapter has not been run<") == len(key_claims.KEY_CLAIMS)   # the cell, not its tooltip


def test_the_bottom_line_names_the_chapter_not_run_instead_of_a_number():
    ledger = [_line(id=cid, verdict=None, ours=None, interval=None) for cid, _ in key_claims.KEY_CLAIMS]
    assert key_claims.bottom_line(ledger).startswith("The covariance chapter has not been run")


def test_within_five_percent_is_five_percent_of_our_value_not_the_papers():
    # |1.0 - 1.052| = 0.052 <= 0.05 * 1.052 = 0.0526 (ours), but > 0.05 * 1.0 (the paper's)
    assert key_claims.deviation_phrase(1.0, 1.052) == "the paper's within 5% of ours"
    # |1.052 - 1.0| = 0.052 > 0.05 * 1.0 (ours): outside, 4.9% lower
    assert key_claims.deviation_phrase(1.052, 1.0) == "5% lower than the paper's"


@pytest.mark.parametrize("ours, phrase", [(2.0, "2.00 times the paper's"), (1.999, "100% higher than the paper's"),
                                          (0.5, "0.500 times the paper's"), (0.5001, "50% lower than the paper's")])
def test_times_replaces_a_percentage_from_a_factor_of_two_either_way(ours, phrase):
    assert key_claims.deviation_phrase(1.0, ours) == phrase


def test_lowers_is_said_only_where_the_reduction_holds_and_our_intervals_resolve_it():
    assert key_claims.bottom_line(_bottom_ledger(23.35, (22.6, 24.1), True)).startswith("Coupling lowers")
    # a positive estimate whose interval reaches below zero does not resolve the reduction
    assert "lowers" not in key_claims.bottom_line(_bottom_ledger(3.0, (-0.5, 6.5), False))
    assert "lowers" not in key_claims.bottom_line(_bottom_ledger(-1.0, (-2.0, 0.5), False))


def test_the_guarantees_follow_the_headline_claims_and_name_entries_of_the_claims_file():
    entries = claims.load_claims()
    assert all(cid in entries for cid, _ in key_claims.GUARANTEES)
    ledger = [_line(id=cid, verdict="reproduced", paper=0, ours=0, interval=None)
              for cid, _ in key_claims.KEY_CLAIMS + key_claims.GUARANTEES]
    found = {"03_gradient_noise": {"tables": {"proposition_3": [{"verdict": "reproduced"}] * 6}}}
    table = key_claims.key_claims_html(ledger, found)
    assert table.index("The guarantees the paper states") > table.index(key_claims.KEY_CLAIMS[-1][1])
    assert "6 of 6 checks hold" in table and table.count("<tr>") == 1 + len(ledger) + 1


def test_proposition_3_fails_its_key_row_when_one_identity_check_fails():
    found = {"03_gradient_noise": {"tables": {"proposition_3": [{"verdict": "reproduced"}, {"verdict": "not reproduced"}]}}}
    assert key_claims.proposition3_line(found)["verdict"] == claims.NOT_REPRODUCED
    assert key_claims.proposition3_line({}) is None


def test_a_count_printed_as_text_or_a_zero_reads_equal_or_not():
    assert key_claims.size_phrase(_line(paper="512/512", ours="512/512", interval=None)) == "ours equals the paper's"
    assert key_claims.size_phrase(_line(paper="512/512", ours="439/512", interval=None)) == "ours is 439/512"
    assert key_claims.size_phrase(_line(paper=0, ours=0, interval=None)) == "ours equals the paper's"


def test_a_key_claim_whose_size_is_not_compared_names_its_family_and_the_orderings_verdict():
    line = _line(id="abstract.oscc_select.gradient_noise_trace", verdict="not compared", interval=None,
                 relation="OSCC-Select < independent", **{"not comparable": "x", "relation holds": False})
    assert key_claims.why(line) == ("gradient-noise traces: size not compared (the paper leaves its scale undefined); "
                                    "“OSCC-Select < independent” fails")


def test_a_reading_dependent_key_claim_counts_the_other_readings_verdicts():
    readings = [{"reading": "pooled", "verdict": "partly"}] + [{"reading": f"r{k}", "verdict": v} for k, v in
                                                                 enumerate(["reproduced", "impossible under the rules",
                                                                            "impossible under the rules"])]
    line = _line(reading="pooled", readings=readings, **{"reading dependent": True})
    assert key_claims.readings_phrase(line) == ("under the reading 'pooled'; other readings: 1 reproduced, "
                                                "2 impossible under the rules")
