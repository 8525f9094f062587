"""Run a learning study's tasks on dask.distributed, keep each finished run, and assemble the results.

`run_tasks` sends every task (`learning.study.Task`) that has no stored
result to a Dask cluster: a local cluster of `workers` processes on this
machine (one thread each) by default, or the existing cluster at
`scheduler` ("tcp://host:8786"); either through `reporting.dask_cluster`,
which binds no fixed port and keeps Dask's messages off the page.  With a GPU `device`, the tasks run in
this process on it instead, those that share a game, schedule and budgets
in one batch (`learning.study.run_tasks_together`): every engine gives the
same bits, so where a task ran never shows in its result.  Each result is written, as soon as its
task finishes, to `<store>/<digest>.json`, where the digest covers the
task's fields and the source of the library parts a run depends on
(`RUN_SOURCES` and the base modules): a study that is stopped loses only
the runs in flight (on a GPU, the batch in flight), and a rerun skips every
stored run.  Results are read
back from the store in the tasks' own order and rounded to the book's
precision, so the assembled study is byte for byte the same for any number
of workers and any order in which tasks finish.

Progress (runs done out of all) goes to the terminal of `python -m oscc_core
run` when it has one (`reporting.progress`); nothing is printed otherwise.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from oscc_core.digest import canonical_json, source_digest
from oscc_core.learning.study import Task, run_task, run_tasks_together
from oscc_core.reporting.dask_cluster import client
from oscc_core.reporting.progress import progress_stream, show_progress
from oscc_core.reporting.results import clean


class StudyInterrupted(RuntimeError):
    """The study stopped before every task finished (raised by `stop_after`, as a stop would)."""


#: The code a run executes (tests/test_study.py checks it against the modules a run loads): a change elsewhere (a
#: chapter, a table, the study's summary) keeps the stored runs.
RUN_SOURCES = ("games", "engine", "exact", "method", "interop",
               *(f"learning/{m}.py" for m in ("__init__", "arms", "baseline", "episodes", "fused", "fused_baseline",
                                              "fused_cuda", "fused_cuda_functions", "fused_episodes",
                                              "fused_kernels",
                                              "ledger", "loop", "objectives", "ordered_sum", "proximal", "samples",
                                              "study", "tabular", "visitation")))


def _path(store: Path, task: Task, source: str) -> Path:
    return store / f"{task.digest(source)}.json"


def _write(path: Path, result: dict) -> None:
    """Write atomically: a stop mid-write leaves no half file behind."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(canonical_json(clean(result)), encoding="utf-8")
    os.replace(tmp, path)


def run_tasks(tasks: Sequence[Task], store, workers: int = 2, scheduler: str | None = None,
              stop_after: int | None = None, on_done: Callable[[Task], None] | None = None, device="cpu") -> dict:
    """Run every task without a stored result, store each as it finishes; return {"results": [result per task,
    in task order, rounded], "ran": tasks run now, "stored": tasks found stored, "seconds", "workers"}.

    On the CPU the tasks go to Dask (`workers`, `scheduler`); on a GPU `device` they run here (module
    docstring).  `stop_after` (tests) raises `StudyInterrupted` after that many tasks are stored, as a stopped
    study would.
    """
    import torch
    from tqdm import tqdm

    store, device = Path(store), torch.device(device)
    store.mkdir(parents=True, exist_ok=True)
    source = source_digest(RUN_SOURCES)
    todo = [t for t in tasks if not _path(store, t, source).exists()]
    start = time.perf_counter()
    here = device.type != "cpu"
    counted = {"done": 0}

    def finished(task: Task, result: dict) -> None:
        _write(_path(store, task, source), result)
        counted["done"] += 1
        bar.update(1)
        if on_done is not None:
            on_done(task)
        if stop_after is not None and counted["done"] >= stop_after:
            raise StudyInterrupted(f"stopped after {counted['done']} of {len(todo)} runs")

    if todo:
        with tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc="study", unit="run",
                  file=progress_stream(), disable=not show_progress()) as bar:
            (_run_here if here else _run_on_dask)(todo, finished, device, workers, scheduler)
    results = [json.loads(_path(store, t, source).read_text(encoding="utf-8")) for t in tasks]
    return {"results": results, "ran": len(todo), "stored": len(tasks) - len(todo),
            "seconds": time.perf_counter() - start,
            "workers": f"in process on {device}" if here else (workers if not scheduler else scheduler)}


def _run_on_dask(todo: list[Task], finished, device, workers: int, scheduler: str | None) -> None:
    """Each task on a Dask worker; `finished(task, result)` as each result arrives (in process of completion)."""
    from distributed import as_completed

    with client(workers, scheduler) as connected:
        futures = {connected.submit(run_task, t, pure=False): t for t in todo}
        try:
            for future in as_completed(futures):
                finished(futures[future], future.result())
        except StudyInterrupted:
            for f in futures:
                f.cancel()
            raise


def _run_here(todo: list[Task], finished, device, workers: int, scheduler: str | None) -> None:
    """The tasks in this process on `device`, those with one `Task.batch_key` trained together, in the order of
    their first task."""
    batches: dict[tuple, list[Task]] = {}
    for task in todo:
        batches.setdefault(task.batch_key, []).append(task)
    for batch in batches.values():
        for task, result in zip(batch, run_tasks_together(batch, device)):
            finished(task, result)
