"""scripts/check_book.py (the headless-Chromium book check).

The pure-Python parts: the raw-LaTeX, role and error detectors on strings, the verdict
on a page's facts (the tall-cell report included), and the page list read from a table
of contents with parts. The browser parts (skipped without Debian's chromium): the
tall-cell check on pages built here, with and without the book's _static/oscc.css and
oscc.js, open and collapsed."""
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_book", ROOT / "scripts" / "check_book.py")
check_book = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_book)


@pytest.mark.parametrize("text", [
    r"the variance identity \(\operatorname{Var}(R_1-R_2)=\ldots\) holds",
    r"a display $$x = 1$$ left as text",
    r"escaped inline math $\frac{a}{b}$ in a sentence",
    r"single-dollar math $x_1$ left alone",
    r"a command \frac{a}{b} without delimiters",
    r"\[ a = b \]",
    r"\begin{aligned} a &= b \end{aligned}",
])
def test_raw_latex_is_found(text):
    assert check_book.raw_latex(text)


@pytest.mark.parametrize("text", [
    "Var(R1 − R2) = 32.55 chips² [32.27, 32.84]",   # what typeset math leaves: nothing TeX-like
    "costs $5 and $6 per run",                        # dollars without TeX characters
    "a path notebooks/02_covariance.ipynb and a ratio 0.5587",
    "line one\nline two",                             # a real newline is not \n
    "",
])
def test_plain_text_is_not_latex(text):
    assert check_book.raw_latex(text) == []


def test_snippets_do_not_repeat_one_place():
    hits = check_book.raw_latex(r"x \(\frac{a}{b}\) y")
    assert len(hits) == 1 and r"\frac" in hits[0]


@pytest.mark.parametrize("text", [
    "the reduction is {glue:text}`reduction:.1f` percent",
    "see {numref}`fig-contrast-variance`",
    "as {cite}`oscc2025` shows",
    "the paper's value {claim}`main.independent.variance`",
    "{glue}`fig_frontier`",
    "{ref}`sec-audit`",
])
def test_literal_roles_are_found(text):
    assert check_book.literal_roles(text)


@pytest.mark.parametrize("text", [
    "a set {1, 2, 3} and a dict {'a': 1}",
    "glue(\"name\", value) writes a value",
    "Figure 2 shows the frontier",
])
def test_text_without_roles(text):
    assert check_book.literal_roles(text) == []


def test_error_text():
    assert check_book.error_text("x\nTraceback (most recent call last)\n  File ...")
    assert check_book.error_text("ValueError: n_groups must be positive")
    assert check_book.error_text("UserWarning: something")
    assert check_book.error_text("the error rate is 0.05; no traceback here") == []


def _facts(**kw):
    facts = {"text": "", "tables": 1, "images": 1, "figures": 1, "typeset": 0, "unrendered_math": 0,
             "unrendered_samples": [], "math_errors": [], "error_elements": {}, "broken_images": [],
             "too_wide": [], "cut_cells": [], "mathjax_state": "done", "network": [],
             "tall_cells": []}
    facts.update(kw)
    return facts


def test_a_clean_chapter_passes():
    assert check_book.page_problems(_facts(text="Var(R1 − R2) = 32.55"), chapter=True) == []


@pytest.mark.parametrize("kw, needle", [
    ({"text": r"\(\frac{a}{b}\)"}, "raw LaTeX"),
    ({"unrendered_math": 1, "unrendered_samples": [r"\(x\)"]}, "not typeset"),
    ({"math_errors": ["Missing close brace"]}, "MathJax error"),
    ({"mathjax_state": "timeout"}, "did not finish"),
    ({"network": ["https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"]}, "network"),
    ({"text": "{glue:text}`x`"}, "unresolved"),
    ({"broken_images": ["../_images/missing.png"]}, "broken image"),
    ({"error_elements": {"traceback": 1}}, "error output"),
    ({"error_elements": {"output stderr": 2}}, "stderr"),
    ({"too_wide": [{"kind": "table", "over": 40, "width": 856, "room": 816, "scrolls": True}]},
     "40px wider than the text column"),
    ({"cut_cells": ["text_precision.both_arms.variance_identity_res..."]}, "cut off with '...'"),
    ({"tables": 0}, "without a table"),
    ({"images": 0}, "without a figure"),
])
def test_each_problem_fails_a_chapter(kw, needle):
    problems = check_book.page_problems(_facts(**kw), chapter=True)
    assert any(needle in p for p in problems), problems


def test_pages_need_no_table_or_figure_and_stderr_can_be_allowed():
    assert check_book.page_problems(_facts(tables=0, images=0), chapter=False) == []
    stderr = _facts(error_elements={"output stderr": 1})
    assert check_book.page_problems(stderr, chapter=True, allow_stderr=True) == []


def test_toc_pages_walk_parts(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: book/intro\nparts:\n"
        "  - caption: A\n    chapters:\n      - file: book/reproduce.md\n"
        "  - caption: B\n    chapters:\n      - file: notebooks/01_contract.ipynb\n"
        "        sections:\n          - file: notebooks/01b\n",
        encoding="utf-8")
    assert check_book.toc_pages(toc) == ["book/intro", "book/reproduce", "notebooks/01_contract", "notebooks/01b"]


