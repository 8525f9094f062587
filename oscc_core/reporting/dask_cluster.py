"""The one way the book starts a Dask cluster on this machine or connects to an existing one.

`local_cluster(workers)` starts a `LocalCluster` of `workers` processes (one
thread each) that binds no fixed port: the scheduler, its HTTP server (no
dashboard) and the workers listen on 127.0.0.1 at ports the system picks, so
a Dask dashboard elsewhere on the machine (Dask's default port 8787) changes
nothing.  `client(workers, scheduler)` is a `Client` of the cluster at
`scheduler` ("tcp://host:8786"), or of a fresh local one.

While either is open, nothing of Dask reaches a chapter's page or the
terminal (`quiet`): in this process the log records of distributed, tornado
and bokeh are dropped and distributed's warnings are ignored; the local
workers log nothing either.  A task's own exception still reaches the caller
(the client raises it), and so does a warning of the book's own code.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

#: The loggers whose records never reach a page while a cluster is open (and those below them).
LOGGERS = ("distributed", "tornado", "bokeh")
#: Warnings issued by these packages' modules are ignored while a cluster is open.
WARNING_MODULES = r"(distributed|dask|tornado|bokeh)(\.|$)"
#: A level above every record: nothing is logged.
SILENT = logging.CRITICAL + 1
#: Where a local cluster listens: this machine only, at ports the system picks.
HOST = "127.0.0.1"


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
    """A quiet `distributed.Client` of the cluster at `scheduler`, or of a fresh `local_cluster(workers)`."""
    from distributed import Client

    if scheduler:
        with quiet(), Client(scheduler) as connected:
            yield connected
        return
    with local_cluster(workers) as address, quiet(), Client(address) as connected:
        yield connected
