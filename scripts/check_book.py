#!/usr/bin/env python3
"""Open every page of the built book in headless Chromium, check it, screenshot it.

Builds nothing (`make check-book` builds first). Reads the page list from
_toc.yml, opens each page of _build/html (or --html-dir) in one headless
Chromium driven over the DevTools protocol (through `--remote-debugging-pipe`,
so only the standard library is needed), waits until MathJax has typeset the
page and its fonts are loaded, and then fails the page on:

* visible raw LaTeX: `\\(`, `\\[`, `$$`, `$...\\frac...$` or a TeX command such as
  `\\frac` or `\\operatorname` in the text a reader sees after MathJax ran, a
  math element MathJax did not typeset, or a MathJax error (`mjx-merror`);
* a request to the network (http/https): the book must render offline, so
  MathJax must come from `_static/`, not from a CDN. The network is blocked
  while the page loads;
* an unresolved glue or role (`{glue`, `{cite`, `{claim`, `{numref`, ...);
* a broken image: an `<img>` whose file is missing or whose naturalWidth is 0;
* an error output: a traceback, an error or stderr output cell, or a docutils
  problem/system message;
* a table or a figure wider than the text column at WIDTH (1280) pixels: cut off at the
  column's edge, or inside a box a reader would have to scroll sideways (a cell output's
  scroll bar is a last resort, not a layout); collapsed sections are measured open. Also a
  table cell whose text pandas cut with "..." (display.max_colwidth);
* a template defect in the text a reader sees or hovers (prose, cell outputs, tooltips; not
  code): a size sentence "are ours is", "no interval enters" said of a relation about an
  interval, a "wrote NN.json" line, a whole number printed as "61,440.0" or a number in e+
  notation ("1.08e+05" where the book writes 108,000), a verdict scale other than the rule's
  ("one of six verdicts" where there are seven), a claims-ledger or key-claims line whose why
  says its verdict depends on the reading while its verdict does not, or whose why is only
  "a printing of" another entry (text_defects, on the page's HTML file);
* a tall table cell: a cell of a table in a cell output (a notebook's table, here or
  glued into another page) whose contents are taller than MAX_CELL_LINES (4) lines of
  its own text, i.e. the height of its contents (a DOM Range's getBoundingClientRect,
  padding left out) over its computed line-height exceeds 4.5 (the half line absorbs
  sub/superscripts, typeset math and the smaller claim-id type). A squeezed column
  (a claim id one character per line, a paragraph in a 100px column) shows up so;
  the report names the table (its number on the page, its section, its columns) and
  the cell (its column, width and text). Tables in collapsed sections (the `details`
  elements of hide-output/hide-cell and {toggle}, the `.toggle-hidden` dropdown
  admonitions of sphinx-togglebutton) are opened for the measurement, after the
  screenshot, and closed again before the text checks; a reader who opens them sees
  the same table. Cells holding an image are not measured;
* small figure text: a figure whose smallest legend or tick text is under
  MIN_FIGURE_TEXT_PX (9) pixels tall as the page shows it. The figures' PNGs carry
  that text's size in points and the dpi it was drawn at (a tEXt chunk written by
  oscc_core.reporting.figure_text.record_text_sizes); the page's display scale is the
  image's rendered width over its natural width, so the text is
  points x dpi / 72 x width / naturalWidth pixels tall. A matplotlib PNG without that
  record fails too (its notebook ran before the figure recorded it: re-execute it).
  Images in collapsed sections are measured opened, as the tall cells are;
* a chapter page (a notebook) without at least one table and one image;
* a table filter (a search box `<id>-q` above the table `<id>`, as the claims ledger has) that
  does not show just the matching entries: a paper value printed by several entries (not all)
  is typed into the box, and the page fails when a row of a non-matching entry stays visible
  (a claim-id line or a "why" line left behind), when a row of a matching entry is hidden, or
  when the box's count ("k of n entries") is not the number of matching entries. An entry is
  a row of class `ledger-entry` and the rows after it up to the next entry. The box is
  cleared again afterwards.

Code (cell inputs, code blocks, inline code) and anything hidden (collapsed
cells) are not "visible text"; cell outputs are (the tall-cell check alone
opens the collapsed sections).
A PNG of every whole page, however tall, goes to _build/screenshots/ (or --out): the
viewport is made as tall as the page and captured in segments of at most
SHOT_SEGMENT pixels, which Pillow stitches into one image (without Pillow the
segments are saved as <page>.part<k>.png).
Prints one line per page; exits 1 when a page fails, 2 when it cannot run.

Usage: python scripts/check_book.py [--html-dir _build/html] [--out _build/screenshots]
                                    [--chromium /usr/bin/chromium] [--no-screenshots] [--allow-stderr]
                                    [--max-cell-lines 4]
"""
from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib
from html.parser import HTMLParser
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1280, 900
# One capture is at most this tall (Chromium's captures of more than 16,384 pixels are not
# reliable); a taller page is captured in segments and stitched.
SHOT_SEGMENT = 8000
# Legend and tick text of a figure must be at least this many pixels tall as displayed
# (the height of 9-point type at 72 dpi; 7-point text at 100 dpi shown at 62% is 6 px).
MIN_FIGURE_TEXT_PX = 9.0
# The PNG tEXt keyword of a figure's smallest-text record (oscc_core.reporting.figure_text).
TEXT_SIZES_KEY = "oscc:smallest-text"
POINTS_PER_INCH = 72.0
# A table cell may hold at most this many lines of its own text at the rendered font size
# (at WIDTH: a text column of about 690px, table type 0.75rem with line-height 1.3). Four
# lines hold a row label of about 100 characters or a 95% interval split over two lines;
# a fifth line means a squeezed column or a paragraph that belongs in the prose.
MAX_CELL_LINES = 4
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--allow-file-access-from-files",
    # no DNS: a page that needs the internet fails here as it would offline
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",
    f"--window-size={WIDTH},{HEIGHT}",
]

# ---------------------------------------------------------------- text checks (pure, unit-tested)