def test_the_book_toc_is_in_parts_and_lists_every_chapter():
    pages = check_book.toc_pages(ROOT / "_toc.yml")
    assert pages[0] == "book/intro" and "book/references" in pages
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert f"notebooks/{nb.stem}" in pages, f"{nb.name} is not in _toc.yml"
    import yaml
    assert yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")).get("parts")


# ---------------------------------------------------------------- tall table cells

def _tall(lines=19.9, column="reason", text="the paper's value 0.3366 breaks a bound", collapsed=False):
    return {"table": 16, "section": "The paper's tables beside ours", "collapsed": collapsed,
            "columns": "quantity, paper, ours, 95% interval, relative deviation, ...",
            "cells": [{"lines": lines, "width": 112, "column": column, "text": text}]}


def test_a_tall_cell_fails_a_page_naming_the_table_and_the_cell():
    problems = check_book.page_problems(_facts(tall_cells=[_tall()]), chapter=True)
    assert len(problems) == 1
    p = problems[0]
    assert "taller than 4 lines" in p and "table 16" in p and "The paper's tables beside ours" in p
    assert "'reason'" in p and "19.9 lines" in p and "the paper's value 0.3366" in p


def test_tall_cells_report_at_most_three_cells_per_table_and_say_when_collapsed():
    table = _tall(collapsed=True)
    table["cells"] = [{"lines": 5.0 + k, "width": 80, "column": "claim id", "text": f"a.b_c{k}"} for k in range(5)]
    (p,) = check_book.tall_cell_problems([table])
    assert p.startswith("5 table cell(s)") and "collapsed section" in p and "and 2 more" in p
    assert "9.0 lines" in p and "a.b_c4" in p and "a.b_c0" not in p  # the tallest first
    assert check_book.tall_cell_problems([table], max_lines=6)[0].count("taller than 6 lines") == 1
    assert check_book.tall_cell_problems([]) == []


# The browser half: pages built here, opened in headless Chromium with the book's own
# _static/oscc.css and oscc.js (as Jupyter Book loads them) and checked by check_book.open_page.
# Skipped where Debian's chromium is missing (`make check-book` installs it as root).

CHROMIUM = shutil.which("chromium") or next(
    (p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()), None)

# A comparison table as the chapters print it (pandas: index, row label, numbers, relation,
# verdict, claim id): ten columns in a 688px text column.
_ROWS = [
    ("paired final exploitability, seed 13 (chips)", "2.1276", "1.6563", "—", "1.6563", "-22.2%",
     "independent < paired at seed 13", "not reproduced", "text_bounded.three_seed.paired.final_exploitability_seed13"),
    ("independent final exploitability, seed 23 (chips)", "2.1089", "2.2460", "—", "2.2460", "+6.5%",
     "independent < paired at seed 23", "not reproduced",
     "text_bounded.three_seed.independent.final_exploitability_seed23"),
    ("mean independent - paired (chips)", "-0.0540", "0.2374", "[-0.3791, 0.8539]", "—", "-539.6%",
     "mean difference < 0", "inconclusive", "fig_three_seed.mean_difference"),
    ("logical groups per seed (T x N)", "5,120", "5,120", "—", "—", "+0.0%", "—", "adopted",
     "setup.tabular_screen.logical_groups_per_seed"),
]
_HEAD = ["", "quantity", "paper", "ours", "95% interval", "exact", "relative deviation", "relation", "verdict",
         "claim id"]


def _table(rows=_ROWS, head=_HEAD, id_class="cid"):
    th = "".join(f'<th class="{id_class}">{h}</th>' if k == len(head) - 1 else f"<th>{h}</th>"
                 for k, h in enumerate(head))
    body = "".join(
        f"<tr><th>{i}</th>" + "".join(f'<td class="{id_class}">{c}</td>' if k == len(r) - 1 else f"<td>{c}</td>"
                                      for k, c in enumerate(r)) + "</tr>"
        for i, r in enumerate(rows))
    table = f'<table border="1" class="dataframe"><thead><tr style="text-align: right;">{th}</tr></thead>' \
            f"<tbody>{body}</tbody></table>"
    return f'<div class="cell_output docutils container"><div class="output text_html">{table}</div></div>'


# The stylesheet before this fix squeezed the claim-id column like this: one character per line.
SQUEEZED = ("table.dataframe { table-layout: fixed; width: 100%; font-size: 12px; line-height: 1.3; }"
            " .cid { width: 1ch; padding: 0; overflow-wrap: anywhere; word-break: break-all; }")
# sphinx-togglebutton's rule for a collapsed dropdown admonition (togglebutton.css).
TOGGLE_CSS = (".admonition.toggle-hidden .admonition-title ~ * "
              "{ height: 0; margin: 0; opacity: 0; visibility: hidden; display: block; }")


