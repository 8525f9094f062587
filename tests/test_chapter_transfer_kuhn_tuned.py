"""The transfer chapter's Kuhn-tuned control, without running a learner: its tuning on hand-made score tables, the
paired difference against the frozen study, the rate over the last tenfold budget, and the sentence on what causes
the plateau.

Expected values are written out by hand (the argmin of a small table, the rule's grid extension and tie-break
as the chapter states them), computed with scipy (Student t intervals), or a closed form (the rate of a power
law).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from oscc_core.chapters.transfer import findings, kuhn_tuned
from oscc_core.learning import study_design
from oscc_core.learning.loop import Schedule
from oscc_core.reporting.learning_study import LearningStudy

ARMS = ("cp_grpo", "independent", "grpo", "ppo")
SEEDS, DEV_SEEDS, BUDGET, MULTIPLE = (13, 17), (1001, 1002), 1000, 10


def rule(eta, alpha, kappa, max_extensions=4) -> dict:
    return {"dev_seeds": list(DEV_SEEDS), "budget": BUDGET, "tune_multiples": {"literal": 1, "converging": MULTIPLE},
            "grids": {"converging": {"eta": list(eta), "alpha": list(alpha), "kappa": list(kappa),
                                     "max_extensions": max_extensions}}}


def frozen_design(seeds=SEEDS) -> LearningStudy:
    return LearningStudy("kuhn", BUDGET, (1, 10), tuple(seeds), (), (0.01,), Schedule())


class TableRun:
    """Runs tuning tasks on a hand-made score table: every seed of a task scores table[(eta, alpha, kappa)] at the
    task's budget (an arm's table may differ); records the seeds and budgets it was asked for."""

    def __init__(self, table):
        self.table, self.seeds, self.budgets = table, set(), set()

    def __call__(self, tasks):
        out = []
        for t in tasks:
            s = dict(t.schedule)
            score = self.table(t.arm, s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"])
            self.seeds.update(t.seeds)
            self.budgets.update(t.budgets)
            out.append({"task": t.record(), "runs": {str(seed): {str(b): {"exploitability_average": score}
                                                                  for b in t.budgets} for seed in t.seeds}})
        return out


# ----- the tuning: the shared rule, on development seeds only --------------------------------------------------
def bowl(arm, eta, alpha, kappa) -> float:
    """Lowest at eta 16, alpha 0.5, kappa 0.01 for every arm: inside the grid below, so no extension."""
    return (math.log2(eta) - 4) ** 2 + (alpha - 0.5) ** 2 + (kappa - 0.01) ** 2 + 0.1


def test_the_controls_tuning_asks_only_for_the_rules_development_seeds_at_its_tuning_budget():
    run = TableRun(bowl)
    kuhn_tuned.tune(kuhn_tuned.control_design(frozen_design(), rule((8.0, 16.0, 32.0), (0.0, 0.5, 2.0),
                                                                    (0.0, 0.01, 0.1))), run)
    assert run.seeds == set(DEV_SEEDS)
    assert not run.seeds & set(SEEDS)
    assert run.budgets == {BUDGET * MULTIPLE}


def test_the_controls_choice_on_a_hand_made_table_is_its_argmin_and_the_shared_rules():
    grid = ((8.0, 16.0, 32.0), (0.0, 0.5, 2.0), (0.0, 0.01, 0.1))
    tuning = kuhn_tuned.tune(kuhn_tuned.control_design(frozen_design(), rule(*grid)), TableRun(bowl))
    shared = study_design.tune(TableRun(bowl), "kuhn", "converging", "cp_grpo", Schedule(),
                               study_design.Grid(*grid), DEV_SEEDS, BUDGET * MULTIPLE)
    for arm in ARMS:
        assert kuhn_tuned.choices_of(tuning)[arm] == {"eta": 16.0, "alpha": 0.5, "kappa": 0.01}
        assert tuning[arm] == shared
        assert tuning[arm]["extensions"] == 0 and len(tuning[arm]["grid"]) == 27


def test_a_choice_at_the_grids_edge_grows_the_grid_as_the_rule_says():
    """eta's best is 64 on a table falling to eta 64 and rising after: the grid (16, 32) grows to 64 (better), then
    128 (worse), so the choice is 64 after two extensions; alpha and kappa have one value each and never grow."""
    def falling(arm, eta, alpha, kappa):
        return abs(math.log2(eta) - 6) + 1.0
    tuning = kuhn_tuned.tune(kuhn_tuned.control_design(frozen_design(), rule((16.0, 32.0), (0.5,), (0.1,))),
                             TableRun(falling))
    assert tuning["ppo"]["eta"] == 64.0 and tuning["ppo"]["extensions"] == 2
    assert [g["eta"] for g in tuning["ppo"]["grid"]] == [16.0, 32.0, 64.0, 128.0]


def test_a_tie_goes_to_the_smaller_eta_then_alpha_then_kappa():
    def flat(arm, eta, alpha, kappa):
        return 0.5
    tuning = kuhn_tuned.tune(kuhn_tuned.control_design(frozen_design(), rule((8.0, 16.0), (0.0, 0.5), (0.0, 0.1),
                                                                             max_extensions=0)), TableRun(flat))
    assert kuhn_tuned.choices_of(tuning)["grpo"] == {"eta": 8.0, "alpha": 0.0, "kappa": 0.0}


def test_development_seeds_that_meet_the_reporting_seeds_are_refused():
    bad = {**rule((8.0,), (0.0,), (0.0,)), "dev_seeds": [13, 1001]}
    with pytest.raises(ValueError, match="disjoint"):
        kuhn_tuned.control_design(frozen_design(), bad)


def test_the_control_takes_the_rule_the_frozen_operating_point_holds():
    from oscc_core.learning.operating_point import study_operating_point

    r = rule((8.0, 16.0), (0.0, 0.5), (0.0, 0.1))
    choices = {arm: {"eta": 16.0, "alpha": 0.5, "kappa": 0.1} for arm in ARMS}
    op = study_operating_point("leduc", Schedule(), "converging", choices, r)
    got = kuhn_tuned.rule_of(op)
    assert list(got["dev_seeds"]) == list(DEV_SEEDS) and got["tune_multiples"] == r["tune_multiples"]
    assert kuhn_tuned.grid_of(got) == study_design.Grid(eta=(8.0, 16.0), alpha=(0.0, 0.5), kappa=(0.0, 0.1))


# ----- beside the frozen study ---------------------------------------------------------------------------------
def study_of(curves: dict, choice=None) -> dict:
    """A study record from {arm: {seed: {budget: exploitability}}}: runs, and the summary's seed means."""
    budgets = sorted({b for seeds in curves.values() for c in seeds.values() for b in c})
    runs = {arm: {str(s): {str(b): {"exploitability_average": v} for b, v in c.items()} for s, c in seeds.items()}
            for arm, seeds in curves.items()}
    summary = {str(b): {"arms": {arm: {q: {"mean": k * float(np.mean([c[b] for c in seeds.values()]))}
                                       for q, k in (("exploitability_average", 1), ("exploitability_last", 2))}
                                 for arm, seeds in curves.items()}} for b in budgets}
    c = choice or {"eta": 16.0, "alpha": 0.5, "kappa": 0.1}
    return {"design": {"budget": budgets[0], "budgets": budgets}, "runs": runs, "summary": summary,
            "choices": {arm: dict(c) for arm in curves}}


