"""Learning studies: a run recorded at several budgets, tasks on Dask, stored results and resumption.

The expected values come from runs trained separately (a `Learners` batch stepped by hand with one budget),
from a study run with another number of workers, or from an uninterrupted study: never from the study's own
record of itself.
"""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oscc_core.digest import canonical_json
from oscc_core.learning import study
from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.reporting.study_runner import StudyInterrupted, run_tasks

CONVERGING = Schedule(decision_points=16, learning_rate=8.0, decision_law="counterfactual", proximal_alpha=1.0,
                      proximal_kappa=0.05)


def _alone(game, arm, seed, schedule, budget):
    """A run trained with one budget only, by hand."""
    learners = Learners(game, [RunSpec(arm, seed)], replace(schedule, budget=budget, iterations=study.UNBOUNDED))
    while bool(learners.active().any()):
        learners.step()
    return learners


@pytest.mark.parametrize("arm", ["cp_grpo", "grpo", "ppo"])
def test_each_budget_of_each_seed_of_a_task_is_the_run_trained_with_that_budget_alone(arm):
    budgets, seeds = (150, 700, 2000), (7, 8, 9)
    result = study.run_task(study.Task.make("kuhn", "converging", arm, seeds, CONVERGING, budgets))
    for seed in seeds:
        for b in budgets:
            alone = _alone("kuhn", arm, seed, CONVERGING, b)
            rec = result["runs"][str(seed)][str(b)]
            assert rec["physical_calls"] == alone.ledger.row(0)["physical_calls"] <= b
            assert rec["iterations"] == alone.ledger.row(0)["iterations"]
            assert rec["exploitability_average"] == study.exploitability("kuhn", alone.average_tables()[0])
            assert rec["never_updated"] == alone.coverage()[0]


def test_a_kept_checkpoint_is_the_average_policy_at_the_largest_budget():
    result = study.run_task(study.Task.make("kuhn", "converging", "cp_grpo", (3, 4), CONVERGING, (100, 400), True))
    for seed in (3, 4):
        assert np.array_equal(np.array(result["tables"][str(seed)]),
                              _alone("kuhn", "cp_grpo", seed, CONVERGING, 400).average_tables()[0])


def test_calls_to_a_threshold_interpolate_in_log_calls_and_log_exploitability():
    curve = {"100": {"exploitability_average": 0.4}, "1000": {"exploitability_average": 0.1}}
    # log 0.2 lies halfway between log 0.4 and log 0.1: halfway in log calls, 10**2.5
    assert design.calls_to(curve, 0.2) == pytest.approx(10 ** 2.5)
    assert design.calls_to(curve, 0.05) is None and design.calls_to(curve, 0.5) == 100.0


def test_the_literal_learner_runs_only_cp_grpo_and_independent_past_ten_times_the_budget():
    choices = {"literal": {a: {"eta": 4.0} for a in design.ARMS}, "converging": {"ppo": {"eta": 4.0}}}
    tasks = design.study_tasks("kuhn", choices, Schedule(), [1], 100, [1, 10, 100])
    top = {(t.learner, t.arm): max(t.budgets) for t in tasks}
    assert all(t.seeds == (1,) for t in tasks)
    assert top[("literal", "cp_grpo")] == top[("literal", "independent")] == top[("converging", "ppo")] == 10_000
    assert top[("literal", "grpo")] == top[("literal", "ppo")] == 1_000
    assert dict(next(t for t in tasks if t.learner == "literal").schedule)["decision_law"] == "on_policy"


def test_a_choice_at_the_edge_of_its_grid_extends_the_grid():
    grid = design.Grid(eta=(2.0, 4.0), alpha=(0.0, 1.0), kappa=(0.0, 0.1))
    assert grid.extended((4.0, 0.0, 0.0)).eta == (2.0, 4.0, 8.0)
    assert grid.extended((2.0, 1.0, 0.1)) == replace(grid, eta=(1.0, 2.0, 4.0), alpha=(0.0, 1.0, 2.0),
                                                     kappa=(0.0, 0.1, 0.4))
    assert design.Grid(eta=(1.0, 2.0, 4.0)).extended((2.0, 0.0, 0.0)) is None


