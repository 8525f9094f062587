"""Results files and paper-beside-reproduction tables.

Every notebook writes `results/<stem>.json`: its manifest plus every
reported quantity.  The JSON is canonical (sorted keys).

Portability: numpy, BLAS, torch and numba pick kernels by CPU, and those
kernels round differently in the last bits.  So every float that leaves the
library (a results file, a glued value, a printed table) is rounded to
`SIGNIFICANT_DIGITS`; a float below `ZERO_TOLERANCE` in magnitude is zero up
to rounding and is stored and glued as 0.0, and shown in a table against its
tolerance (`residual_text`, "< 1e-12"), never as raw rounding noise.  The
bytes are then the same on every CPU.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import claims
from .ledger import manifest

SIGNIFICANT_DIGITS = 10      # DESIGN section 6: what a results file, a glue value or a table may show
ZERO_TOLERANCE = 1e-12       # |x| below this is "zero up to rounding" in residual columns
NO_PAPER = "no paper value"     # verdict cell of a row the paper gives no number for


def round_sig(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """x rounded to `digits` significant digits; |x| < ZERO_TOLERANCE is zero up to rounding and becomes 0.0.

    NaN and infinities are returned unchanged.
    """
    x = float(x)
    if not math.isfinite(x):
        return x
    return 0.0 if abs(x) < ZERO_TOLERANCE else float(f"{x:.{digits}g}")


def residual_text(value: float, tolerance: float = ZERO_TOLERANCE) -> str:
    """An identity residual as text: "< tolerance" when below it, else the value itself (a failure to see)."""
    return f"< {tolerance:.0e}" if abs(float(value)) < tolerance else f"{float(value):.2e}"


def portable(value):
    """A value as a notebook may show it: floats (also inside containers) rounded to SIGNIFICANT_DIGITS."""
    if isinstance(value, (float, np.floating)):
        return round_sig(value)
    if isinstance(value, (list, tuple)):
        return type(value)(portable(v) for v in value)
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    return value


def glue(name: str, value, display: bool = False):
    """myst_nb.glue of `portable(value)`: the glued text is the same on every CPU."""
    from myst_nb import glue as myst_glue

    return myst_glue(name, portable(value), display=display)


def clean(obj):
    """JSON-ready copy: numpy -> Python, floats rounded to SIGNIFICANT_DIGITS, NaN -> None."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return clean(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return round_sig(x) if math.isfinite(x) else None
    return obj


def write_results(output_dir, stem: str, parameters: dict, payload: dict, device) -> Path:
    """Write `<output_dir>/<stem>.json` = {"manifest": ..., **payload}; return its path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.json"
    body = {"manifest": manifest(clean(parameters), device), **clean(payload)}
    path.write_text(json.dumps(body, sort_keys=True, indent=1, allow_nan=False) + "\n")
    return path


def compare(quantity: str, claim_id: str, ours: float, low: float | None = None, high: float | None = None,
            direction_agrees: bool | None = None, exact: float | None = None) -> dict:
    """One row of a paper-beside-reproduction table, with its verdict."""
    paper = claims.claim(claim_id)
    return {"quantity": quantity, "paper": paper, "ours": ours,
            "95% interval": None if low is None else (low, high), "exact": exact,
            "verdict": claims.verdict(paper, ours, low, high, direction_agrees), "claim id": claim_id}


COLUMN_ORDER = ("quantity", "paper", "paper 95% interval", "ours", "95% interval", "exact", "verdict", "claim id")


def comparison_frame(rows: list[dict], digits: int = 4):
    """A pandas table of comparison rows: floats rounded, counts with separators, known columns first."""
    import pandas as pd

    def fmt(x):
        if x is None:
            return "—"
        if isinstance(x, tuple):
            return f"[{x[0]:.{digits}f}, {x[1]:.{digits}f}]"
        if isinstance(x, float):
            return f"{x:.{digits}f}"
        if isinstance(x, int) and not isinstance(x, bool):
            return f"{x:,}"
        return x

    seen = list(dict.fromkeys(k for r in rows for k in r))
    columns = [c for c in COLUMN_ORDER if c in seen] + [c for c in seen if c not in COLUMN_ORDER]
    return pd.DataFrame([{c: fmt(r.get(c)) for c in columns} for r in rows])


def rows_record(rows: list[dict]) -> list[dict]:
    """Comparison rows as JSON-ready records (intervals as lists)."""
    return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in r.items()} for r in rows]


def verdict_summary(tables: dict[str, list[dict]], kinds=tuple(claims.VERDICTS) + (NO_PAPER,)):
    """Count of rows per verdict in each table, with a total row."""
    import pandas as pd

    out = {}
    for name, rows in tables.items():
        counts = {k: 0 for k in kinds}
        for r in rows:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        out[name] = counts
    frame = pd.DataFrame.from_dict(out, orient="index")[list(kinds)]
    frame.loc["total"] = frame.sum()
    return frame


def round_frame(df, digits: int = 4, tiny_in_scientific: bool = False, fill_missing: bool = True):
    """Float columns as fixed-digit text (NaN -> "—"); deterministic for nbval.

    tiny_in_scientific prints values below 10**-digits in scientific notation
    (residual columns), and those below ZERO_TOLERANCE as "< 1e-12": rounding
    noise differs between CPUs.  fill_missing turns None cells into "—" as well.
    """
    def fmt(x):
        if x != x:
            return "—"
        if tiny_in_scientific and abs(x) < ZERO_TOLERANCE:
            return residual_text(x)
        if tiny_in_scientific and abs(x) < 10 ** -digits:
            return f"{x:.1e}"
        return f"{x:.{digits}f}"

    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(fmt)
    return out.fillna("—") if fill_missing else out
