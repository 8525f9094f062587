"""A chapter's findings in a few sentences: the result box at its top and its bullets on the landing page.

Each chapter builds one `Findings` from the numbers and verdicts it computed
(never from the paper's numbers alone): three short lines for the box that
opens the chapter (what holds, what does not, what is impossible or still
open) and two or three bullets for the landing page.  A chapter gives its box
as `Statement`s, each with the verdict of what it states computed from its
rows, and `Findings.filed` puts each under the line its verdict belongs to, so
a sentence that reports a failure can never stand under "holds".  Under the
lines stand the chapter's counts, with its gaps by cause (`reporting.tally`).  The chapter glues the
box (`glue_box`) and keeps `Findings.record()` under ``"findings"`` in its
results file; the claims-ledger chapter reads every chapter's record and
glues the landing page's bullets beside the chapter's result counts.

Both are glued as HTML (plain sentences, escaped here): the box opens its
chapter before the cell that computes it, and the bullets sit on another
page, and MyST-NB pastes a glued output into another place of the book only
as HTML, an image or plain text.  A chapter shows its box with

    ```{glue} result_box
    :doc: <notebook>.ipynb
    ```
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from oscc_core.reporting import claims

#: The glue name of a chapter's result box, and the results-file key of its findings.
BOX_GLUE, RESULTS_KEY = "result_box", "findings"
#: The three lines of a result box, in order.
BOX_LINES = ("holds", "does not hold", "impossible or open")
#: The verdict of a statement about a choice the paper leaves open or a hypothesis (no comparison decides it).
OPEN = "open"
#: The line of the box each verdict files its statement under: what holds is what our numbers reproduce; what does
#: not hold is what they contradict (a size that misses, an ordering that fails, a size that misses while its
#: direction holds); everything else (impossible under the rules, not resolved, depending on a reading, not
#: compared, open) is the third line.
BOX_LINE = {claims.REPRODUCED: BOX_LINES[0], claims.PARTLY: BOX_LINES[1], claims.NOT_REPRODUCED: BOX_LINES[1],
            claims.INCONCLUSIVE: BOX_LINES[2], claims.DEPENDS: BOX_LINES[2], claims.IMPOSSIBLE: BOX_LINES[2],
            claims.NOT_COMPARED: BOX_LINES[2], OPEN: BOX_LINES[2]}
#: What a line of the box says when no statement is filed under it.
EMPTY_LINE = {BOX_LINES[0]: "None of the paper's statements this chapter checks holds on our numbers.",
              BOX_LINES[1]: "None of the paper's statements this chapter checks fails on our numbers.",
              BOX_LINES[2]: "Nothing here is impossible under the rules, unresolved or left open."}


@dataclass(frozen=True)
class Statement:
    """One sentence of a chapter's box and the verdict of what it states, computed from the chapter's rows (never
    typed): the box files it under the line that verdict belongs to (`BOX_LINE`)."""

    text: str
    verdict: str

    def __post_init__(self):
        if self.verdict not in BOX_LINE:
            raise ValueError(f"a statement's verdict must be one of {list(BOX_LINE)}, got {self.verdict!r}.")
        if not self.text.strip():
            raise ValueError("a statement needs its sentence.")

    @property
    def line(self) -> str:
        """The line of the box this statement is filed under."""
        return BOX_LINE[self.verdict]


def relation_verdict(holds: bool, resolved: bool | None = True) -> str:
    """The verdict of a relation the paper states, as a box files it: reproduced when it holds and our intervals
    do not contradict it, inconclusive when they do, not reproduced when it fails."""
    if not holds:
        return claims.NOT_REPRODUCED
    return claims.INCONCLUSIVE if resolved is False else claims.REPRODUCED


def sided_verdict(for_paper: int, against_paper: int) -> str:
    """The verdict of an ordering judged at several points (budgets, seeds, strata): reproduced when it is resolved
    the paper's way at every point that resolves it and against it at none, not reproduced when it is resolved
    against the paper at any point, inconclusive when no point resolves it."""
    if against_paper:
        return claims.NOT_REPRODUCED
    return claims.REPRODUCED if for_paper else claims.INCONCLUSIVE


def _sentences(name: str, lines, low: int, high: int) -> tuple[str, ...]:
    out = tuple(str(s).strip() for s in lines)
    if not low <= len(out) <= high or any(not s for s in out):
        raise ValueError(f"{name} needs {low} to {high} non-empty sentences, got {list(out)!r}.")
    return out


@dataclass(frozen=True)
class Findings:
    """A chapter's findings: `box` (exactly three lines: what holds, what does not, what is impossible or open)
    and `landing` (two or three bullets), each a sentence written from the chapter's own numbers (markdown);
    `counts`, the chapter's counts as `reporting.tally.tally_text` writes them from the chapter's rows (the
    sentence the landing page prints for the chapter from the ledger), shown under the box's three lines."""

    box: tuple[str, ...]
    landing: tuple[str, ...]
    counts: str | None = None
    statements: tuple[Statement, ...] = ()

    @classmethod
    def filed(cls, statements, landing, counts: str | None = None) -> "Findings":
        """The findings whose box files each statement under the line its verdict belongs to (`BOX_LINE`), in the
        order given, and says so where a line has none (`EMPTY_LINE`)."""
        statements = tuple(statements)
        lines = {name: [s.text for s in statements if s.line == name] for name in BOX_LINES}
        return cls(tuple(" ".join(lines[name]) or EMPTY_LINE[name] for name in BOX_LINES), landing, counts,
                   statements)

    def __post_init__(self):
        object.__setattr__(self, "box", _sentences("the result box", self.box, 3, 3))
        object.__setattr__(self, "landing", _sentences("the landing page's bullets", self.landing, 2, 3))
        if self.counts is not None:
            object.__setattr__(self, "counts", _sentences("the counts", (self.counts,), 1, 1)[0])

    def record(self) -> dict:
        """The findings as a results file keeps them."""
        out = {"box": dict(zip(BOX_LINES, self.box)), "landing": list(self.landing)}
        if self.counts is not None:
            out["counts"] = self.counts
        if self.statements:
            out["statements"] = [{"text": x.text, "verdict": x.verdict, "line": x.line} for x in self.statements]
        return out

    def box_html(self) -> str:
        """The result box: an admonition whose three items are each led by what they say, and the counts."""
        items = "".join(f"<li><strong>{label.capitalize()}.</strong> {html.escape(line)}</li>"
                        for label, line in zip(BOX_LINES, self.box))
        counts = "" if self.counts is None else f'<p class="oscc-counts"><em>{html.escape(self.counts)}</em></p>'
        return (f'<div class="admonition tip oscc-result-box"><p class="admonition-title">This chapter in three '
                f"lines</p><ul>{items}</ul>{counts}</div>")


def landing_html(record: dict, counts_line: str) -> str:
    """A chapter's landing-page bullets (from its results file's findings record) and its result counts."""
    items = [html.escape(line) for line in record["landing"]] + [f"<em>{html.escape(counts_line)}</em>"]
    return '<ul class="oscc-findings">' + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def glue_box(findings: Findings) -> None:
    """Glue the result box (HTML) under `BOX_GLUE`, for the chapter's opening."""
    from IPython.display import HTML
    from myst_nb import glue

    glue(BOX_GLUE, HTML(findings.box_html()), display=False)
