"""A learning study's design rules (`oscc_core.learning.study_design`), each against values worked by hand.

Recorded budgets are base x each multiple and per_decade log-spaced budgets a decade from base / 10 (rounded);
the literal learner's grpo and ppo stop at 10 x the base budget; a tuning grid grows past the edge its best choice
sits on (eta doubles up or halves down, alpha doubles, kappa grows fourfold up to 1), at most max_extensions
times; ties go to the smaller eta, then alpha, then kappa; the summary's intervals use Student's t with n - 1
degrees of freedom (n = 2: tan(0.475 pi), the Cauchy quantile) and the paired differences arm - cp_grpo.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from oscc_core.learning import study_design as d
from oscc_core.learning.loop import Schedule

T_ONE = math.tan(math.pi * 0.475)
QUANTITIES = ("exploitability_average", "exploitability_last", "never_updated", "physical_calls", "transitions",
              "decisions")


# ----- budgets ---------------------------------------------------------------------------------------------------
def test_recorded_budgets_are_the_multiples_and_log_spaced_budgets_from_a_tenth_of_the_base():
    assert d.curve_budgets(1000, (1, 10), 1) == (100, 1000, 10_000)
    # 10^2, 10^2.5 = 316.2, 10^3, 10^3.5 = 3162.3, 10^4
    assert d.curve_budgets(1000, (1, 10), 2) == (100, 316, 1000, 3162, 10_000)
    # up to 3000: 1.477 decades, round(1.477 x 1) + 1 = 2 points (100, 3000); x 2: round(2.954) + 1 = 4 points,
    # 100 x 30^(1/3) = 310.7 and 100 x 30^(2/3) = 965.5
    assert d.curve_budgets(1000, (1, 3), 1) == (100, 1000, 3000)
    assert d.curve_budgets(1000, (1, 3), 2) == (100, 311, 965, 1000, 3000)


def test_the_default_records_four_budgets_a_decade():
    assert d.DEFAULT_PER_DECADE == 4
    assert d.curve_budgets(1000, (1, 10)) == d.curve_budgets(1000, (1, 10), 4) == (
        100, 178, 316, 562, 1000, 1778, 3162, 5623, 10_000)


# ----- schedules --------------------------------------------------------------------------------------------------
FAST = dict(baseline="history", baseline_floor=0.5, alpha_decay="inverse_sqrt", alpha_horizon=30.0, average_power=2)


def test_the_literal_learner_is_the_papers_iteration_whatever_the_base_carries():
    base = replace(Schedule(iterations=3), decision_law="counterfactual", proximal_alpha=1.0, proximal_kappa=0.5,
                   **FAST)
    s = d.learner_schedule(d.LITERAL, base, 8, alpha=2.0, kappa=0.3)
    assert (s.learning_rate, s.decision_law, s.proximal_alpha, s.proximal_kappa) == (8.0, "on_policy", 0.0, 0.0)
    assert (s.baseline, s.baseline_floor, s.alpha_decay, s.alpha_horizon, s.average_power) == (
        "none", 0.2, "constant", 1.0, 0)
    assert isinstance(s.learning_rate, float) and s.iterations == 3


def test_the_converging_learner_takes_its_choices_and_the_bases_options():
    s = d.learner_schedule(d.CONVERGING, replace(Schedule(iterations=3), **FAST), 8, 2, 1)
    assert (s.learning_rate, s.decision_law, s.proximal_alpha, s.proximal_kappa) == (8.0, "counterfactual", 2.0, 1.0)
    assert all(isinstance(x, float) for x in (s.learning_rate, s.proximal_alpha, s.proximal_kappa))
    assert {k: getattr(s, k) for k in FAST} == FAST


def test_the_converging_learner_without_alpha_or_kappa_neither_pulls_nor_moves_a_magnet():
    s = d.learner_schedule(d.CONVERGING, Schedule(iterations=3), 8)
    assert (s.proximal_alpha, s.proximal_kappa) == (0.0, 0.0)


def test_a_converging_choice_without_alpha_or_kappa_runs_without_them():
    (task,) = d.study_tasks("leduc", {"converging": {"grpo": {"eta": 3.0}}}, Schedule(), (1,), 100, (1,), per_decade=1)
    s = dict(task.schedule)
    assert (task.game, s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]) == ("leduc", 3.0, 0.0, 0.0)


def test_an_unknown_learner_is_refused_naming_the_learners():
    with pytest.raises(ValueError, match="learner must be one of literal, converging, got 'fast'"):
        d.learner_schedule("fast", Schedule(), 1.0)


def test_seeds_go_to_tasks_in_consecutive_groups():
    assert d.chunks((1, 2, 3, 4, 5), 2) == [(1, 2), (3, 4), (5,)]
    assert d.chunks([7], 10) == [(7,)] and d.chunks((), 3) == []


def test_a_studys_tasks_cap_the_literal_grpo_and_ppo_at_ten_times_the_budget():
    choices = {"literal": {"grpo": {"eta": 2.0}, "cp_grpo": {"eta": 1.0}},
               "converging": {"ppo": {"eta": 4.0, "alpha": 0.5, "kappa": 0.1}}}
    tasks = d.study_tasks("kuhn", choices, Schedule(), (1, 2, 3), 100, (1, 10, 100), runs_per_task=2, per_decade=1)
    got = [(t.learner, t.arm, t.seeds, t.budgets, t.keep_table) for t in tasks]
    assert got == [("literal", "grpo", (1, 2), (10, 100, 1000), False),
                   ("literal", "grpo", (3,), (10, 100, 1000), False),
                   ("literal", "cp_grpo", (1, 2), (10, 100, 1000, 10_000), False),
                   ("literal", "cp_grpo", (3,), (10, 100, 1000, 10_000), False),
                   ("converging", "ppo", (1, 2), (10, 100, 1000, 10_000), True),
                   ("converging", "ppo", (3,), (10, 100, 1000, 10_000), True)]
    conv = dict(tasks[-1].schedule)
    assert (conv["learning_rate"], conv["proximal_alpha"], conv["proximal_kappa"]) == (4.0, 0.5, 0.1)
    assert dict(tasks[0].schedule)["learning_rate"] == 2.0
    assert not any(t.keep_table for t in d.study_tasks("kuhn", choices, Schedule(), (1,), 100, (1,),
                                                        keep_tables=False, per_decade=1))


def test_a_study_task_holds_ten_seeds_by_default():
    tasks = d.study_tasks("kuhn", {"literal": {"grpo": {"eta": 1.0}}}, Schedule(), tuple(range(25)), 100, (1,))
    assert [len(t.seeds) for t in tasks] == [10, 10, 5]
    assert tasks[0].budgets == d.curve_budgets(100, (1,), 4)


# ----- tuning ----------------------------------------------------------------------------------------------------
GRID = d.Grid(eta=(1.0, 2.0), alpha=(0.0, 0.5), kappa=(0.0, 0.1))


def test_a_grid_lists_every_combination_eta_first():
    assert d.Grid(eta=(1.0, 2.0), alpha=(0.0, 0.5)).combos() == [(1.0, 0.0, 0.0), (1.0, 0.5, 0.0), (2.0, 0.0, 0.0),
                                                                  (2.0, 0.5, 0.0)]


def test_a_choice_at_every_upper_edge_grows_every_grid():
    grown = GRID.extended((2.0, 0.5, 0.1))
    assert (grown.eta, grown.alpha, grown.kappa) == ((1.0, 2.0, 4.0), (0.0, 0.5, 1.0), (0.0, 0.1, 0.4))


def test_a_choice_at_the_lower_eta_edge_halves_eta_and_leaves_the_rest():
    grown = GRID.extended((1.0, 0.0, 0.0))
    assert (grown.eta, grown.alpha, grown.kappa) == ((0.5, 1.0, 2.0), (0.0, 0.5), (0.0, 0.1))


def test_kappa_grows_at_most_to_1_and_never_past_it():
    assert d.Grid(eta=(1.0, 2.0, 4.0), kappa=(0.0, 0.3)).extended((2.0, 0.0, 0.3)).kappa == (0.0, 0.3, 1.0)
    assert d.Grid(eta=(1.0, 2.0, 4.0), kappa=(0.0, 1.0)).extended((2.0, 0.0, 1.0)) is None


def test_a_choice_inside_every_grid_or_on_a_single_value_grid_grows_nothing():
    assert d.Grid(eta=(1.0, 2.0, 4.0)).extended((2.0, 0.0, 0.0)) is None
    assert d.Grid(eta=(1.0, 2.0, 4.0), alpha=(0.5,), kappa=(0.1,)).extended((2.0, 0.5, 0.1)) is None
    assert d.Grid(eta=(1.0, 2.0, 4.0), alpha=(0.0, 0.5)).extended((2.0, 0.0, 0.0)) is None   # alpha 0: no edge
    assert d.Grid(eta=(2.0,)).extended((2.0, 0.0, 0.0)).eta == (2.0, 4.0)     # one eta: its largest, grown up


def test_an_alpha_or_kappa_grid_whose_largest_value_is_0_does_not_grow():
    """Doubling 0 gives 0, and kappa grows fourfold from a positive value only: a grid of zeros stays as it is."""
    assert d.Grid(eta=(1.0, 2.0, 4.0), alpha=(0.0, 0.0), kappa=(0.0, 0.0)).extended((2.0, 0.0, 0.0)) is None


def test_the_lowest_score_wins_and_ties_go_to_the_smaller_eta_then_alpha_then_kappa():
    assert d.best({(2.0, 0.0, 0.0): 0.1, (1.0, 0.5, 0.0): 0.1, (1.0, 0.0, 0.1): 0.1, (4.0, 0.0, 0.0): 0.3}) == \
        (1.0, 0.0, 0.1)
    assert d.best({(2.0, 0.0, 0.0): 0.05, (1.0, 0.0, 0.0): 0.1}) == (2.0, 0.0, 0.0)


def result(eta, alpha, kappa, values: dict, budget=100) -> dict:
    return {"task": {"schedule": {"learning_rate": eta, "proximal_alpha": alpha, "proximal_kappa": kappa}},
            "runs": {str(s): {str(budget): {"exploitability_average": v}} for s, v in values.items()}}


def test_a_choices_score_is_the_mean_over_every_development_seed_of_all_its_tasks():
    got = d.scores([result(1.0, 0.0, 0.0, {1: 0.2, 2: 0.4}), result(1.0, 0.0, 0.0, {3: 0.9}),
                    result(2.0, 0.0, 0.0, {1: 0.1})], 100)
    assert got == {(1.0, 0.0, 0.0): pytest.approx(0.5, rel=1e-15), (2.0, 0.0, 0.0): 0.1}


def fake_run(score_of):
    """`run(tasks)` whose every development seed scores `score_of(eta)` at the task's one budget."""
    def run(tasks):
        out = []
        for t in tasks:
            assert (t.game, t.arm) == ("kuhn", "grpo")
            s = dict(t.schedule)
            out.append(result(s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"],
                              {seed: score_of(s["learning_rate"]) for seed in t.seeds}, t.budgets[0]))
        return out
    return run


