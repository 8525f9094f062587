"""The variance identity Var(R_1 - R_2) = Var R_1 + Var R_2 - 2 Cov(R_1, R_2) of every arm, from exact sums.

Each side is an exact rational rounded to float64 (``method.stats.variance_identity``);
the residual (chips^2) is compared with the paper's bound '< 1e-12'.
"""
from __future__ import annotations

from oscc_core.engine.collector import Collection
from oscc_core.method import stats
from oscc_core.reporting.rows import Row

IDENTITY_CLAIM = "text_precision.both_arms.variance_identity_residual"


def identity_rows(collections: dict[str, Collection], pair: tuple[int, int]) -> tuple[list[Row], dict]:
    """Variance-identity residual of every arm against the paper's '< 1e-12' bound: (rows, records by arm)."""
    rows, records = [], {}
    for arm, c in collections.items():
        rec = stats.variance_identity(c.summary(), *pair)
        records[arm] = rec
        rows.append(Row.residual(f"{arm}: Var(R1-R2) - (Var R1 + Var R2 - 2 Cov)", IDENTITY_CLAIM, rec["residual"]))
    return rows, records
