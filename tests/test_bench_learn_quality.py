"""The pure helpers of benchmarks/bench_learn_quality.py: budgets, hyperparameters, crossings, the last line, and
the external-sampling cost model (checked by hand on Kuhn poker and against OpenSpiel's own Python solver)."""
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_learn_quality.py"
spec = importlib.util.spec_from_file_location("bench_learn_quality", PATH)
bq = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bq)


def test_budgets():
    assert bq.round_sig(1234567.8) == 1230000 and bq.round_sig(17782.79) == 17800
    assert bq.log_budgets(1e4, 1e5) == (10000, 17800, 31600, 56200, 100000)
    assert bq.DEFAULT_BUDGETS[0] == 10_000 and bq.DEFAULT_BUDGETS[-1] == 10_000_000 and len(bq.DEFAULT_BUDGETS) == 13
    assert bq.parse_budgets("1e5, 1e4,1e4,30000") == (10000, 30000, 100000)
    for bad in ("", "0", "-5", "abc", "inf", "1e4,,x"):
        with pytest.raises(ValueError, match="--budgets"):
            bq.parse_budgets(bad)
    assert bq.parse_seeds("3, 1,3") == (3, 1)
    for bad in ("", "-1", "a"):
        with pytest.raises(ValueError, match="--seeds"):
            bq.parse_seeds(bad)


def test_tuned_hyperparameters_read_defensively():
    assert bq.tuned_hyperparameters(None) == {}
    assert bq.tuned_hyperparameters({"tuning": {"converging": {}}}) == {}
    assert bq.tuned_hyperparameters({"tuning": {"converging": {"cp_grpo": "x"}}}) == {}
    tune = {"eta": 16, "alpha": 0.5, "kappa": 0.02, "score": 0.3, "grid": []}     # learning.study.tune's shape
    assert bq.tuned_hyperparameters({"tuning": {"converging": {"cp_grpo": tune}}}) == \
        {"eta": 16.0, "alpha": 0.5, "kappa": 0.02}
    other = {"choice": {"learning_rate": 4.0, "proximal_alpha": 2.0, "proximal_kappa": 0.0,
                        "decision_law": "uniform", "decision_points": 64}}
    assert bq.tuned_hyperparameters({"tuning": {"converging": {"cp_grpo": other}}}) == \
        {"eta": 4.0, "alpha": 2.0, "kappa": 0.0, "decision_law": "uniform", "decision_points": 64}
    bad = {"eta": 0, "alpha": -1, "kappa": 2, "decision_law": "sideways", "decision_points": 1.5}
    assert bq.tuned_hyperparameters({"tuning": {"converging": {"cp_grpo": bad}}}) == {}


def test_hyperparameters_sources(tmp_path):
    values, sources = bq.hyperparameters(tmp_path / "missing.json", {})
    assert values == bq.FALLBACK and set(sources.values()) == {"default (no study file)"}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    values, sources = bq.hyperparameters(broken, {})
    assert values == bq.FALLBACK and sources["eta"].startswith("default (study file unreadable")
    study = tmp_path / "05_solver_study.json"
    study.write_text(json.dumps({"tuning": {"converging": {"cp_grpo": {"eta": 16.0, "alpha": 0.5}}}}))
    values, sources = bq.hyperparameters(study, {"alpha": 3.0, "kappa": None})
    assert values == {**bq.FALLBACK, "eta": 16.0, "alpha": 3.0}
    assert sources["eta"] == "05_solver_study.json tuning.converging.cp_grpo"
    assert sources["alpha"] == "command line" and sources["kappa"].startswith("default")


def test_calls_to():
    curve = [(1e4, 1.0), (1e5, 0.4), (1e6, 0.1)]
    value, status = bq.calls_to(curve, 0.2)
    assert status == "crossed" and value == pytest.approx(10 ** 5.5)          # halfway in log-log
    assert bq.calls_to(curve, 0.4) == (pytest.approx(1e5), "crossed")
    assert bq.calls_to(curve, 2.0) == (1e4, "at_start")
    assert bq.calls_to(curve, 0.05) == (None, "never")
    assert bq.calls_to([(1e4, 1.0), (1e5, 0.15), (1e6, 0.3)], 0.2)[1] == "crossed"  # the first crossing counts
    assert bq.calls_to([], 0.2) == (None, "never")


def test_thresholds_and_summaries():
    assert bq.parse_thresholds("0.1184, 0.2,0.2") == (0.2, 0.1184)
    for bad in ("", "0", "-1", "x", "nan"):
        with pytest.raises(ValueError, match="--thresholds"):
            bq.parse_thresholds(bad)
    assert bq.geometric_summary([100.0, None, 10000.0]) == (pytest.approx(1000.0), 2)
    assert bq.geometric_summary([None]) == (None, 0)
    pts = [(100.0, 1.0), (300.0, 5.0)]
    assert bq.at_calls(pts, 200.0) == pytest.approx(3.0)
    assert bq.at_calls(pts, 50.0) == pytest.approx(0.5) and bq.at_calls(pts, 600.0) == pytest.approx(10.0)
    assert bq.fmt_calls(None) == "-" and bq.fmt_calls(1234567.8) == "1,230,000"


