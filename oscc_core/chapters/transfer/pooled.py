"""The transfer chapter's pooled contrast variance: `method.pooled_contrast`, the one computation every chapter that
reads a checkpoint's contrast variance over all decision points shares (the paper's reading,
`reporting.reading_sets.CONTRAST_POOLED`); its names are kept here for the chapter's modules.
"""
from __future__ import annotations

from oscc_core.method.pooled_contrast import (WEIGHTING, contrast_actions, pool_roots, pool_weights,  # noqa: F401
                                              pooled_contrast)

__all__ = ["WEIGHTING", "contrast_actions", "pool_roots", "pool_weights", "pooled_contrast"]
