"""A chapter's findings in a few sentences: the result box at its top and its bullets on the landing page.

Each chapter builds one `Findings` from the numbers and verdicts it computed
(never from the paper's numbers alone): three short lines for the box that
opens the chapter (what holds, what does not, what is impossible or still
open) and two or three bullets for the landing page.  The chapter glues the
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

#: The glue name of a chapter's result box, and the results-file key of its findings.
BOX_GLUE, RESULTS_KEY = "result_box", "findings"
#: The three lines of a result box, in order.
BOX_LINES = ("holds", "does not hold", "impossible or open")


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
