"""Paper-beside-reproduction tables: comparison rows with verdicts, and their text rendering.

Table cells are text rounded to a fixed number of decimals, so a rendered
table is the same on every CPU; residual columns show values below
`ZERO_TOLERANCE` against that tolerance.
"""
from __future__ import annotations

import pandas as pd

from oscc_core.reporting import claims
from oscc_core.reporting.results import ZERO_TOLERANCE, residual_text
from oscc_core.reporting.rows import NO_PAPER, relative_deviation

# Book tables show every cell whole: pandas would cut text (claim ids) at 50 characters.
pd.set_option("display.max_colwidth", None)

#: Record fields a table does not show (the verdict already says whether the relation holds).
RECORD_ONLY = ("relation holds",)
COLUMN_ORDER = ("quantity", "paper", "paper 95% interval", "ours", "95% interval", "exact", "relative deviation",
                "relation", "verdict", "reason", "claim id")


def deviation_text(x: float | None, digits: int = 1) -> str:
    """A relative deviation as a signed percentage ("+79.4%", "-3.0%"), or "—" when there is none."""
    if x is None or x != x:
        return "—"
    text = f"{100.0 * x:+.{digits}f}%"
    return "+0.0%" if text == f"-{0:.{digits}f}%" else text


def comparison_frame(rows: list[dict], digits: int = 4, drop_empty: bool = False):
    """A pandas table of comparison rows: floats rounded, counts with separators, known columns first.

    Every table of rows with a verdict shows the relative deviation (ours / paper - 1, as a signed
    percentage; computed from paper and ours where a row does not carry it) and the declared relation.
    `drop_empty` leaves out the optional columns (interval, exact, relation, reason, ...) that hold
    no value in any row, so that a wide table fits the page.
    """
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

    rows = [dict(r) for r in rows]
    for r in rows:
        if "verdict" in r:
            r.setdefault("relative deviation", relative_deviation(r.get("paper"), r.get("ours")))
            r.setdefault("relation", None)
            r["relative deviation"] = deviation_text(r["relative deviation"])
    seen = list(dict.fromkeys(k for r in rows for k in r))
    columns = [c for c in COLUMN_ORDER if c in seen] + \
        [c for c in seen if c not in COLUMN_ORDER and c not in RECORD_ONLY]
    frame = pd.DataFrame([{c: fmt(r.get(c)) for c in columns} for r in rows])
    if drop_empty:
        kept = ("quantity", "paper", "ours", "verdict", "claim id")
        frame = frame[[c for c in frame.columns if c in kept or (frame[c] != "—").any()]]
    return frame


def rows_record(rows: list[dict]) -> list[dict]:
    """Comparison rows as JSON-ready records (intervals as lists)."""
    return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(r).items()} for r in rows]


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