def power(scale, rate, noise=()):
    """{seed: {budget: scale_s * (budget / 1000)^-rate}} over three seeds at 1x, 10x and 100x of 1000 calls."""
    scales = [scale * (1 + e) for e in (noise or (0.0, 0.05, -0.05))]
    return {seed: {b: s * (b / 1000) ** -rate for b in (1000, 10_000, 100_000)} for seed, s in zip((1, 2, 3), scales)}


def test_the_paired_difference_is_scipys_t_interval_of_the_seed_differences():
    frozen = study_of({"cp_grpo": {1: {10: 0.30}, 2: {10: 0.26}, 3: {10: 0.35}, 4: {10: 0.20}, 5: {10: 0.25}}})
    tuned = study_of({"cp_grpo": {1: {10: 0.10}, 2: {10: 0.28}, 3: {10: 0.15}, 4: {10: 0.12}, 5: {10: 0.25}}})
    d = np.array([0.20, -0.02, 0.20, 0.08, 0.0])      # a tie is not a seed on which the control is lower
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    got = kuhn_tuned.paired_difference(frozen, tuned, "cp_grpo", 10)
    assert got["mean"] == pytest.approx(d.mean()) and got["low"] == pytest.approx(low)
    assert got["high"] == pytest.approx(high) and got["n"] == 5 and got["tuned_lower"] == 3


def test_the_decade_rate_of_a_power_law_is_its_exponent():
    assert kuhn_tuned.decade_rate(study_of({"cp_grpo": power(0.3, 0.5, (0.0, 0.0, 0.0))}), "cp_grpo") == \
        pytest.approx(0.5)


def test_the_decade_rate_is_taken_over_the_two_largest_budgets_from_the_seed_means():
    """Means 0.4, 0.2, 0.02 at 1x, 10x, 100x: the last decade falls tenfold (rate 1), the first only twofold."""
    curves = {1: {1000: 0.3, 10_000: 0.1, 100_000: 0.01}, 2: {1000: 0.5, 10_000: 0.3, 100_000: 0.03}}
    assert kuhn_tuned.decade_rate(study_of({"cp_grpo": curves}), "cp_grpo") == pytest.approx(1.0)
    assert kuhn_tuned.decade_rate(study_of({"cp_grpo": {1: {1000: 0.2}, 2: {1000: 0.3}}}), "cp_grpo") is None


LITERAL = {"cp_grpo": {"mean": 0.029, "low": 0.022, "high": 0.036, "n": 5}}


def with_control(frozen_curves, tuned_curves) -> dict:
    frozen = study_of({"cp_grpo": frozen_curves})
    return {**frozen, "kuhn_tuned": study_of({"cp_grpo": tuned_curves}, {"eta": 4.0, "alpha": 2.0, "kappa": 0.01})}


