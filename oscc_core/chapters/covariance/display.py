"""How the chapter shows its comparison rows: `reporting.tables.comparison_frame` indexed by quantity, with
long claim ids of detail and sensitivity rows ("sensitivity of") moved into notes under the table.

A claim id in a narrow column wraps at every dot and underscore (five or six
lines for the longest); the primary row's "claim id" gets a line of its own
under its row, but "sensitivity of" has none.  So a "sensitivity of" cell
longer than `reporting.tables.NOTE_AFTER` characters becomes a mark ("s1";
equal ids share one) and the id is listed under the table, as the long
relations and reasons are.  `drop` leaves out columns that the text around
the table already states.
"""
from __future__ import annotations

from oscc_core.reporting.rows import SENSITIVITY_KEY
from oscc_core.reporting.tables import NOTE_AFTER, comparison_frame

#: Prefix of the note marks of "sensitivity of" ids.
SENSITIVITY_MARK = "s"


def frame(rows, drop_empty: bool = False, drop: tuple[str, ...] = ()):
    """The table of `rows` as the chapter shows it: indexed by quantity, long "sensitivity of" ids as notes
    (after the notes of long relations, reasons and readings), the columns `drop` left out."""
    out = comparison_frame(rows, drop_empty=drop_empty)
    notes = list(out.notes)
    if SENSITIVITY_KEY in out.columns:
        marks: dict[str, str] = {}

        def mark(text):
            if not isinstance(text, str) or len(text) <= NOTE_AFTER:
                return text
            if text not in marks:
                marks[text] = f"{SENSITIVITY_MARK}{len(marks) + 1}"
                notes.append((marks[text], SENSITIVITY_KEY, text))
            return marks[text]

        out[SENSITIVITY_KEY] = out[SENSITIVITY_KEY].map(mark)
    out = out.drop(columns=[c for c in drop if c in out.columns]).set_index("quantity")
    out.notes = notes
    return out
