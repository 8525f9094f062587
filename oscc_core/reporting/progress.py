"""Progress of a long computation inside a notebook, shown on the terminal of ``python -m oscc_core run``.

A notebook's own output is saved with it, so progress must not go there. When its stderr is a terminal,
the runner (`oscc_core.reporting.runner`) starts the kernel with ``OSCC_PROGRESS`` set to that terminal's
device (``/dev/pts/3``, say); under papermill, nbval, the tests or a pipe it is unset and nothing is shown.
A study reports ``tasks done / total`` like this::

    from tqdm import tqdm
    from oscc_core.reporting.progress import progress_stream, show_progress

    with tqdm(total=len(tasks), desc="study", unit="run", file=progress_stream(),
              disable=not show_progress()) as bar:
        for finished in as_completed(futures):     # dask.distributed, say
            ...
            bar.update(1)
"""
from __future__ import annotations

import os

#: Set by the runner to the terminal device of its stderr; absent when nothing should be shown.
PROGRESS_ENV = "OSCC_PROGRESS"


def show_progress() -> bool:
    """Whether this process should show progress: it runs under the runner with stderr on a terminal."""
    return bool(os.environ.get(PROGRESS_ENV))


def progress_stream():
    """A line-buffered text stream on the runner's terminal, or None when progress is not to be shown (or the
    terminal cannot be opened). The caller may close it; a `tqdm` given ``file=None`` falls back to stderr,
    so pass ``disable=not show_progress()`` beside it."""
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return None
    try:
        return open(path, "w", buffering=1, encoding="utf-8")
    except OSError:
        return None