def test_a_flat_frozen_curve_beside_a_falling_tuned_one_is_the_transfers_plateau():
    text = findings.plateau_sentence(with_control(power(0.05, 0.02), power(0.05, 0.5)), LITERAL)
    assert "The plateau is the transfer's, not the learner's" in text and "and ends lower" in text
    assert "calls^-0.02" in text and "calls^-0.50" in text and "eta 4, alpha 2, kappa 0.01" in text
    assert "the literal learner is at 0.0290 [0.0220, 0.0360] (5 seeds)" in text


def test_two_flat_curves_at_the_same_level_are_the_learners_plateau():
    text = findings.plateau_sentence(with_control(power(0.05, 0.02), power(0.05, 0.02, (0.01, 0.04, -0.06))),
                                     LITERAL)
    assert "the plateau is the learner's on Kuhn, not the transfer's" in text
    assert "lower at the largest budget (paired, 95%) for 0." in text


def test_a_lower_but_still_flat_tuned_curve_splits_the_plateau():
    text = findings.plateau_sentence(with_control(power(0.05, 0.02), power(0.02, 0.02)), LITERAL)
    assert "lowers the plateau but does not remove it" in text and "for 1 (cp_grpo)." in text


def test_a_frozen_curve_is_a_plateau_only_below_the_threshold_rate():
    rate = findings.PLATEAU_RATE
    above = findings.plateau_sentence(with_control(power(0.05, rate + 0.01), power(0.05, 0.5)), LITERAL)
    assert "does not plateau here" in above
    below = findings.plateau_sentence(with_control(power(0.05, rate - 0.01), power(0.05, 0.5)), LITERAL)
    assert "The plateau is the transfer's" in below


def test_curves_that_rise_again_are_said_to_rise_not_to_fall():
    text = findings.plateau_sentence(with_control(power(0.05, -0.2), power(0.02, -0.5)), LITERAL)
    assert "rising as calls^+0.20 over the last tenfold budget" in text and "--" not in text
    assert "Neither curve levels off" in text
    # the last iterate here is twice the average: 2 x 0.05 x 10^0.2 and 2 x 0.05 x 100^0.2 (frozen)
    assert "last iterate goes from 0.1585 to 0.2512 chips between 10,000 and 100,000 calls (frozen)" in text


def test_a_study_of_one_budget_attributes_nothing():
    one = {1: {1000: 0.2}, 2: {1000: 0.3}, 3: {1000: 0.25}}
    assert "cannot say whether either curve plateaus" in findings.plateau_sentence(with_control(one, one), LITERAL)


# ----- the control in the chapter's result box and landing bullets -------------------------------------------
def test_the_result_box_says_the_transfer_plateau_comes_from_the_choices_frozen_on_leduc():
    """Frozen flat at 0.05 x 100^-0.02 = 0.0456 at the largest budget, tuned falling to 0.05 x 100^-0.5 = 0.0050
    (seed means; the scales' noise averages out), below the paper's 0.0109: the box and the landing bullet give
    both numbers and the cause."""
    box, landing = findings.control_sentence(with_control(power(0.05, 0.02), power(0.05, 0.5)))
    assert "brings CP-GRPO to 0.0050 chips at 100,000 calls, below the paper's 0.0109" in box
    assert "against the frozen operating point's 0.0456" in box and "lower on 3 of 3 seeds" in box
    for text in (box, landing):
        assert text.endswith("the transfer plateau comes from the choices frozen on Leduc, not from the learner")
    assert "reaches 0.0050 chips" in landing


def test_the_result_box_blames_the_learner_when_tuning_on_kuhn_does_not_lower_the_plateau():
    box, landing = findings.control_sentence(with_control(power(0.05, 0.02),
                                                          power(0.05, 0.02, (0.01, 0.04, -0.06))))
    for text in (box, landing):
        assert text.endswith("the plateau is the learner's on Kuhn, not the transfer's")
        assert "frozen on Leduc, not" not in text
    assert "above the paper's 0.0109" in box


def test_a_study_without_the_control_has_no_control_sentence():
    assert findings.control_sentence(study_of({"cp_grpo": power(0.05, 0.02)})) is None


@pytest.mark.parametrize("frozen, tuned, lower, expected", [
    (None, None, False, "one budget"), (0.25, 0.5, True, "no plateau"), (0.24, 0.25, True, "transfer"),
    (0.24, 0.25, False, "transfer, unresolved"), (0.1, 0.1, True, "both"), (0.1, 0.1, False, "learner"),
    (-0.2, -0.6, True, "both rise"), (-0.2, 0.1, True, "both"), (0.1, -0.2, False, "learner")])
def test_the_cause_follows_the_rates_against_the_plateau_threshold_and_the_paired_difference(frozen, tuned, lower,
                                                                                           expected):
    assert findings.PLATEAU_RATE == 0.25
    assert findings.cause(frozen, tuned, lower) == expected