# Delimiters MathJax would have consumed, and TeX commands (a backslash and two or more letters).
RAW_LATEX = re.compile(
    r"\\[()\[\]]"                          # \( \) \[ \]
    r"|\$\$"                               # $$
    r"|\$[^$\s][^$\n]*?[\\^_{}][^$\n]*?\$"  # $x_1$, $\frac{a}{b}$ (single-dollar math left as text)
    r"|\\[A-Za-z]{2,}"                     # \frac, \operatorname, \mathrm, \sum, ...
    r"|\\begin\{|\\end\{"
)
# MyST roles and glue left as literal text.
LITERAL_ROLE = re.compile(
    r"\{(?:glue|cite|claim|numref)\b[^}]*\}?"
    r"|\{(?:ref|doc|eq|term|download|bibliography|math|prf:ref)(?::[\w-]+)*\}"
)
ERROR_TEXT = re.compile(r"Traceback \(most recent call last\)|^\w*Error: |^\w*Warning: ", re.MULTILINE)


def _snippets(pattern: re.Pattern, text: str, width: int = 30, limit: int = 5) -> list[str]:
    """Each hit with `width` characters of context; hits inside an earlier snippet are not repeated."""
    out, covered = [], -1
    for m in pattern.finditer(text):
        if m.start() < covered:
            continue
        a, covered = max(0, m.start() - width), min(len(text), m.end() + width)
        out.append(" ".join(text[a:covered].split()))
        if len(out) >= limit:
            break
    return out


def raw_latex(text: str) -> list[str]:
    """Snippets of `text` that look like LaTeX a reader would see unrendered."""
    return _snippets(RAW_LATEX, text)


def literal_roles(text: str) -> list[str]:
    """Snippets of `text` with a MyST role or glue that was not resolved."""
    return _snippets(LITERAL_ROLE, text)


def error_text(text: str) -> list[str]:
    """Snippets of `text` that look like a traceback or an error/warning line."""
    return _snippets(ERROR_TEXT, text)


# ---------------------------------------------------------------- template defects (pure, unit-tested)