def _page(tmp_path, name, body, oscc=True, style=""):
    static = (ROOT / "_static").as_uri()
    assets = (f'<link rel="stylesheet" href="{static}/oscc.css"><script src="{static}/oscc.js"></script>'
              if oscc else "")
    path = tmp_path / f"{name}.html"
    path.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8">{assets}<style>'
        "body { margin: 0; font-family: sans-serif; font-size: 16px; line-height: 1.65; }"
        "article.bd-article { width: 688px; margin: 20px 288px; }"
        f'{TOGGLE_CSS} {style}</style></head><body><main><article class="bd-article">'
        f'<section id="claims"><h2>Claims beside ours<a class="headerlink" href="#claims">#</a></h2>{body}'
        "</section></article></main></body></html>", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    b = check_book.Chromium(CHROMIUM, str(tmp_path_factory.mktemp("chromium-profile")))
    b.page("Page.enable")
    b.page("Network.enable")
    b.page("Network.setBlockedURLs", urls=["http://*", "https://*"])
    b.page("Emulation.setDeviceMetricsOverride", width=check_book.WIDTH, height=check_book.HEIGHT,
           deviceScaleFactor=1, mobile=False)
    yield b
    b.close()


def _check(browser, path):
    facts = check_book.open_page(browser, path, None)
    return facts, check_book.page_problems(facts, chapter=False)


def test_a_one_character_wide_claim_id_column_fails_the_check(browser, tmp_path):
    facts, problems = _check(browser, _page(tmp_path, "squeezed", _table(), oscc=False, style=SQUEEZED))
    tall = [p for p in problems if "taller than 4 lines" in p]
    assert len(tall) == 1, problems
    assert "table 1 in section 'Claims beside ours'" in tall[0] and "column 'claim id'" in tall[0]
    assert "text_bounded.three_seed" in tall[0]
    (table,) = facts["tall_cells"]
    ids = [c for c in table["cells"] if c["text"] in {r[-1] for r in _ROWS}]
    assert len(ids) == len(_ROWS) and all(c["column"] == "claim id" for c in ids)
    assert min(c["lines"] for c in ids) > 25 and all(c["width"] < 12 for c in ids)  # one character per line


def test_the_same_table_with_the_books_css_and_js_passes(browser, tmp_path):
    facts, problems = _check(browser, _page(tmp_path, "fitted", _table()))
    assert facts["tall_cells"] == [] and problems == [], problems
    # the ids left the squeezed column for a line of their own under each row, whole
    ids = json.loads(browser.evaluate("""JSON.stringify(
        [...document.querySelectorAll('tr.oscc-id-line td.oscc-claim-id')]
        .map(c => [c.textContent, c.getClientRects()[0].height]))"""))
    assert [i for i, _ in ids] == [r[-1] for r in _ROWS]
    assert all(h < 20 for _, h in ids)  # one line each


def test_claim_ids_break_only_after_dots_and_underscores(browser, tmp_path):
    # a narrow text column: the ids wrap, but only at the inserted break points
    rows = [(r[0], r[1], r[-1]) for r in _ROWS]
    page = _page(tmp_path, "narrow", _table(rows, ["", "quantity", "paper", "claim id"]),
                 style="article.bd-article { width: 330px; }")
    _, problems = _check(browser, page)
    assert problems == [], problems
    visible = "tbody .oscc-claim-id:not(.oscc-hidden)"
    parts = json.loads(browser.evaluate("""JSON.stringify([...document.querySelectorAll('VISIBLE')]
        .flatMap(cell => [...cell.childNodes].filter(n => n.nodeType === 3).map(n => {
          const r = document.createRange(); r.selectNodeContents(n);
          return [n.textContent, r.getClientRects().length]; })))""".replace("VISIBLE", visible)))
    assert len(parts) > len(rows)  # break points were inserted
    assert all(n == 1 for _, n in parts), [p for p in parts if p[1] != 1]  # no part is split over two lines
    assert all(text.endswith(("_", ".")) or text in {r[-1].rsplit(sep, 1)[-1] for r in rows for sep in "._"}
               for text, _ in parts)
    lines = json.loads(browser.evaluate("""JSON.stringify([...document.querySelectorAll('VISIBLE')]
        .map(c => { const r = document.createRange(); r.selectNodeContents(c);
                    return r.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight); }))"""
        .replace("VISIBLE", visible)))
    assert max(lines) > 1.5  # the ids do wrap here


@pytest.mark.parametrize("lines, fails", [(4, False), (5, True)])
def test_the_threshold_is_four_lines_of_the_cells_own_text(browser, tmp_path, lines, fails):
    cell = "<br>".join(f"line {k}" for k in range(lines))
    table = _table([("a quantity", "1.0", cell, "x.y")], ["", "quantity", "paper", "ours", "claim id"])
    facts, _ = _check(browser, _page(tmp_path, f"lines{lines}", table))
    assert bool(facts["tall_cells"]) == fails
    if fails:
        (cell,) = facts["tall_cells"][0]["cells"]
        # the Range spans four line-heights plus the last line's glyph box (about 0.8-0.9 of a line-height
        # at the table's font size and line-height 1.3), so five lines measure 4.8-4.9, above 4.5 either way
        assert cell["column"] == "ours" and 4.6 < cell["lines"] <= 5.0


