"""How the book writes a number: significant figures, intervals and relative deviations as text.

One place for the formatting every table, ledger line and generated sentence uses, so that a number reads the
same everywhere and the same on every CPU (`significant_text` prints rounding noise below `ZERO_TOLERANCE` as 0).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

from oscc_core.reporting.results import ZERO_TOLERANCE

#: Comparison tables show this many significant figures.
SIGNIFICANT = 4
#: Outside [1e-4, 1e9) a number is written in scientific notation.
PLAIN_RANGE = (-4, 9)


def _decimals(magnitude: float, significant: int) -> int | None:
    """Decimals that give `magnitude` (> 0) `significant` figures once rounded; None: scientific notation."""
    exponent = math.floor(math.log10(float(f"{magnitude:.{significant - 1}e}")))
    if not PLAIN_RANGE[0] <= exponent < PLAIN_RANGE[1]:
        return None
    return max(significant - 1 - exponent, 0)


def significant_text(x: float, significant: int = SIGNIFICANT) -> str:
    """x to `significant` significant figures ("48.94", "0.02925", "61,440", "6.680e-06"); 0 when |x| is below
    `ZERO_TOLERANCE` (rounding noise, which differs between CPUs); a dash for NaN (no value), "inf" as is."""
    if not math.isfinite(x):
        return "—" if x != x else f"{x}"
    if abs(x) < ZERO_TOLERANCE:
        return "0"
    decimals = _decimals(abs(x), significant)
    return f"{x:.{significant - 1}e}" if decimals is None else f"{x:,.{decimals}f}"


def interval_text(low: float, high: float, significant: int = SIGNIFICANT) -> str:
    """An interval with both ends at the decimals that give its larger end `significant` figures."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"[{significant_text(low, significant)}, {significant_text(high, significant)}]"
    big = max(abs(low), abs(high))
    decimals = None if big < ZERO_TOLERANCE else _decimals(big, significant)
    if decimals is None and big >= ZERO_TOLERANCE:
        return f"[{low:.{significant - 1}e}, {high:.{significant - 1}e}]"
    decimals = decimals or 0
    return f"[{low:,.{decimals}f}, {high:,.{decimals}f}]"


def deviation_text(x: float | None, digits: int = 1) -> str:
    """A relative deviation as a signed percentage ("+79.4%", "-3.0%"), or "—" when there is none."""
    if x is None or x != x:
        return "—"
    text = f"{100.0 * x:+.{digits}f}%"
    return "+0.0%" if text == f"-{0:.{digits}f}%" else text


def mean_count_text(value: float) -> str:
    """A mean of counts (calls, transitions over seeds) as the book writes counts: comma-grouped, a whole number
    without decimals (61,440, never 61,440.0), another to one decimal (61,439.6)."""
    rounded = round(float(value), 1)
    return f"{rounded:,.0f}" if rounded.is_integer() else f"{rounded:,.1f}"


def is_finite_number(x) -> bool:
    """Whether `x` is a finite real number (a bool is not one)."""
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))


def value_text(x) -> str:
    """Any value of a ledger line as text: an int comma-grouped, a float to `SIGNIFICANT` figures, a pair of
    finite numbers as an interval, anything else as it prints."""
    if is_finite_number(x):
        return f"{x:,}" if isinstance(x, int) else significant_text(float(x))
    if isinstance(x, (list, tuple)) and len(x) == 2 and all(is_finite_number(v) for v in x):
        return interval_text(float(x[0]), float(x[1]))
    return str(x)


def interval_of(record: Mapping) -> tuple | None:
    """A record's 95% interval (its "95% interval" or "interval" entry) as a pair of finite numbers, or None."""
    iv = record.get("95% interval", record.get("interval"))
    return tuple(iv) if isinstance(iv, (list, tuple)) and len(iv) == 2 and all(is_finite_number(v) for v in iv) \
        else None
