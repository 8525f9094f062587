"""A chapter's study on a shared machine: a Dask dashboard already on port 8787 changes nothing.

Both chapters' study paths start their local cluster through one helper (`reporting.dask_cluster`): the transfer
chapter holds one for its block (`chapters.transfer.study.cluster`), the solver chapter's study starts one per
batch of tasks (`study_runner.run_tasks`).  With port 8787 held, a small study through each writes no warning,
no log record and no byte to stdout or stderr (the workers' included: they share this process's file
descriptors, as a notebook kernel's do), and gives the bytes of the same runs trained in this process without
Dask (`learning.study.run_task`).
"""
from __future__ import annotations

import json
import logging
import socket
import warnings
from pathlib import Path

import pytest
from notebook_runs import parameter_defaults, runnable_defaults

from oscc_core.chapters.solver import parameters as solver_parameters
from oscc_core.chapters.solver import study as solver_study
from oscc_core.chapters.transfer import parameters as transfer_parameters
from oscc_core.chapters.transfer import study as transfer_study
from oscc_core.digest import canonical_json
from oscc_core.learning import study_design as design
from oscc_core.learning.study import run_task
from oscc_core.reporting.dask_cluster import local_cluster
from oscc_core.reporting.results import clean

ROOT = Path(__file__).resolve().parent.parent
DASK_DASHBOARD = 8787
CHOICES = {"converging": {"cp_grpo": {"eta": 16.0, "alpha": 0.5, "kappa": 0.1},
                          "ppo": {"eta": 4.0, "alpha": 0.5, "kappa": 0.01}}}
SEEDS, MULTIPLES, BUDGET = (13,), (1, 2), 1000


@pytest.fixture
def port_8787_held():
    """Port 8787 taken, as another cluster's dashboard would take it (held already by another process on this
    machine: taken all the same)."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        held.bind(("", DASK_DASHBOARD))
        held.listen(1)
    except OSError:
        pass
    yield
    held.close()


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.NOTSET)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture
def log_records():
    """Every log record any logger emits meanwhile (distributed's own handler does not propagate to the root)."""
    recorder = Recorder()
    loggers = [logging.getLogger(), logging.getLogger("distributed"), logging.getLogger("tornado")]
    for logger in loggers:
        logger.addHandler(recorder)
    yield recorder.records
    for logger in loggers:
        logger.removeHandler(recorder)


def in_process_runs(game: str, study) -> str:
    """The runs of `study` (its base schedule and recorded budgets a decade) trained here, without Dask, as a
    results file keeps them."""
    tasks = design.study_tasks(game, CHOICES, study.base, SEEDS, BUDGET, MULTIPLES, per_decade=study.curve_per_decade)
    return canonical_json(design.runs_table([json.loads(canonical_json(clean(run_task(t)))) for t in tasks]))


def test_both_chapters_studies_with_port_8787_held_write_nothing_and_give_the_bytes_of_runs_in_process(
        port_8787_held, log_records, capfd, tmp_path):
    small = {"budget": BUDGET, "workers": 2, "scheduler": "", "device": "cpu", "study_file": ""}
    leduc_study = str(ROOT / "results" / "05_solver_study.json")
    p = transfer_parameters.validate({**parameter_defaults("06_transfer"), **small, "leduc_study": leduc_study,
                                      "output_dir": str(tmp_path / "t")})
    q = solver_parameters.validate({**runnable_defaults("05_solver"), **small, "output_dir": str(tmp_path / "s")})
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kuhn_design, leduc_design = transfer_study.design_of(p, SEEDS, MULTIPLES), solver_study.design_of(
            q, SEEDS, MULTIPLES)
        with transfer_study.cluster(p) as scheduler:
            kuhn = kuhn_design.run(tmp_path / "kuhn", CHOICES, p.workers, scheduler)
        leduc = leduc_design.run(tmp_path / "leduc", CHOICES, q.workers, q.scheduler or None)
    out, err = capfd.readouterr()
    assert [str(w.message) for w in caught] == []
    assert log_records == []
    assert (out, err) == ("", "")
    assert canonical_json(kuhn["study"]["runs"]) == in_process_runs("kuhn", kuhn_design)
    assert canonical_json(leduc["study"]["runs"]) == in_process_runs("leduc", leduc_design)


def test_a_local_cluster_listens_on_this_machine_only_and_never_at_dasks_default_ports():
    """Unless another process holds it, a cluster that asks for port 8786 or 8787 gets it: this one asks for none."""
    from distributed import Client

    with local_cluster(1) as address, Client(address) as client:
        host, port = address.removeprefix("tcp://").rsplit(":", 1)
        http = client.scheduler_info()["services"]["dashboard"]
    assert host == "127.0.0.1"
    assert int(port) != 8786 and http != DASK_DASHBOARD
