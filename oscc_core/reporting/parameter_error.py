"""The one exception a refused parameter raises: its message names the parameter and what is allowed.

It lives apart from the checks (`reporting.params`) so that modules the checks call, such as the Dask cluster's
address check (`reporting.dask_cluster`), raise it without importing the checks back.
"""
from __future__ import annotations

__all__ = ["ParameterError"]


class ParameterError(ValueError):
    """A notebook parameter is out of range; the message names it and what is allowed."""

    def _render_traceback_(self):  # IPython shows this instead of a traceback
        return [f"ParameterError: {self}"]
