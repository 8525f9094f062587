"""Results files and paper-beside-reproduction tables.

Every notebook writes `results/<stem>.json`: its manifest plus every
reported quantity.  Floats are rounded to a fixed number of significant
digits before writing so the bytes are identical on every run; the JSON is
canonical (sorted keys).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import claims
from .ledger import manifest

SIGNIFICANT_DIGITS = 12
NO_PAPER = "no paper value"     # verdict cell of a row the paper gives no number for


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
        if not math.isfinite(x):
            return None
        return float(f"{x:.{SIGNIFICANT_DIGITS}g}")
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

    tiny_in_scientific prints non-zero values below 10**-digits as 1.2e-15
    (residual columns); fill_missing turns None cells into "—" as well.
    """
    def fmt(x):
        if x != x:
            return "—"
        if tiny_in_scientific and x != 0 and abs(x) < 10 ** -digits:
            return f"{x:.1e}"
        return f"{x:.{digits}f}"

    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(fmt)
    return out.fillna("—") if fill_missing else out
