"""The pure-Python parts of scripts/check_book.py (the headless-Chromium book check):
the raw-LaTeX, role and error detectors on strings, the verdict on a page's facts,
and the page list read from a table of contents with parts."""
import importlib.util
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
             "clipped_tables": [], "scrolling_tables": [], "cut_cells": [], "mathjax_state": "done", "network": []}
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
    ({"clipped_tables": ["comparison table 40px wider than the text column"]}, "does not fit"),
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
