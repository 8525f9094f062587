"""The row type's verdict rule (DESIGN.md section 10), against hand-worked values.

Paper values come from book/paper_claims.yaml: main.cp_grpo_paired.variance = 18.1441,
main.independent.variance = 41.1158, seat_swap.branch_swap.variance_residual = 1e-12 (printed "< 1e-12"),
method_obs.observation_audit.opponent_card_exposures = 0.
"""
import pytest

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


def test_reproduced_when_paper_value_in_interval_whatever_the_relation():
    r = Row.compare("independent: contrast variance", IND, 40.9, 40.6, 41.2,
                    relation=Relation("full < independent", False))
    assert r.verdict == "reproduced"


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


def test_impossible_names_the_bound_in_its_reason():
    r = Row.impossible("full: contrast variance", FULL, 32.55, "Var(R1 - R2) <= 10 chips^2 (made-up bound)")
    assert r.verdict == claims.IMPOSSIBLE == "impossible under the rules"
    assert "Var(R1 - R2) <= 10 chips^2" in r.reason and "18.1441" in r.reason
    assert r["reason"] == r.reason
    assert r.relative_deviation == pytest.approx(32.55 / 18.1441 - 1)
    with pytest.raises(ValueError):
        Row.impossible("q", FULL, 1.0, " ")


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
    assert list(frame["relative deviation"]) == ["+79.4%", "—"]
    assert list(frame["relation"]) == ["full < independent", "—"]
    # a plain dict row without the new keys gets them from paper and ours
    plain = tables.comparison_frame([{"quantity": "q", "paper": 2.0, "ours": 3.0, "verdict": "not reproduced"}])
    assert plain.loc[0, "relative deviation"] == "+50.0%"


def test_verdict_summary_counts_the_new_verdicts():
    rs = [Row.compare("full", FULL, 32.55, 32.27, 32.84),
          Row.not_compared("wall", "cost_frontier.independent.wall_time", "machine-dependent"),
          Row.impossible("full", FULL, 32.55, "a bound")]
    frame = tables.verdict_summary({"t": rs})
    assert list(frame.columns) == list(claims.VERDICTS) + [rows.NO_PAPER]
    assert frame.loc["t", "not reproduced"] == 1
    assert frame.loc["t", "not compared"] == 1
    assert frame.loc["t", "impossible under the rules"] == 1
    assert frame.loc["total"].sum() == 3
