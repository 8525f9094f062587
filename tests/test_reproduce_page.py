"""The book's reproduce page lists every notebook's parameters as the runner reads them from the notebook itself.

Chapters gained parameters (seed readings, step-size readings, the all-roots pool's weighting, the learner's option
set) while the page kept the old lists; a reader copying a command from it would miss them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from oscc_core.reporting import runner

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "reproduce.md"


@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_the_reproduce_page_lists_the_notebooks_own_parameters(stem):
    marked = re.search(rf"<!-- runner-list: notebooks/{re.escape(stem)}.ipynb -->\n(.*?)<!-- /runner-list -->",
                       PAGE.read_text(encoding="utf-8"), re.S)
    assert marked, f"book/reproduce.md has no runner-list marker for notebooks/{stem}.ipynb"
    listed = marked.group(1)
    for line in runner.list_parameters(stem).splitlines():
        assert line in listed, f"book/reproduce.md misses, for {stem}: {line!r} (run scripts/help_notebooks.py --update)"
