"""A study on a Dask cluster started apart from the book: `dask scheduler` and two `dask worker` processes.

A user who outgrows one machine starts a scheduler and workers with distributed's own command lines (README:
"Running beyond one machine") and passes the scheduler's address as the chapters' `scheduler` parameter.  Here
those commands run on this machine (the locked `distributed`'s CLIs, from this environment), the address is read
from the scheduler file they share, a small study goes through the solver chapter's code with that address, and
its runs must be the bytes of the same runs trained in this process (`learning.study.run_task`).  The processes
are always stopped, and a scheduler or worker left behind by a killed test run stops itself (idle and death
timeouts).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from notebook_runs import runnable_defaults

from oscc_core.chapters.solver import parameters as solver_parameters
from oscc_core.chapters.solver import study as solver_study
from oscc_core.digest import canonical_json
from oscc_core.learning import study_design as design
from oscc_core.learning.study import run_task
from oscc_core.reporting.results import clean

DASK = Path(sys.executable).with_name("dask")
CHOICES = {"literal": {"cp_grpo": {"eta": 4.0, "alpha": 0.0, "kappa": 0.0},
                       "grpo": {"eta": 8.0, "alpha": 0.0, "kappa": 0.0}},
           "converging": {"ppo": {"eta": 4.0, "alpha": 0.5, "kappa": 0.01}}}
SEEDS, MULTIPLES, BUDGET = (13, 17), (1, 3), 1000
START_TIMEOUT = 60           # seconds for the scheduler and both workers to come up


def _stop(processes: list[subprocess.Popen]) -> None:
    """Each process started here, by its own id: asked to stop, then killed if it has not within 10 s."""
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


@pytest.fixture
def scheduler_address(tmp_path):
    """The address of a `dask scheduler` with two `dask worker` processes (one thread each) on this machine, all on
    127.0.0.1 at ports the system picks; stopped after the test whatever happens."""
    from distributed import Client

    if not DASK.exists():
        pytest.fail(f"distributed's command line {DASK} is missing from this environment")
    file, started = tmp_path / "scheduler.json", []
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    quiet = {"cwd": tmp_path, "env": env, "stdin": subprocess.DEVNULL}

    def start(name: str, *args: str) -> None:
        log = open(tmp_path / f"{name}.log", "w")
        started.append(subprocess.Popen([str(DASK), *args], stdout=log, stderr=subprocess.STDOUT, **quiet))
        log.close()

    try:
        start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(file), "--idle-timeout", "300s")
        deadline = time.monotonic() + START_TIMEOUT
        while not file.exists() and time.monotonic() < deadline and started[0].poll() is None:
            time.sleep(0.2)
        assert file.exists(), f"the scheduler did not start: {(tmp_path / 'scheduler.log').read_text()[-2000:]}"
        for i in (1, 2):
            start(f"worker{i}", "worker", "--scheduler-file", str(file), "--nworkers", "1", "--nthreads", "1",
                  "--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                  "--local-directory", str(tmp_path / f"worker{i}"), "--death-timeout", "60", "--name", f"w{i}")
        address = json.loads(file.read_text())["address"]
        with Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
            assert sorted(w["name"] for w in client.scheduler_info()["workers"].values()) == ["w1", "w2"]
        yield address
    finally:
        _stop(started[::-1])                         # the workers first, then the scheduler


def test_a_study_sent_to_a_scheduler_started_apart_gives_the_bytes_of_its_runs_trained_in_process(
        scheduler_address, tmp_path):
    from distributed import Client

    q = solver_parameters.validate({**runnable_defaults("05_solver"), "budget": BUDGET, "study_file": "",
                                    "scheduler": scheduler_address, "workers": 1, "device": "cpu",
                                    "output_dir": str(tmp_path / "out")})
    d = solver_study.design_of(q, SEEDS, MULTIPLES)
    study = d.run(tmp_path / "store", CHOICES, q.workers, q.scheduler or None)
    tasks = design.study_tasks("leduc", CHOICES, d.base, SEEDS, BUDGET, MULTIPLES, per_decade=d.curve_per_decade)
    here = design.runs_table([json.loads(canonical_json(clean(run_task(t)))) for t in tasks])
    assert study["workers"] == scheduler_address and study["ran"] == len(tasks) == 3
    assert canonical_json(study["study"]["runs"]) == canonical_json(here)
    with Client(scheduler_address) as client:           # the runs were the workers' own: 3 tasks executed there
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert sum(executed.values()) == len(tasks)
