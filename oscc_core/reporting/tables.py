"""Paper-beside-reproduction tables: comparison rows with verdicts, and their text rendering.

Comparison cells show numbers to a few significant figures (`significant_text`; the results files keep ten),
so a rendered table is the same on every CPU; residual columns show values below `ZERO_TOLERANCE` against that
tolerance.
"""
from __future__ import annotations

import html

import pandas as pd

from oscc_core.reporting import claims
from oscc_core.reporting.numbers import (PLAIN_RANGE, SIGNIFICANT, deviation_text, interval_text,  # noqa: F401
                                         significant_text)
from oscc_core.reporting.results import ZERO_TOLERANCE, residual_text
from oscc_core.reporting.rows import NO_PAPER, relative_deviation

# Book tables show every cell whole: pandas would cut text (claim ids) at 50 characters.
pd.set_option("display.max_colwidth", None)

COLUMN_ORDER = ("quantity", "paper", "paper 95% interval", "ours", "95% interval", "exact", "relative deviation",
                "relation", "verdict", "status", "reason", "reading", "claim id", "sensitivity of")
#: Record fields a table does not show: whether the relation holds and is resolved (the verdict says it), and the
#: per-reading verdicts (the reason names them), the name of the size test (the ledger shows it) and a
#: not-comparable declaration (its reason is the row's reason).
RECORD_ONLY = ("relation holds", "relation resolved", "readings", "test", "not comparable", "relation verdict",
               "relation by construction", "reading dependent", "why", "printing of", "cause", "cause evidence")
#: ("printing of" leaves a table too: the row's reason names the entry whose verdict it shares; a gap's cause and its
#: evidence are the ledger's and the boxes' tallies', and its why says them.)


#: Text columns whose long cells move under the table as numbered notes (a cell keeps only its note's mark), so
#: that a comparison table stays narrow enough for its cells to hold a few lines each.  (A primary row's claim id
#: gets a line of its own under its row in the book; the claim a sensitivity row names has none.)
NOTE_COLUMNS = {"relation": "r", "reason": "n", "reading": "g", "sensitivity of": "s", "by construction": "c",
                "printing of": "p"}
#: A text cell longer than this many characters becomes a note.
NOTE_AFTER = 32


class NotedFrame(pd.DataFrame):
    """A table whose long text cells are marks ("r1", "n2") of notes listed under it (`notes`: [(mark, column,
    text)]).  It is a DataFrame (`set_index`, `loc` keep the notes); its HTML and text show the notes after the
    table."""

    _metadata = ["notes"]

    @property
    def _constructor(self):
        return NotedFrame

    def _notes_html(self) -> str:
        notes = getattr(self, "notes", None) or []
        if not notes:
            return ""
        items = "".join(f"<li><b>{html.escape(mark)}</b> ({html.escape(column)}): {html.escape(text)}</li>"
                        for mark, column, text in notes)
        return f'<ul class="oscc-table-notes">{items}</ul>'

    def _repr_html_(self):
        return super()._repr_html_() + self._notes_html()

    def __repr__(self) -> str:
        notes = getattr(self, "notes", None) or []
        return super().__repr__() + "".join(f"\n{mark} ({column}): {text}" for mark, column, text in notes)


def with_notes(frame: pd.DataFrame, after: int = NOTE_AFTER) -> NotedFrame:
    """`frame` with every `NOTE_COLUMNS` cell longer than `after` characters replaced by the mark of a note; equal
    texts share one note, numbered in order of first appearance per column."""
    out = NotedFrame(frame.copy())
    notes: list[tuple[str, str, str]] = []
    for column, prefix in NOTE_COLUMNS.items():
        if column not in out.columns:
            continue
        marks: dict[str, str] = {}

        def mark(text, column=column, prefix=prefix, marks=marks):
            if not isinstance(text, str) or len(text) <= after:
                return text
            if text not in marks:
                marks[text] = f"{prefix}{len(marks) + 1}"
                notes.append((marks[text], column, text))
            return marks[text]

        out[column] = out[column].map(mark)
    out.notes = notes
    return out