# Sentences the book's templates wrote wrong once. Each is read in the text a reader sees or hovers on a page:
# the prose, every cell output (collapsed ones too) and every tooltip (the ledger's whole "why" is one), not
# code. A rule names a defect precisely enough that a correct sentence never matches it.
TEXT_DEFECTS = (
    ("a size sentence reads 'are ours is'", re.compile(r"\bare\s+ours\s+is\b")),
    # 'no interval enters' said of a relation that is itself about an interval or a 95% resolution
    ("'no interval enters' on a relation about an interval",
     re.compile(r"“[^”]*?(?:\bintervals?\b|95\s?%)[^”]*”[^“”;]*?\bno\s+interval\s+enters\b")),
    # a notebook's "wrote 02_covariance.json" printed as an output line of its own
    ("a 'wrote <file>.json' line printed on the page", re.compile(r"(?m)^[ \t]*wrote [^\s]+\.json[ \t]*$")),
    # an integer shown as a float beside the comma-grouped integers of the book: 61,440.0
    ("a comma-grouped whole number printed with a zero decimal part",
     re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+\.0+(?![\d])")),
    # 1.08e+05 where the book writes 108,000 (and 0.0e+00 for a zero); small values in e-notation (1e-12) stay
    ("a number in e+ notation (the book writes 108,000)", re.compile(r"(?<![\w.])\d+(?:\.\d+)?e\+\d+\b")),
)
NUMBER_WORDS = {w: k for k, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
# "one of six verdicts": the count the prose promises for the verdict scale
VERDICT_SCALE = re.compile(
    r"\bone\s+of\s+(?:the\s+)?(\w+)\s+(?:possible\s+)?verdicts\b|\b(\w+)\s+possible\s+verdicts\b", re.I)
# a why saying the verdict depends on the reading (the ledger's line must then say so in its verdict)
SAYS_DEPENDS = re.compile(r"\bverdict\s+depends\s+on\s+the\s+reading\b|(?:^|[;:.]\s)depends\s+on\s+the\s+reading\b")
FLAGGED_DEPENDS = "depends on the reading"
# the pointer to the entry a printing shares its verdict with: alone, it explains nothing
PRINTING_POINTER = re.compile(r"\ba printing of [\w.\-]+(?:,? whose (?:verdict|row) it (?:shares|takes))?")


def verdict_count() -> int:
    """How many verdicts the book's rule has (oscc_core.reporting.claims.VERDICTS)."""
    sys.path.insert(0, str(ROOT))
    try:
        from oscc_core.reporting.claims import VERDICTS
    finally:
        sys.path.remove(str(ROOT))
    return len(VERDICTS)


class PageText(HTMLParser):
    """What a reader sees or hovers on a built page (see TEXT_DEFECTS): its text, with a line break at every block,
    the tooltips (title attributes), and the lines of a claims ledger or key-claims table as
    {"verdict", "why", "id"} (the why's whole text, its tooltip where the cell shortens it). Inside the article
    (`article.bd-article`) where there is one; scripts, styles, cell inputs and code outside cell outputs left out."""

    SKIP_TAGS = {"script", "style", "noscript", "template", "head", "title"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
    BLOCK = {"p", "div", "pre", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "br",
             "section", "table", "ul", "ol", "dl", "figure", "figcaption", "details", "summary", "blockquote"}

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.scoped = re.search(r"<article\b[^>]*class=\"[^\"]*\bbd-article\b", source) is not None
        self.stack: list[tuple[str, set, bool]] = []   # (tag, classes, skipped)
        self.depth_article = 0
        self.parts: list[str] = []
        self.tooltips: list[str] = []
        self.lines: list[dict] = []
        self._row: dict | None = None      # the table row being read: its classes, cells and tooltips
        self._cell: list[str] | None = None
        self._label = ""                   # the last <b> label in a ledger detail row ("why", "relation", ...)
        self.feed(source)
        self.close()

    @property
    def text(self) -> str:
        return re.sub(r"[ \t]*\n[\s]*", "\n", "".join(self.parts))

    def _inside(self) -> bool:
        return (not self.scoped or self.depth_article > 0) and not (self.stack and self.stack[-1][2])

    def _in_output(self) -> bool:
        return any("cell_output" in classes for _, classes, _ in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        parent_skipped = bool(self.stack and self.stack[-1][2])
        skipped = parent_skipped or tag in self.SKIP_TAGS or bool(classes & {"cell_input", "headerlink"}) or (
            (tag in ("pre", "code") or "highlight" in classes) and not self._in_output())
        if tag == "article" and "bd-article" in classes:
            self.depth_article += 1
        if tag not in self.VOID:
            self.stack.append((tag, classes, skipped))
        if skipped or not ((not self.scoped) or self.depth_article):
            return
        if tag in self.BLOCK:
            self.parts.append("\n")
        if a.get("title"):
            self.tooltips.append(a["title"])
        if tag == "tr":
            key = any(t == "tbody" for t, _, _ in self.stack) and any(
                t == "table" and "oscc-key-claims" in c for t, c, _ in self.stack)
            self._row = {"classes": classes, "cells": [], "titles": [], "labelled": {}, "key": key}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._row["titles"].append(a.get("title"))
        elif self._row is not None and a.get("title") and self._label:
            self._row["labelled"][self._label] = a["title"]

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID or not any(t == tag for t, _, _ in self.stack):
            return
        while self.stack:
            t, classes, skipped = self.stack.pop()
            if t == "article" and "bd-article" in classes:
                self.depth_article -= 1
            if t in ("td", "th") and self._row is not None and self._cell is not None and not skipped:
                self._row["cells"].append(" ".join("".join(self._cell).split()))
                self._cell = None
            if t == "tr" and self._row is not None and not skipped:
                self._end_row(self._row)
                self._row = None
            if t == tag:
                break

    def handle_data(self, data):
        if not self._inside():
            return
        self.parts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        tag = self.stack[-1][0] if self.stack else ""
        if tag == "b" and self._row is not None:
            self._label = data.strip().lower()

    def _end_row(self, row):
        self._label = ""
        cells = row["cells"]
        if "ledger-entry" in row["classes"]:
            self.lines.append({"verdict": cells[-1] if cells else "", "why": "", "id": cells[0] if cells else ""})
        elif "ledger-detail" in row["classes"] and self.lines:
            text = " ".join(cells)
            shown = text.split(" why ", 1)[1] if " why " in text else ""
            self.lines[-1].update(why=row["labelled"].get("why") or shown, id=text.split(" · ", 1)[0])
        elif row["key"] and len(cells) == 5:    # the landing page's key claims: claim, paper, ours, verdict, why
            self.lines.append({"verdict": cells[3], "why": row["titles"][4] or cells[4], "id": cells[0]})


def text_defects(source: str, verdicts: int | None = None) -> list[str]:
    """The template defects (TEXT_DEFECTS, a verdict scale that is not the rule's, a line whose why says its
    verdict depends on the reading while its verdict does not, a why that is only "a printing of X") on the page
    whose HTML is `source`: one problem per kind, with up to three places."""
    page = PageText(source)
    text = page.text + "\n" + "\n".join(page.tooltips)
    found: list[tuple[str, list[str]]] = []
    for name, pattern in TEXT_DEFECTS:
        if hits := _snippets(pattern, text, width=40, limit=3):
            found.append((name, hits))
    n = verdict_count() if verdicts is None else verdicts
    scale = []
    for m in VERDICT_SCALE.finditer(text):
        word = (m.group(1) or m.group(2)).lower()
        said = NUMBER_WORDS.get(word, int(word) if word.isdigit() else None)
        if said is not None and said != n:
            scale.append(" ".join(text[max(0, m.start() - 30):m.end() + 10].split()))
    if scale:
        found.append((f"a verdict scale that is not the rule's {n} verdicts", scale[:3]))
    unflagged = [line["id"] for line in page.lines
                 if SAYS_DEPENDS.search(line["why"]) and FLAGGED_DEPENDS not in line["verdict"]]
    if unflagged:
        found.append((f"{len(unflagged)} line(s) whose why says the verdict depends on the reading while the "
                      "verdict does not say so", unflagged[:3]))
    bare = [line["id"] for line in page.lines
            if line["why"] and PRINTING_POINTER.search(line["why"])
            and not PRINTING_POINTER.sub("", line["why"]).strip(" ;,.—-")]
    if bare:
        found.append((f"{len(bare)} line(s) whose why is only 'a printing of' another entry", bare[:3]))
    return [f"template defect, {name}: " + " | ".join(repr(h) for h in hits) for name, hits in found]


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def tall_cell_problems(tables: list[dict], max_lines: int = MAX_CELL_LINES) -> list[str]:
    """One problem per table with cells taller than `max_lines` lines (see TALL_CELLS_JS):
    the table (number on the page, section, columns, collapsed or not) and up to three of
    its tallest cells (lines, column, width, text)."""
    problems = []
    for t in tables:
        cells = sorted(t.get("cells", []), key=lambda c: -c["lines"])
        if not cells:
            continue
        where = f"table {t['table']}"
        if t.get("section"):
            where += f" in section {t['section']!r}"
        if t.get("collapsed"):
            where += " (in a collapsed section)"
        where += f", columns: {t.get('columns') or '(none)'}"
        shown = "; ".join(f"{c['lines']:.1f} lines in column {c.get('column') or '?'!r} ({c['width']}px wide): "
                          f"{_short(c['text'])!r}" for c in cells[:3])
        more = f"; and {len(cells) - 3} more" if len(cells) > 3 else ""
        problems.append(f"{len(cells)} table cell(s) taller than {max_lines} lines in {where}: {shown}{more}")
    return problems


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_text_chunks(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of a PNG, keyword -> text; {} for data that is not a PNG."""
    if not data.startswith(PNG_SIGNATURE):
        return {}
    out, at = {}, len(PNG_SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IEND":
            break
        if kind not in (b"tEXt", b"zTXt", b"iTXt") or b"\0" not in body:
            continue
        key, rest = body.split(b"\0", 1)
        try:
            if kind == b"tEXt":
                text = rest.decode("latin-1")
            elif kind == b"zTXt":
                text = zlib.decompress(rest[1:]).decode("latin-1")
            else:  # compression flag, method, language\0, translated keyword\0, text
                compressed, rest = rest[0], rest[2:]
                text = rest.split(b"\0", 2)[2]
                text = (zlib.decompress(text) if compressed else text).decode("utf-8")
        except (zlib.error, UnicodeDecodeError, IndexError):
            continue
        out[key.decode("latin-1")] = text
    return out


def figure_text_facts(data: bytes) -> dict:
    """What check_book needs of one image's bytes: its smallest-text record (dict or None) and
    whether matplotlib made it (its Software chunk)."""
    chunks = png_text_chunks(data)
    try:
        record = json.loads(chunks[TEXT_SIZES_KEY]) if TEXT_SIZES_KEY in chunks else None
    except json.JSONDecodeError:
        record = None
    return {"record": record, "matplotlib": chunks.get("Software", "").startswith("Matplotlib")}


def displayed_text_px(record: dict, width: float, natural_width: float) -> float:
    """Height in CSS pixels of a recorded text as the page shows the image: its size in points at
    the recorded dpi (points x dpi / 72 image pixels) times the display scale width / natural width."""
    return record["pt"] * record["dpi"] / POINTS_PER_INCH * width / natural_width


def figure_text_problems(images: list[dict], min_px: float = MIN_FIGURE_TEXT_PX) -> list[str]:
    """One problem per displayed figure whose smallest legend or tick text is under `min_px` pixels,
    and per matplotlib PNG without a smallest-text record. Each image: {"src", "width", "natural",
    "label", "collapsed", "record", "matplotlib"} (see IMAGES_JS and figure_text_facts)."""
    problems = []
    for img in images:
        where = img.get("label") or img.get("src", "?")
        if img.get("collapsed"):
            where += " (in a collapsed section)"
        record = img.get("record")
        if record is None:
            if img.get("matplotlib"):
                problems.append(f"figure without its smallest-text record (made before "
                                "oscc_core.reporting.figure_text recorded it; re-execute its notebook): " + where)
            continue
        if not img.get("width") or not img.get("natural"):
            continue
        px = displayed_text_px(record, img["width"], img["natural"])
        if px < min_px:
            problems.append(
                f"figure text {px:.1f}px tall, under {min_px:g}px: {record.get('kind', 'text')} "
                f"{record.get('text', '')!r} at {record['pt']:g}pt and {record['dpi']:g}dpi, the image shown at "
                f"{img['width'] / img['natural']:.0%} of its {img['natural']}px width, in {where}")
    return problems


def width_problems(items: list[dict]) -> list[str]:
    """One problem per table or figure wider than the text column at WIDTH (see WIDTHS_JS): a table must be read
    whole, not scrolled or cut off at the column's edge. Each item: {"kind", "over", "width", "room", "scrolls",
    "section", "collapsed", "label"}."""
    problems = []
    for it in items:
        what = "table" if it["kind"] == "table" else "figure"
        how = "a reader must scroll it sideways" if it.get("scrolls") else "cut off at the column's edge"
        where = f" in section {it['section']!r}" if it.get("section") else ""
        if it.get("collapsed"):
            where += " (in a collapsed section)"
        named = "columns" if what == "table" else "caption"
        problems.append(f"{what} {it['over']}px wider than the text column ({it['width']}px where "
                        f"{it['room']}px fit; {how}){where}, {named}: {it.get('label') or '(none)'}")
    return problems


def shot_segments(page_height: int, segment: int = SHOT_SEGMENT) -> list[tuple[int, int]]:
    """(top, height) of the captures that cover a page `page_height` pixels tall, each at most
    `segment` pixels, in order, without gap or overlap."""
    if page_height < 1 or segment < 1:
        raise ValueError(f"page_height and segment must be positive pixel counts, got {page_height} and {segment}")
    return [(top, min(segment, page_height - top)) for top in range(0, page_height, segment)]


def page_problems(facts: dict, chapter: bool, allow_stderr: bool = False,
                  max_lines: int = MAX_CELL_LINES) -> list[str]:
    """Problems of one page from the facts the browser collected (see INSPECT_JS and TALL_CELLS_JS)."""
    problems = []
    text = facts.get("text", "")
    if hits := raw_latex(text):
        problems.append("raw LaTeX visible: " + " | ".join(repr(h) for h in hits))
    if facts.get("unrendered_math"):
        problems.append(f"{facts['unrendered_math']} math element(s) not typeset by MathJax: "
                        + " | ".join(repr(s) for s in facts.get("unrendered_samples", [])))
    if facts.get("math_errors"):
        problems.append("MathJax error(s): " + " | ".join(repr(s) for s in facts["math_errors"]))
    if facts.get("mathjax_state") == "timeout":
        problems.append("MathJax did not finish typesetting")
    if facts.get("mathjax_state") == "failed":
        problems.append("MathJax failed: " + str(facts.get("mathjax_error", "")))
    if facts.get("network"):
        problems.append("requests the network (offline it breaks): " + ", ".join(facts["network"][:5]))
    if hits := literal_roles(text):
        problems.append("unresolved role/glue: " + " | ".join(repr(h) for h in hits))
    if hits := error_text(text):
        problems.append("error text: " + " | ".join(repr(h) for h in hits))
    for img in facts.get("broken_images", []):
        problems.append(f"broken image {img}")
    errors = dict(facts.get("error_elements", {}))
    stderr = errors.pop("output stderr", 0)
    if errors:
        problems.append("error output/markup: " + ", ".join(f"{k} x{v}" for k, v in sorted(errors.items())))
    if stderr and not allow_stderr:
        problems.append(f"{stderr} stderr output cell(s)")
    problems += width_problems(facts.get("too_wide", []))
    problems += facts.get("text_defects", [])
    problems += tall_cell_problems(facts.get("tall_cells", []), max_lines)
    problems += figure_text_problems(facts.get("figure_images", []))
    problems += filter_problems(facts.get("filters", []))
    if cut := facts.get("cut_cells"):
        problems.append(f"{len(cut)} table cell(s) cut off with '...' (pandas display.max_colwidth), e.g. {cut[0]!r}")
    if chapter and facts.get("tables", 0) < 1:
        problems.append("chapter without a table")
    if chapter and facts.get("images", 0) < 1:
        problems.append("chapter without a figure (<img>)")
    return problems


def filter_problems(filters: list[dict]) -> list[str]:
    """Problems of the table filters a page has (see FILTER_JS): stray rows left visible, matching rows hidden,
    a wrong count, or a filter with nothing to type."""
    out = []
    for f in filters:
        name = f"filter of table '{f['table']}'"
        if f.get("error"):
            out.append(f"{name}: {f['error']}")
            continue
        typed = f"typing {f['query']!r}"
        if f["stray"]:
            out.append(f"{name}: {typed} leaves {f['stray']} row(s) of non-matching entries visible, "
                       f"e.g. {f['stray_sample']!r}")
        if f["missing"]:
            out.append(f"{name}: {typed} hides {f['missing']} matching entr{'y' if f['missing'] == 1 else 'ies'}")
        want = f"{f['matching']} of {f['entries']} entries"
        if f["counter"] != want:
            out.append(f"{name}: {typed} shows the count {f['counter']!r}, not {want!r}")
    return out


def toc_pages(toc_path: Path) -> list[str]:
    """Document names (without suffix) in _toc.yml order, through parts, chapters and sections."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(items):
        for item in items or []:
            if "file" in item:
                pages.append(item["file"])
            walk(item.get("sections"))
            walk(item.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return [re.sub(r"\.(md|ipynb)$", "", p) for p in pages]


# ---------------------------------------------------------------- the browser

WAIT_JS = """(async () => {
  const t0 = Date.now();
  // MathJax's script is deferred: wait until its startup object exists (pages without math have none).
  while (document.querySelector('script[src*="mathjax" i]') && !(window.MathJax && MathJax.startup
         && MathJax.startup.promise) && Date.now() - t0 < 20000) await new Promise(r => setTimeout(r, 50));
  let state = 'none', error = '';
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    const done = MathJax.startup.promise.then(() => 'done', e => { error = String(e); return 'failed'; });
    state = await Promise.race([done, new Promise(r => setTimeout(() => r('timeout'), 30000))]);
  } else if (document.querySelector('script[src*="mathjax" i]')) {
    state = 'not loaded';
  }
  await document.fonts.ready;
  return JSON.stringify({state, error});
})()"""

# Tall table cells. Opens every collapsed section (closed <details>; sphinx-togglebutton's
# .toggle-hidden admonitions), waits two frames (oscc.js fits a table when it first gets a
# size), measures every cell of every table in a cell output, and closes the sections again.
# A cell's lines: the height of its contents (a Range, padding left out) over its computed
# line-height; it fails above MAX_CELL_LINES + 0.5. Hidden cells (oscc.js hides the claim-id
# column when it moves the ids onto their own lines) and cells with an image are skipped.
# The article, with every collapsed section (a <details>, a toggled admonition) opened for measuring; the
# scripts that use it close them again (`opened`, `shown`).
OPEN_COLLAPSED_JS = r"""  const root = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const opened = [...root.querySelectorAll('details:not([open])')];
  const shown = [...root.querySelectorAll('.toggle-hidden')];
  opened.forEach(d => { d.open = true; });
  shown.forEach(el => el.classList.remove('toggle-hidden'));
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  await frame(); await frame();"""

TALL_CELLS_JS = r"""(async () => {
  const MAX = __MAX_CELL_LINES__;
__OPEN_COLLAPSED__
  const collapsed = el => opened.some(d => d.contains(el)) || shown.some(s => s.contains(el));
  const text = el => [...el.childNodes].filter(n => !(n.classList && n.classList.contains('headerlink')))
      .map(n => n.textContent).join('').trim();
  const section = t => {
    for (let s = t.closest('section'); s; s = s.parentElement && s.parentElement.closest('section')) {
      const h = s.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6');
      if (h) return text(h);
    }
    return '';
  };
  const own = cell => [...cell.childNodes].filter(n => !(n.classList && n.classList.contains('oscc-claim-id-below')))
      .map(n => n.textContent).join('').trim();  // a header cell's text without oscc.js's grey "claim id" legend
  const layout = t => {  // each cell's visual column, through rowspans and colspans
    const taken = [], at = new Map();
    [...t.rows].filter(row => row.closest('table') === t).forEach((row, r) => {
      let col = 0;
      for (const cell of row.cells) {
        while (taken[r] && taken[r][col]) col++;
        at.set(cell, col);
        for (let dr = 0; dr < cell.rowSpan; dr++) for (let dc = 0; dc < cell.colSpan; dc++)
          (taken[r + dr] = taken[r + dr] || [])[col + dc] = true;
        col += cell.colSpan;
      }
    });
    return at;
  };
  const headersOf = (t, at) => {  // visual column -> its header texts (every header row), joined by " / "
    const names = [];
    if (t.tHead) for (const row of t.tHead.rows) for (const cell of row.cells) {
      const name = own(cell);
      if (!name) continue;
      for (let dc = 0; dc < cell.colSpan; dc++) {
        const k = at.get(cell) + dc;
        names[k] = names[k] ? names[k] + ' / ' + name : name;
      }
    }
    return names;
  };
  const range = document.createRange();
  const tables = [];
  [...root.querySelectorAll('table')].forEach((t, i) => {
    if (!t.closest('.cell_output')) return;
    const at = layout(t), head = headersOf(t, at);
    const cells = [];
    for (const row of t.rows) {
      if (row.closest('table') !== t) continue;
      for (const cell of row.cells) {
        if (!cell.getClientRects().length || cell.querySelector('img, canvas, video, iframe')) continue;
        range.selectNodeContents(cell);
        const height = range.getBoundingClientRect().height;
        const style = getComputedStyle(cell);
        let lh = parseFloat(style.lineHeight);
        if (isNaN(lh)) lh = 1.2 * parseFloat(style.fontSize);
        const lines = height / lh;
        if (lines > MAX + 0.5) cells.push({
          lines: Math.round(lines * 10) / 10,
          width: Math.round(cell.getBoundingClientRect().width),
          column: cell.classList.contains('oscc-claim-id-line') ? 'claim id' : (head[at.get(cell)] || ''),
          text: cell.textContent.trim().slice(0, 200),
        });
      }
    }
    if (cells.length) tables.push({
      table: i + 1, section: section(t), collapsed: collapsed(t),
      columns: [...head].filter(Boolean).slice(0, 5).join(', ') + ([...head].filter(Boolean).length > 5 ? ', ...' : ''),
      cells,
    });
  });
  opened.forEach(d => { d.open = false; });
  shown.forEach(el => el.classList.add('toggle-hidden'));
  await frame();
  return JSON.stringify(tables);
})()"""
TALL_CELLS_JS = TALL_CELLS_JS.replace("__OPEN_COLLAPSED__", OPEN_COLLAPSED_JS)

# Figures as displayed: every <img> of the article with its rendered and natural width,
# measured with every collapsed section opened (as TALL_CELLS_JS does, and closed again), and
# a label for the report (the figure's caption, else its section's heading).
IMAGES_JS = r"""(async () => {
__OPEN_COLLAPSED__
  const imgs = [...root.querySelectorAll('img')];
  await Promise.all(imgs.map(img => img.decode().catch(() => null)));
  const words = (t, n) => { t = t.replace(/\s+/g, ' ').trim(); return t.length > n ? t.slice(0, n - 1) + '…' : t; };
  const label = img => {
    const fig = img.closest('figure');
    const cap = fig && fig.querySelector('figcaption');
    if (cap) return 'figure ' + JSON.stringify(words(cap.textContent, 70));
    const s = img.closest('section');
    const h = s && s.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
    return 'an image in section ' + JSON.stringify(h ? words(h.textContent.replace('#', ''), 60) : '(none)');
  };
  const out = imgs.filter(img => img.getClientRects().length).map(img => ({
    src: img.currentSrc || img.src, width: img.getBoundingClientRect().width, natural: img.naturalWidth,
    label: label(img), collapsed: opened.some(d => d.contains(img)) || shown.some(s => s.contains(img)),
  }));
  opened.forEach(d => { d.open = false; });
  shown.forEach(el => el.classList.add('toggle-hidden'));
  await frame();
  return JSON.stringify(out);
})()"""
IMAGES_JS = IMAGES_JS.replace("__OPEN_COLLAPSED__", OPEN_COLLAPSED_JS)

# Tables and figures wider than the text column, measured at WIDTH with every collapsed section opened (as
# TALL_CELLS_JS does, and closed again).  The text column is the article's content box; a table inside a box
# that clips or scrolls (a cell output's .output.text_html) must also fit that box's padding box, so a table
# that a reader would have to scroll fails as well as one that is cut off.  Each item: its kind (table or
# figure), how many pixels it runs past, whether it scrolls, its section, its columns (a table) or its label (a
# figure), and whether it sits in a collapsed section.
WIDTHS_JS = r"""(async () => {
__OPEN_COLLAPSED__
  const collapsed = el => opened.some(d => d.contains(el)) || shown.some(s => s.contains(el));
  const box = root.getBoundingClientRect(), style = getComputedStyle(root);
  const columnRight = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
  const words = (t, n) => { t = t.replace(/\s+/g, ' ').trim(); return t.length > n ? t.slice(0, n - 1) + '…' : t; };
  const section = el => {
    for (let s = el.closest('section'); s; s = s.parentElement && s.parentElement.closest('section')) {
      const h = s.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6');
      if (h) return words(h.textContent.replace(/#$/, ''), 70);
    }
    return '';
  };
  const limit = el => {  // the right edge el must keep to, and whether an ancestor would scroll it
    let right = columnRight, scrolls = false;
    for (let a = el.parentElement; a && a !== root; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'visible') continue;
      const r = a.getBoundingClientRect();
      right = Math.min(right, r.left + a.clientLeft + a.clientWidth);
      if (o === 'auto' || o === 'scroll') scrolls = true;
    }
    return {right, scrolls};
  };
  const out = [];
  for (const t of root.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    if (!r.width || t.parentElement.closest('table')) continue;
    const {right, scrolls} = limit(t);
    if (r.right <= right + 1) continue;
    const names = (t.tHead && t.tHead.rows[0] ? [...t.tHead.rows[0].cells] : []).map(c => [...c.childNodes]
        .filter(n => !(n.classList && n.classList.contains('oscc-claim-id-below')))
        .map(n => n.textContent).join('').replace(/\s+/g, ' ').trim()).filter(Boolean);
    out.push({kind: 'table', over: Math.round(r.right - right), width: Math.round(r.width),
              room: Math.round(right - r.left), scrolls, section: section(t), collapsed: collapsed(t),
              label: names.slice(0, 6).join(', ') + (names.length > 6 ? ', ...' : '')});
  }
  for (const img of root.querySelectorAll('img')) {
    const r = img.getBoundingClientRect();
    if (!r.width) continue;
    const {right, scrolls} = limit(img);
    if (r.right <= right + 1) continue;
    const fig = img.closest('figure'), cap = fig && fig.querySelector('figcaption');
    out.push({kind: 'figure', over: Math.round(r.right - right), width: Math.round(r.width),
              room: Math.round(right - r.left), scrolls, section: section(img), collapsed: collapsed(img),
              label: cap ? words(cap.textContent, 70) : (img.getAttribute('src') || '')});
  }
  opened.forEach(d => { d.open = false; });
  shown.forEach(el => el.classList.add('toggle-hidden'));
  await frame();
  return JSON.stringify(out);
})()"""
WIDTHS_JS = WIDTHS_JS.replace("__OPEN_COLLAPSED__", OPEN_COLLAPSED_JS)

# Type a paper value into every table filter of the page and record what it shows (module docstring).
FILTER_JS = r"""(() => {
  const out = [];
  const shown = r => getComputedStyle(r).display !== 'none';
  const text = e => e.map(r => r.textContent + ' ' + (r.title || '') + ' '
      + [...r.querySelectorAll('[title]')].map(c => c.title).join(' ')).join(' ').toLowerCase();
  document.querySelectorAll('input[type=search][id$="-q"]').forEach(q => {
    const id = q.id.slice(0, -2), table = document.getElementById(id), counter = document.getElementById(id + '-n');
    if (!table || !table.tBodies.length) return;
    const rows = [...table.tBodies[0].rows], entries = [];
    let cur = null;
    rows.forEach(r => {
      if (r.classList.contains('ledger-entry')) { cur = [r]; entries.push(cur); } else if (cur) cur.push(r);
    });
    if (!entries.length) { out.push({table: id, error: 'no rows of class ledger-entry to filter'}); return; }
    const values = entries.map(e => (e[0].cells[1] || e[0]).textContent.trim());
    const seen = {};
    values.forEach(v => { seen[v] = (seen[v] || 0) + 1; });
    const query = values.find(v => /[0-9]/.test(v) && seen[v] > 1 && seen[v] < entries.length)
      || values.find(v => /[0-9]/.test(v));
    if (!query) { out.push({table: id, error: 'no paper value to type'}); return; }
    q.value = query;
    q.dispatchEvent(new Event('input', {bubbles: true}));
    const want = entries.filter(e => text(e).includes(query.toLowerCase()));
    const stray = rows.filter(r => shown(r) && !want.some(e => e.includes(r)));
    const missing = want.filter(e => !e.every(shown));
    out.push({table: id, query: query, entries: entries.length, matching: want.length, stray: stray.length,
              stray_sample: stray.length ? stray[0].textContent.trim().slice(0, 80) : '',
              missing: missing.length, counter: counter ? counter.textContent.trim() : ''});
    q.value = '';
    q.dispatchEvent(new Event('input', {bubbles: true}));
  });
  return JSON.stringify(out);
})()"""

INSPECT_JS = r"""(() => {
  const root = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const typeset = document.querySelectorAll('mjx-container').length;
  const math_errors = [...document.querySelectorAll('mjx-merror')].slice(0, 3).map(
      el => (el.getAttribute('data-mjx-error') || el.textContent).slice(0, 80));
  const math = [...document.querySelectorAll('.math, .tex2jax_process')].filter(
      el => !el.closest('.cell_input') && !el.querySelector('mjx-container'));
  const errorSel = {
    'traceback': '.traceback, .output.traceback', 'output error': '.output.error',
    'ansi red text': '.ansi-red-fg, .ansi-red-intense-fg', 'problematic': '.problematic',
    'system message': '.system-message', 'output stderr': '.output.stderr'};
  const error_elements = {};
  for (const [k, sel] of Object.entries(errorSel)) {
    const c = root.querySelectorAll(sel).length;
    if (c) error_elements[k] = c;
  }
  const broken_images = [...document.querySelectorAll('img')].filter(
      img => !img.complete || img.naturalWidth === 0).map(img => img.getAttribute('src') || '(no src)');
  // Cells that pandas cut at display.max_colwidth ("text_precision.both_arms.variance_identity_res..."):
  // a claim id cut like that cannot be looked up.
  const cut_cells = [...root.querySelectorAll('td, th')].map(c => c.textContent.trim()).filter(
      t => t.length >= 40 && t.endsWith('...'));
  // Last, what a reader sees as text (innerText: laid out, hidden parts left out) once the
  // typeset math, cell inputs, code blocks and inline code are gone (code may show TeX or
  // role syntax on purpose): this changes the page, so it runs after the screenshot.
  // Cell outputs stay whole (a reader sees them as results).
  const code = 'script, style, noscript, template, mjx-container, .cell_input, .headerlink';
  root.querySelectorAll(code).forEach(el => el.remove());
  root.querySelectorAll('div.highlight, pre, code').forEach(el => { if (!el.closest('.cell_output')) el.remove(); });
  return JSON.stringify({
    text: root.innerText,
    tables: root.querySelectorAll('table').length,
    images: root.querySelectorAll('img').length,
    figures: root.querySelectorAll('figure').length,
    typeset,
    unrendered_math: math.length,
    unrendered_samples: math.slice(0, 3).map(el => el.textContent.trim().slice(0, 60)),
    math_errors,
    error_elements, broken_images, cut_cells,
  });
})()"""


class ChromiumError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium driven over the DevTools protocol on a pipe (NUL-separated JSON)."""

    def __init__(self, binary: str, profile: str):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_fds():  # the child reads commands on fd 3 and writes replies on fd 4
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        cmd = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"]
        # chromium's own log goes to a file (a pipe nobody reads could fill up and stall it)
        self._log = open(Path(profile) / "chromium.log", "w+b")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     preexec_fn=wire_fds,  # noqa: PLW1509 (this script runs no threads)
                                     close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target = page["targetId"] if page else self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("no reply from chromium (timeout)")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    self._log.seek(0)
                    err = self._log.read().decode(errors="replace").strip().splitlines()[-3:]
                    raise ChromiumError("chromium exited: " + " | ".join(err))
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, timeout: float = 60, **params) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def page(self, method: str, timeout: float = 60, **params) -> dict:
        return self.call(method, session=True, timeout=timeout, **params)

    def wait_event(self, name: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == name:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def evaluate(self, expression: str, timeout: float = 90):
        res = self.page("Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True,
                        returnByValue=True)
        if "exceptionDetails" in res:
            raise ChromiumError("page script failed: " + json.dumps(res["exceptionDetails"])[:300])
        return res["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (ChromiumError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()


def _stitch(parts: list[bytes], png: Path) -> list[Path]:
    """The captured segments, top to bottom, as one PNG `png` (Pillow), or, without Pillow, as
    <png stem>.part<k>.png; returns the files written."""
    png.parent.mkdir(parents=True, exist_ok=True)
    if len(parts) == 1:
        png.write_bytes(parts[0])
        return [png]
    try:
        from PIL import Image
    except ImportError:
        files = [png.with_name(f"{png.stem}.part{k + 1}.png") for k in range(len(parts))]
        for f, data in zip(files, parts):
            f.write_bytes(data)
        return files
    import io
    images = [Image.open(io.BytesIO(data)).convert("RGB") for data in parts]
    whole = Image.new("RGB", (max(im.width for im in images), sum(im.height for im in images)), "white")
    top = 0
    for im in images:
        whole.paste(im, (0, top))
        top += im.height
    whole.save(png, optimize=False)
    return [png]


def screenshot(browser: Chromium, png: Path, page_height: int, segment: int = SHOT_SEGMENT) -> list[Path]:
    """A PNG of the whole page, however tall: a viewport as tall as the page, captured in
    segments of at most `segment` pixels (shot_segments) and stitched, then back to the normal
    viewport (captureBeyondViewport shifts this theme's layout, so the viewport itself is tall)."""
    height = max(HEIGHT, page_height)
    browser.page("Emulation.setDeviceMetricsOverride", width=WIDTH, height=height, deviceScaleFactor=1, mobile=False)
    try:
        browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        parts = [base64.b64decode(browser.page("Page.captureScreenshot", timeout=120, format="png",
                                               clip={"x": 0, "y": top, "width": WIDTH, "height": h, "scale": 1})["data"])
                 for top, h in shot_segments(height, segment)]
    finally:
        browser.page("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                     mobile=False)
    return _stitch(parts, png)


def image_bytes(src: str) -> bytes | None:
    """The bytes of an image the page loaded from a file: or data: URL; None for anything else."""
    if src.startswith("data:"):
        try:
            with urllib.request.urlopen(src) as f:  # noqa: S310 (a data: URL, read in memory)
                return f.read()
        except (ValueError, OSError):
            return None
    url = urllib.parse.urlparse(src)
    if url.scheme != "file":
        return None
    path = Path(urllib.request.url2pathname(url.path))
    return path.read_bytes() if path.is_file() else None


def open_page(browser: Chromium, html_path: Path, png: Path | None, max_lines: int = MAX_CELL_LINES) -> dict:
    """Load one page offline, wait for MathJax and fonts, save a whole-page PNG, collect the facts
    (the tall cells and the figures' text sizes with every collapsed section opened, then the rest
    as a reader sees the page)."""
    browser.events.clear()
    browser.page("Page.navigate", url=html_path.resolve().as_uri())
    browser.wait_event("Page.loadEventFired", timeout=60)
    waited = json.loads(browser.evaluate(WAIT_JS))
    if png is not None:
        screenshot(browser, png, browser.evaluate(
            "Math.ceil(Math.max(document.documentElement.scrollHeight, document.body.scrollHeight))"))
    tall_cells = json.loads(browser.evaluate(TALL_CELLS_JS.replace("__MAX_CELL_LINES__", str(int(max_lines)))))
    too_wide = json.loads(browser.evaluate(WIDTHS_JS))
    images = json.loads(browser.evaluate(IMAGES_JS))
    for img in images:
        data = image_bytes(img["src"])
        img.update(figure_text_facts(data) if data else {"record": None, "matplotlib": False})
    facts = json.loads(browser.evaluate(INSPECT_JS))
    facts["filters"] = json.loads(browser.evaluate(FILTER_JS))
    facts["tall_cells"] = tall_cells
    facts["too_wide"] = too_wide
    facts["figure_images"] = images
    facts["mathjax_state"], facts["mathjax_error"] = waited["state"], waited["error"]
    facts["network"] = sorted({ev["params"]["request"]["url"] for ev in browser.events
                               if ev.get("method") == "Network.requestWillBeSent"
                               and ev["params"]["request"]["url"].startswith(("http:", "https:"))})
    return facts


def main() -> int:
    ap = argparse.ArgumentParser(description="Open every page of the built book in headless Chromium and check it.")
    ap.add_argument("--html-dir", default=str(ROOT / "_build" / "html"))
    ap.add_argument("--out", default=str(ROOT / "_build" / "screenshots"))
    ap.add_argument("--toc", default=str(ROOT / "_toc.yml"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--no-screenshots", action="store_true", help="check only, save no PNG")
    ap.add_argument("--allow-stderr", action="store_true", help="do not fail on stderr output cells")
    ap.add_argument("--max-cell-lines", type=int, default=MAX_CELL_LINES,
                    help=f"fail on a table cell taller than this many lines of its text (default {MAX_CELL_LINES})")
    args = ap.parse_args()

    html_dir, out = Path(args.html_dir), Path(args.out)
    if not (html_dir / "index.html").exists():
        print(f"check_book: no built book at {html_dir}; build it first (make check-book does).", file=sys.stderr)
        return 2
    if not Path(args.chromium).exists():
        print(f"check_book: chromium not found at {args.chromium}; install Debian's chromium "
              "(apt-get install -y chromium) or pass --chromium.", file=sys.stderr)
        return 2

    failed = 0
    with tempfile.TemporaryDirectory(prefix="oscc-chromium-") as profile:
        try:
            browser = Chromium(args.chromium, profile)
            browser.page("Page.enable")
            browser.page("Network.enable")
            browser.page("Network.setBlockedURLs", urls=["http://*", "https://*"])
            browser.page("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                         mobile=False)
        except (ChromiumError, OSError) as exc:
            print(f"check_book: could not start chromium: {exc}", file=sys.stderr)
            return 2
        try:
            for page in toc_pages(Path(args.toc)):
                chapter = page.startswith("notebooks/")
                kind = "chapter" if chapter else "page"
                html_path = html_dir / f"{page}.html"
                if not html_path.exists():
                    print(f"FAIL {page} ({kind}): {html_path} missing")
                    failed += 1
                    continue
                png = None if args.no_screenshots else out / (page.replace("/", "__") + ".png")
                try:
                    facts = open_page(browser, html_path, png, args.max_cell_lines)
                except ChromiumError as exc:
                    print(f"FAIL {page} ({kind}): {exc}")
                    failed += 1
                    continue
                facts["text_defects"] = text_defects(html_path.read_text(encoding="utf-8"))
                problems = page_problems(facts, chapter, args.allow_stderr, args.max_cell_lines)
                info = (f"tables={facts['tables']} imgs={facts['images']} figures={facts['figures']} "
                        f"math={facts['typeset']}")
                shot = "" if png is None else f" -> {os.path.relpath(png)}"
                if problems:
                    failed += 1
                    print(f"FAIL {page} ({kind}, {info}):\n       " + "\n       ".join(problems))
                else:
                    print(f"OK   {page} ({kind}, {info}){shot}")
        finally:
            browser.close()
    print(f"check_book: {'FAILED, ' + str(failed) + ' page(s)' if failed else 'all pages pass'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
