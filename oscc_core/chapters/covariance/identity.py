"""The variance identity Var(R_1 - R_2) = Var R_1 + Var R_2 - 2 Cov(R_1, R_2) of every arm, from exact sums.

Each side is an exact rational rounded to float64 (``method.stats.variance_identity``);
the residual `IDENTITY_TEXT` (chips^2) is compared with the paper's bound '< 1e-12'.  The paper
prints one residual for both arms: its primary row is the largest residual (in
absolute value) over all our arms, and each arm's own residual is a detail row.
"""
from __future__ import annotations

from oscc_core.engine.collector import Collection
from oscc_core.method import stats
from oscc_core.reporting.rows import Row

IDENTITY_CLAIM = "text_precision.both_arms.variance_identity_residual"
#: What the residual is (the chapter's text states it; the tables' labels say "residual").
IDENTITY_TEXT = "Var(R1-R2) - (Var R1 + Var R2 - 2 Cov)"


def identity_rows(collections: dict[str, Collection], pair: tuple[int, int]) -> tuple[list[Row], dict]:
    """Variance-identity residuals against the paper's '< 1e-12' bound: (rows, records by arm).

    The first row is the primary one: the residual of largest magnitude over the arms, shown against the
    bound.  Then one detail row per arm (`Row.as_sensitivity`), which never gives the claim its verdict."""
    records = {arm: stats.variance_identity(c.summary(), *pair) for arm, c in collections.items()}
    worst = max(records, key=lambda arm: abs(records[arm]["residual"]))
    primary = Row.residual(f"largest |residual| over the {len(records)} arms", IDENTITY_CLAIM,
                           records[worst]["residual"])   # not named: which arm is largest is rounding noise
    detail = [Row.residual(f"{arm}: residual", IDENTITY_CLAIM, rec["residual"]).as_sensitivity()
              for arm, rec in records.items()]
    return [primary, *detail], records
