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
