"""The committed MCCFR anchors' recheck (`oscc_core.chapters.solver.anchors.verify`) with OpenSpiel's runs replaced
by a stand-in whose records the test sets: each solver's committed records of one seed, at the budgets up to a
limit, against a rerun's, bit for bit after the rounding a results file applies; a differing or missing record is a
difference line; a check that compared nothing does not agree.  And the budgets the anchors run at, by hand."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from oscc_core.chapters.solver import anchors
from oscc_core.learning import mccfr_anchor


def record(budget: int) -> dict:
    return {"terminal_histories": budget + 1, "decision_histories": 2 * budget, "chance_histories": budget,
            "iterations": budget // 4, "exploitability_average": 1.0 / budget}


COMMITTED = {"design": {"game": "kuhn", "budgets": {"es_mccfr": [10, 20, 40], "os_mccfr": [10, 100]}},
             "runs": {"es_mccfr": {"13": {str(b): record(b) for b in (10, 20, 40)}},
                      "os_mccfr": {"13": {str(b): record(b) for b in (10, 100)}}}}


@pytest.fixture
def rerun(monkeypatch):
    """A stand-in for `run_anchor` that returns `records[kind]` (the committed ones by default) for the budgets it
    is asked for, and logs its calls."""
    state = {"calls": [], "records": copy.deepcopy({k: v["13"] for k, v in COMMITTED["runs"].items()})}

    def fake(kind, game, seed, budgets):
        state["calls"].append((kind, game, seed, list(budgets)))
        return {"records": {str(b): state["records"][kind][str(b)] for b in budgets
                            if str(b) in state["records"][kind]}, "table": np.zeros((1, 1))}

    monkeypatch.setattr(mccfr_anchor, "run_anchor", fake)
    return state


def test_a_rerun_equal_to_every_committed_record_up_to_the_limit_agrees(rerun):
    got = anchors.verify(COMMITTED, 13, 20)
    assert got == {"records": 3, "differences": [], "agrees": True}          # ES at 10 and 20, OS at 10


def test_each_solver_is_rerun_for_the_seed_at_its_budgets_up_to_the_limit_only(rerun):
    anchors.verify(COMMITTED, 13, 20)
    assert rerun["calls"] == [("es_mccfr", "kuhn", 13, [10, 20]), ("os_mccfr", "kuhn", 13, [10])]


def test_a_changed_record_is_a_difference_naming_it_and_the_check_does_not_agree(rerun):
    rerun["records"]["es_mccfr"]["20"] = {**record(20), "terminal_histories": 22}
    got = anchors.verify(COMMITTED, 13, 40)
    assert got["differences"] == [
        "05_solver_mccfr_study/es_mccfr/13/20: committed {'terminal_histories': 21, 'decision_histories': 40, "
        "'chance_histories': 20, 'iterations': 5, 'exploitability_average': 0.05}, rerun {'terminal_histories': 22, "
        "'decision_histories': 40, 'chance_histories': 20, 'iterations': 5, 'exploitability_average': 0.05}"]
    assert (got["records"], got["agrees"]) == (4, False)


def test_a_record_the_rerun_did_not_make_is_a_difference(rerun):
    del rerun["records"]["os_mccfr"]["10"]
    got = anchors.verify(COMMITTED, 13, 20)
    assert got["differences"] == [f"05_solver_mccfr_study/os_mccfr/13/10: committed {record(10)}, rerun None"]
    assert got["agrees"] is False


def test_a_budget_of_the_design_missing_from_the_committed_records_is_a_difference(rerun):
    committed = copy.deepcopy(COMMITTED)
    del committed["runs"]["es_mccfr"]["13"]["10"]
    got = anchors.verify(committed, 13, 10)
    assert got["differences"] == [f"05_solver_mccfr_study/es_mccfr/13/10: committed None, rerun {record(10)}"]
    assert got["agrees"] is False


def test_a_rerun_is_compared_after_the_rounding_a_results_file_applies(rerun):
    # numpy scalars and a value past 10 significant digits: the committed file holds the rounded value
    counts = {k: np.int64(v) for k, v in record(10).items() if k != "exploitability_average"}
    rerun["records"]["es_mccfr"]["10"] = {**counts, "exploitability_average": np.float64(0.1 + 1e-13)}
    assert anchors.verify(COMMITTED, 13, 10)["agrees"] is True


def test_a_seed_with_no_committed_run_compares_nothing_and_does_not_agree(rerun):
    assert anchors.verify(COMMITTED, 17, 100) == {"records": 0, "differences": [], "agrees": False}
    assert rerun["calls"] == []


def test_a_limit_below_every_budget_compares_nothing_and_does_not_agree(rerun):
    assert anchors.verify(COMMITTED, 13, 9) == {"records": 0, "differences": [], "agrees": False}
    assert rerun["calls"] == []


def test_es_runs_at_the_studys_recorded_budgets_and_os_up_to_16_times_its_budget_at_the_same_density():
    study = {"recorded_budgets": [100, 178, 316, 562, 1000, 10_000], "budget": 1000, "curve_per_decade": 1}
    # OS: 1000 x 1, 10 and 16, and 100 to 16,000 at one a decade: round(log10(160) x 1) + 1 = 3 log-spaced
    # points, 100, 100 x 160^(1/2) = 1264.9 and 16,000
    assert anchors.budgets_of(study) == {"es_mccfr": (100, 178, 316, 562, 1000, 10_000),
                                         "os_mccfr": (100, 1000, 1265, 10_000, 16_000)}
