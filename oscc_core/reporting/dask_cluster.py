"""The one way the book starts a Dask cluster on this machine or connects to an existing one.

`local_cluster(workers)` starts a `LocalCluster` of `workers` processes (one
thread each) that binds no fixed port: the scheduler, its HTTP server (no
dashboard) and the workers listen on 127.0.0.1 at ports the system picks, so
a Dask dashboard elsewhere on the machine (Dask's default port 8787) changes
nothing.  `client(workers, scheduler)` is a `Client` of the cluster at
`scheduler` ("tcp://host:8786"), or of a fresh local one.

An address is checked before anything is sent to it (`check_scheduler`):
within `CONNECT_TIMEOUT` seconds it must accept a connection, answer Dask's
handshake and say that it is a scheduler; otherwise one sentence says which
of these failed (nothing listens there; something listens but does not
speak Dask, such as a dashboard's HTTP server; a Dask worker, not a
scheduler), as a `SchedulerUnreachable`, a `ParameterError`: a notebook
shows it as one line and the runner exits 2.

While either is open, nothing of Dask reaches a chapter's page or the
terminal (`quiet`): in this process the log records of distributed, tornado
and bokeh are dropped and distributed's warnings are ignored; the local
workers log nothing either.  A task's own exception still reaches the caller
(the client raises it), and so does a warning of the book's own code.
"""
from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from oscc_core.reporting.parameter_error import ParameterError

#: The loggers whose records never reach a page while a cluster is open (and those below them).
LOGGERS = ("distributed", "tornado", "bokeh")
#: Warnings issued by these packages' modules are ignored while a cluster is open.
WARNING_MODULES = r"(distributed|dask|tornado|bokeh)(\.|$)"
#: A level above every record: nothing is logged.
SILENT = logging.CRITICAL + 1
#: Where a local cluster listens: this machine only, at ports the system picks.
HOST = "127.0.0.1"
#: Seconds an address has to accept a connection and answer Dask's handshake and identity request, in all.
CONNECT_TIMEOUT = 10.0
#: What a refusal tells the user to give instead.
_INSTEAD = "give the address of a running Dask scheduler, or '' for a local cluster"


class SchedulerUnreachable(ParameterError):
    """A scheduler address that does not lead to a Dask scheduler; the message is one sentence naming it."""


def check_scheduler(address: str, timeout: float = CONNECT_TIMEOUT) -> str:
    """`address` when a Dask scheduler answers there within `timeout` seconds (module docstring); otherwise raise
    `SchedulerUnreachable` with one sentence: nothing listens there, the host is unknown, something listens but
    does not speak Dask, or a Dask server that is not a scheduler answers."""
    from distributed.comm.addressing import parse_address, parse_host_port

    start = time.monotonic()
    try:
        scheme, location = parse_address(address, strict=True)
        host, port = parse_host_port(location) if scheme in ("tcp", "tls") else (None, None)
    except (ValueError, TypeError):
        raise SchedulerUnreachable(f"scheduler must be a Dask scheduler address such as 'tcp://host:8786', got "
                                   f"{address!r}; {_INSTEAD}.") from None
    if host is not None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except socket.gaierror:
            raise SchedulerUnreachable(f"scheduler {address!r}: the host {host!r} is unknown; {_INSTEAD}.") from None
        except ConnectionRefusedError:
            raise SchedulerUnreachable(f"scheduler {address!r}: nothing listens there (connection refused); "
                                       f"{_INSTEAD}.") from None
        except OSError as e:
            what = f"nothing answered within {timeout:g} s" if isinstance(e, TimeoutError) else \
                f"it cannot be reached ({e.strerror or e})"
            raise SchedulerUnreachable(f"scheduler {address!r}: {what}; {_INSTEAD}.") from None
    left = max(timeout - (time.monotonic() - start), 0.5)
    kind = _identity(address, left)
    if kind is None:
        raise SchedulerUnreachable(f"scheduler {address!r}: something listens there, but it is not a Dask scheduler "
                                   f"(no Dask handshake within {timeout:g} s: a dashboard's HTTP port, say); "
                                   f"{_INSTEAD}.")
    if kind != "Scheduler":
        raise SchedulerUnreachable(f"scheduler {address!r}: a Dask {kind} answers there, not a scheduler; {_INSTEAD}.")
    return address


def _identity(address: str, timeout: float) -> str | None:
    """The type of the Dask server at `address` ("Scheduler", "Worker", ...) from its answer to an identity
    request, or None when no Dask answer comes within `timeout` seconds.  It runs on its own event loop in a thread,
    so it works inside a running one (a notebook's kernel)."""
    from distributed.comm import connect

    async def ask():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity"})
            return await asyncio.wait_for(comm.read(), timeout)
        finally:
            comm.abort()

    found = {}

    def run():
        try:
            found["answer"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except Exception:   # noqa: BLE001 - whatever failed (refused, closed, garbled, late), no Dask answer came
            pass

    with quiet():
        thread = threading.Thread(target=run, name="oscc-check-scheduler", daemon=True)
        thread.start()
        thread.join(timeout + 1.0)          # a loop that outlives its deadline is left to its daemon thread
    answer = found.get("answer")
    return answer.get("type") if isinstance(answer, dict) and isinstance(answer.get("type"), str) else None


@contextmanager
def quiet() -> Iterator[None]:
    """For the block: every logger of `LOGGERS` (and those below them that set their own level) drops every record,
    and warnings issued by Dask's modules are ignored; both are restored after."""
    prefixes = tuple(f"{name}." for name in LOGGERS)
    names = set(LOGGERS) | {name for name in list(logging.Logger.manager.loggerDict) if name.startswith(prefixes)}
    saved = []
    for name in sorted(names):
        logger = logging.getLogger(name)
        if name in LOGGERS or logger.level != logging.NOTSET:
            saved.append((logger, logger.level))
            logger.setLevel(SILENT)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=WARNING_MODULES)
            yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


@contextmanager
def local_cluster(workers: int) -> Iterator[str]:
    """The address of a fresh local cluster of `workers` processes (one thread each) kept for the block, quiet
    from its start to its shutdown (module docstring)."""
    from distributed import LocalCluster

    with quiet(), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host=HOST,
                               scheduler_port=0, dashboard_address=f"{HOST}:0", worker_dashboard_address=None,
                               scheduler_kwargs={"dashboard": False}, silence_logs=SILENT) as cluster:
        yield cluster.scheduler_address


@contextmanager
def client(workers: int, scheduler: str | None = None):
    """A quiet `distributed.Client` of the cluster at `scheduler` (checked first: `check_scheduler`), or of a fresh
    `local_cluster(workers)`."""
    from distributed import Client

    if scheduler:
        check_scheduler(scheduler)
        with quiet(), Client(scheduler, timeout=CONNECT_TIMEOUT) as connected:
            yield connected
        return
    with local_cluster(workers) as address, quiet(), Client(address) as connected:
        yield connected