def test_tuning_extends_the_grid_until_the_choice_sits_inside_it():
    got = d.tune(fake_run(lambda eta: abs(eta - 8.0)), "kuhn", d.LITERAL, "grpo", Schedule(),
                 d.Grid(eta=(1.0, 2.0)), (5, 6), 100)
    # 2 (edge) -> 4 (edge) -> 8 (edge) -> 16: 8 sits inside after three extensions
    assert (got["eta"], got["alpha"], got["kappa"], got["score"]) == (8.0, 0.0, 0.0, 0.0)
    assert (got["extensions"], got["at_edge"]) == (3, False)
    assert [g["eta"] for g in got["grid"]] == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert got["grid"][0] == {"eta": 1.0, "alpha": 0.0, "kappa": 0.0, "score": 7.0}


def test_tuning_stops_after_max_extensions_and_says_the_choice_is_at_the_edge():
    got = d.tune(fake_run(lambda eta: abs(eta - 64.0)), "kuhn", d.LITERAL, "grpo", Schedule(),
                 d.Grid(eta=(1.0, 2.0), max_extensions=2), (5,), 100)
    assert (got["eta"], got["extensions"], got["at_edge"]) == (8.0, 2, True)


def test_tuning_runs_each_choice_once():
    seen = []
    run = fake_run(lambda eta: abs(eta - 4.0))

    def counting(tasks):
        seen.extend(dict(t.schedule)["learning_rate"] for t in tasks)
        return run(tasks)
    d.tune(counting, "kuhn", d.LITERAL, "grpo", Schedule(), d.Grid(eta=(1.0, 2.0)), (5,), 100)
    assert sorted(seen) == [1.0, 2.0, 4.0, 8.0]