def comparison_frame(rows: list[dict], digits: int = SIGNIFICANT, drop_empty: bool = False):
    """A pandas table of comparison rows: floats to `digits` significant figures, counts with separators, known
    columns first.

    Every table of rows with a verdict shows the relative deviation (ours / paper - 1, as a signed
    percentage; computed from paper and ours where a row does not carry it) and the declared relation.
    `drop_empty` leaves out the optional columns (interval, exact, relation, reason, ...) that hold
    no value in any row, so that a wide table fits the page.  Long relations, reasons and readings become
    numbered notes under the table (`with_notes`).
    """
    import pandas as pd

    def fmt(x):
        if x is None:
            return "—"
        if isinstance(x, tuple):
            return interval_text(x[0], x[1], digits)
        if isinstance(x, float):
            return significant_text(x, digits)
        if isinstance(x, int) and not isinstance(x, bool):
            return f"{x:,}"
        return x

    rows = [dict(r) for r in rows]
    for r in rows:
        if "verdict" in r or "status" in r:
            r.setdefault("relative deviation", relative_deviation(r.get("paper"), r.get("ours"),
                                                                  r.get("95% interval")))
            r.setdefault("relation", None)
            r["relative deviation"] = deviation_text(r["relative deviation"])
            if r["relation"]:
                r["relation"] = f"{r['relation']} ({relation_outcome(r)})"
            if r.get("reading dependent") and r.get("verdict") != claims.DEPENDS:
                r["verdict"] = f"{r['verdict']} {BY_READING}"
    seen = list(dict.fromkeys(k for r in rows for k in r))
    columns = [c for c in COLUMN_ORDER if c in seen] + \
        [c for c in seen if c not in COLUMN_ORDER and c not in RECORD_ONLY]
    frame = pd.DataFrame([{c: fmt(r.get(c)) for c in columns} for r in rows])
    if drop_empty:
        kept = ("quantity", "paper", "ours", "verdict", "status", "claim id", "sensitivity of")
        frame = frame[[c for c in frame.columns if c in kept or (frame[c] != "—").any()]]
    return with_notes(_sensitivity_in_claim_column(frame))


#: How a table's verdict cell marks a verdict that is the paper's fixed reading's while another reading gives
#: another (the row's reason lists each reading's verdict); "depends on the reading" itself is a verdict.
BY_READING = "(by reading)"


def relation_outcome(record) -> str:
    """What became of a row's declared relation on our numbers, in a word or two: holds, fails, holds but
    unresolved at 95%, or holds by construction."""
    if record.get("relation by construction"):
        return "holds by construction"
    if not record.get("relation holds"):
        return "fails"
    return "holds, unresolved at 95%" if record.get("relation resolved") is False else "holds"


def _sensitivity_in_claim_column(frame):
    """A table with both a claim-id and a "sensitivity of" column shows one: a sensitivity row's claim stands in
    the claim-id column as "sensitivity of <id>" (one column fewer keeps a wide table on the page)."""
    if not {"claim id", "sensitivity of"} <= set(frame.columns):
        return frame
    out = frame.copy()
    named = (out["claim id"] == "—") & (out["sensitivity of"] != "—")
    out.loc[named, "claim id"] = "sensitivity of " + out.loc[named, "sensitivity of"]
    return out.drop(columns="sensitivity of")


def rows_record(rows: list[dict]) -> list[dict]:
    """Comparison rows as JSON-ready records (intervals as lists)."""
    return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(r).items()} for r in rows]


def outcome(row) -> str:
    """A row's verdict, or a setting row's status (adopted or differs)."""
    return row["status"] if "status" in row else row["verdict"]


def verdict_summary(tables: dict[str, list[dict]], kinds=tuple(claims.VERDICTS) + (NO_PAPER,)):
    """Count of rows per verdict (settings: per status) in each table, with a total row; a status column
    appears only when some table holds settings."""
    import pandas as pd

    out = {}
    found = {outcome(r) for rows in tables.values() for r in rows}
    kinds = tuple(kinds) + tuple(s for s in claims.STATUSES if s in found and s not in kinds)
    for name, rows in tables.items():
        counts = {k: 0 for k in kinds}
        for r in rows:
            counts[outcome(r)] = counts.get(outcome(r), 0) + 1
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
