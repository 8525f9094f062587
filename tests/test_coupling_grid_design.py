"""The coupling question's 2 x 2 as a study designs and stores it (`grid_bases`, `coupling_grid_tasks`,
`coupling_grid_record` of `oscc_core.learning.study_design`), and tuning grids that grow past either edge
(`Grid.extended`, `Grid.at_edge_that_cannot_grow`); every expected value is written out by hand.

The 2 x 2 (DESIGN section 8): coupling (CP-GRPO, independent) x history baseline (on, off), each pair of arms at
one shared choice, CP-GRPO's and independent's in turn: four cells (owner x baseline), each running both arms on
every seed at the study's recorded budgets with the converging learner's schedule at the owner's choice and every
other field the base's.  A base without the baseline has nothing to switch: no cells.  A grid grows past the edge
its best choice sits on: eta doubles up or halves down, alpha doubles up or halves below its smallest positive
value, kappa grows fourfold up to 1 or quarters below its smallest positive value; 0 (switched off) never extends
and kappa never passes 1; those ends are named by `at_edge_that_cannot_grow`.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.learning import study_design as d
from oscc_core.learning.loop import Schedule

UNBOUNDED = 2 ** 62
#: Every field of the base schedule, written out (away from the defaults wherever a field allows it).
BASE = {"iterations": 40, "decision_points": 32, "epochs": 3, "epsilon": 0.25, "learning_rate": 1.0, "group_size": 5,
        "budget": None, "gae_lambda": 0.9, "value_rate": 0.4, "decision_law": "on_policy", "proximal_alpha": 0.0,
        "proximal_kappa": 0.0, "baseline": "history", "baseline_floor": 0.5, "alpha_decay": "constant",
        "alpha_horizon": 1.0, "average_power": 1}
CHOICES = {"cp_grpo": {"eta": 32.0, "alpha": 0.25, "kappa": 0.003, "score": 0.1},
           "independent": {"eta": 16.0, "alpha": 0.5, "kappa": 0.001, "score": 0.2},
           "grpo": {"eta": 8.0, "alpha": 1.0, "kappa": 0.01}}


def base(**changes) -> Schedule:
    return Schedule(**{**BASE, **changes})


# ----- the bases of the 2 x 2 ----------------------------------------------------------------------------------
def test_a_base_with_the_history_baseline_gives_it_on_and_off_and_changes_nothing_else():
    bases = d.grid_bases(base())
    assert set(bases) == {"history", "none"}
    assert bases["history"].as_dict() == BASE
    assert bases["none"].as_dict() == {**BASE, "baseline": "none"}


def test_a_base_with_another_baseline_gives_the_history_baseline_on_and_off():
    # the 2 x 2 switches the history baseline, whatever baseline the base carried
    bases = d.grid_bases(base(baseline="policy"))
    assert bases["history"].as_dict() == BASE
    assert bases["none"].as_dict() == {**BASE, "baseline": "none"}


def test_a_base_without_the_baseline_has_no_bases_and_no_cells():
    assert d.grid_bases(base(baseline="none")) == {}
    assert d.coupling_grid_tasks("kuhn", CHOICES, base(baseline="none"), (13, 17), 1000, (1, 10)) == {}


# ----- its tasks -------------------------------------------------------------------------------------------------
def test_the_2x2_has_four_cells_each_owners_choice_with_the_baseline_on_and_off():
    tasks = d.coupling_grid_tasks("kuhn", CHOICES, base(), (13, 17), 1000, (1, 10))
    assert set(tasks) == {("cp_grpo", "history"), ("cp_grpo", "none"), ("independent", "history"),
                          ("independent", "none")}


def test_each_cell_runs_both_arms_on_every_seed_in_groups_at_the_recorded_budgets_under_the_grid_label():
    tasks = d.coupling_grid_tasks("leduc", CHOICES, base(), (13, 17, 19), 1000, (1, 10), runs_per_task=2,
                                  per_decade=1)
    for cell in tasks.values():
        # both arms, seeds (13, 17) then (19,); budgets 100, 1000, 10,000 (1000 x 1 and x 10, and a tenth of it)
        assert [(t.game, t.learner, t.arm, t.seeds, t.budgets, t.keep_table) for t in cell] == [
            ("leduc", "coupling-grid", "cp_grpo", (13, 17), (100, 1000, 10_000), False),
            ("leduc", "coupling-grid", "cp_grpo", (19,), (100, 1000, 10_000), False),
            ("leduc", "coupling-grid", "independent", (13, 17), (100, 1000, 10_000), False),
            ("leduc", "coupling-grid", "independent", (19,), (100, 1000, 10_000), False)]


@pytest.mark.parametrize("owner, baseline", [("cp_grpo", "history"), ("cp_grpo", "none"),
                                             ("independent", "history"), ("independent", "none")])
def test_each_cells_schedule_is_the_owners_choice_with_the_baseline_on_or_off_and_every_other_field_the_bases(
        owner, baseline):
    tasks = d.coupling_grid_tasks("kuhn", CHOICES, base(), (13, 17), 1000, (1, 10))
    c = CHOICES[owner]
    expected = {**BASE, "learning_rate": c["eta"], "proximal_alpha": c["alpha"], "proximal_kappa": c["kappa"],
                "decision_law": "counterfactual", "baseline": baseline, "budget": None, "iterations": UNBOUNDED}
    for task in tasks[(owner, baseline)]:
        assert dict(task.schedule) == expected


def test_both_arms_of_a_cell_share_one_schedule_and_the_two_owners_differ():
    tasks = d.coupling_grid_tasks("kuhn", CHOICES, base(), (13,), 1000, (1,))
    for cell in tasks.values():
        assert len({t.schedule for t in cell}) == 1
    assert tasks[("cp_grpo", "history")][0].schedule != tasks[("independent", "history")][0].schedule


def test_a_choice_without_alpha_or_kappa_runs_without_the_pull_and_the_magnet():
    choices = {"cp_grpo": {"eta": 4.0}, "independent": {"eta": 2.0}}
    s = dict(d.coupling_grid_tasks("kuhn", choices, base(), (13,), 1000, (1,))[("cp_grpo", "none")][0].schedule)
    assert (s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]) == (4.0, 0.0, 0.0)


# ----- its record -------------------------------------------------------------------------------------------------
def result(arm: str, runs: dict) -> dict:
    return {"task": {"learner": "coupling-grid", "arm": arm}, "runs": runs}


def test_the_stored_2x2_holds_each_cells_choice_base_and_runs_by_arm_and_seed():
    r = {"13": {"100": {"exploitability_average": 0.5}}}
    s = {"17": {"100": {"exploitability_average": 0.25}}}
    results = {("cp_grpo", "history"): [result("cp_grpo", r), result("cp_grpo", s), result("independent", r)],
               ("independent", "none"): [result("independent", s)]}
    assert d.coupling_grid_record(CHOICES, base(), results) == {
        "arms": ["cp_grpo", "independent"], "baselines": ["history", "none"],
        "cells": {"cp_grpo": {"history": {"choice": {"eta": 32.0, "alpha": 0.25, "kappa": 0.003},
                                          "base": BASE,
                                          "runs": {"cp_grpo": {**r, **s}, "independent": r}}},
                  "independent": {"none": {"choice": {"eta": 16.0, "alpha": 0.5, "kappa": 0.001},
                                           "base": {**BASE, "baseline": "none"},
                                           "runs": {"independent": s}}}}}


# ----- grids that grow past either edge ----------------------------------------------------------------------
ETA = (16.0, 32.0, 64.0)


ALPHAS, KAPPAS = (0.125, 0.25, 0.5), (0.001, 0.003, 0.01)


@pytest.mark.parametrize("grid, choice, grown", [
    (d.Grid(eta=ETA, alpha=ALPHAS), (32.0, 0.5, 0.0), d.Grid(eta=ETA, alpha=(0.125, 0.25, 0.5, 1.0))),
    (d.Grid(eta=ETA, alpha=ALPHAS), (32.0, 0.125, 0.0), d.Grid(eta=ETA, alpha=(0.0625, 0.125, 0.25, 0.5))),
    (d.Grid(eta=ETA, kappa=KAPPAS), (32.0, 0.0, 0.01), d.Grid(eta=ETA, kappa=(0.001, 0.003, 0.01, 0.04))),
    (d.Grid(eta=ETA, kappa=KAPPAS), (32.0, 0.0, 0.001), d.Grid(eta=ETA, kappa=(0.00025, 0.001, 0.003, 0.01))),
], ids=["alpha at its largest doubles past it", "alpha at its smallest positive value halves below it",
        "kappa at its largest grows fourfold", "kappa at its smallest positive value quarters below it"])
def test_a_choice_at_an_edge_of_alpha_or_kappa_grows_that_grid_past_it(grid, choice, grown):
    assert grid.extended(choice) == grown


def test_kappa_grows_up_to_1_and_stops_there():
    assert d.Grid(eta=ETA, kappa=(0.1, 0.5)).extended((32.0, 0.0, 0.5)) == d.Grid(eta=ETA, kappa=(0.1, 0.5, 1.0))
    assert d.Grid(eta=ETA, kappa=(0.25, 1.0)).extended((32.0, 0.0, 1.0)) is None


def test_a_choice_of_0_never_extends_alpha_or_kappa():
    assert d.Grid(eta=ETA, alpha=(0.0, 0.5), kappa=(0.0, 0.1)).extended((32.0, 0.0, 0.0)) is None


def test_a_positive_value_bracketed_by_0_below_and_a_larger_value_above_is_inside_the_grid():
    # 0 is the grid's lower end: 0.5 and 0.1 sit between two tried values
    assert d.Grid(eta=ETA, alpha=(0.0, 0.5, 2.0), kappa=(0.0, 0.1, 0.4)).extended((32.0, 0.5, 0.1)) is None


def test_eta_halves_below_its_smallest_and_doubles_past_its_largest():
    assert d.Grid(eta=ETA).extended((16.0, 0.0, 0.0)) == d.Grid(eta=(8.0, 16.0, 32.0, 64.0))
    assert d.Grid(eta=ETA).extended((64.0, 0.0, 0.0)) == d.Grid(eta=(16.0, 32.0, 64.0, 128.0))


def test_a_choice_at_an_edge_of_every_grid_grows_every_grid_and_keeps_max_extensions():
    grid = d.Grid(eta=ETA, alpha=(0.125, 0.25, 0.5), kappa=(0.001, 0.003, 0.01), max_extensions=6)
    assert grid.extended((16.0, 0.125, 0.01)) == d.Grid(eta=(8.0, 16.0, 32.0, 64.0),
                                                        alpha=(0.0625, 0.125, 0.25, 0.5),
                                                        kappa=(0.001, 0.003, 0.01, 0.04), max_extensions=6)


def test_single_value_alpha_and_kappa_grids_never_grow():
    assert d.Grid(eta=ETA, alpha=(0.5,), kappa=(0.1,)).extended((32.0, 0.5, 0.1)) is None


def test_alpha_at_0_with_larger_values_tried_is_an_edge_that_cannot_grow():
    assert d.Grid(eta=ETA, alpha=(0.0, 0.5)).at_edge_that_cannot_grow((32.0, 0.0, 0.0)) == ("alpha",)


def test_kappa_at_0_or_at_its_cap_1_is_an_edge_that_cannot_grow():
    grid = d.Grid(eta=ETA, kappa=(0.0, 0.25, 1.0))
    assert grid.at_edge_that_cannot_grow((32.0, 0.0, 0.0)) == ("kappa",)
    assert grid.at_edge_that_cannot_grow((32.0, 0.0, 1.0)) == ("kappa",)


def test_alpha_and_kappa_both_off_are_both_named_alpha_first():
    grid = d.Grid(eta=ETA, alpha=(0.0, 0.5), kappa=(0.0, 0.1))
    assert grid.at_edge_that_cannot_grow((16.0, 0.0, 0.0)) == ("alpha", "kappa")


def test_positive_choices_and_single_value_grids_sit_at_no_edge_that_cannot_grow():
    assert d.Grid(eta=ETA, alpha=(0.0, 0.5), kappa=(0.0, 0.1)).at_edge_that_cannot_grow((32.0, 0.5, 0.1)) == ()
    assert d.Grid(eta=ETA).at_edge_that_cannot_grow((32.0, 0.0, 0.0)) == ()        # alpha, kappa: (0.0,) only


# ----- properties -----------------------------------------------------------------------------------------------
positive = st.sampled_from([0.0005, 0.001, 0.003, 0.01, 0.1, 0.25, 0.5, 1.0, 2.0])


@st.composite
def grid_and_choice(draw, name):
    values = tuple(sorted(draw(st.sets(positive, min_size=2, max_size=4)) | draw(st.sets(st.just(0.0)))))
    if name == "alpha":
        return d.Grid(eta=ETA, alpha=values), (32.0, draw(st.sampled_from(values)), 0.0)
    values = tuple(v for v in values if v <= 1.0)
    if len(values) < 2:
        values = (0.0, 0.5)
    return d.Grid(eta=ETA, kappa=values), (32.0, 0.0, draw(st.sampled_from(values)))


@given(st.sampled_from(["alpha", "kappa"]).flatmap(lambda n: st.tuples(st.just(n), grid_and_choice(n))))
def test_a_choice_at_either_end_of_alpha_or_kappa_extends_it_or_is_named_as_an_edge_that_cannot_grow(case):
    name, (grid, choice) = case
    values, value = getattr(grid, name), choice[1 if name == "alpha" else 2]
    grown = grid.extended(choice)
    new = getattr(grown, name) if grown is not None else values
    named = name in grid.at_edge_that_cannot_grow(choice)
    if value == 0 or (name == "kappa" and value == 1.0):
        assert new == values and named                       # 0 never extends; kappa stops at 1
    elif value == max(values):
        factor = 2 if name == "alpha" else 4
        assert new == values + (min(1.0, factor * value) if name == "kappa" else factor * value,) and not named
    elif value == min(values):
        assert new == ((value / 2 if name == "alpha" else value / 4),) + values and not named
    else:
        assert new == values and not named                   # inside: nothing grows
    assert all(v <= 1.0 for v in getattr(grown or grid, "kappa"))
