"""The paper's numbers of this chapter's tables that it does not compare, each with the one-sentence reason.

Only the independent arm's variance ratio to itself is left: it is 1 by
definition.  The sampler calls (`coupling.calls_rows`, declared not comparable
beside our count), the update variances
(`updates`) and the paper's own intervals (`intervals`) have rows of their
own.
"""
from __future__ import annotations

from oscc_core.reporting.rows import Row


def not_compared_rows() -> list[Row]:
    """Every not-compared row of the chapter."""
    ratio_one = Row.not_compared("independent: variance ratio to itself", "main_uncertainty.variance_ratio.independent",
                                 "the independent arm's ratio to itself is 1 by definition: nothing to measure")
    return [ratio_one]
