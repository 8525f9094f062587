"""Notebook parameter checks: one clear sentence before any compute starts.

Each notebook's second cell passes its parameters through these helpers.  A
bad value raises `ParameterError`, which IPython renders as the sentence
alone (no traceback), and papermill exits non-zero.
"""
from __future__ import annotations

from pathlib import Path

from .device import resolve_device


class ParameterError(ValueError):
    """A notebook parameter is out of range; the message names it and what is allowed."""

    def _render_traceback_(self):  # IPython shows this instead of a traceback
        return [f"ParameterError: {self}"]


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ParameterError(f"{name} must be an integer {allowed}, got {value!r}.")
    return value


def check_float(name: str, value, low: float, high: float, open_low: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        (low < value if open_low else low <= value) and value <= high
    if not ok:
        raise ParameterError(f"{name} must be a number in {'(' if open_low else '['}{low}, {high}], got {value!r}.")
    return float(value)


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ParameterError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def check_ints(name: str, values, low: int) -> list[int]:
    if not isinstance(values, (list, tuple)) or not values or \
            any(isinstance(v, bool) or not isinstance(v, int) or v < low for v in values):
        raise ParameterError(f"{name} must be a non-empty list of integers >= {low}, got {values!r}.")
    return list(values)


def check_device(name: str, value: str):
    try:
        return resolve_device(value)
    except ValueError as e:
        raise ParameterError(f"{name}: {e}") from None


def check_policy_source(name: str, value, named=("uniform", "cfr_plus")) -> str:
    """A named policy or the path of a saved policy JSON file that exists."""
    if isinstance(value, str) and (value in named or Path(value).is_file()):
        return value
    raise ParameterError(f"{name} must be one of {list(named)} or the path of a saved policy JSON file; "
                         f"{value!r} is neither.")


def check_output_dir(name: str, value) -> Path:
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{name} must be a directory path string, got {value!r}.")
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ParameterError(f"{name} must be a directory, but {value!r} is a file.")
    return path
