"""`make verify-studies` as specifications (`oscc_core.reporting.study_verification`, `scripts/verify_studies.py`).

- The seed is drawn by the whole commit hash: with seven seeds, the hash 1 followed by 39 zeros is 16^39 = 2^39 =
  (2^3)^13 = 1 (mod 7), so it draws the second seed; its first 12 digits alone (16^11 = 2^11 = 4 mod 7) would draw
  the fifth, its last 12 (0) the first.  A property: raising one hex digit by delta moves the drawn index by
  delta * 16^position (mod the number of seeds), computed with `pow`, never by reading the hash as a number.
- A check that compared nothing says "nothing to compare" and does not agree.
- Refusals: a seed the study did not run, --up-to below its smallest budget, a file that is not a study, a bad
  --workers and a scheduler where no Dask scheduler answers each exit 2 with one sentence on stderr, before
  anything is printed or run; "records differ" keeps exit 1 (`test_study_verification.py`).
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
