"""`make verify-studies`: one seed of each committed learning study rerun at every learner, arm and budget, each
record compared with the committed file bit for bit (`scripts/verify_studies.py`,
`oscc_core.reporting.study_verification`).

The script runs here on the committed files at their smallest budget (the full depth runs in CI: `make
verify-studies`), and on copies in which one record was moved by one unit in the last place (`math.nextafter`),
which it must report and fail on.  Expected seeds are worked out by hand from the commit number.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oscc_core.digest import source_digest
from oscc_core.reporting.study_verification import (commit_of, differences, draw_seed, parts_of, recorded, tasks_of,
                                                     ulps_apart)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "verify_studies.py"
SOLVER, TRANSFER = ROOT / "results" / "05_solver_study.json", ROOT / "results" / "06_transfer_study.json"
SMALLEST = 6144          # calls: both committed studies' first recorded budget


def verify(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--up-to", str(SMALLEST), "--workers", "1"],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


def git_status() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True).stdout


# ----- which seed ------------------------------------------------------------------------------------------------
def test_the_commit_hash_read_as_a_number_modulo_the_number_of_seeds_picks_the_seed():
    assert draw_seed((13, 17, 19), "a") == 17                  # 10 mod 3 = 1
    assert draw_seed((13, 17, 19), "f" * 40) == 13             # 16**40 - 1 = 0 mod 3
    assert draw_seed([149, 13], "0" * 39 + "3") == 13


def test_thirty_consecutive_commits_draw_each_of_thirty_seeds_once():
    seeds = tuple(json.loads(SOLVER.read_text())["design"]["seeds"])
    assert len(seeds) == 30
    assert sorted(draw_seed(seeds, f"{n:040x}") for n in range(1000, 1030)) == sorted(seeds)


def test_in_a_git_checkout_the_seed_is_drawn_by_head_and_elsewhere_by_the_source_digest(tmp_path):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head:
        assert commit_of(ROOT) == (head, f"commit {head[:12]}")
    name, how = commit_of(tmp_path)
    assert name == source_digest() and how.startswith("not a git checkout")


def test_no_seeds_to_draw_from_is_refused_naming_the_seeds():
    with pytest.raises(ValueError, match="seeds"):
        draw_seed((), "a")


# ----- what is rerun ---------------------------------------------------------------------------------------------
def test_the_solver_study_reruns_both_learners_every_arm_at_the_budgets_its_file_kept_for_the_seed():
    body = json.loads(SOLVER.read_text())
    part, *grid = parts_of(body, "05_solver_study")
    assert [g.label for g in grid] == [f"05_solver_study/coupling_grid/{o}/{b}" for o in body["coupling_grid"]["cells"]
                                       for b in body["coupling_grid"]["cells"][o]]
    tasks = tasks_of(part, 149)
    assert {(t.learner, t.arm) for t in tasks} == {(ln, a) for ln in ("literal", "converging")
                                                   for a in ("cp_grpo", "independent", "grpo", "ppo")}
    for t in tasks:
        assert t.seeds == (149,) and t.game == "leduc"
        assert list(t.budgets) == sorted(int(b) for b in body["runs"][t.learner][t.arm]["149"])
        assert dict(t.schedule)["learning_rate"] == body["choices"][t.learner][t.arm]["eta"]
    # 24 budgets a decade from 6,144 calls: 81 up to 160 x 61,440 (every converging arm, literal CP-GRPO and
    # independent), 49 up to 10 x (literal GRPO and PPO)
    assert sum(len(t.budgets) for t in tasks) == len(recorded(part, 149)) == 6 * 81 + 2 * 49


def test_the_transfer_study_reruns_the_frozen_study_and_its_kuhn_tuned_control_at_their_own_choices():
    body = json.loads(TRANSFER.read_text())
    frozen, control = parts_of(body, "06_transfer_study")
    assert (frozen.label, control.label) == ("06_transfer_study", "06_transfer_study/kuhn_tuned")
    for part, block in ((frozen, body), (control, body["kuhn_tuned"])):
        tasks = {t.arm: t for t in tasks_of(part, 13)}
        assert set(tasks) == set(block["choices"])
        for arm, t in tasks.items():
            s = dict(t.schedule)
            assert (t.learner, t.game, s["decision_law"]) == ("converging", "kuhn", "counterfactual")
            assert (s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]) == tuple(
                block["choices"][arm][k] for k in ("eta", "alpha", "kappa"))


def test_a_seed_the_study_did_not_run_is_refused_naming_the_seed():
    part = parts_of(json.loads(SOLVER.read_text()), "05_solver_study")[0]
    with pytest.raises(ValueError, match="seed must be one of"):
        tasks_of(part, 1001)


# ----- how records are compared ----------------------------------------------------------------------------------
def test_neighbouring_doubles_are_one_unit_in_the_last_place_apart():
    assert ulps_apart(0.1, math.nextafter(0.1, 1.0)) == 1
    assert ulps_apart(-2.5, math.nextafter(math.nextafter(-2.5, 0.0), 0.0)) == 2
    assert ulps_apart(-5e-324, 5e-324) == 2                     # across zero: -min, 0, +min
    assert ulps_apart(1.0, 1.0) == 0


def test_a_record_missing_on_either_side_or_a_field_one_ulp_off_or_a_zero_of_the_other_sign_is_a_difference():
    rec = {"exploitability_average": 0.25, "physical_calls": 6144, "never_updated": 0.0}
    committed = {("converging", "ppo", 13, 6144): rec, ("converging", "ppo", 13, 10837): rec}
    rerun = {("converging", "ppo", 13, 6144): {**rec, "exploitability_average": math.nextafter(0.25, 1.0)},
             ("converging", "grpo", 13, 6144): rec}
    lines = differences(committed, rerun)
    assert len(lines) == 3
    assert any("converging/ppo/13/6144 exploitability_average" in x and "(1 unit in the last place)" in x
               for x in lines)
    assert any(x.startswith("converging/ppo/13/10837: committed, but the rerun did not record it") for x in lines)
    assert any(x.startswith("converging/grpo/13/6144: recorded by the rerun") for x in lines)
    signed = differences({("a",): rec}, {("a",): {**rec, "never_updated": -0.0}})
    assert signed == ["a never_updated: committed 0.0, rerun -0.0 (zeros of opposite sign)"]
    assert differences(committed, dict(committed)) == []


# ----- the script, as CI runs it ---------------------------------------------------------------------------------
def test_the_committed_studies_agree_bit_for_bit_at_their_smallest_budget_and_nothing_is_written(tmp_path):
    before = git_status()
    done = verify(cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "05_solver_study: seed " in done.stdout and "06_transfer_study: seed " in done.stdout
    # the Leduc study, its 2 x 2's four cells, the Kuhn study and its control; then the MCCFR anchors
    assert done.stdout.count("equals the committed one bit for bit") == 7
    assert "05_solver_mccfr_study: seed " in done.stdout and "terminal histories: bit for bit" in done.stdout
    # below the largest budget no checkpoint is compared, the Kuhn-tuned control's neither
    assert done.stdout.count("its checkpoints not compared (a rerun below the largest budget)") == 3
    assert "06_transfer_study/kuhn_tuned: seed " in done.stdout
    assert done.stdout.count("; no checkpoints file committed") == 4     # the 2 x 2's cells keep none
    assert git_status() == before and list(tmp_path.iterdir()) == []


def _moved(body: dict, path: tuple, field: str) -> float:
    """Move one number of a record by one unit in the last place, in place; return the new value."""
    record = body
    for key in path:
        record = record[key]
    record[field] = math.nextafter(record[field], math.inf)
    return record[field]


def test_a_record_moved_by_one_unit_in_the_last_place_fails_the_check_naming_it(tmp_path):
    solver, transfer = json.loads(SOLVER.read_text()), json.loads(TRANSFER.read_text())
    moved = _moved(solver, ("runs", "literal", "grpo", "149", "6144"), "exploitability_last")
    _moved(transfer, ("kuhn_tuned", "runs", "ppo", "149", "6144"), "exploitability_average")
    (tmp_path / "05_solver_study.json").write_text(json.dumps(solver))
    (tmp_path / "06_transfer_study.json").write_text(json.dumps(transfer))
    shutil.copy(SOLVER, tmp_path / "unchanged.json")
    done = verify("05_solver_study.json", "06_transfer_study.json", "unchanged.json", "--seed", "149", cwd=tmp_path)
    assert done.returncode == 1
    lines = [x.strip() for x in done.stdout.splitlines()]
    assert f"literal/grpo/149/6144 exploitability_last: committed {moved!r}, rerun " \
           f"{math.nextafter(moved, -math.inf)!r} (1 unit in the last place)" in lines
    assert any(x.startswith("converging/ppo/149/6144 exploitability_average:") and x.endswith(
        "(1 unit in the last place)") for x in lines)
    assert "05_solver_study: seed 149, 1 differences in its 8 committed records:" in lines
    assert "06_transfer_study/kuhn_tuned: seed 149, 1 differences in its 4 committed records:" in lines
    assert "06_transfer_study: seed 149, each of its 4 records at every learner, arm and budget equals the " \
           "committed one bit for bit; no checkpoints file committed" in lines      # the copies have none beside
    assert "unchanged: seed 149, each of its 8 records at every learner, arm and budget equals the committed one " \
           "bit for bit; no checkpoints file committed" in lines
