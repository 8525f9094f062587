"""The learner options and the density of recorded budgets as study parameters (issue 33, phase 2's plumbing).

At the notebooks' defaults the parameters reproduce the committed studies' designs and operating point byte for byte
(checked against the committed files themselves, not against the code's output); away from them the design records
them, the converging learner (never the literal one) takes the named options, the recorded budgets follow the
density (neighbours' ratio worked out from the decades spanned), and the transfer chapter's operating point follows
the Leduc study's options, so a regenerated Leduc study makes the committed Kuhn study stale.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from notebook_runs import parameter_defaults, runnable_defaults

from oscc_core.chapters.solver import parameters as solver_parameters
from oscc_core.chapters.solver import study as solver_study
from oscc_core.chapters.transfer import parameters as transfer_parameters
from oscc_core.chapters.transfer import study as transfer_study
from oscc_core.learning import study_design
from oscc_core.learning.loop import Schedule
from oscc_core.reporting import learning_study
from oscc_core.reporting.params import ParameterError

ROOT = Path(__file__).resolve().parent.parent
SOLVER, TRANSFER = ROOT / "results" / "05_solver_study.json", ROOT / "results" / "06_transfer_study.json"
FAST = {"baseline": "history", "baseline_floor": 0.5, "alpha_decay": "inverse_sqrt", "alpha_horizon": 30.0,
        "average_power": 2}      # benchmarks/learner_ideas.md, "The recommended learner"
STEADY = {"baseline": "history", "baseline_floor": 0.5, "alpha_decay": "constant",
          "average_power": 1}    # benchmarks/learner_ideas.md, part 2: the committed studies' learner


def solver(tmp_path, **over):
    return solver_parameters.validate({**runnable_defaults("05_solver"), "output_dir": str(tmp_path / "out"),
                                       "study_file": str(SOLVER), **over})


def transfer(tmp_path, leduc: Path = SOLVER, **over):
    return transfer_parameters.validate({**parameter_defaults("06_transfer"), "output_dir": str(tmp_path / "out"),
                                         "leduc_study": str(leduc), "study_file": str(TRANSFER), **over})


# ----- the defaults keep the committed bytes ----------------------------------------------------------------
def test_at_the_defaults_the_solver_design_is_the_committed_files_design(tmp_path):
    committed = json.loads(SOLVER.read_text())
    p = solver(tmp_path)
    design = solver_study.design_of(p, committed["design"]["seeds"], committed["design"]["multiples"]).record()
    assert json.loads(json.dumps(design)) == committed["design"]
    assert (design["converging_options"], design["curve_per_decade"]) == ("steady", 24)   # the committed learner's


def test_at_the_defaults_the_transfer_chapter_freezes_the_committed_operating_point(tmp_path):
    p = transfer(tmp_path)
    op = transfer_study.converging_operating_point(p, transfer_study.leduc_choices(p))
    assert op.digest == json.loads(TRANSFER.read_text())["operating_point"]["digest"]


# ----- bad values -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, value", [("converging_options", "faster"), ("converging_options", None),
                                         ("curve_per_decade", 0), ("curve_per_decade", 65),
                                         ("curve_per_decade", 4.5), ("curve_per_decade", "24")])
def test_a_bad_option_set_or_density_is_refused_naming_the_parameter(tmp_path, name, value):
    with pytest.raises(ParameterError, match=name):
        solver(tmp_path, **{name: value, "study_file": ""})
    assert not (tmp_path / "out").exists()


def test_options_other_than_the_shown_studys_are_refused_before_any_run(tmp_path):
    with pytest.raises(ParameterError, match=r"converging_options must be 'steady', the options of the study shown"):
        solver(tmp_path, converging_options="none")
    assert solver(tmp_path, curve_per_decade=4).curve_per_decade == 4      # only shared records are compared


# ----- away from the defaults ---------------------------------------------------------------------------------
def test_the_fast_design_records_its_options_its_grid_and_its_density(tmp_path):
    p = solver(tmp_path, converging_options="fast", curve_per_decade=24, study_file="")
    design = json.loads(json.dumps(solver_study.design_of(p, [13, 17], [1, 10, 100, 160]).record()))
    assert (design["converging_options"], design["curve_per_decade"]) == ("fast", 24)
    assert {k: design["base"][k] for k in FAST} == FAST
    assert design["grids"]["converging"] == {"eta": [32.0, 64.0, 128.0], "alpha": [0.25, 0.5, 1.0],
                                             "kappa": [0.001, 0.003, 0.01], "max_extensions": 4}
    budgets = design["recorded_budgets"]
    # 6,144 to 9,830,400 calls: log10(1600) decades, 24 a decade -> 77 gaps of 1600^(1/77) (rounded to integers),
    # with 61,440, 614,400 and 6,144,000 inserted
    assert budgets[0] == 6144 and budgets[-1] == 9_830_400 and len(budgets) == 78 + 3
    assert {61_440, 614_400, 6_144_000} <= set(budgets)
    assert max(b / a for a, b in zip(budgets, budgets[1:])) <= 1600 ** (1 / 77) + 1e-4


def test_the_converging_learner_takes_the_options_and_the_literal_learner_never_does(tmp_path):
    p = solver(tmp_path, converging_options="fast", curve_per_decade=24, study_file="")
    d = solver_study.design_of(p, [13], [1, 10])
    choices = {learner: {arm: {"eta": 8.0, "alpha": 0.5, "kappa": 0.01} for arm in study_design.ARMS}
               for learner in study_design.LEARNERS}
    tasks = study_design.study_tasks(d.game, choices, d.base, d.seeds, d.budget, d.multiples,
                                     per_decade=d.curve_per_decade)
    for t in tasks:
        fields = dict(t.schedule)
        if t.learner == study_design.CONVERGING:
            assert {k: fields[k] for k in FAST} == FAST
        else:
            assert not set(FAST) & set(fields)          # the literal schedule's record is the one it always was
        assert list(t.budgets) == list(study_design.curve_budgets(d.budget, [1, 10], 24))


def test_a_design_whose_base_does_not_carry_its_named_options_is_refused():
    with pytest.raises(ValueError, match="does not carry the converging options"):
        learning_study.LearningStudy("leduc", 1000, (1,), (13,), (1001,), (0.2,), Schedule(),
                                     converging_options="fast")


def test_a_leduc_study_with_other_options_freezes_another_operating_point_and_stales_the_kuhn_study(tmp_path):
    body = json.loads(SOLVER.read_text())
    for key in ("converging_options", "curve_per_decade"):     # the design of a study without the options
        body["design"].pop(key)
    for key in FAST:
        body["design"]["base"].pop(key)
    leduc = tmp_path / "plain_study.json"
    leduc.write_text(json.dumps(body))
    p = transfer(tmp_path, leduc)
    rule = transfer_study.leduc_choices(p)["rule"]
    assert "converging_options" not in rule and "curve_per_decade" not in rule
    op = transfer_study.converging_operating_point(p, transfer_study.leduc_choices(p))
    assert op.digest != json.loads(TRANSFER.read_text())["operating_point"]["digest"]
    assert not set(FAST) & set(op.schedule.as_dict()) or \
        {k: op.schedule.as_dict()[k] for k in FAST} != FAST
    with pytest.raises(transfer_study.StaleStudy, match="rerun the Kuhn study"):
        transfer_study.run(p, op)


def test_the_solver_chapter_builds_the_same_steady_operating_point_as_the_transfer_chapter(tmp_path):
    body = json.loads(SOLVER.read_text())                   # the committed study ran the steady options
    assert body["design"]["converging_options"] == "steady" and \
        {k: body["design"]["base"][k] for k in STEADY} == STEADY
    p = transfer(tmp_path, SOLVER)
    q = solver(tmp_path, converging_options="steady", study_file="")
    assert solver_study.converging_operating_point(q, body).digest == \
        transfer_study.converging_operating_point(p, transfer_study.leduc_choices(p)).digest


def test_the_density_parameter_is_the_record_of_curve_budgets_at_the_committed_density():
    assert study_design.DEFAULT_PER_DECADE == 4
    committed = json.loads(SOLVER.read_text())["design"]
    assert list(study_design.curve_budgets(committed["budget"], committed["multiples"],
                                           committed["curve_per_decade"])) == committed["recorded_budgets"]
