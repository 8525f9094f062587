"""How the chapter shows its comparison rows: `reporting.tables.comparison_frame` indexed by quantity (long
relations, reasons and "sensitivity of" ids as notes under the table), without the columns the text around
the table already states (`drop`)."""
from __future__ import annotations

from oscc_core.reporting.tables import comparison_frame


def frame(rows, drop_empty: bool = False, drop: tuple[str, ...] = ()):
    """The table of `rows` as the chapter shows it: indexed by quantity, the columns `drop` left out."""
    out = comparison_frame(rows, drop_empty=drop_empty)
    return out.drop(columns=[c for c in drop if c in out.columns]).set_index("quantity")
