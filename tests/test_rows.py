"""The row type's verdict rule (DESIGN.md section 10), against hand-worked values.

Paper values come from book/paper_claims.yaml: main.cp_grpo_paired.variance = 18.1441,
main.independent.variance = 41.1158, seat_swap.branch_swap.variance_residual = 1e-12 (printed "< 1e-12"),
method_obs.observation_audit.opponent_card_exposures = 0.
"""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims, rows, tables
from oscc_core.reporting.rows import Relation, Row

FULL = "main.cp_grpo_paired.variance"      # 18.1441
IND = "main.independent.variance"          # 41.1158


def test_variance_missing_its_interval_without_relation_is_not_reproduced():
    r = Row.compare("full: contrast variance", FULL, 32.55, 32.27, 32.84)
    assert r.verdict == "not reproduced"
    assert r.relation is None and r["relation"] is None


def test_partly_only_with_a_declared_relation_that_holds():
    holds = Row.compare("full: contrast variance", FULL, 32.55, 32.27, 32.84,
                        relation=Relation("full < independent", 32.55 < 39.64))
    assert holds.verdict == "partly"
    assert holds["relation"] == "full < independent"
    fails = Row.compare("full: contrast variance", FULL, 45.0, 44.0, 46.0,
                        relation=Relation("full < independent", 45.0 < 39.64))
    assert fails.verdict == "not reproduced"
    assert fails["relation"] == "full < independent"   # declared, shown, but it does not hold


def test_inconclusive_not_reproduced_when_paper_value_in_interval_but_the_relation_fails():
    r = Row.compare("independent: contrast variance", IND, 40.9, 40.6, 41.2,
                    relation=Relation("full < independent", False))
    assert r.verdict == "inconclusive"
    held = Row.compare("independent: contrast variance", IND, 40.9, 40.6, 41.2,
                       relation=Relation("full < independent", True, resolved=True))
    assert held.verdict == "reproduced" and held["relation resolved"] is True


def test_exact_value_within_five_percent_reproduces():
    # 18.9 / 18.1441 - 1 = +4.17% (inside 5%); 19.1 / 18.1441 - 1 = +5.27% (outside).
    assert Row.compare("full", FULL, 18.9).verdict == "reproduced"
    assert Row.compare("full", FULL, 19.1).verdict == "not reproduced"


def test_a_row_cannot_be_made_partly_without_a_holding_relation():
    with pytest.raises(ValueError):
        Row("q", 1.0, 2.0, claims.PARTLY)
    with pytest.raises(ValueError):
        Row("q", 1.0, 2.0, claims.PARTLY, relation="full < independent", relation_holds=False)
    assert Row("q", 1.0, 2.0, claims.PARTLY, relation="full < independent", relation_holds=True).verdict == "partly"


def test_a_bare_boolean_is_not_a_relation():
    est = Estimate(32.55, 32.27, 32.84, 32.4, 0.15)
    with pytest.raises(TypeError):
        Row.estimate("full", FULL, est, True)


def test_relative_deviation_on_numbers():
    r = Row.compare("full: contrast variance", FULL, 32.55, 32.27, 32.84)
    # 32.55 / 18.1441 = 1.79397..., so +79.4%
    assert r.relative_deviation == pytest.approx(32.55 / 18.1441 - 1)
    assert r.relative_deviation == pytest.approx(0.79397, abs=1e-5)
    assert r["relative deviation"] == r.relative_deviation
    assert tables.deviation_text(r.relative_deviation) == "+79.4%"
    # 39.64 / 41.1158 - 1 = -0.035894, so -3.6%
    below = Row.compare("independent", IND, 39.64, 39.29, 39.98)
    assert tables.deviation_text(below.relative_deviation) == "-3.6%"


