"""Which sizes the book compares (`oscc_core.reporting.comparability`), declared once for every chapter.

The claims file is read with yaml directly; the families' patterns are checked against it, and a row or a ledger
line of a listed family is checked to be refused a size verdict while its relation is still judged.
"""
from __future__ import annotations

import yaml
from hypothesis import given, strategies as st

from oscc_core.reporting import claims, comparability
from oscc_core.reporting.claims import DEFAULT_PATH, Relation
from oscc_core.reporting.rows import Row

RAW = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
IDS = [e["id"] for e in RAW]
TRACE = "abstract.oscc_select.gradient_noise_trace"        # the paper prints 0.0783 on a scale it never defines
WALL = "cost_frontier.root_only.wall_time"                  # seconds on the paper's machine


def test_every_family_names_entries_of_the_claims_file_and_no_entry_is_in_two():
    for family in comparability.FAMILIES:
        assert any(family.holds(cid) for cid in IDS), family.name
    assert all(sum(f.holds(cid) for f in comparability.FAMILIES) <= 1 for cid in IDS)


def test_the_families_hold_the_quantities_the_chapters_call_incomparable():
    expect = {"abstract.oscc_select.gradient_noise_trace": "gradient-noise traces",
              "calibration.128.median_gain_lcb": "gain lower bounds",
              "calibration.64.gradient_noise_regret": "gradient-noise regret",
              "selector_stress.positive.full.physical_cost": "selector calls and costs",
              "calibration.512.physical_calls": "selector calls and costs",
              "cost_frontier.oscc_select.wall_time": "wall times", "grpo_ppo.cp_grpo_paired.cost": "wall times",
              "clipping.activated_stress.i_minus_p_endpoint": "I−P endpoints",
              "clipping.learning_rate_grid.update_variance": "update variances",
              "grpo_ppo.cp_grpo_paired.update_variance": "update variances",
              "coupling_factors.root_only.update": "update variances",
              "measured_transfer.kuhn.standard_ppo.update_variance": "update variances",
              "text_bounded.scalar_screen.paired.check_prob_delta": "check-probability changes",
              "retained_evidence.scalar_clipped.independent_check_delta": "check-probability changes",
              "grpo_ppo.uniform_policy.success_mean": "the uniform-policy row",
              "grpo_ppo.uniform_policy.value": "the uniform-policy row",
              "marginal_equivalence.bet.ci_low": "estimates of a zero marginal difference",
              "selector_stress.near_zero.full.marginal_difference": "estimates of a zero marginal difference"}
    assert {cid: comparability.family_of(cid).name for cid in expect} == expect
    for comparable in ("main.independent.variance", "noise_transfer.cp_grpo_full.gradient_ratio",
                       "grpo_ppo.cp_grpo_paired.exploitability", "grpo_ppo.uniform_policy.exploitability",
                       "measured_solver.cp_grpo_paired.exploitability", "fig_three_seed.mean_difference"):
        assert comparability.family_of(comparable) is None


def test_a_family_needs_a_known_basis_a_reason_and_a_pattern():
    import pytest

    with pytest.raises(ValueError, match="basis"):
        comparability.Family("x", "because", "r", ("a.*",))
    with pytest.raises(ValueError, match="reason"):
        comparability.Family("x", comparability.OTHER_UNIT, " ", ("a.*",))


def test_a_size_verdict_of_a_listed_family_becomes_not_compared_with_the_familys_reason():
    r = Row.compare("OSCC-Select trace", TRACE, 0.8773)
    assert r.verdict == claims.NOT_COMPARED and r.not_comparable
    assert comparability.reason_of("gradient-noise traces") in r.reason and "test" not in r


def test_the_relation_of_a_quantity_not_compared_is_judged_on_its_own():
    holds = Row.compare("t", TRACE, 0.8773, relation=Relation("OSCC-Select < independent", True, True))
    unresolved = Row.compare("t", TRACE, 0.8773, relation=Relation("OSCC-Select < independent", True, False))
    fails = Row.compare("t", TRACE, 0.8773, relation=Relation("OSCC-Select < independent", False))
    assert [r.verdict for r in (holds, unresolved, fails)] == [claims.NOT_COMPARED] * 3
    assert [r["relation verdict"] for r in (holds, unresolved, fails)] == [
        claims.REPRODUCED, claims.INCONCLUSIVE, claims.NOT_REPRODUCED]
    assert "ordering verdict: reproduced" in holds["why"]


def test_a_relation_true_by_construction_is_shown_but_never_judged():
    r = Row.compare("calls", "calibration.64.physical_calls", 667.0,
                    relation=Relation("physical draws non-decreasing in n", True).constructed())
    assert r.relation_verdict is None and "relation verdict" not in r and r["relation by construction"] is True


@given(st.sampled_from(IDS), st.sampled_from(claims.VERDICTS))
def test_the_ledger_refuses_exactly_the_size_verdicts_of_listed_families(cid, verdict):
    refused = comparability.size_verdict_refused(cid, verdict)
    sized = verdict in (claims.REPRODUCED, claims.INCONCLUSIVE, claims.PARTLY, claims.NOT_REPRODUCED, claims.DEPENDS)
    assert refused == (sized and comparability.family_of(cid) is not None)


@given(st.one_of(st.none(), st.booleans()), st.one_of(st.none(), st.booleans()))
def test_a_relation_verdict_is_reproduced_only_when_it_holds_and_nothing_contradicts_it(holds, resolved):
    v = comparability.relation_verdict(holds, resolved)
    if holds is None:
        assert v is None
    elif not holds:
        assert v == claims.NOT_REPRODUCED
    else:
        assert v == (claims.INCONCLUSIVE if resolved is False else claims.REPRODUCED)


def test_a_wall_time_is_not_compared_however_close_our_ratio():
    r = Row.ratio("root-only / independent", WALL, "cost_frontier.independent.wall_time", 1.0)
    assert r.verdict == claims.NOT_COMPARED and "seconds" in r.reason


def test_no_relative_deviation_beside_a_size_not_compared():
    r = Row.compare("OSCC-Select trace", TRACE, 0.8773)          # 0.8773 / 0.0783 - 1 would print as +1020%
    assert r.relative_deviation is None and r["relative deviation"] is None


def test_a_reason_replaced_after_the_declaration_keeps_the_familys_sentence_first():
    from dataclasses import replace

    r = replace(Row.compare("OSCC-Select trace", TRACE, 0.8773), reason="read at root '' alone")
    assert r.reason.startswith(comparability.incomparable_reason(TRACE)) and r.reason.endswith("root '' alone")
