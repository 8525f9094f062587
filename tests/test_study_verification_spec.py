"""`make verify-studies` as specifications (`oscc_core.reporting.study_verification`, `scripts/verify_studies.py`).

- The seed is drawn by the whole commit hash: with seven seeds, the hash 1 followed by 39 zeros is 16^39 = 2^39 =
  (2^3)^13 = 1 (mod 7), so it draws the second seed; its first 12 digits alone (16^11 = 2^11 = 4 mod 7) would draw
  the fifth, its last 12 (0) the first.  A property: raising one hex digit by delta moves the drawn index by
  delta * 16^position (mod the number of seeds), computed with `pow`, never by reading the hash as a number.
- A check that compared nothing says "nothing to compare" and does not agree.
- Refusals: a seed the study did not run, --up-to below its smallest budget, a file that is not a study, a bad
  --workers and a scheduler where no Dask scheduler answers each exit 2 with one sentence on stderr, before
  anything is printed or run; "records differ" keeps exit 1 (`test_study_verification.py`).
- What mutation testing found unpinned (`make mutants`): which name of the code draws the seed when git fails,
  hangs or answers with something that is not a hexadecimal name; the refusal of no seeds in full; a rerun result
  of another seed beside the drawn one; each coupling-grid cell as a part, rerun as the converging learner; the
  literal learner rerun as the paper's iteration.  git is replaced by stand-ins that honour `subprocess.run`'s
  `check` and `timeout` as documented; these tests run no learner and no subprocess.
"""
from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.learning.loop import Schedule
from oscc_core.reporting import study_verification as sv
from oscc_core.reporting.study_verification import compare, draw_seed, parts_of, tasks_of, text

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "verify_studies.py"
SOLVER = ROOT / "results" / "05_solver_study.json"
SEVEN = (10, 11, 12, 13, 14, 15, 16)


# ----- the seed, drawn by the whole hash -------------------------------------------------------------------------
def test_the_leading_digit_of_a_forty_digit_hash_moves_the_drawn_seed():
    assert draw_seed(SEVEN, "1" + "0" * 39) == 11              # 16^39 = 1 (mod 7)
    assert draw_seed(SEVEN, "1" + "0" * 11) == 14              # the first twelve digits alone: 16^11 = 4 (mod 7)
    assert draw_seed(SEVEN, "0" * 40) == 10


def test_the_last_digit_moves_the_drawn_seed_too():
    assert draw_seed(SEVEN, "0" * 39 + "3") == 13
    assert draw_seed(SEVEN, "1" + "0" * 38 + "3") == 14         # 1 + 3 (mod 7)


hashes = st.text("0123456789abcdef", min_size=40, max_size=40)


@given(hashes, st.integers(0, 39), st.integers(1, 15), st.sampled_from([2, 3, 7, 30, 31]))
def test_raising_one_digit_moves_the_index_by_delta_times_16_to_its_position(commit, position, delta, n):
    seeds = tuple(range(100, 100 + n))
    digit = int(commit[39 - position], 16)
    raised = (digit + delta) % 16
    other = commit[:39 - position] + f"{raised:x}" + commit[40 - position:]
    step = (raised - digit) * pow(16, position, n)
    assert (draw_seed(seeds, other) - 100) % n == (draw_seed(seeds, commit) - 100 + step) % n


# ----- nothing to compare ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def solver_part():
    part = parts_of(json.loads(SOLVER.read_text()), "05_solver_study")[0]
    return part


def test_a_check_that_compared_nothing_says_so_and_does_not_agree(solver_part):
    check = compare(solver_part, 149, [], up_to=10)                # no committed record below 6,144 calls
    assert (check["records"], check["nothing_to_compare"], check["agrees"]) == (0, True, False)
    assert text(check) == "05_solver_study: seed 149, nothing to compare: neither the committed study nor the " \
                          "rerun holds a record"


def test_records_only_the_rerun_holds_are_differences_not_nothing_to_compare(solver_part):
    rerun = {"task": {"learner": "literal", "arm": "grpo"},
             "runs": {"149": {"10": {"exploitability_average": 0.5}}}}
    check = compare(solver_part, 149, [rerun], up_to=10)
    assert (check["nothing_to_compare"], check["agrees"]) == (False, False)
    assert check["differences"] == ["literal/grpo/149/10: recorded by the rerun, but not in the committed study"]


def test_up_to_below_the_smallest_recorded_budget_is_refused_naming_it(solver_part):
    with pytest.raises(ValueError, match=r"^up_to must be at least 6,144 calls, the smallest budget 05_solver_study "
                                         r"recorded for seed 149, got 6,143: below it there is nothing to compare\.$"):
        tasks_of(solver_part, 149, 6143)
    assert tasks_of(solver_part, 149, 6144)                        # at it: one budget per learner and arm