def test_relative_deviation_is_none_without_two_numbers_or_with_a_zero_paper_value():
    assert Row.below("branch swap residual", "seat_swap.branch_swap.variance_residual", 0.0).relative_deviation is None
    assert Row.count("exposures", "method_obs.observation_audit.opponent_card_exposures", 0).relative_deviation is None
    assert Row.no_paper("q", 3.0).relative_deviation is None
    assert rows.relative_deviation(2.0, True) is None
    assert rows.relative_deviation(2.0, float("nan")) is None
    assert rows.relative_deviation(4, 5) == pytest.approx(0.25)
    assert tables.deviation_text(None) == "—"
    assert tables.deviation_text(-1e-9) == "+0.0%"


def test_impossible_names_the_bound_and_the_reading_in_its_record():
    r = Row.impossible("full: contrast variance", FULL, 32.55, "Var(R1 - R2) <= 10 chips^2 (made-up bound)",
                       "a per-group variance at the fixed root")
    assert r.verdict == claims.IMPOSSIBLE == "impossible under the rules"
    assert "Var(R1 - R2) <= 10 chips^2" in r.reason and "18.1441" in r.reason
    assert r["reason"] == r.reason and r["reading"] == "a per-group variance at the fixed root"
    assert r.relative_deviation == pytest.approx(32.55 / 18.1441 - 1)
    with pytest.raises(ValueError):
        Row.impossible("q", FULL, 1.0, " ", "a reading")
    with pytest.raises(ValueError):
        Row.impossible("q", FULL, 1.0, "a bound", " ")


def _reading(row: Row, reading: str) -> Row:
    from dataclasses import replace

    return replace(row, reading=reading)


def test_impossible_under_every_reading_stays_impossible_and_names_them_all():
    a = Row.impossible("v", FULL, 1.0, "bound A", "whole game")
    b = Row.impossible("v", FULL, 2.0, "bound B", "per pair")
    r = Row.under_readings([a, b])
    assert r.verdict == claims.IMPOSSIBLE
    assert "whole game" in r.reading and "per pair" in r.reading
    assert [x["verdict"] for x in r.readings] == [claims.IMPOSSIBLE] * 2


def test_readings_that_disagree_make_the_verdict_depend_on_the_reading_and_list_each():
    a = Row.impossible("v", FULL, 32.55, "bound A", "whole game")
    b = _reading(Row.compare("v", FULL, 30.0, 29.0, 31.0), "held-out roots")     # 18.1441 outside: not reproduced
    c = _reading(Row.compare("v", FULL, 18.0, 17.0, 19.0), "against uniform")    # inside: reproduced
    r = Row.under_readings([a, b, c])
    assert r.verdict == claims.DEPENDS and r.reading_dependent and r["reading dependent"] is True
    assert "impossible under the rules under the reading 'whole game'" in r.reason and "'held-out roots'" in r.reason
    assert {x["reading"]: x["verdict"] for x in r.readings} == {
        "whole game": claims.IMPOSSIBLE, "held-out roots": claims.NOT_REPRODUCED,
        "against uniform": claims.REPRODUCED}
    assert "depends on the reading" in r["why"]


def test_readings_that_disagree_give_the_verdict_of_the_reading_the_papers_text_fixes():
    b = _reading(Row.compare("v", FULL, 30.0, 29.0, 31.0), "held-out roots")
    c = _reading(Row.compare("v", FULL, 18.0, 17.0, 19.0), "against uniform")
    r = Row.under_readings([b, c], paper_reading="against uniform")
    assert (r.verdict, r.reading, r.reading_dependent) == (claims.REPRODUCED, "against uniform", True)
    assert Row.under_readings([b, c], paper_reading="held-out roots").verdict == claims.NOT_REPRODUCED
    with pytest.raises(ValueError, match="paper_reading"):
        Row.under_readings([b, c], paper_reading="a reading no row names")


def test_readings_that_agree_give_their_verdict_and_are_not_reading_dependent():
    b = _reading(Row.compare("v", FULL, 30.0, 29.0, 31.0), "held-out roots")
    d = _reading(Row.compare("v", FULL, 40.0, 39.0, 41.0), "all roots")
    r = Row.under_readings([b, d])
    assert (r.verdict, r.reading_dependent, r.ours) == (claims.NOT_REPRODUCED, False, 30.0)
    assert "reading dependent" not in r