def test_tuning_tasks_run_the_development_seeds_at_the_tuning_budget_one_task_per_choice():
    tasks = d.tuning_tasks("kuhn", d.CONVERGING, "ppo", Schedule(), GRID, (5, 6), 300)
    assert len(tasks) == 8 and {t.budgets for t in tasks} == {(300,)} and {t.seeds for t in tasks} == {(5, 6)}
    assert {t.learner for t in tasks} == {"tune-converging"} and {t.arm for t in tasks} == {"ppo"}
    assert {t.game for t in tasks} == {"kuhn"}
    chosen = sorted((dict(t.schedule)["learning_rate"], dict(t.schedule)["proximal_alpha"],
                     dict(t.schedule)["proximal_kappa"]) for t in tasks)
    assert chosen == sorted(GRID.combos())


# ----- what a study shows ----------------------------------------------------------------------------------------
def record(e: float) -> dict:
    return {q: e if q.startswith("exploitability") else 1.0 for q in QUANTITIES}


def test_the_runs_table_gathers_each_tasks_runs_by_learner_and_arm():
    results = [{"task": {"learner": "literal", "arm": "grpo"}, "runs": {"1": {"100": {"x": 1}}}},
               {"task": {"learner": "literal", "arm": "grpo"}, "runs": {"2": {"100": {"x": 2}}}},
               {"task": {"learner": "converging", "arm": "ppo"}, "runs": {"1": {"100": {"x": 3}}}}]
    assert d.runs_table(results) == {"literal": {"grpo": {"1": {"100": {"x": 1}}, "2": {"100": {"x": 2}}}},
                                     "converging": {"ppo": {"1": {"100": {"x": 3}}}}}


