#!/usr/bin/env python3
"""Screenshot and check every page of the built book.

Builds nothing. Reads the page list from _toc.yml, then for each page of
_build/html (or --html-dir):

* takes a PNG with headless Chromium (Debian's /usr/bin/chromium; install it
  with `apt-get update && apt-get install -y chromium`) into _build/screenshots/;
* checks the HTML for rendering problems: literal MyST roles left in the text
  (`{glue`, `{cite}`, `{claim}`, ...), unresolved references ("problematic"
  nodes, docutils system messages), "Traceback" text, error output cells
  (traceback / error / ansi-red classes), stderr output cells (warnings;
  --allow-stderr to accept them). Chapter pages (notebooks) must also
  contain at least one <table> and one <img> in the article body.

Prints one verdict line per page and exits non-zero when any page has a problem.

Usage: python scripts/screenshot_book.py [--html-dir _build/html] [--out _build/screenshots]
                                         [--chromium /usr/bin/chromium] [--no-screenshots]
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,4000",
]
# Literal MyST role/directive syntax that should have been rendered away.
LITERAL_ROLE = re.compile(r"\{(glue|cite|claim|ref|doc|numref|eq|term|bibliography|download)(:[a-z]+)?\}")
ERROR_CLASSES = {"traceback", "ansi-red-fg", "ansi-red-intense-fg", "problematic", "system-message"}


def toc_pages(toc_path: Path) -> list[str]:
    """Document names (without suffix) in _toc.yml order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(items):
        for item in items or []:
            if "file" in item:
                pages.append(item["file"])
            walk(item.get("sections"))
            for part in item.get("parts", []) or []:
                walk(part.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return [re.sub(r"\.(md|ipynb)$", "", p) for p in pages]


class PageScan(HTMLParser):
    """Collects visible article text (outside code-cell inputs), tables, images and error classes."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []
        self.text: list[str] = []
        self.tables = 0
        self.images = 0
        self.error_classes: set[str] = set()
        self.stderr_outputs = 0

    def _inside(self, cls: str) -> bool:
        return any(cls in classes for _, classes in self.stack)

    def _in_article(self) -> bool:
        return any(tag == "article" or "bd-article" in classes for tag, classes in self.stack)

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        if self._in_article() or tag == "article":
            if tag == "table":
                self.tables += 1
            if tag == "img":
                self.images += 1
            hits = classes & ERROR_CLASSES
            if "output" in classes and "error" in classes:
                hits.add("output error")
            self.error_classes |= hits
            if "output" in classes and "stderr" in classes:
                self.stderr_outputs += 1
        if tag not in self.VOID:
            self.stack.append((tag, classes))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self._in_article():
            return
        if any(t in ("script", "style") for t, _ in self.stack):
            return
        if self._inside("cell_input"):
            return  # source code may legitimately mention glue(...) etc.
        self.text.append(data)


def check_page(html_path: Path, chapter: bool, allow_stderr: bool = False) -> tuple[list[str], dict]:
    scan = PageScan()
    scan.feed(html_path.read_text(encoding="utf-8"))
    text = "".join(scan.text)
    problems = []
    for m in sorted({m.group(0) for m in LITERAL_ROLE.finditer(text)}):
        problems.append(f"literal role text {m!r}")
    if "Traceback" in text:
        problems.append("'Traceback' in page text")
    if scan.error_classes:
        problems.append("error output/markup: " + ", ".join(sorted(scan.error_classes)))
    if scan.stderr_outputs and not allow_stderr:
        problems.append(f"{scan.stderr_outputs} stderr output cell(s) (warnings in the book)")
    if chapter and scan.tables < 1:
        problems.append("no <table>")
    if chapter and scan.images < 1:
        problems.append("no <img>")
    return problems, {"tables": scan.tables, "imgs": scan.images, "stderr": scan.stderr_outputs}


def screenshot(chromium: str, html_path: Path, png: Path) -> str | None:
    png.parent.mkdir(parents=True, exist_ok=True)
    if png.exists():
        png.unlink()
    with tempfile.TemporaryDirectory(prefix="oscc-chromium-") as profile:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
               f"--screenshot={png}", html_path.resolve().as_uri()]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            return "chromium timed out"
    if not png.exists() or png.stat().st_size < 1000:
        tail = (proc.stderr or "").strip().splitlines()[-3:]
        return f"no screenshot (chromium rc={proc.returncode}: {' | '.join(tail)})"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description="Screenshot and check the built book.")
    ap.add_argument("--html-dir", default=str(ROOT / "_build" / "html"))
    ap.add_argument("--out", default=str(ROOT / "_build" / "screenshots"))
    ap.add_argument("--toc", default=str(ROOT / "_toc.yml"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--no-screenshots", action="store_true", help="only check the HTML")
    ap.add_argument("--allow-stderr", action="store_true", help="do not fail on stderr output cells")
    args = ap.parse_args()

    html_dir, out = Path(args.html_dir), Path(args.out)
    if not (html_dir / "index.html").exists():
        print(f"no built book at {html_dir}: run `make book` first", file=sys.stderr)
        return 2
    if not args.no_screenshots and not Path(args.chromium).exists():
        print(f"chromium not found at {args.chromium}: apt-get update && apt-get install -y chromium",
              file=sys.stderr)
        return 2

    failed = 0
    for page in toc_pages(Path(args.toc)):
        chapter = page.startswith("notebooks/")
        html_path = html_dir / f"{page}.html"
        if not html_path.exists():
            print(f"FAIL {page}: {html_path} missing")
            failed += 1
            continue
        problems, stats = check_page(html_path, chapter, args.allow_stderr)
        png = out / (page.replace("/", "__") + ".png")
        if not args.no_screenshots:
            err = screenshot(args.chromium, html_path, png)
            if err:
                problems.append(err)
        kind = "chapter" if chapter else "page"
        info = f"tables={stats['tables']} imgs={stats['imgs']}" + (
            f" stderr_outputs={stats['stderr']}" if stats["stderr"] else "")
        shot = "" if args.no_screenshots else f" -> {png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}"
        if problems:
            failed += 1
            print(f"FAIL {page} ({kind}, {info}): " + "; ".join(problems))
        else:
            print(f"OK   {page} ({kind}, {info}){shot}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