def test_a_reading_that_only_shows_the_number_is_allowed_does_not_give_the_verdict():
    a = Row.impossible("v", FULL, 32.55, "bound A", "whole game")
    pair = _reading(Row.not_compared("v", FULL, "the paper names no pair"), "one rank pair")
    b = _reading(Row.compare("v", FULL, 30.0, 29.0, 31.0), "held-out roots")
    assert Row.under_readings([a, pair, b]).verdict == claims.DEPENDS          # impossible against not reproduced
    assert Row.under_readings([pair, b]).verdict == claims.NOT_REPRODUCED     # the pair reading compares nothing
    assert Row.under_readings([a, pair]).verdict == claims.NOT_COMPARED


def test_readings_must_each_be_named_and_compare_one_claim():
    with pytest.raises(ValueError):
        Row.under_readings([Row.compare("v", FULL, 30.0)])
    with pytest.raises(ValueError):
        Row.under_readings([_reading(Row.compare("v", FULL, 30.0), "a"), _reading(Row.compare("v", IND, 30.0), "b")])


def test_a_setting_is_adopted_when_ours_is_the_papers_and_differs_with_a_reason_otherwise():
    cid = "setup.tabular_screen.iterations"          # the paper's 40
    adopted = Row.setting("iterations T", cid, 40)
    assert adopted.verdict == claims.ADOPTED and adopted["status"] == "adopted" and "verdict" not in adopted
    differs = Row.setting("iterations T", cid, 41, reason="we run one more")
    assert differs["status"] == claims.DIFFERS and differs["reason"] == "we run one more"
    with pytest.raises(ValueError):
        Row.setting("iterations T", cid, 41)
    assert Row.setting("seeds", "setup.tabular_screen.seeds", "13, 17, 23").verdict == claims.ADOPTED


def test_a_sensitivity_row_names_its_claim_under_another_key():
    r = Row.compare("full (CFR+ continuation)", FULL, 17.17, 17.0, 17.3).as_sensitivity()
    assert "claim id" not in r and r["sensitivity of"] == FULL and r.verdict == "not reproduced"


def test_one_seed_value_is_compared_with_the_prediction_interval_over_our_seeds():
    import math

    # three seeds 1, 2, 3: mean 2, sd 1, t_{0.975, 2} = 4.302653; half width 4.302653 * sqrt(1 + 1/3)
    half = 4.302652729911275 * math.sqrt(4.0 / 3.0)
    cid = "text_bounded.three_seed.paired.final_exploitability_seed17"   # the paper's 2.1867
    r = Row.one_seed("paired, seed 17", cid, 2.0, [1.0, 2.0, 3.0])
    assert r.interval == pytest.approx((2.0 - half, 2.0 + half))
    assert r.verdict == claims.REPRODUCED
    narrow = Row.one_seed("paired, seed 17", cid, 2.16337, [2.16, 2.161, 2.162])
    assert narrow.verdict == claims.NOT_REPRODUCED    # within 5% of our seed 17, far outside the spread of seeds


def test_not_compared_carries_its_reason():
    r = Row.not_compared("independent: wall time", "cost_frontier.independent.wall_time",
                         "wall time depends on the machine")
    assert r.verdict == claims.NOT_COMPARED == rows.NOT_COMPARED == "not compared"
    assert r["reason"] == "wall time depends on the machine"
    with pytest.raises(ValueError):
        Row.not_compared("q", "cost_frontier.independent.wall_time", "")
    with pytest.raises(ValueError):
        Row("q", 1.0, 2.0, claims.IMPOSSIBLE)