def test_the_calls_to_a_threshold_are_the_log_log_crossing():
    curve = {"100": {"exploitability_average": 0.4}, "1000": {"exploitability_average": 0.1}}
    assert d.calls_to(curve, 0.2) == pytest.approx(100 * 10 ** 0.5, rel=1e-12)
    assert d.calls_to(curve, 0.05) is None


def test_one_value_has_a_mean_and_no_interval_and_none_has_neither():
    assert d._interval([0.25]) == {"mean": 0.25, "low": None, "high": None, "n": 1}
    assert d._interval([]) == {"mean": None, "low": None, "high": None, "n": 0}


def test_the_summary_of_two_seeds_by_hand():
    runs = {"converging": {"cp_grpo": {"1": {"100": record(0.2)}, "2": {"100": record(0.4)}},
                           "independent": {"1": {"100": record(0.5)}, "2": {"100": record(0.5)},
                                           "3": {"100": record(0.9)}}}}
    got = d.summary(runs, [100], [0.3])
    entry = got["by_budget"]["converging"]["100"]
    cp = entry["arms"]["cp_grpo"]["exploitability_average"]
    assert (cp["mean"], cp["n"]) == (pytest.approx(0.3, rel=1e-12), 2)
    # sd of (0.2, 0.4) = 0.1 * sqrt(2); half width = t * sd / sqrt(2) = 0.1 t
    assert (cp["low"], cp["high"]) == (pytest.approx(0.3 - 0.1 * T_ONE, rel=1e-9),
                                      pytest.approx(0.3 + 0.1 * T_ONE, rel=1e-9))
    assert set(entry["differences"]) == {"independent - cp_grpo"}          # never cp_grpo against itself
    diff = entry["differences"]["independent - cp_grpo"]                  # seeds 1 and 2 only: 0.3, 0.1
    assert (diff["mean"], diff["n"], diff["cp_grpo_lower"]) == (pytest.approx(0.2, rel=1e-12), 2, 2)
    assert diff["high"] - diff["mean"] == pytest.approx(0.1 * T_ONE, rel=1e-9)
    th = got["thresholds"]["converging"]["cp_grpo"]["0.3"]
    assert th == {"reached": 1, "seeds": 2, "geometric_mean": pytest.approx(100.0, rel=1e-12), "low": None,
                  "high": None}
    assert got["thresholds"]["converging"]["independent"]["0.3"]["reached"] == 0


def test_a_budget_is_summarised_only_for_arms_every_seed_reached_and_differences_only_beside_cp_grpo():
    runs = {"literal": {"cp_grpo": {"1": {"100": record(0.2)}, "2": {"100": record(0.3), "200": record(0.1)}},
                        "grpo": {"1": {"100": record(0.4), "200": record(0.3)}}}}
    got = d.summary(runs, [100, 200, 300], [])
    assert set(got["by_budget"]["literal"]) == {"100", "200"}
    assert set(got["by_budget"]["literal"]["200"]["arms"]) == {"grpo"}
    assert got["by_budget"]["literal"]["200"]["differences"] == {}
    assert got["by_budget"]["literal"]["100"]["differences"]["grpo - cp_grpo"]["cp_grpo_lower"] == 1
    assert got["thresholds"] == {"literal": {}}


def test_a_budget_no_arm_reached_on_every_seed_is_skipped_and_later_budgets_still_summarised():
    runs = {"literal": {"grpo": {"1": {"100": record(0.4), "300": record(0.2)}, "2": {"100": record(0.5),
                                                                                      "300": record(0.1)}}}}
    assert set(d.summary(runs, [100, 200, 300], [])["by_budget"]["literal"]) == {"100", "300"}


def test_seeds_where_cp_grpo_is_lower_are_those_with_a_difference_strictly_above_0():
    runs = {"literal": {"cp_grpo": {s: {"100": record(0.2)} for s in "123"},
                        "grpo": {"1": {"100": record(0.2)}, "2": {"100": record(0.3)}, "3": {"100": record(0.1)}}}}
    diff = d.summary(runs, [100], [])["by_budget"]["literal"]["100"]["differences"]["grpo - cp_grpo"]
    assert diff["cp_grpo_lower"] == 1                                     # a tie (seed 1) is not lower