def test_cells_in_collapsed_sections_are_measured_and_the_sections_close_again(browser, tmp_path):
    hidden_output = ('<details class="admonition hide below-input"><summary>Show code cell output</summary>'
                     f"{_table()}</details>")
    dropdown = ('<div class="admonition toggle toggle-hidden" id="t0"><p class="admonition-title">More</p>'
                f"{_table()}</div>")
    page = _page(tmp_path, "collapsed", hidden_output + dropdown, oscc=False, style=SQUEEZED)
    facts, problems = _check(browser, page)
    assert [t["collapsed"] for t in facts["tall_cells"]] == [True, True]
    assert sum("(in a collapsed section)" in p for p in problems) == 2
    state = json.loads(browser.evaluate("""JSON.stringify([document.querySelector('details').open,
        document.querySelector('#t0').classList.contains('toggle-hidden')])"""))
    assert state == [False, True]


def test_a_table_in_a_collapsed_section_is_fitted_when_it_opens(browser, tmp_path):
    page = _page(tmp_path, "collapsed-fitted",
                 f'<details class="admonition hide below-input"><summary>Show</summary>{_table()}</details>')
    facts, problems = _check(browser, page)
    assert facts["tall_cells"] == [] and problems == [], problems
    assert browser.evaluate("document.querySelectorAll('details tr.oscc-id-line').length") == len(_ROWS)


