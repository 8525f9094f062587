"""The study check's parts for the coupling 2 x 2 (`grid_parts`, `tasks_of` of
`oscc_core.reporting.study_verification`): one part per cell (owner x baseline), whose rerun is both arms under the
grid's learner label, with the converging learner's schedule at the owner's choice on the cell's own base (the
history baseline on or off), at exactly the budgets the cell recorded for the seed.

Expected values are written by hand, read off `tests/data/tiny_coupling_grid_study.json` (the design and
``coupling_grid`` of a tiny real Leduc study: budgets 200 to 8,000, seeds 13, 17, 19, CP-GRPO's choice eta 32,
independent's eta 16), or come from running a 2 x 2 by its design and rerunning it by its parts.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Schedule
from oscc_core.learning.study import run_task
from oscc_core.reporting import study_verification as sv
from oscc_core.reporting.results import clean

UNBOUNDED = 2 ** 62
TINY = Path(__file__).parent / "data" / "tiny_coupling_grid_study.json"
BASE = {"iterations": 40, "decision_points": 16, "epochs": 4, "epsilon": 0.2, "learning_rate": 1.0, "group_size": 4,
        "budget": None, "gae_lambda": 0.95, "value_rate": 0.5, "decision_law": "on_policy", "proximal_alpha": 0.0,
        "proximal_kappa": 0.0, "baseline": "history", "baseline_floor": 0.5, "alpha_decay": "constant",
        "alpha_horizon": 1.0, "average_power": 1}
CP_CHOICE = {"eta": 2.0, "alpha": 0.5, "kappa": 0.1}
IND_CHOICE = {"eta": 4.0, "alpha": 0.25, "kappa": 0.01}


def rec(x):
    return {"exploitability_average": x}


def grid_cell(choice, baseline, runs):
    return {"choice": choice, "base": {**BASE, "baseline": baseline}, "runs": runs}


RUNS = {"cp_grpo": {"13": {"100": rec(0.5), "1000": rec(0.25)}, "17": {"100": rec(0.75)}},
        "independent": {"13": {"1000": rec(0.5)}, "17": {"100": rec(0.5), "1000": rec(0.125)}}}
STUDY = {"design": {"game": "kuhn", "seeds": [13, 17], "base": BASE},
         "choices": {"converging": {"cp_grpo": CP_CHOICE}}, "runs": {"converging": {"cp_grpo": RUNS["cp_grpo"]}},
         "coupling_grid": {"arms": ["cp_grpo", "independent"], "baselines": ["history", "none"],
                           "cells": {"cp_grpo": {"history": grid_cell(CP_CHOICE, "history", RUNS),
                                                 "none": grid_cell(CP_CHOICE, "none", RUNS)},
                                     "independent": {"history": grid_cell(IND_CHOICE, "history", RUNS),
                                                     "none": grid_cell(IND_CHOICE, "none", RUNS)}}}}


def test_a_study_with_a_2x2_has_its_own_part_and_then_one_part_per_cell():
    assert [p.label for p in sv.parts_of(STUDY, "05_x")] == [
        "05_x", "05_x/coupling_grid/cp_grpo/history", "05_x/coupling_grid/cp_grpo/none",
        "05_x/coupling_grid/independent/history", "05_x/coupling_grid/independent/none"]


def test_a_study_without_a_2x2_has_no_cell_parts():
    plain = {k: v for k, v in STUDY.items() if k != "coupling_grid"}
    assert sv.grid_parts(plain, "05_x") == [] and len(sv.parts_of(plain, "05_x")) == 1
    assert sv.grid_parts({**plain, "coupling_grid": {}}, "05_x") == []


def test_a_cell_part_is_both_arms_at_the_owners_choice_on_the_cells_base_with_the_cells_runs():
    part = sv.grid_parts(STUDY, "05_x")[3]                       # independent's choice, baseline off
    assert (part.label, part.game, part.seeds, part.checkpoints) == ("05_x/coupling_grid/independent/none", "kuhn",
                                                                     (13, 17), None)
    assert part.base == Schedule(**{**BASE, "baseline": "none"})
    assert part.choices == {"coupling-grid": {"cp_grpo": IND_CHOICE, "independent": IND_CHOICE}}
    assert part.runs == {"coupling-grid": RUNS}


@pytest.mark.parametrize("index, choice, baseline", [(0, CP_CHOICE, "history"), (1, CP_CHOICE, "none"),
                                                     (2, IND_CHOICE, "history"), (3, IND_CHOICE, "none")])
def test_a_cells_rerun_is_both_arms_under_the_grid_label_with_the_converging_schedule_at_its_choice(
        index, choice, baseline):
    part = sv.grid_parts(STUDY, "05_x")[index]
    tasks = sv.tasks_of(part, 17)
    assert [(t.game, t.learner, t.arm, t.seeds, t.keep_table) for t in tasks] == [
        ("kuhn", "coupling-grid", "cp_grpo", (17,), False), ("kuhn", "coupling-grid", "independent", (17,), False)]
    expected = {**BASE, "learning_rate": choice["eta"], "proximal_alpha": choice["alpha"],
                "proximal_kappa": choice["kappa"], "decision_law": "counterfactual", "baseline": baseline,
                "budget": None, "iterations": UNBOUNDED}
    assert all(dict(t.schedule) == expected for t in tasks)


def test_a_cells_rerun_records_exactly_the_budgets_the_cell_recorded_for_the_seed():
    part = sv.grid_parts(STUDY, "05_x")[0]
    assert [(t.arm, t.budgets) for t in sv.tasks_of(part, 13)] == [("cp_grpo", (100, 1000)),
                                                                   ("independent", (1000,))]
    assert [(t.arm, t.budgets) for t in sv.tasks_of(part, 17)] == [("cp_grpo", (100,)),
                                                                   ("independent", (100, 1000))]
    assert [(t.arm, t.budgets) for t in sv.tasks_of(part, 17, up_to=999)] == [("cp_grpo", (100,)),
                                                                              ("independent", (100,))]


# ----- a tiny real study ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    return json.loads(TINY.read_text(encoding="utf-8"))


@pytest.mark.parametrize("index, owner, baseline, eta", [(0, "cp_grpo", "history", 32.0), (1, "cp_grpo", "none", 32.0),
                                                         (2, "independent", "history", 16.0),
                                                         (3, "independent", "none", 16.0)])
def test_each_cell_of_a_real_study_reruns_both_arms_at_its_eight_recorded_budgets(tiny, index, owner, baseline, eta):
    part = sv.grid_parts(tiny, "tiny")[index]
    assert part.label == f"tiny/coupling_grid/{owner}/{baseline}" and part.seeds == (13, 17, 19)
    tasks = sv.tasks_of(part, 19)
    assert [t.arm for t in tasks] == ["cp_grpo", "independent"]
    for t in tasks:
        s = dict(t.schedule)
        assert t.budgets == (200, 370, 684, 1265, 2000, 2339, 4326, 8000)
        assert (s["learning_rate"], s["baseline"], s["decision_law"], s["decision_points"]) == (
            eta, baseline, "counterfactual", 32)


# ----- run by the design, rerun by the parts ----------------------------------------------------------------------
def test_a_2x2_run_by_its_design_is_rerun_record_for_record_by_its_parts():
    base = Schedule(**{**BASE, "decision_points": 8})
    choices = {"cp_grpo": CP_CHOICE, "independent": IND_CHOICE}
    cells = design.coupling_grid_tasks("kuhn", choices, base, (13, 17), 60, (1,), per_decade=1)
    results = {key: [clean(run_task(t)) for t in tasks] for key, tasks in cells.items()}
    body = {"design": {"game": "kuhn", "seeds": [13, 17], "base": base.as_dict()},
            "coupling_grid": design.coupling_grid_record(choices, base, results)}
    parts = sv.grid_parts(body, "x")
    assert len(parts) == 4
    for part in parts:
        check = sv.compare(part, 17, [clean(run_task(t)) for t in sv.tasks_of(part, 17)])
        assert check["differences"] == [] and check["agrees"] and check["records"] == 2 * 2, part.label
    # and the cells differ from one another: the baseline and the owner's choice are each part of what reran
    seventeen = {(o, b): json.dumps(c["runs"]["cp_grpo"]["17"], sort_keys=True)
                 for o, by in body["coupling_grid"]["cells"].items() for b, c in by.items()}
    assert len(set(seventeen.values())) == 4