def test_tuning_keeps_extending_until_the_choice_is_inside():
    # a made-up score with its minimum at eta 16: a grid of (2, 4) must grow to 32 and choose 16
    def run(tasks):
        out = []
        for t in tasks:
            s = dict(t.schedule)
            out.append({"task": t.record(), "runs": {str(seed): {str(t.budgets[0]): {
                "exploitability_average": abs(np.log2(s["learning_rate"]) - 4) + seed * 1e-3}} for seed in t.seeds}})
        return out
    got = design.tune(run, "kuhn", "literal", "cp_grpo", Schedule(), design.Grid(eta=(2.0, 4.0)), (1, 2), 50)
    assert got["eta"] == 16.0 and got["extensions"] == 3 and not got["at_edge"]
    assert [g["eta"] for g in got["grid"]] == [2.0, 4.0, 8.0, 16.0, 32.0]


TASKS = [study.Task.make("kuhn", "converging", a, s, CONVERGING, (200, 800)) for a in ("cp_grpo", "ppo")
         for s in ((1, 2), (3,), (4, 5, 6))]


def test_one_worker_and_two_workers_give_the_same_bytes(tmp_path):
    one = run_tasks(TASKS, tmp_path / "one", workers=1)
    two = run_tasks(TASKS, tmp_path / "two", workers=2)
    assert one["ran"] == two["ran"] == len(TASKS)
    assert canonical_json(one["results"]) == canonical_json(two["results"])


def test_a_stopped_study_resumes_to_the_bytes_of_an_uninterrupted_one(tmp_path):
    whole = run_tasks(TASKS, tmp_path / "whole", workers=2)
    with pytest.raises(StudyInterrupted):
        run_tasks(TASKS, tmp_path / "stopped", workers=2, stop_after=2)
    assert len(list((tmp_path / "stopped").glob("*.json"))) >= 2
    resumed = run_tasks(TASKS, tmp_path / "stopped", workers=2)
    assert resumed["stored"] >= 2 and resumed["ran"] == len(TASKS) - resumed["stored"]
    assert canonical_json(resumed["results"]) == canonical_json(whole["results"])
    again = run_tasks(TASKS, tmp_path / "stopped", workers=2)            # everything stored: nothing runs
    assert again["ran"] == 0 and canonical_json(again["results"]) == canonical_json(whole["results"])


def test_the_stored_runs_digest_covers_every_module_a_run_loads():
    import subprocess
    import sys
    from pathlib import Path

    from oscc_core.reporting.study_runner import RUN_SOURCES

    code = ("import sys; from oscc_core.learning import study; from oscc_core.learning.loop import Schedule\n"
            "for arm in ('cp_grpo', 'grpo', 'ppo'):\n"
            "    study.run_task(study.Task.make('leduc', 'x', arm, (1, 2), Schedule(decision_points=8,"
            " decision_law='counterfactual', proximal_alpha=1.0), [100]))\n"
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('oscc_core')"
            " and getattr(m, '__file__', None)))")
    files = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    root = Path(study.__file__).resolve().parents[1]
    for f in files:
        rel = Path(f).resolve().relative_to(root).as_posix()
        covered = "/" not in rel or any(rel == p or rel.startswith(p + "/") for p in RUN_SOURCES)
        assert covered, f"{rel} runs in a study task but is not in RUN_SOURCES"


def test_the_runs_do_not_depend_on_how_the_seeds_are_grouped_into_tasks(tmp_path):
    choices = {"converging": {"grpo": {"eta": 4.0, "alpha": 1.0, "kappa": 0.1}}}
    tables = []
    for size in (1, 3):
        tasks = design.study_tasks("kuhn", choices, Schedule(decision_points=16), (5, 6, 7), 100, [1, 3],
                                   runs_per_task=size)
        tables.append(design.runs_table(run_tasks(tasks, tmp_path / str(size), workers=1)["results"]))
    assert canonical_json(tables[0]) == canonical_json(tables[1])


# ----- tasks trained together, and studies on a device -------------------------------------------------------------
TOGETHER = [study.Task.make("kuhn", "converging", a, s, replace(CONVERGING, learning_rate=eta), (150, 700),
                            keep_table=k)
            for a, s, k, eta in (("cp_grpo", (7, 8), True, 8.0), ("ppo", (7,), False, 2.0), ("grpo", (9,), True, 8.0))]


def test_tasks_trained_in_one_batch_give_each_task_its_result_alone():
    together = study.run_tasks_together(TOGETHER)
    assert [canonical_json(r) for r in together] == [canonical_json(study.run_task(t)) for t in TOGETHER]


@pytest.mark.parametrize("budgets, schedule", [((150, 900), CONVERGING),
                                               ((150, 700), replace(CONVERGING, proximal_kappa=0.5))])
