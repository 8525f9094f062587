"""What the book's Dask helper promises (`oscc_core.reporting.dask_cluster`), one behaviour per test.

- `quiet` silences Dask's loggers and every logger below them that sets its own level (a child, a grandchild),
  and gives each its level back after; a child that sets none inherits the silence and keeps its NOTSET.
- A scheduler address is refused in one sentence, within `CONNECT_TIMEOUT` (at most 30 s), naming what it found
  there: nothing listening (a port where nothing listens), something that does not speak Dask (a plain TCP
  server that never answers, an HTTP server), or a Dask worker; a real scheduler's address is accepted.  The
  servers here are this test's own, on 127.0.0.1.
"""
from __future__ import annotations

import http.server
import logging
import socket
import threading
import time

import pytest

from oscc_core.reporting import dask_cluster
from oscc_core.reporting.dask_cluster import CONNECT_TIMEOUT, SchedulerUnreachable, check_scheduler, quiet
from oscc_core.reporting.params import ParameterError


def one_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and ". " not in message


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.NOTSET)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


@pytest.fixture
def loggers():
    """Loggers below Dask's with handlers of their own: a child and a grandchild that set their level (INFO,
    DEBUG), and a child that sets none; their levels and handlers are put back after."""
    names = {"distributed.test_child": logging.INFO, "tornado.test_child.grandchild": logging.DEBUG,
             "bokeh.test_unset_child": logging.NOTSET}
    recorder = Recorder()
    made = []
    for name, level in names.items():
        logger = logging.getLogger(name)
        made.append((logger, logger.level, logger.propagate))
        logger.setLevel(level)
        logger.propagate = False                # only the handler below sees its records
        logger.addHandler(recorder)
    yield names, recorder
    for logger, level, propagate in made:
        logger.removeHandler(recorder)
        logger.setLevel(level)
        logger.propagate = propagate


def test_quiet_drops_the_records_of_children_and_grandchildren_that_set_their_own_level(loggers):
    names, recorder = loggers
    with quiet():
        for name in names:
            logging.getLogger(name).critical("inside")
    assert recorder.records == []


def test_quiet_gives_every_logger_its_level_back(loggers):
    names, recorder = loggers
    tops = {name: logging.getLogger(name).level for name in dask_cluster.LOGGERS}
    with quiet():
        pass
    assert {name: logging.getLogger(name).level for name in names} == names
    assert {name: logging.getLogger(name).level for name in dask_cluster.LOGGERS} == tops
    for name in names:
        logging.getLogger(name).critical("after")
    assert recorder.records == ["after"] * 3


def test_quiet_ignores_warnings_of_dasks_modules_only():
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet():
            warnings.warn_explicit("from dask", UserWarning, "x.py", 1, module="distributed.worker")
            warnings.warn_explicit("from the book", UserWarning, "y.py", 1, module="oscc_core.learning.loop")
    assert [str(w.message) for w in caught] == ["from the book"]


# ----- scheduler addresses ---------------------------------------------------------------------------------------
def free_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def silent_server():
    """A plain TCP server that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()


@pytest.fixture
def http_server():
    """An HTTP server, as a Dask dashboard's port would hold."""
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def refusal(address: str, timeout: float = 3.0) -> tuple[str, float]:
    start = time.monotonic()
    with pytest.raises(SchedulerUnreachable) as caught:
        check_scheduler(address, timeout)
    return str(caught.value), time.monotonic() - start


def test_the_connection_timeout_is_at_most_30_seconds():
    assert 0 < CONNECT_TIMEOUT <= 30


def test_an_address_where_nothing_listens_is_one_sentence_at_once():
    address = f"tcp://127.0.0.1:{free_port()}"
    message, seconds = refusal(address)
    assert message == (f"scheduler {address!r}: nothing listens there (connection refused); give the address of a "
                       f"running Dask scheduler, or '' for a local cluster.")
    assert one_sentence(message) and seconds < 3


def test_a_tcp_server_that_never_answers_is_not_a_dask_scheduler_within_the_timeout(silent_server):
    message, seconds = refusal(silent_server, timeout=2.0)
    assert f"scheduler {silent_server!r}: something listens there, but it is not a Dask scheduler" in message
    assert one_sentence(message) and seconds < 2.0 + 2.0


def test_an_http_server_is_not_a_dask_scheduler(http_server):
    message, seconds = refusal(http_server, timeout=2.0)
    assert "something listens there, but it is not a Dask scheduler" in message
    assert one_sentence(message) and seconds < 2.0 + 2.0


@pytest.mark.parametrize("address", ["localhost:8786", "tcp://127.0.0.1", "tcp://127.0.0.1:port"])
def test_an_address_that_is_not_one_is_refused_naming_the_form(address):
    message, _ = refusal(address)
    assert message.startswith(f"scheduler must be a Dask scheduler address such as 'tcp://host:8786', got "
                              f"{address!r}") and one_sentence(message)


def test_a_refusal_is_a_parameter_error_so_a_notebook_shows_one_line():
    assert issubclass(SchedulerUnreachable, ParameterError)


def test_a_client_of_an_address_where_nothing_listens_is_refused_before_any_connection(monkeypatch):
    import distributed

    def no_client(*args, **kwargs):
        raise AssertionError("a Client was made")
    monkeypatch.setattr(distributed, "Client", no_client)
    with pytest.raises(SchedulerUnreachable, match="nothing listens there"):
        with dask_cluster.client(1, f"tcp://127.0.0.1:{free_port()}"):
            pass


def test_a_real_scheduler_is_accepted_and_a_worker_is_named_as_not_one():
    from distributed import Client

    with dask_cluster.local_cluster(1) as address, Client(address) as connected:
        worker = next(iter(connected.scheduler_info()["workers"]))
        assert check_scheduler(address) == address
        message, _ = refusal(worker)
    assert message == (f"scheduler {worker!r}: a Dask Worker answers there, not a scheduler; give the address of a "
                       f"running Dask scheduler, or '' for a local cluster.")


@pytest.mark.parametrize("chapter", ["05_solver", "06_transfer"])
def test_a_chapters_validation_refuses_a_scheduler_where_nothing_listens_before_any_run(chapter, monkeypatch):
    from pathlib import Path

    from notebook_runs import parameter_defaults

    from oscc_core.chapters.solver import parameters as solver
    from oscc_core.chapters.transfer import parameters as transfer
    validate = {"05_solver": solver.validate, "06_transfer": transfer.validate}[chapter]
    monkeypatch.chdir(Path(__file__).resolve().parents[1] / "notebooks")      # the defaults' files are relative
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(SchedulerUnreachable, match="nothing listens there"):
        validate({**parameter_defaults(chapter), "scheduler": address})