def test_any_of_and_quantile_pair_need_a_relation_to_be_partly():
    ests = [Estimate(32.0, 31.5, 32.5, 32.1, 0.2), Estimate(33.0, 32.5, 33.5, 33.1, 0.2)]
    cid = "strata.private_card_a.paired_variance"   # 19.0247: outside both intervals
    assert Row.any_of("q", cid, ests).verdict == "not reproduced"
    assert Row.any_of("q", cid, ests, Relation("paired < independent (each class)", True)).verdict == "partly"
    qcid = "clipping.behavior_lag_grid.ratio_quantiles"   # [0.8421, 1.1764]
    assert Row.quantile_pair("q", qcid, 0.7751, 1.2249).verdict == "not reproduced"
    assert Row.quantile_pair("q", qcid, 0.85, 1.17).verdict == "reproduced"


def test_declared_relation_round_trips():
    r = Row.compare("q", FULL, 32.55, relation=Relation("full < independent", True))
    assert r.declared_relation == Relation("full < independent", True)
    assert Row.compare("q", FULL, 32.55).declared_relation is None


def test_comparison_frame_columns_and_deviation_text():
    rs = [Row.compare("full", FULL, 32.55, 32.27, 32.84, relation=Relation("full < independent", True)),
          Row.not_compared("wall", "cost_frontier.independent.wall_time", "machine-dependent")]
    frame = tables.comparison_frame(rs)
    assert list(frame.columns) == ["quantity", "paper", "ours", "95% interval", "exact", "relative deviation",
                                   "relation", "verdict", "reason", "claim id"]
    assert "relation resolved" not in frame.columns and "relation holds" not in frame.columns
    assert list(frame["relative deviation"]) == ["+79.4%", "—"]
    assert list(frame["relation"]) == ["full < independent (holds)", "—"]    # what became of it beside it
    # a plain dict row without the new keys gets them from paper and ours
    plain = tables.comparison_frame([{"quantity": "q", "paper": 2.0, "ours": 3.0, "verdict": "not reproduced"}])
    assert plain.loc[0, "relative deviation"] == "+50.0%"


def test_verdict_summary_counts_the_new_verdicts():
    rs = [Row.compare("full", FULL, 32.55, 32.27, 32.84),
          Row.not_compared("wall", "cost_frontier.independent.wall_time", "machine-dependent"),
          Row.impossible("full", FULL, 32.55, "a bound", "a reading")]
    frame = tables.verdict_summary({"t": rs})
    assert list(frame.columns) == list(claims.VERDICTS) + [rows.NO_PAPER]
    with_settings = tables.verdict_summary({"t": rs + [Row.setting("T", "setup.tabular_screen.iterations", 40)]})
    assert with_settings.loc["t", "adopted"] == 1
    assert frame.loc["t", "not reproduced"] == 1
    assert frame.loc["t", "not compared"] == 1
    assert frame.loc["t", "impossible under the rules"] == 1
    assert frame.loc["total"].sum() == 3


def test_long_relations_and_reasons_become_shared_notes_under_the_table():
    long_reason = "wall time depends on the machine; benchmarks measure speed as ratios"
    rs = [Row.compare("a", FULL, 32.55, 32.27, 32.84, relation=Relation("paired variance < independent variance",
                                                                          True, True)),
          Row.compare("b", FULL, 32.55, 32.27, 32.84, relation=Relation("full < ind", True, True)),
          Row.not_compared("c", "cost_frontier.independent.wall_time", long_reason),
          Row.not_compared("d", "cost_frontier.root_only.wall_time", long_reason)]
    frame = tables.comparison_frame(rs).set_index("quantity")
    assert list(frame["relation"]) == ["r1", "full < ind (holds)", "—", "—"]   # a short relation stays in its cell
    assert list(frame["reason"]) == ["—", "—", "n1", "n1"]                  # one note for the same text
    assert frame.notes == [("r1", "relation", "paired variance < independent variance (holds)"),
                           ("n1", "reason", long_reason)]
    assert "n1 (reason): " + long_reason in repr(frame)
    assert "oscc-table-notes" in frame._repr_html_()