def test_crossings_take_nodes_and_seconds_at_the_same_crossing():
    records = [{"calls": 1e4, "exploitability": 1.0, "seconds": 1.0}, {"calls": 1e6, "exploitability": 0.01,
                                                                        "seconds": 101.0}]
    out = bq.crossings("x", [{"records": records}, {"records": records[:1]}], 0.1, lambda calls: 3.0)
    assert out["reached"] == 1 and out["calls"] == pytest.approx(1e5)
    assert out["nodes"] == pytest.approx(3e5) and out["seconds"] == pytest.approx(1.0 + 100.0 * 9e4 / 99e4)
    assert out["per_seed"][1] is None


def test_our_nodes_per_call_count_branch_nodes_and_a_share_of_the_decision_point():
    probe = {"records": [{"calls": 30, "groups": 10, "transitions": 50, "chance": 5}]}
    assert bq.our_nodes_per_call(probe) == [(30, pytest.approx(65 / 30))]


def test_es_expected_cost_on_kuhn_by_hand():
    """Kuhn, uniform: player 0's traversal reaches 2.5 terminals (pass: p1 passes, 1, or bets, 2 more; bet: 1)
    over 3.5 decisions and 8 nodes; player 1's reaches 2 over 2.5 decisions and 6.5 nodes."""
    pyspiel = pytest.importorskip("pyspiel")
    cost = bq.es_expected_cost(pyspiel.load_game("kuhn_poker"), bq.uniform_policy)
    assert cost == pytest.approx({"terminals": 4.5, "decisions": 6.0, "nodes": 14.5})


def test_counting_solver_matches_the_exact_expectation():
    """One traversal of OpenSpiel's Python ES from a fresh solver samples the other player uniformly: its mean
    counts over many fresh solvers approach the exact expectation of that traversal."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("leduc_poker")
    np.random.seed(0)
    trials, totals = 3000, np.zeros(3)
    for _ in range(trials):
        solver = bq.counting_es_solver(game)
        solver._update_regrets(game.new_initial_state(), 0)
        totals += (solver.terminals, solver.decisions, solver.nodes)
    mean = totals / trials

    class FirstTraversal:                        # the exact expectation of player 0's traversal alone
        def num_players(self):
            return 1

        def new_initial_state(self):
            return game.new_initial_state()

    exact = bq.es_expected_cost(FirstTraversal(), bq.uniform_policy)
    for i, key in enumerate(("terminals", "decisions", "nodes")):
        assert math.isclose(mean[i], exact[key], rel_tol=0.05), (key, mean[i], exact[key])


@pytest.mark.parametrize("hyper", [bq.FALLBACK, bq.FAST], ids=["study", "fast"])
def test_our_run_records_each_budget_and_pyspiel_agrees_with_its_last_exploitability(hyper):
    out = bq.run_ours(2001, (2_000, 4_000), dict(hyper))
    assert [r["budget"] for r in out["records"]] == [2_000, 4_000]
    # recorded after the first iteration that reaches the budget: N groups of at most 3 branches each
    assert all(r["budget"] <= r["calls"] < r["budget"] + 3 * hyper["decision_points"] for r in out["records"])
    assert out["records"][0]["seconds"] <= out["records"][1]["seconds"]
    assert out["pyspiel_top"] == pytest.approx(out["records"][-1]["exploitability"], abs=1e-8)


def test_the_node_probe_replays_the_fast_run_on_the_torch_path_and_counts_chance_events():
    fused = bq.run_ours(2001, (1_500,), dict(bq.FAST))
    torch_run = bq.run_ours(2001, (1_500,), dict(bq.FAST), engine="torch", count_chance=True)
    assert torch_run["engine"] == "torch" and fused["engine"] == "fused"
    assert torch_run["records"][0]["exploitability"] == fused["records"][0]["exploitability"]
    record = torch_run["records"][0]
    assert 0 < record["chance"] < record["calls"]          # a call reaches at most one public card
    nodes = bq.our_nodes_per_call(torch_run)[0][1]
    assert 2.0 < nodes < 5.0


def test_the_counting_os_solver_plays_one_episode_per_player():
    pyspiel = pytest.importorskip("pyspiel")
    out = bq.probe("os", 20, 0)
    assert out["terminals"] == 2.0 and out["nodes"] > out["decisions"] > 2.0


def test_the_study_learner_runs_with_the_options_its_study_ran_with():
    study = {"design": {"base": {"baseline": "history", "average_power": 2, "epochs": 4}},
             "tuning": {"converging": {"cp_grpo": {"eta": 32.0, "alpha": 1.0, "kappa": 0.003}}}}
    got = bq.tuned_hyperparameters(study)
    assert got == {"baseline": "history", "average_power": 2, "eta": 32.0, "alpha": 1.0, "kappa": 0.003}
    assert "baseline" not in bq.tuned_hyperparameters({"tuning": study["tuning"]})


def test_the_study_learners_hyperparameters_keep_the_options_of_its_design(tmp_path):
    study = {"design": {"base": {"baseline": "history", "alpha_decay": "inverse_sqrt", "epochs": 4}},
             "tuning": {"converging": {"cp_grpo": {"eta": 32.0, "alpha": 1.0, "kappa": 0.003}}}}
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study))
    values, sources = bq.hyperparameters(path, {})
    assert (values["baseline"], values["alpha_decay"], values["eta"]) == ("history", "inverse_sqrt", 32.0)
    assert bq.ours_schedule(values).baseline == "history"