# ----- the script's refusals -------------------------------------------------------------------------------------
def verify(*args: str, cwd: Path = ROOT) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=120)
    return done, time.monotonic() - start


def one_sentence_and_exit_2(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""                                   # nothing said about a seed, nothing run
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith("."), done.stderr
    return lines[0]


def test_a_seed_the_study_did_not_run_exits_2_with_one_sentence_naming_the_seeds():
    line = one_sentence_and_exit_2(verify("--seed", "7")[0])
    assert line.startswith("error: --seed must be one of 05_solver_study's seeds [13, 17, ") and line.endswith(
        ", 149], got 7.")


@pytest.mark.parametrize("args, start", [
    (("--up-to", "100"), "error: --up-to must be at least 6,144 calls, the smallest budget 05_solver_study"),
    (("--up-to", "0"), "error: argument --up-to: must be at least 1, got 0"),
    (("--workers", "0"), "error: argument --workers: must be at least 1, got 0"),
    (("--seed", "x"), "error: argument --seed: invalid int value: 'x'"),
    (("missing.json",), "error: missing.json does not exist"),
    (("README.md",), "error: README.md is not a committed learning study file"),
])
def test_each_usage_error_exits_2_with_one_sentence(args, start):
    assert one_sentence_and_exit_2(verify(*args)[0]).startswith(start)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_scheduler_where_nothing_listens_exits_2_with_one_sentence():
    address = f"tcp://127.0.0.1:{free_port()}"
    line = one_sentence_and_exit_2(verify("--scheduler", address)[0])
    assert line == (f"error: scheduler {address!r}: nothing listens there (connection refused); give the address of "
                    f"a running Dask scheduler, or '' for a local cluster.")


def test_a_dashboard_like_http_port_as_scheduler_exits_2_with_one_sentence_within_30_seconds():
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done, seconds = verify("--scheduler", f"tcp://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert "something listens there, but it is not a Dask scheduler" in one_sentence_and_exit_2(done)
    assert seconds < 30


# ----- what mutation testing found unpinned ----------------------------------------------------------------------
DIGEST = "0123456789abcdef" * 4          # the library's source digest, as a stand-in gives it
NOT_GIT = ("0123456789abcdef" * 4, "not a git checkout: the library's source digest 0123456789ab instead of a commit")


@pytest.fixture
def git(monkeypatch):
    """`subprocess.run` as a git whose answer the test sets: {"exit", "stdout", "answers_after" (seconds; None:
    never)}, honouring `check` (CalledProcessError on a non-zero exit) and `timeout` (TimeoutExpired when the answer
    would come later) as `subprocess.run` documents them; each timeout it was given is kept in "timeouts"."""
    state = {"exit": 0, "stdout": "", "answers_after": 0.0, "timeouts": []}

    def run(args, **kw):
        timeout = kw.get("timeout")
        state["timeouts"].append(timeout)
        late = state["answers_after"]
        if late is None or (timeout is not None and late > timeout):
            if timeout is None:
                pytest.fail("commit_of would wait forever on a git that never answers")
            raise subprocess.TimeoutExpired(args, timeout)
        done = subprocess.CompletedProcess(args, state["exit"], stdout=state["stdout"], stderr="")
        if kw.get("check"):
            done.check_returncode()
        return done

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(sv, "source_digest", lambda: DIGEST)
    return state


def test_outside_a_git_checkout_the_name_is_the_source_digest_shown_by_its_first_twelve_digits(git, monkeypatch):
    def no_git(args, **kw):
        raise FileNotFoundError(2, "No such file or directory", "git")
    monkeypatch.setattr(subprocess, "run", no_git)
    assert sv.commit_of(Path("/anywhere")) == NOT_GIT


def test_a_git_that_fails_is_not_believed_even_when_it_printed_a_hexadecimal_name(git):
    git.update({"exit": 128, "stdout": "ab" * 20 + "\n"})
    assert sv.commit_of(Path("/anywhere")) == NOT_GIT


def test_a_git_that_never_answers_is_given_up_on_within_30_seconds_for_the_source_digest(git):
    git.update({"stdout": "ab" * 20 + "\n", "answers_after": None})
    assert sv.commit_of(Path("/anywhere")) == NOT_GIT
    (waited,) = git["timeouts"]
    assert 0 < waited <= 30
    git.update({"answers_after": 30.5, "timeouts": []})                 # answering after 30 s is too late as well
    assert sv.commit_of(Path("/anywhere")) == NOT_GIT


@pytest.mark.parametrize("stdout", ["HEAD\n", "0123456789abcdef0123456789abcdef0123456g\n"])
def test_an_answer_of_git_that_is_not_a_hexadecimal_name_is_not_used(git, stdout):
    git["stdout"] = stdout
    assert sv.commit_of(Path("/anywhere")) == NOT_GIT


def test_no_seeds_to_draw_from_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match=r"^seeds must hold at least one seed to draw from, got none\.$"):
        draw_seed((), "a")


def test_a_rerun_result_of_another_seed_only_is_not_compared():
    runs = {"cp_grpo": {"13": {"100": {"exploitability_average": 0.5}}}}
    part = sv.Part("05_x", "kuhn", Schedule(), {"converging": {"cp_grpo": {"eta": 1.0}}}, {"converging": runs},
                   (13, 17))
    results = [{"task": {"learner": "converging", "arm": "cp_grpo"}, "runs": runs["cp_grpo"]},
               {"task": {"learner": "converging", "arm": "grpo"}, "runs": {"17": {"100": {"x": 1.0}}}}]
    assert compare(part, 13, results) == {"label": "05_x", "seed": 13, "records": 1, "checkpoints": None,
                                          "differences": [], "nothing_to_compare": False, "agrees": True}


CELL_RUNS = {"cp_grpo": {"13": {"100": {"exploitability_average": 0.5}}},
             "independent": {"13": {"100": {"exploitability_average": 0.75}}}}


def grid_study() -> dict:
    """A study with two cells of its coupling 2 x 2, each at its own owner's choice and its own base."""
    def cell(choice, base):
        return {"choice": choice, "base": base.as_dict(), "runs": CELL_RUNS}
    return {"design": {"game": "kuhn", "base": Schedule(iterations=3).as_dict(), "seeds": [13, 17]},
            "coupling_grid": {"arms": ["cp_grpo", "independent"], "baselines": ["history", "none"], "cells": {
                "cp_grpo": {"history": cell({"eta": 2.0, "alpha": 0.5, "kappa": 0.1},
                                            Schedule(iterations=5, baseline="history"))},
                "independent": {"none": cell({"eta": 4.0, "alpha": 0.25, "kappa": 0.0}, Schedule(iterations=7))}}}}


def test_each_coupling_grid_cell_is_a_part_of_the_studys_game_and_seeds_at_its_own_base_and_owners_choice():
    a = {"eta": 2.0, "alpha": 0.5, "kappa": 0.1}
    b = {"eta": 4.0, "alpha": 0.25, "kappa": 0.0}
    assert sv.grid_parts(grid_study(), "05_x") == [
        sv.Part("05_x/coupling_grid/cp_grpo/history", "kuhn", Schedule(iterations=5, baseline="history"),
                {"coupling-grid": {"cp_grpo": a, "independent": a}}, {"coupling-grid": CELL_RUNS}, (13, 17)),
        sv.Part("05_x/coupling_grid/independent/none", "kuhn", Schedule(iterations=7),
                {"coupling-grid": {"cp_grpo": b, "independent": b}}, {"coupling-grid": CELL_RUNS}, (13, 17))]


def test_a_coupling_grid_cell_is_rerun_as_the_converging_learner_at_its_owners_choice_on_its_base():
    cell = sv.Part("05_x/coupling_grid/cp_grpo/history", "kuhn", Schedule(iterations=5, baseline="history"),
                   {"coupling-grid": {"cp_grpo": {"eta": 2.0, "alpha": 0.5, "kappa": 0.1}}},
                   {"coupling-grid": {"cp_grpo": CELL_RUNS["cp_grpo"]}}, (13, 17))
    (task,) = sv.tasks_of(cell, 13)
    s = dict(task.schedule)
    assert (task.learner, task.arm, task.seeds, task.budgets, task.keep_table) == (
        "coupling-grid", "cp_grpo", (13,), (100,), False)
    assert (s["decision_law"], s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"], s["baseline"]) == (
        "counterfactual", 2.0, 0.5, 0.1, "history")


def test_the_literal_learner_is_rerun_as_the_papers_iteration_whatever_its_choice_and_base_carry():
    base = Schedule(baseline="history", baseline_floor=0.5, average_power=1)      # the converging learner's options
    part = sv.Part("05_x", "kuhn", base, {"literal": {"grpo": {"eta": 1.5, "alpha": 0.5, "kappa": 0.1}}},
                   {"literal": {"grpo": {"13": {"100": {"exploitability_average": 0.5}}}}}, (13,))
    s = dict(sv.tasks_of(part, 13)[0].schedule)
    assert (s["decision_law"], s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]) == (
        "on_policy", 1.5, 0.0, 0.0)
    assert "baseline" not in s and "average_power" not in s         # none of the later options: they stay out
