"""The book's own pages (book/*.md): the landing page's chapter list and the reproduce page's first steps."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _section(page: str, heading: str) -> str:
    text = "\n" + (ROOT / "book" / page).read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + len(heading) + 2)
    return text[start:] if end < 0 else text[start:end]


def test_the_landing_pages_chapter_list_numbers_and_links_every_chapter_in_order():
    items = re.findall(r"^(\d+)\. \{doc\}`[^`<]+<\.\./notebooks/([\w]+)>`", _section("intro.md", "## Chapters"),
                       re.MULTILINE)
    assert [int(n) for n, _ in items] == list(range(1, len(NOTEBOOKS) + 1))
    assert [stem for _, stem in items] == NOTEBOOKS
    assert [stem[:2] for _, stem in items] == [f"{k:02d}" for k in range(1, len(NOTEBOOKS) + 1)]


def test_the_reproduce_page_starts_from_a_clone():
    first = _section("reproduce.md", "# How to reproduce")
    assert re.search(r"^git clone \S.*$\n^cd \S+$", first, re.MULTILINE)
    assert first.index("git clone") < first.index("make book")


def _seconds(text: str) -> dict[str, int]:
    """Chapter number -> seconds, from '01 contract 10 s' (the README's sentence) or '| 01 contract | 10 s |'."""
    return {k: int(s) for k, s in re.findall(r"\b(0\d) [a-z]+(?: [a-z]+)?\W{1,5}(\d+)\s+s\b", text)}


def test_the_reproduce_page_gives_every_chapters_measured_run_time_as_the_readme_does():
    page = _seconds(_section("reproduce.md", "## Time budget"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    measured = _seconds(readme[readme.index("## Time budget"):readme.index("## Rerun a notebook")])
    assert sorted(page) == [stem[:2] for stem in NOTEBOOKS]            # one time per chapter
    assert page == measured
    assert "2026-11-28" in _section("reproduce.md", "## Time budget")   # when, and on which machine
    assert "two cores" in _section("reproduce.md", "## Time budget")