# ---------------------------------------------------------------- whole-page screenshots

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(st.integers(1, 200_000), st.integers(1, 20_000))
def test_shot_segments_cover_the_page_without_gap_or_overlap(height, segment):
    parts = check_book.shot_segments(height, segment)
    assert parts[0][0] == 0
    assert all(top + h == nxt for (top, h), (nxt, _) in zip(parts, parts[1:]))
    assert parts[-1][0] + parts[-1][1] == height
    assert all(1 <= h <= segment for _, h in parts)
    assert len(parts) == -(-height // segment)  # ceil: no more captures than needed


@pytest.mark.parametrize("height, segment", [(0, 8000), (100, 0), (-5, 10)])
def test_shot_segments_refuse_non_positive_sizes(height, segment):
    with pytest.raises(ValueError, match="page_height and segment must be positive"):
        check_book.shot_segments(height, segment)


# ---------------------------------------------------------------- figure text size

def _png(tmp_path, **texts):
    """A 4x2-pixel PNG written by Pillow (not by the code under test) with the given text chunks;
    a (key, value, zip) tuple asks for a compressed chunk."""
    from PIL import Image, PngImagePlugin
    info = PngImagePlugin.PngInfo()
    for key, value in texts.items():
        value, zipped = value if isinstance(value, tuple) else (value, False)
        info.add_text(key.replace("_", ":"), value, zip=zipped)
    path = tmp_path / "x.png"
    Image.new("RGB", (4, 2), "white").save(path, pnginfo=info)
    return path.read_bytes()


def test_png_text_chunks_reads_plain_compressed_and_international_text(tmp_path):
    data = _png(tmp_path, Software="Matplotlib version3.11", a_b=("compressed " * 20, True), c="chips² per logit²")
    chunks = check_book.png_text_chunks(data)
    assert chunks == {"Software": "Matplotlib version3.11", "a:b": "compressed " * 20, "c": "chips² per logit²"}
    assert check_book.png_text_chunks(b"GIF89a not a png") == {}


def test_the_record_key_is_the_one_the_library_writes():
    from oscc_core.reporting import figure_text
    assert check_book.TEXT_SIZES_KEY == figure_text.TEXT_SIZES_KEY
    assert check_book.POINTS_PER_INCH == figure_text.POINTS_PER_INCH == 72


def _figure_png(legend_pt=7.0, tick_pt=10.0, dpi=100, save_dpi=None):
    import io

    import matplotlib
    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from oscc_core.reporting.figure_text import record_text_sizes
    fig, ax = plt.subplots(figsize=(4, 3), dpi=dpi)
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(fontsize=legend_pt)
    ax.tick_params(labelsize=tick_pt)
    record_text_sizes(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=save_dpi or dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


@pytest.mark.parametrize("legend_pt, tick_pt, save_dpi, kind, pt", [
    (7.0, 10.0, 100, "legend", 7.0),     # the legend is the smallest text
    (12.0, 8.0, 100, "tick", 8.0),       # a tick label is
    (7.0, 10.0, 200, "legend", 7.0),     # saved at another dpi than the figure's: the record has the saved one
])
def test_a_figure_png_carries_its_smallest_legend_or_tick_text(legend_pt, tick_pt, save_dpi, kind, pt):
    facts = check_book.figure_text_facts(_figure_png(legend_pt, tick_pt, save_dpi=save_dpi))
    assert facts["matplotlib"]
    record = facts["record"]
    assert (record["kind"], record["pt"], record["dpi"]) == (kind, pt, save_dpi)
    # 7 points at 100 dpi are 7 * 100 / 72 = 9.72 image pixels; shown at half width, 4.86
    assert check_book.displayed_text_px(record, 50, 100) == pytest.approx(pt * save_dpi / 72 / 2)


def test_a_matplotlib_png_without_a_record_and_another_png(tmp_path):
    assert check_book.figure_text_facts(_png(tmp_path, Software="Matplotlib version3.11")) == {
        "record": None, "matplotlib": True}
    assert check_book.figure_text_facts(_png(tmp_path)) == {"record": None, "matplotlib": False}


def _img(pt=9.0, dpi=72.0, width=500, natural=500, **kw):
    img = {"src": "file:///book/_images/a.png", "width": width, "natural": natural, "label": 'figure "Fig. 7 x"',
           "collapsed": False, "record": {"pt": pt, "dpi": dpi, "kind": "legend", "text": "ours"},
           "matplotlib": True}
    img.update(kw)
    return img


@pytest.mark.parametrize("img, fails", [
    (_img(), False),                          # 9 pt at 72 dpi shown at full size: exactly 9 px
    (_img(width=499), True),                  # shown a little smaller: under 9 px
    (_img(pt=7, dpi=100, width=672, natural=1071), True),   # the old Fig 7: 6.1 px
    (_img(pt=9, dpi=100, width=672, natural=680), False),   # the redrawn one: 12.4 px
    (_img(record=None), True),                # a matplotlib figure that did not record its text
    (_img(record=None, matplotlib=False), False),  # another image: nothing to measure
    (_img(width=0), False),                   # not laid out: nothing to measure
])
def test_figure_text_under_9_px_fails(img, fails):
    problems = check_book.figure_text_problems([img])
    assert bool(problems) == fails, problems


def test_a_small_figure_text_problem_names_the_figure_and_the_sizes():
    (p,) = check_book.figure_text_problems([_img(pt=7, dpi=100, width=672, natural=1071, collapsed=True)])
    assert p.startswith("figure text 6.1px tall, under 9px: legend 'ours' at 7pt and 100dpi")
    assert "63% of its 1071px width" in p and "Fig. 7 x" in p and "collapsed" in p
    assert any("figure text" in q for q in check_book.page_problems(_facts(figure_images=[_img(width=100)]),
                                                                     chapter=True))


# ---------------------------------------------------------------- the browser: whole pages and figures

def test_a_page_taller_than_16000_px_is_captured_whole(browser, tmp_path):
    from PIL import Image
    height = 41_000  # five segments of 8,000 and one of 1,000
    body = (f'<div style="height:{height - 2000}px;background:#fff"></div>'
            '<div style="height:1000px;background:#f00"></div><div style="height:1000px;background:#00f"></div>')
    path = tmp_path / "tall.html"
    path.write_text(f'<!DOCTYPE html><html><body style="margin:0">{body}</body></html>', encoding="utf-8")
    browser.page("Page.navigate", url=path.as_uri())
    browser.wait_event("Page.loadEventFired")
    (png,) = check_book.screenshot(browser, tmp_path / "tall.png", height)
    im = Image.open(png).convert("RGB")
    assert im.size == (check_book.WIDTH, height)
    assert im.getpixel((600, height - 1500)) == (255, 0, 0)   # past the old 16,000-pixel cap
    assert im.getpixel((600, height - 1)) == (0, 0, 255)      # the last row
    assert im.getpixel((600, 16_500)) == (255, 255, 255)
    assert browser.evaluate("innerHeight") == check_book.HEIGHT  # the viewport is back


def _figure_page(tmp_path, name, style, collapsed=False):
    png = tmp_path / f"{name}.png"
    png.write_bytes(_figure_png(legend_pt=7.0, tick_pt=10.0, dpi=100))
    img = f'<figure><img src="{png.name}" style="{style}"><figcaption>Fig. 7 calibration size</figcaption></figure>'
    if collapsed:
        img = f"<details><summary>Show</summary>{img}</details>"
    return _page(tmp_path, name, img)


@pytest.mark.parametrize("style, fails", [
    ("", False),                  # natural size: 7 pt at 100 dpi = 9.7 px
    ("width: 200px", True),       # shrunk to about half its ~390 px: about 5 px
])
def test_figure_text_is_measured_at_its_displayed_size(browser, tmp_path, style, fails):
    facts, problems = _check(browser, _figure_page(tmp_path, "fig" + str(fails), style))
    (img,) = facts["figure_images"]
    assert img["record"]["pt"] == 7.0 and img["label"] == 'figure "Fig. 7 calibration size"'
    assert any("figure text" in p for p in problems) == fails, problems


def test_a_figure_in_a_collapsed_section_is_measured_open(browser, tmp_path):
    facts, problems = _check(browser, _figure_page(tmp_path, "figc", "width: 200px", collapsed=True))
    (img,) = facts["figure_images"]
    assert img["collapsed"] and img["width"] > 0
    assert any("figure text" in p and "collapsed" in p for p in problems), problems
    assert browser.evaluate("document.querySelector('details').open") is False


# --- the claims ledger's filter -------------------------------------------------------------------------------

def _ledger_line(cid, paper, verdict="partly"):
    return {"id": cid, "quantity": f"{cid}: contrast variance", "paper": paper, "ours": 48.94, "interval": [48.55, 49.36],
            "verdict": verdict, "status": None, "kind": "result", "relative deviation": None, "chapter": "02_covariance",
            "via": None, "source": "tab:main", "relation": "paired < independent", "relation holds": True,
            "relation resolved": True, "reading": "all roots pooled", "why": f"why {cid}"}


LEDGER = [_ledger_line(f"claim.{k}", 41.1158 if k % 3 == 0 else 18.1441 + k) for k in range(9)]


def test_filter_problems_name_stray_rows_hidden_entries_and_a_wrong_count():
    f = {"table": "t", "query": "41.1158", "entries": 9, "matching": 3, "stray": 2, "stray_sample": "claim.1",
         "missing": 1, "counter": "5 of 9 entries"}
    problems = check_book.filter_problems([f])
    assert len(problems) == 3 and "leaves 2 row(s)" in problems[0] and "hides 1 matching entry" in problems[1]
    assert "'3 of 9 entries'" in problems[2]
    assert check_book.filter_problems([{**f, "stray": 0, "missing": 0, "counter": "3 of 9 entries"}]) == []


def test_typing_a_paper_value_into_the_ledger_filter_shows_just_its_entries(browser, tmp_path):
    from oscc_core.chapters.claims_ledger.tables import ledger_html

    facts, problems = _check(browser, _page(tmp_path, "ledger", ledger_html(LEDGER)))
    assert problems == [], problems
    (f,) = facts["filters"]
    assert (f["query"], f["matching"], f["entries"], f["counter"]) == ("41.1158", 3, 9, "3 of 9 entries")


def test_a_filter_that_leaves_each_entrys_second_line_visible_fails(browser, tmp_path):
    # the bug the ledger had: the filter hid the entries' rows but not the lines under them
    from oscc_core.chapters.claims_ledger.tables import ledger_html

    buggy = ledger_html(LEDGER).split("<script>")[0] + """<script>(function(){var q=document.getElementById(
    "claims-ledger-q"),n=document.getElementById("claims-ledger-n"),rows=document.querySelectorAll(
    "#claims-ledger tr.ledger-entry");q.addEventListener("input",function(){var t=q.value.toLowerCase(),k=0;
    rows.forEach(function(r){var s=r.textContent.toLowerCase().indexOf(t)>=0;r.style.display=s?"":"none";if(s)k++;});
    n.textContent=k+" of "+rows.length+" entries";});})();</script>"""
    _, problems = _check(browser, _page(tmp_path, "buggy", buggy))
    assert any("leaves 6 row(s) of non-matching entries visible" in p for p in problems), problems


# --- tables and figures wider than the text column --------------------------------------------------------------

def _wide(**kw):
    item = {"kind": "table", "over": 75, "width": 891, "room": 816, "scrolls": True, "collapsed": False,
            "section": "5. Controlled violations and the safety certificate", "label": "control, condition, caught as"}
    item.update(kw)
    return item


def test_a_wide_table_fails_a_page_naming_its_overflow_section_and_columns():
    (p,) = check_book.page_problems(_facts(too_wide=[_wide()]), chapter=True)
    assert p.startswith("table 75px wider than the text column (891px where 816px fit; a reader must scroll it")
    assert "'5. Controlled violations and the safety certificate'" in p and "control, condition, caught as" in p


def test_a_wide_figure_or_a_cut_off_table_is_named_so():
    figure, cut = check_book.width_problems([_wide(kind="figure", scrolls=False, label="Fig. 5 noise", collapsed=True),
                                             _wide(scrolls=False)])
    assert figure.startswith("figure 75px wider") and "caption: Fig. 5 noise" in figure and "collapsed" in figure
    assert "cut off at the column's edge" in cut
    assert check_book.width_problems([]) == []


# A table of fixed width in the test page's 688px text column, inside a cell output (the book's oscc.css gives
# .output.text_html a horizontal scroll bar): 900 - 688 = 212px too wide, and the reader would have to scroll.
_FIXED_TABLE = ('<div class="cell_output docutils container"><div class="output text_html">'
                '<table class="dataframe" style="width: 900px; border: 0; border-collapse: collapse">'
                '<thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody>'
                "</table></div></div>")


def test_a_table_wider_than_the_text_column_fails_though_it_scrolls(browser, tmp_path):
    facts, problems = _check(browser, _page(tmp_path, "wide", _FIXED_TABLE))
    (item,) = facts["too_wide"]
    assert (item["kind"], item["width"], item["room"], item["over"], item["scrolls"]) == ("table", 900, 688, 212, True)
    assert any(p.startswith("table 212px wider than the text column") and "'Claims beside ours'" in p
               for p in problems), problems


def test_a_table_that_fits_the_text_column_passes(browser, tmp_path):
    facts, problems = _check(browser, _page(tmp_path, "narrow-table", _FIXED_TABLE.replace("900px", "688px")))
    assert facts["too_wide"] == [] and problems == [], problems


def test_a_wide_table_in_a_collapsed_section_is_measured_open(browser, tmp_path):
    body = f'<details class="admonition hide below-input"><summary>Show</summary>{_FIXED_TABLE}</details>'
    facts, problems = _check(browser, _page(tmp_path, "wide-collapsed", body))
    (item,) = facts["too_wide"]
    assert item["collapsed"] and item["over"] == 212
    assert browser.evaluate("document.querySelector('details').open") is False


def test_a_figure_wider_than_the_text_column_fails(browser, tmp_path):
    png = tmp_path / "wide.png"
    png.write_bytes(_figure_png(legend_pt=12.0, tick_pt=12.0, dpi=100))
    body = (f'<figure style="margin: 0"><img src="{png.name}" style="width: 800px">'
            '<figcaption>Fig. 5 wide</figcaption></figure>')  # 800 - 688 = 112px too wide
    facts, problems = _check(browser, _page(tmp_path, "wide-figure", body))
    (item,) = facts["too_wide"]
    assert (item["kind"], item["over"], item["label"]) == ("figure", 112, "Fig. 5 wide")
    assert any(p.startswith("figure 112px wider") for p in problems), problems


# --- template defects in the text a reader sees or hovers --------------------------------------------------------

def _article(body: str) -> str:
    """A built page as Sphinx writes one: navigation outside the article, the chapter inside it."""
    return ('<html><head><title>wrote title.json</title><script>var s = "are ours is";</script></head><body>'
            '<nav>one of six verdicts</nav><main><article class="bd-article">'
            f"{body}</article></main></body></html>")


def _ledger(verdict: str, why: str, shown: str | None = None) -> str:
    """One claims-ledger entry as the ledger page prints it: its row of numbers, then its line with the claim id
    and the why, shortened to `shown` with the whole why as the tooltip."""
    shown = why if shown is None else shown
    return ('<table class="ledger" id="claims-ledger"><thead><tr><th>quantity</th><th>paper</th>'
            "<th>ours [95% interval]</th><th>verdict (deviation)</th></tr></thead><tbody>"
            '<tr class="ledger-entry" title="printed in Table 9"><td class="q">value of player 0</td>'
            f'<td class="num">0.1687</td><td>-0.1200 [-0.2225, -0.0175]</td><td>{verdict}</td></tr>'
            '<tr class="ledger-detail"><td colspan="4"><code class="ledger-id">grpo_<wbr>ppo.<wbr>independent.<wbr>'
            f'value</code> · <b>why</b> <span title="{why}">{shown}</span></td></tr></tbody></table>')


def _key_claims(verdict: str, why: str) -> str:
    return ('<table class="oscc-key-claims"><thead><tr><th>claim</th><th>paper</th><th>ours [95% interval]</th>'
            "<th>verdict</th><th>why</th></tr></thead><tbody><tr><td>Certification rate, 64 groups</td>"
            f"<td>0.327</td><td>0</td><td>{verdict}</td><td>{why}</td></tr></tbody></table>")


DEPENDS_WHY = ("the paper's 0.1687 lies outside our 95% interval [-0.2225, -0.0175]; the verdict depends on the "
               "reading (whole-game self-play: not reproduced; held-out roots: not compared)")


@pytest.mark.parametrize("body, defect", [
    ("<p>the paper's 0.004700 and our 0 are ours is 0, beyond the 5% of ours the size test allows</p>",
     "'are ours is'"),
    ("<p>the relation the paper states, “the seed interval includes 0”, holds (decided on exact values or point "
     "estimates, no interval enters)</p>", "'no interval enters' on a relation about an interval"),
    ("<p>“uniform lowest of all arms (paired, 95%)”, holds (decided on exact values or point estimates, no "
     "interval enters)</p>", "'no interval enters' on a relation about an interval"),
    ('<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi">'
     "<pre><span></span>wrote 02_covariance.json\n</pre></div></div><table><tr><td>reproduced</td></tr></table>",
     "'wrote <file>.json' line"),
    ("<p>the runs realised 61,440.0 on average (61,440 to 61,440)</p>", "comma-grouped whole number"),
    ("<table><tr><td>cp_grpo</td><td>245,760.0</td></tr></table>", "comma-grouped whole number"),
    ("<p>0.2 chips after 1.08e+05 [1.07e+05, 1.09e+05] calls</p>", "e+ notation"),
    ("<p>the difference is 0.0e+00</p>", "e+ notation"),
    ("<p>the relative deviation and one of six\nverdicts.</p>", "verdict scale that is not the rule's 7 verdicts"),
    (_ledger("not reproduced", DEPENDS_WHY, "the paper's 0.1687 lies outside our 95% interval …"),
     "whose why says the verdict depends on the reading while the verdict does not say so"),
    (_key_claims("partly", "“rate rises with n” holds; the verdict depends on the reading"),
     "whose why says the verdict depends on the reading"),
    (_ledger("partly (+81.8%)", "a printing of coupling_factors.stream_only.contrast, whose verdict it shares"),
     "whose why is only 'a printing of' another entry"),
    (_key_claims("partly", "a printing of calibration.64.certification_rate"), "only 'a printing of'"),
])
def test_each_template_defect_fails_a_page(body, defect):
    problems = check_book.text_defects(_article(body), verdicts=7)
    assert len(problems) == 1, problems
    assert problems[0].startswith("template defect, ") and defect in problems[0], problems


@pytest.mark.parametrize("body", [
    "<p>the paper's 0.3270 and our 0.3300 are 1% of ours apart, within the 5% of ours the size test allows</p>",
    "<p>the relation the paper states, “paired variance &lt; independent variance”, holds (decided on exact values "
    "or point estimates, no interval enters); the paper's 41.12 lies outside our 95% interval [48.55, 49.36]</p>",
    "<p>“the seed interval includes 0” holds (resolved at 95%)</p>",
    "<p>Each notebook writes its numbers to <code>results/02_covariance.json</code>; it wrote them once.</p>",
    "<p>the runs realised 61,439.6 on average (61,439 to 61,440), 108,000 calls, ratio 1.0, residual &lt; 1e-12, "
    "tolerance 1e-6 and 2.5e-07</p>",
    "<p>and one of seven verdicts; 12 verdicts depend on the reading; six roots per seed</p>",
    _ledger("not reproduced (depends on the reading)", DEPENDS_WHY),
    _ledger("depends on the reading", DEPENDS_WHY),
    _ledger("not reproduced", "the same verdict under every reading the book measures (whole-game: not reproduced)"),
    _ledger("partly (+81.8%)", "a printing of coupling_factors.stream_only.contrast, whose verdict it shares; the "
                               "paper's 25.43 lies outside our 95% interval [45.86, 46.63] (ours 46.24)"),
    _key_claims("partly (depends on the reading)", "“rate rises with n” holds; the verdict depends on the reading"),
])
def test_correct_sentences_are_no_template_defect(body):
    assert check_book.text_defects(_article(body), verdicts=7) == []


def test_code_scripts_and_text_outside_the_article_are_not_read():
    # each place holds a defect a reader never sees as text: a cell's input, a code block and inline code outside
    # the cell outputs, a heading's link mark, and (in _article) the head, a script and the navigation
    body = ('<div class="cell_input docutils container"><span>wrote 02_covariance.json</span></div>'
            "<pre>x = 61,440.0</pre><p>Run <code>print(1.08e+05)</code>; see "
            '<a class="headerlink" title="are ours is">#</a></p>')
    assert check_book.text_defects(_article(body), verdicts=7) == []


def test_tooltips_are_read_too():
    body = '<p><span title="the paper\'s 0.0108 and our 0 are ours is 0">the paper\'s 0.0108 …</span></p>'
    (p,) = check_book.text_defects(_article(body), verdicts=7)
    assert "are ours is" in p


def test_the_verdict_scale_is_the_rules():
    assert check_book.verdict_count() == 7  # reproduced ... not compared: seven, as the book's text says


def test_template_defects_fail_a_page():
    problems = check_book.page_problems(_facts(text_defects=["template defect, x: 'y'"]), chapter=False)
    assert problems == ["template defect, x: 'y'"]


# --- the book's oscc.css and oscc.js: room for the numbers ------------------------------------------------------

def _label_table(labels):
    body = "".join(f"<tr><th>{label}</th><td>1.0</td></tr>" for label in labels)
    return ('<div class="cell_output docutils container"><div class="output text_html"><table class="dataframe">'
            f"<thead><tr><th></th><th>value</th></tr></thead><tbody>{body}</tbody></table></div></div>")


def _label_width(browser, tmp_path, name, labels):
    _check(browser, _page(tmp_path, name, _label_table(labels)))
    return browser.evaluate("document.querySelector('tbody th').getBoundingClientRect().width / "
                            "parseFloat(getComputedStyle(document.querySelector('tbody th')).fontSize)")


def test_short_row_labels_take_their_own_width(browser, tmp_path):
    assert _label_width(browser, tmp_path, "short", ["01_contract", "total"]) < 10.5   # "01_contract": about 7em


def test_a_long_row_label_keeps_its_minimum_width(browser, tmp_path):
    long = "root '' only: independent: branch mean, check (Call)"          # 52 characters: a quantity
    assert _label_width(browser, tmp_path, "long", [long, "total"]) >= 10.5


def test_a_count_out_of_a_total_may_break_after_its_slash(browser, tmp_path):
    table = _label_table(["groups emitted"]).replace("<td>1.0</td>", "<td>100000/100000</td>")
    _check(browser, _page(tmp_path, "fraction", table))
    assert browser.evaluate("document.querySelector('tbody td').innerHTML") == "100000/<wbr>100000"