def test_an_interval_pair_agrees_when_the_midpoints_differ_by_less_than_the_combined_half_width():
    cid = "main_uncertainty.variance_ratio.interval"                  # the paper's [0.427, 0.456]: half-width 0.0145
    near = Row.interval_pair("ratio interval", cid, 0.44, 0.46)       # midpoints 0.4415 vs 0.45: 0.0085 apart
    assert near.verdict == claims.REPRODUCED and "overlap" in near.reason
    far = Row.interval_pair("ratio interval", cid, 0.78, 0.83)
    assert far.verdict == claims.NOT_REPRODUCED and "do not overlap" in far.reason
    # half-widths 0.0145 and 0.01: combined 0.0176; midpoints 0.4415 and 0.465 are 0.0235 apart though they overlap
    assert Row.interval_pair("q", cid, 0.455, 0.475).verdict == claims.NOT_REPRODUCED
    inside = Row.interval_pair("q", cid, 0.43, 0.45)
    assert "the paper's interval contains ours" in inside.reason
    assert Row.interval_pair("q", cid, 0.78, 0.83, relation=Relation("ratio < 1", True, True)).verdict == "partly"


def test_a_cost_ratio_is_the_papers_ratio_against_ours_by_the_five_percent_rule():
    # the paper's OSCC-Select and independent selector costs (tab:app-p1-strata's columns would do as well);
    # a wall time itself is declared not comparable (reporting.comparability), whatever the ratio
    r = Row.ratio("OSCC-Select / independent", "cost_frontier.oscc_select.wall_time",
                  "cost_frontier.independent.wall_time", 1.0)
    assert r.paper == pytest.approx(107.09 / 105.21, abs=1e-4) and r.verdict == claims.NOT_COMPARED
    assert r.not_comparable and "seconds" in r.reason
    assert claims.verdict(r.paper, 1.0) == claims.REPRODUCED and claims.verdict(r.paper, 1.2) == claims.NOT_REPRODUCED


# --- declarations: not comparable, true by construction, printed again ------------------------

def test_the_issues_interval_line_names_the_midpoint_test_and_shows_both_intervals():
    # paper [0.427, 0.456] against ours [0.40, 0.45]: the paper's high end lies outside ours, yet the midpoints
    # 0.4415 and 0.425 are 0.0165 apart, within sqrt(0.0145^2 + 0.025^2) = 0.0289
    r = Row.interval_pair("ratio", "main_uncertainty.variance_ratio.interval", 0.40, 0.45)
    assert r.verdict == claims.REPRODUCED and r["test"] == rows.MIDPOINT_TEST
    assert "midpoint test, not containment" in r.reason and "our [0.4, 0.45]" in r.reason
    assert "0.0165" in r.reason and "0.0289" in r.reason and "neither contains the other" in r.reason


def test_an_interval_of_a_difference_that_is_zero_by_construction_is_not_compared_in_size():
    # the paper's [0.0071, 0.0342] and our interval both estimate a difference that is 0 by marginal preservation
    r = Row.interval_pair("check: mean difference", "text_precision.check.bootstrap_interval", -0.0334, 0.0243)
    assert r.verdict == claims.NOT_COMPARED and "marginal preservation" in r.reason
    assert "midpoint test, not containment" in r.reason       # the test's numbers stay beside the declaration


def test_a_printing_repeats_the_comparison_under_its_own_claim_and_names_the_one_it_repeats():
    prose = Row.interval_pair("check", "text_precision.check.bootstrap_interval", -0.0334, 0.0243)
    end = prose.printed_as("marginal_equivalence.check.ci_high", "check: high end", "the high end")
    assert end["claim id"] == "marginal_equivalence.check.ci_high" and end["printing of"] == prose.claim_id
    assert (end.verdict, end.interval) == (prose.verdict, prose.interval) and end.reason.startswith("the high end")
    with pytest.raises(ValueError, match="primary"):
        prose.as_sensitivity().printed_as("marginal_equivalence.check.ci_low", "q", "n")