def test_only_tasks_with_one_game_budgets_and_schedule_but_the_step_size_train_together(budgets, schedule):
    other = study.Task.make("kuhn", "converging", "cp_grpo", (1,), schedule, budgets)
    with pytest.raises(ValueError, match="share their game, budgets and schedule"):
        study.run_tasks_together([TOGETHER[0], other])


def test_a_study_on_a_device_runs_its_tasks_here_in_batches_with_the_bytes_of_dask(tmp_path, monkeypatch):
    from oscc_core.reporting import study_runner
    batches = []

    def on_this_cpu(tasks, device):                  # a GPU device stands in: the batches run on this CPU
        batches.append((len(tasks), str(device)))
        return study.run_tasks_together(tasks, "cpu")

    monkeypatch.setattr(study_runner, "run_tasks_together", on_this_cpu)
    here = run_tasks(TASKS, tmp_path / "here", device="meta")
    dask = run_tasks(TASKS, tmp_path / "dask", workers=2)
    assert canonical_json(here["results"]) == canonical_json(dask["results"])
    assert batches == [(6, "meta")] and here["workers"] == "in process on meta"
    with pytest.raises(StudyInterrupted):
        run_tasks(TASKS, tmp_path / "stopped", device="meta", stop_after=2)


def test_the_run_line_says_on_how_many_workers_or_in_process_on_which_device():
    from oscc_core.reporting.study_tables import run_text
    line = run_text({"ran": 2, "stored": 1, "seconds": 120.0, "workers": 2})
    assert line.endswith("2 minutes on 2 workers")
    assert run_text({"ran": 3, "stored": 0, "seconds": 60.0, "workers": "in process on cuda:0"}).endswith(
        "1 minutes in process on cuda:0")


def test_a_study_on_a_device_starts_no_dask_cluster(monkeypatch):
    import distributed
    from oscc_core.reporting.learning_study import cluster

    def refuse(*args, **kwargs):
        raise AssertionError("a local Dask cluster was started for a study that runs in process")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    with cluster(2, "", device="meta") as address:
        assert address == ""
    with cluster(2, "tcp://host:8786", device="cpu") as address:
        assert address == "tcp://host:8786"


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
@pytest.mark.parametrize("arm", ["cp_grpo", "grpo", "ppo"])
def test_no_iteration_spends_more_calls_than_its_bound(game, arm):
    import pyspiel
    learners = Learners(game, [RunSpec(arm, 5)], replace(CONVERGING, iterations=6))
    widest = pyspiel.load_game(f"{game}_poker").num_distinct_actions()    # every action is legal somewhere
    per_point = {"cp_grpo": widest, "grpo": CONVERGING.group_size, "ppo": 1}[arm]
    assert learners.most_calls_per_iteration().tolist() == [per_point * CONVERGING.decision_points]
    spent = []
    for _ in range(6):
        before = learners.ledger.row(0)["physical_calls"]
        learners.step()
        spent.append(learners.ledger.row(0)["physical_calls"] - before)
    assert 0 < max(spent) <= per_point * CONVERGING.decision_points


def _brute_quiet(budget, physical, most, active):
    """The quiet iterations counted one by one: the first k at which an active run could reach the budget."""
    k = 0
    while active.any() and all(p + (k + 1) * m < budget for p, m, a in zip(physical, most, active) if a):
        k += 1
    return k


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400), st.lists(st.tuples(st.integers(0, 400), st.integers(1, 40), st.booleans()),
                                     min_size=1, max_size=5))
def test_quiet_iterations_are_those_before_any_run_could_reach_the_budget(budget, runs):
    physical, most, active = (np.array(c) for c in zip(*runs))
    physical = np.minimum(physical, budget)
    assert study.quiet_iterations(budget, physical, most, active) == _brute_quiet(budget, physical, most, active)


def test_a_task_snapshots_only_iterations_that_may_reach_a_budget(monkeypatch):
    taken, snapshot = [], Learners.snapshot

    def counted(self):
        left = self.schedule.budget - self.ledger.counts["physical_calls"].numpy()
        taken.append(bool((left[self.active().numpy()] <= self.most_calls_per_iteration()[0]).any()))
        return snapshot(self)

    monkeypatch.setattr(Learners, "snapshot", counted)
    result = study.run_task(study.Task.make("kuhn", "converging", "cp_grpo", (7, 8), CONVERGING, (150, 2000)))
    iterations = result["runs"]["7"]["2000"]["iterations"]
    assert all(taken) and 0 < len(taken) < iterations / 4
