"""Chapter 05's reading of the coupling 2 x 2 (`oscc_core.chapters.solver.coupling_grid`): the stretches where the
paired difference is resolved, which arm needs fewer calls, the texts, the answer and the tuning reading, each
against values worked by hand.

The synthetic studies here are power laws, exploitability e(b) = 20 / sqrt(b / s) at budget b for a run whose
calls are stretched by s: straight in log-log, so the study's log-log interpolation finds the crossing of a
threshold th exactly at b = s (20 / th)^2, and the ratio of calls of two such runs on one seed is the ratio of
their stretches.  With independent's runs stretched by f_s against CP-GRPO's on seed s, independent / CP-GRPO is
the geometric mean of f_s with interval exp(mean log f -+ t(0.975, n - 1) sd(log f) / sqrt(n)), and the paired
difference at b is (20 / sqrt(b)) (sqrt(f_s) - 1), largest at the smallest budget.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.solver import coupling_grid as cg

T2 = 4.302652729911275          # t(0.975, 2 degrees of freedom), printed tables
IV = namedtuple("IV", "mean low high")


# ----- stretches of resolved budgets ---------------------------------------------------------------------------
def above(mean):
    return IV(mean, mean - 0.01, mean + 0.01)          # wholly above 0 for mean > 0.01


def below(mean):
    return IV(mean, mean - 0.01, mean + 0.01)          # wholly below 0 for mean < -0.01


def holds_0(mean=0.0):
    return IV(mean, mean - 1.0, mean + 1.0)


def brief(runs):
    return [(r["side"], r["first"], r["last"], r["budgets"], r["largest"][0]) for r in runs]


def test_budgets_all_above_0_are_one_stretch_with_cp_grpo_lower():
    points = [(10, above(0.1)), (20, above(0.3)), (40, above(0.2))]
    assert brief(cg.stretches(points)) == [(1, 10, 40, 3, 20)]


def test_a_budget_whose_interval_holds_0_breaks_a_stretch_in_two():
    points = [(10, above(0.1)), (20, holds_0()), (40, above(0.2)), (80, above(0.5))]
    assert brief(cg.stretches(points)) == [(1, 10, 10, 1, 10), (1, 40, 80, 2, 80)]


def test_a_stretch_above_followed_at_once_by_one_below_are_two_stretches_of_opposite_sides():
    points = [(10, above(0.1)), (20, above(0.2)), (40, below(-0.3)), (80, below(-0.1))]
    assert brief(cg.stretches(points)) == [(1, 10, 20, 2, 20), (-1, 40, 80, 2, 40)]


def test_a_one_budget_stretch_begins_and_ends_at_its_budget():
    points = [(10, holds_0()), (20, below(-0.2)), (40, holds_0())]
    (run,) = cg.stretches(points)
    assert (run["side"], run["first"], run["last"], run["budgets"]) == (-1, 20, 20, 1)


def test_the_largest_of_a_stretch_is_its_largest_absolute_mean_with_its_interval():
    big = below(-0.3)
    points = [(10, below(-0.1)), (20, big), (40, below(-0.2))]
    (run,) = cg.stretches(points)
    assert run["largest"] == (20, big)


def test_the_first_of_equal_largest_means_is_kept():
    points = [(10, above(0.2)), (20, above(0.2))]
    assert cg.stretches(points)[0]["largest"][0] == 10


def test_an_interval_with_an_end_exactly_at_0_is_not_resolved():
    assert cg.stretches([(10, IV(0.5, 0.0, 1.0)), (20, IV(-0.5, -1.0, 0.0))]) == []


def test_no_resolved_budget_gives_no_stretch():
    assert cg.stretches([(10, holds_0()), (20, holds_0(0.3))]) == []
    assert cg.stretches([]) == []


@given(st.lists(st.sampled_from([-1, 0, 1]), max_size=20))
def test_the_stretches_are_the_maximal_runs_of_one_sign(signs):
    points = [(10 * (i + 1), {1: above(0.5), -1: below(-0.5), 0: holds_0()}[s]) for i, s in enumerate(signs)]
    expected, i = [], 0
    while i < len(signs):                            # maximal runs of equal non-zero signs, by hand
        j = i
        while j + 1 < len(signs) and signs[j + 1] == signs[i]:
            j += 1
        if signs[i]:
            expected.append((signs[i], 10 * (i + 1), 10 * (j + 1), j - i + 1))
        i = j + 1
    assert [(r["side"], r["first"], r["last"], r["budgets"]) for r in cg.stretches(points)] == expected


# ----- the direction and the text of a ratio -------------------------------------------------------------------
def ratio(r, low, high, pairs=3, seeds=3):
    return {"ratio": r, "low": low, "high": high, "pairs": pairs, "seeds": seeds}


def test_a_ratio_wholly_above_1_means_cp_grpo_needs_fewer_calls():
    assert cg.direction(ratio(1.3, 1.1, 1.5)) == "CP-GRPO"


def test_a_ratio_wholly_below_1_means_independent_needs_fewer_calls():
    assert cg.direction(ratio(0.8, 0.7, 0.9)) == "independent"


def test_a_ratio_interval_holding_or_touching_1_resolves_neither():
    assert cg.direction(ratio(1.0, 0.9, 1.1)) == "neither"
    assert cg.direction(ratio(1.1, 1.0, 1.2)) == "neither"
    assert cg.direction(ratio(0.9, 0.8, 1.0)) == "neither"


def test_no_ratio_or_no_interval_resolves_neither():
    assert cg.direction(ratio(None, None, None, 0)) == "neither"
    assert cg.direction(ratio(2.0, None, None, 1)) == "neither"


def test_a_ratio_is_written_with_its_interval_and_pairs():
    assert cg.ratio_text(ratio(1.2749, 1.2512, 1.2911, 30, 30)) == "1.27 [1.25, 1.29], 30 pairs"


def test_a_ratio_of_one_pair_is_written_without_an_interval_and_in_the_singular():
    assert cg.ratio_text(ratio(1.5, None, None, 1)) == "1.50, 1 pair"


def test_no_ratio_says_no_seed_reaches_the_threshold_on_both_arms():
    assert cg.ratio_text(ratio(None, None, None, 0, 30)) == "no seed on which both arms reach it (of 30)"


# ----- the answer of a synthetic study -------------------------------------------------------------------------
BUDGETS = (100, 400, 1600, 6400, 25_600)
SEEDS = ("1", "2", "3")
TH = 0.4


def stretched(s: float) -> dict:
    """A run whose calls are stretched by s: e(b) = 20 / sqrt(b / s) (crosses TH at 2500 s)."""
    return {str(b): {"exploitability_average": 20.0 / math.sqrt(b / s)} for b in BUDGETS}


def cell(choice, cp, ind) -> dict:
    return {"choice": choice, "base": {},
            "runs": {"cp_grpo": {s: stretched(c) for s, c in zip(SEEDS, cp)},
                     "independent": {s: stretched(i) for s, i in zip(SEEDS, ind)}}}


def ratio_by_hand(factors) -> str:
    logs = [math.log(f) for f in factors]
    m, half = float(np.mean(logs)), T2 * float(np.std(logs, ddof=1)) / math.sqrt(len(logs))
    return f"{math.exp(m):.2f} [{math.exp(m - half):.2f}, {math.exp(m + half):.2f}], {len(logs)} pairs"


def largest_by_hand(cp, ind) -> tuple[float, float, float]:
    """The paired difference independent - CP-GRPO at the smallest budget 100: (mean, low, high)."""
    d = [20.0 / math.sqrt(100 / i) - 20.0 / math.sqrt(100 / c) for c, i in zip(cp, ind)]
    m, half = float(np.mean(d)), T2 * float(np.std(d, ddof=1)) / math.sqrt(len(d))
    return m, m - half, m + half


F = (1.8, 2.0, 2.2)          # independent's stretch at CP-GRPO's choice: CP-GRPO faster on every seed
E = (0.9, 1.0, 1.1)          # at independent's choice: the arms' difference straddles 0
G = (1.3, 1.1, 1.2)          # baseline off stretches both arms' calls by G against baseline on
CP_CHOICE = {"eta": 32.0, "alpha": 0.25, "kappa": 0.003}
IND_CHOICE = {"eta": 16.0, "alpha": 0.5, "kappa": 0.001}


def study(cells: dict, own=F) -> dict:
    return {"design": {"thresholds": [TH, 0.2]},
            "runs": {"converging": cell({}, (1, 1, 1), own)["runs"]},
            "coupling_grid": {"arms": ["cp_grpo", "independent"], "baselines": ["history", "none"],
                              "cells": cells}}


def two_by_two() -> dict:
    return study({"cp_grpo": {"history": cell(CP_CHOICE, (1, 1, 1), F),
                              "none": cell(CP_CHOICE, G, [g * f for g, f in zip(G, F)])},
                  "independent": {"history": cell(IND_CHOICE, (1, 1, 1), E),
                                  "none": cell(IND_CHOICE, G, [g * e for g, e in zip(G, E)])}})


def test_the_answer_of_a_2x2_whose_ratios_and_stretches_are_known_in_closed_form():
    def resolved(cp, ind):
        m, lo, hi = largest_by_hand(cp, ind)
        return (f"CP-GRPO lower from 100 to 25,600 calls (5 budgets; largest {m:.4f} chips [{lo:.4f}, {hi:.4f}] "
                f"at 100)")

    off_f = [g * f for g, f in zip(G, F)]
    expected = (
        f"In short, which arm is resolved faster depends on the common choice and on the history baseline. "
        f"With the history baseline off, to 0.4 chips: at CP-GRPO's choice CP-GRPO needs fewer calls "
        f"(independent / CP-GRPO {ratio_by_hand(F)}), and {resolved(G, off_f)}; at independent's choice neither arm "
        f"is resolved faster (independent / CP-GRPO {ratio_by_hand(E)}), and the difference is resolved at no budget."
        f" With the history baseline on, to 0.4 chips: at CP-GRPO's choice CP-GRPO needs fewer calls "
        f"(independent / CP-GRPO {ratio_by_hand(F)}), and {resolved((1, 1, 1), F)}; at independent's choice neither "
        f"arm is resolved faster (independent / CP-GRPO {ratio_by_hand(E)}), and the difference is resolved at no "
        f"budget. The baseline's own effect, baseline-off / baseline-on calls to 0.4 chips: CP-GRPO at CP-GRPO's "
        f"choice {ratio_by_hand(G)}, independent at CP-GRPO's choice {ratio_by_hand(G)}, CP-GRPO at independent's "
        f"choice {ratio_by_hand(G)}, independent at independent's choice {ratio_by_hand(G)}.")
    assert cg.answer(two_by_two()) == expected


def test_the_ratio_of_a_cell_is_independents_stretch_over_cp_grpos_on_each_seed():
    r = cg.ratio(cell(CP_CHOICE, G, [g * f for g, f in zip(G, F)]), TH)
    assert r["ratio"] == pytest.approx(math.exp(np.mean(np.log(F))), rel=1e-12) and r["pairs"] == 3


def test_a_study_without_the_2x2_says_so():
    assert cg.answer({"design": {"thresholds": [TH]}}) == (
        "The study holds no 2 x 2 (its converging learner carries no history baseline to switch).")


# ----- the tuning reading -------------------------------------------------------------------------------------
OWN = (1.2, 1.27, 1.34)      # each arm at its own choice: independent needs about 1.27 times CP-GRPO's calls


def test_common_choice_ratios_apart_from_the_own_choice_ratio_are_read_as_the_tuning():
    s = study({"cp_grpo": {"history": cell(CP_CHOICE, (1, 1, 1), (0.98, 1.0, 1.02))},
               "independent": {"history": cell(IND_CHOICE, (1, 1, 1), (0.97, 1.01, 1.03))}}, OWN)
    assert cg.tuning_reading(s) == (
        f"with each arm at its own choice independent / CP-GRPO is {ratio_by_hand(OWN)}; with both at one choice "
        f"(baseline on, as the study ran) it is {ratio_by_hand((0.98, 1.0, 1.02))} at CP-GRPO's; "
        f"{ratio_by_hand((0.97, 1.01, 1.03))} at independent's: the two do not overlap, so the difference between "
        f"them is the tuning's, not the coupling's.")


def test_a_common_choice_ratio_overlapping_the_own_choice_ratio_leaves_the_tuning_unresolved():
    s = study({"cp_grpo": {"history": cell(CP_CHOICE, (1, 1, 1), (0.98, 1.0, 1.02))},
               "independent": {"history": cell(IND_CHOICE, (1, 1, 1), (1.0, 1.2, 1.4))}}, OWN)
    assert cg.tuning_reading(s).endswith(": the intervals overlap, so the tuning is not resolved as moving it.")


def test_the_tuning_reading_uses_only_the_cells_with_the_baseline_on():
    # the baseline-off cells alone would lie apart from the own-choice ratio; with the baseline on they overlap it
    apart, overlapping = (0.98, 1.0, 1.02), (1.0, 1.2, 1.4)
    s = study({"cp_grpo": {"history": cell(CP_CHOICE, (1, 1, 1), overlapping),
                           "none": cell(CP_CHOICE, (1, 1, 1), apart)},
               "independent": {"history": cell(IND_CHOICE, (1, 1, 1), overlapping),
                               "none": cell(IND_CHOICE, (1, 1, 1), apart)}}, OWN)
    assert cg.tuning_reading(s) == (
        f"with each arm at its own choice independent / CP-GRPO is {ratio_by_hand(OWN)}; with both at one choice "
        f"(baseline on, as the study ran) it is {ratio_by_hand(overlapping)} at CP-GRPO's; "
        f"{ratio_by_hand(overlapping)} at independent's: the intervals overlap, so the tuning is not resolved as "
        f"moving it.")


def one_point() -> dict:
    """Both arms' tuning chose CP_CHOICE: the 2 x 2's two common points are one (stored twice)."""
    return study({owner: {"history": cell(CP_CHOICE, (1, 1, 1), F),
                          "none": cell(CP_CHOICE, G, [g * f for g, f in zip(G, F)])}
                  for owner in ("cp_grpo", "independent")}, OWN)


def test_when_the_tuning_chose_one_point_for_both_arms_the_tuning_reading_says_the_tuning_moves_nothing():
    assert cg.tuning_reading(one_point()) == (
        f"the tuning chose the same point for both arms (eta 32, alpha 0.25, kappa 0.003), so each arm's own choice "
        f"is the common one, and the study's ratio, {ratio_by_hand(OWN)}, is the 2 x 2's with the baseline on: here "
        f"the tuning moves nothing.")


def test_a_2x2_whose_two_common_points_are_one_is_answered_once_at_both_arms_choice():
    text = cg.answer(one_point())
    assert text.startswith(f"In short, coupling helps with the history baseline and without it. "
                           f"With the history baseline off, to 0.4 chips: at the choice tuned for both CP-GRPO needs fewer "
                           f"calls (independent / CP-GRPO {ratio_by_hand(F)}), and CP-GRPO lower from 100 to 25,600 "
                           f"calls (5 budgets; ")
    assert text.count("at the choice tuned for both") == 2 + 2  # once per baseline, and each arm's baseline effect
    assert "CP-GRPO's choice" not in text and "independent's choice" not in text


def test_without_the_2x2_the_tuning_reading_gives_the_own_choice_ratio_alone():
    s = {"design": {"thresholds": [TH]}, "runs": {"converging": cell({}, (1, 1, 1), OWN)["runs"]}}
    assert cg.tuning_reading(s) == f"with each arm at its own choice independent / CP-GRPO is {ratio_by_hand(OWN)}."


def _conclusion_of(off: dict, on: dict) -> str:
    """The 2 x 2's one-clause conclusion when its cells' ratios of calls are the given (ratio, low, high)."""
    import unittest.mock as mock

    study = {"design": {"thresholds": [TH]},
             "coupling_grid": {"cells": {"cp_grpo": {"history": {"choice": CP_CHOICE, "runs": {}, "r": on},
                                                     "none": {"choice": CP_CHOICE, "runs": {}, "r": off}}}}}
    with mock.patch.object(cg, "ratio", lambda cell, th: {"ratio": cell["r"][0], "low": cell["r"][1],
                                                          "high": cell["r"][2]}):
        return cg.conclusion(study)


def test_coupling_that_helps_only_without_the_baseline_is_said_to_be_replaced_by_it():
    assert _conclusion_of(off=(2.0, 1.8, 2.2), on=(1.0, 0.98, 1.02)) == \
        "coupling helps without the history baseline, and the baseline takes its place"


def test_coupling_that_helps_on_both_rows_is_said_to_help_with_and_without_the_baseline():
    assert _conclusion_of(off=(2.0, 1.8, 2.2), on=(1.2, 1.05, 1.3)) == \
        "coupling helps with the history baseline and without it"


def test_an_interval_touching_1_resolves_nothing_in_the_conclusion():
    assert _conclusion_of(off=(1.1, 1.0, 1.2), on=(1.0, 0.9, 1.1)) == \
        "coupling changes the calls neither with the history baseline nor without it"


def test_independent_faster_anywhere_is_not_read_as_coupling_helping():
    assert _conclusion_of(off=(0.8, 0.7, 0.9), on=(1.0, 0.9, 1.1)) == \
        "which arm is resolved faster depends on the common choice and on the history baseline"


def test_the_figure_caption_states_the_conclusion_as_a_sentence_and_says_so_when_there_is_no_2x2():
    # one point for both arms: CP-GRPO faster by F with the baseline on and off (the baseline stretches both by G)
    assert cg.summary_glue(one_point())["grid_conclusion"] == (
        "Coupling helps with the history baseline and without it")
    assert cg.summary_glue({"design": {"thresholds": [TH]}, "runs": {"converging": cell({}, (1, 1, 1), F)["runs"]}}
                           )["grid_conclusion"] == "The study holds no 2 x 2"