def test_a_row_that_declares_its_quantity_not_comparable_is_not_compared_and_keeps_our_value():
    r = Row.compare("contrast", "main.independent.variance", 61.0).incomparable("another design")
    assert (r.verdict, r.reason, r.ours, r["not comparable"]) == (claims.NOT_COMPARED, "another design", 61.0,
                                                                  "another design")
    assert "test" not in r
    with pytest.raises(ValueError, match="not comparable"):
        Row("q", 1.0, 1.0, claims.REPRODUCED, "main.independent.variance", not_comparable="another design")
    with pytest.raises(ValueError, match="reason"):
        Row.compare("calls", "coupling_factors.ind.calls", 1.0).incomparable(" ")


def test_a_value_true_by_construction_is_not_compared_in_size_and_says_why():
    r = Row.compare("independent / independent", "noise_transfer.independent.return_ratio", 1.0, 1.0, 1.0,
                    exact=1.0)
    built = r.true_by_construction("an arm divided by itself")
    assert r.verdict == claims.REPRODUCED and "by construction" not in r
    assert built.verdict == claims.NOT_COMPARED and built["by construction"] == "an arm divided by itself"
    assert built.reason.startswith("true by construction") and "an arm divided by itself" in built.reason


def test_each_compared_row_names_the_size_test_that_decided_it():
    assert Row.compare("q", "main.cp_grpo_paired.variance", 18.0, 17.0, 19.0)["test"] == claims.CONTAINMENT
    assert Row.compare("q", "main.cp_grpo_paired.variance", 18.0)["test"] == claims.WITHIN_TOLERANCE


def test_a_quantile_pair_agrees_when_each_paper_end_is_within_five_percent_of_ours():
    cid = "clipping.connectivity_control.ratio_quantiles"
    p_lo, p_hi = (float(x) for x in claims.claim(cid))
    assert Row.quantile_pair("q", cid, p_lo, p_hi).verdict == claims.REPRODUCED
    # ours = paper / 1.052: the paper's end is 5.2% of ours away (4.9% of the paper's): outside
    assert Row.quantile_pair("q", cid, p_lo / 1.052, p_hi).verdict == claims.NOT_REPRODUCED
    assert Row.quantile_pair("q", cid, p_lo / 1.048, p_hi).verdict == claims.REPRODUCED


@pytest.mark.parametrize("value, text", [(48.94181554, "48.94"), (0.02924787408, "0.02925"), (61440.0, "61,440"),
                                         (6.680265476e-06, "6.680e-06"), (-0.5649224863, "-0.5649"),
                                         (9.99996, "10.00"), (1.0, "1.000"), (3e-13, "0")])
def test_table_numbers_show_four_significant_figures(value, text):
    assert tables.significant_text(value) == text


def test_an_interval_shows_both_ends_at_the_decimals_of_its_larger_end():
    assert tables.interval_text(48.550627, 49.355375) == "[48.55, 49.36]"
    assert tables.interval_text(-0.0334, 0.0243) == "[-0.03340, 0.02430]"


@given(st.floats(min_value=1e-4, max_value=1e8, allow_nan=False), st.sampled_from([1, -1]))
def test_significant_text_keeps_the_value_to_half_a_unit_of_its_last_figure(magnitude, sign):
    x = sign * magnitude
    text = tables.significant_text(x)
    shown = float(text.replace(",", ""))
    digits = len(text.replace(",", "").replace("-", "").replace(".", "").lstrip("0"))
    assert digits >= 4
    last = 10.0 ** (math.floor(math.log10(abs(shown))) - 3)
    assert abs(shown - x) <= 0.5 * last * (1 + 1e-9)


def test_a_missing_number_shows_a_dash_and_an_infinite_one_as_inf():
    assert tables.significant_text(float("nan")) == "—"
    assert tables.significant_text(float("inf")) == "inf" and tables.significant_text(-float("inf")) == "-inf"
    assert tables.interval_text(float("-inf"), 2.5) == "[-inf, 2.500]"
