"""`python -m oscc_core run`: checked parameter names, values as typed, output outside the committed results/."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from oscc_core.policy import save_policy, uniform_policy
from oscc_core.reporting import runner

REPO = Path(__file__).resolve().parent.parent


def test_misspelt_parameter_stops_before_any_computation_naming_it_and_the_allowed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert runner.main(["run", "covariance", "-p", "n_group", "2000"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'n_group'" in err and "n_groups" in err and "seed_groups" in err and "budget_groups" in err
    assert not any(tmp_path.iterdir())          # nothing written, nothing run


def test_misspelt_parameter_from_the_command_line_exits_2():
    done = subprocess.run([sys.executable, "-m", "oscc_core", "run", "02_covariance", "-p", "n_group", "2000"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2
    assert "unknown parameter 'n_group'" in done.stderr and "n_groups" in done.stderr
    assert done.stdout == ""


def test_values_are_passed_as_the_user_types_them():
    declared = runner.declared_parameters(runner.find_chapter("covariance"))
    got = runner.build_parameters(declared, [("root", "2"), ("seeds", "13,17"), ("budgets", "[1, 2]"),
                                             ("n_groups", "2000"), ("equivalence_margin", "0.1")])
    assert got == {"root": "2", "seeds": [13, 17], "budgets": [1, 2], "n_groups": 2000, "equivalence_margin": 0.1}
    assert runner.build_parameters(declared, [("root", "11|")]) == {"root": "11|"}
    declared3 = runner.declared_parameters(runner.find_chapter("03_gradient_noise"))
    assert runner.build_parameters(declared3, [("root_policy", "[0.5, 0.5]")]) == {"root_policy": [0.5, 0.5]}


def test_bad_value_for_an_int_parameter_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert runner.main(["run", "selector", "-p", "eval_groups", "many"]) == 2
    assert "eval_groups must be an integer" in capsys.readouterr().err


def test_unknown_chapter_lists_the_chapters(capsys):
    assert runner.main(["run", "covariances"]) == 2
    err = capsys.readouterr().err
    assert "'covariances'" in err and "covariance (02_covariance)" in err


def test_the_committed_results_directory_is_refused(capsys):
    assert runner.main(["run", "covariance", "-o", str(REPO / "results")]) == 2
    assert "committed results directory" in capsys.readouterr().err


def test_default_output_is_a_fresh_runs_directory(tmp_path):
    first = runner.fresh_output_dir("02_covariance", tmp_path / "runs")
    assert first == tmp_path / "runs" / "02_covariance-1"
    first.mkdir(parents=True)
    assert runner.fresh_output_dir("02_covariance", tmp_path / "runs") == tmp_path / "runs" / "02_covariance-2"


def test_list_prints_the_declared_parameters(capsys):
    assert runner.main(["run", "contract", "--list"]) == 0
    out = capsys.readouterr().out
    assert "swap_groups (int, default 100_000)" in out and "output_dir" not in out


def test_small_run_writes_outside_results_and_records_the_policy_file_by_content(tmp_path, monkeypatch, capsys):
    policy_file = tmp_path / "my policy.json"
    save_policy(uniform_policy("leduc"), policy_file)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in (REPO / "results").iterdir())
    argv = ["run", "covariance", "-p", "root", "2", "-p", "continuation", str(policy_file), "-p", "n_groups", "2000",
            "-p", "n_bootstrap", "20", "-p", "seeds", "13,17", "-p", "seed_groups", "512", "-p", "budgets", "1,2",
            "-p", "budget_groups", "512", "-p", "cfr_iterations", "20"]
    assert runner.main(argv) == 0, capsys.readouterr().err
    out = tmp_path / "runs" / "02_covariance-1"
    assert (out / "02_covariance.ipynb").is_file()
    manifest = json.loads((out / "02_covariance.json").read_text())["manifest"]
    assert manifest["parameters"]["root"] == "2"
    assert manifest["parameters"]["continuation"] == {
        "source": "file", "sha256": hashlib.sha256(policy_file.read_bytes()).hexdigest()}
    assert str(tmp_path) not in json.dumps(manifest)
    assert sorted(p.name for p in (REPO / "results").iterdir()) == before


def test_the_test_output_override_is_refused_so_results_go_where_the_runner_says(monkeypatch, tmp_path):
    from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE

    monkeypatch.setenv(OUTPUT_DIR_OVERRIDE, str(tmp_path / "elsewhere"))
    with pytest.raises(runner.UsageError, match=OUTPUT_DIR_OVERRIDE):
        runner.run("covariance", [], str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
