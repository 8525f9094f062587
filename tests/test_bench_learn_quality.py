"""The helpers of benchmarks/bench_learn_quality.py: budgets, hyperparameters, crossings (terminal histories, and
the nodes and seconds there), our runs with the nodes their ledgers count, and the MCCFR runs, which are the book's
counted runs (`oscc_core.learning.mccfr_anchor.run_anchor`) with their iterations timed."""
import importlib.util
import json
from pathlib import Path

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
    records = [{"calls": 1e4, "nodes": 3e4, "exploitability": 1.0, "seconds": 1.0},
               {"calls": 1e6, "nodes": 2e6, "exploitability": 0.01, "seconds": 101.0}]
    out = bq.crossings([{"records": records}, {"records": records[:1]}], 0.1)
    assert out["reached"] == 1 and out["calls"] == pytest.approx(1e5)        # halfway in log-log
    # nodes and seconds linear in terminal histories between the two records: 9e4 / 99e4 of the way
    assert out["nodes"] == pytest.approx(3e4 + 197e4 * 9e4 / 99e4)
    assert out["seconds"] == pytest.approx(1.0 + 100.0 * 9e4 / 99e4)
    assert out["per_seed"][1] is None


def test_a_crossing_at_the_first_record_takes_its_nodes_and_seconds():
    records = [{"calls": 1e4, "nodes": 3e4, "exploitability": 0.05, "seconds": 2.0}]
    out = bq.crossings([{"records": records}], 0.1)
    assert (out["calls"], out["nodes"], out["seconds"]) == (pytest.approx(1e4), pytest.approx(3e4), pytest.approx(2.0))


@pytest.mark.parametrize("hyper", [bq.FALLBACK, bq.FAST], ids=["study", "fast"])
def test_our_run_records_each_budget_and_pyspiel_agrees_with_its_last_exploitability(hyper):
    out = bq.run_ours(2001, (2_000, 4_000), dict(hyper))
    assert [r["budget"] for r in out["records"]] == [2_000, 4_000]
    # recorded after the first iteration that reaches the budget: N groups of at most 3 branches each
    assert all(r["budget"] <= r["calls"] < r["budget"] + 3 * hyper["decision_points"] for r in out["records"])
    assert out["records"][0]["seconds"] <= out["records"][1]["seconds"]
    assert out["pyspiel_top"] == pytest.approx(out["records"][-1]["exploitability"], abs=1e-8)


def test_our_nodes_are_the_decision_points_their_rollouts_decisions_and_one_terminal_history_per_call():
    out = bq.run_ours(2001, (1_500,), dict(bq.FAST))
    r = out["records"][0]
    assert r["nodes"] == r["groups"] + r["decisions"] + r["calls"]
    assert 2.0 < r["nodes"] / r["calls"] < 4.0          # a decision point shared by 2-3 branches, a few decisions


@pytest.mark.parametrize("method", ["es", "os"])
def test_an_mccfr_run_is_the_books_counted_run_with_its_iterations_timed(method):
    from oscc_core.learning import mccfr_anchor

    budgets = (300, 1_000)
    out = bq.run_mccfr(method, 2001, budgets)
    book = mccfr_anchor.run_anchor(bq.MCCFR[method], "leduc", 2001, budgets)["records"]
    for r, b in zip(out["records"], budgets):
        counted = book[str(b)]
        assert (r["budget"], r["calls"], r["nodes"], r["iterations"], r["exploitability"]) == (
            b, counted["terminal_histories"], counted["terminal_histories"] + counted["decision_histories"],
            counted["iterations"], counted["exploitability_average"])
    assert 0 < out["records"][0]["seconds"] <= out["records"][1]["seconds"]
    assert out["pyspiel_top"] == pytest.approx(out["records"][-1]["exploitability"], abs=1e-8)


def test_timing_the_iterations_puts_the_anchor_module_back_and_changes_no_record():
    from oscc_core.learning import mccfr_anchor

    made, evaluate = mccfr_anchor.counting_solver, mccfr_anchor.average_table
    with bq.timed_iterations() as seconds:
        timed = mccfr_anchor.run_anchor(mccfr_anchor.ES, "kuhn", 7, (20, 50))
    assert (mccfr_anchor.counting_solver, mccfr_anchor.average_table) == (made, evaluate)
    assert len(seconds) == 2 and 0 < seconds[0] <= seconds[1]
    plain = mccfr_anchor.run_anchor(mccfr_anchor.ES, "kuhn", 7, (20, 50))
    assert timed["records"] == plain["records"]


def test_the_command_line_keeps_its_options_and_has_no_probe():
    args = bq._parser().parse_args(["--quick", "--budgets", "1e3,1e4", "--seeds", "3", "--workers", "1"])
    assert (args.quick, args.budgets, args.seeds, args.workers) == (True, (1000, 10000), (3,), 1)
    for gone in ("--probe", "--probe-budget"):
        with pytest.raises(SystemExit):
            bq._parser().parse_args([gone, "100"])


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
