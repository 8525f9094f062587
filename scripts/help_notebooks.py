#!/usr/bin/env python3
"""Print `papermill --help-notebook` for every notebook in notebooks/.

Usage:
    python scripts/help_notebooks.py            # print a Markdown section per notebook
    python scripts/help_notebooks.py --update book/reproduce.md
        # replace the text between each notebook's markers in book/reproduce.md:
        #   <!-- papermill-help: notebooks/NAME.ipynb -->
        #   ...
        #   <!-- /papermill-help -->

Runs papermill from the same Python environment (``python -m papermill``) and
strips the usage line, so the output is the parameter list alone.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def help_text(nb: Path) -> str:
    rel = nb.relative_to(ROOT).as_posix()
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", "--help-notebook", rel],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"papermill --help-notebook failed for {rel}:\n{proc.stderr}")
    lines = [ln.rstrip() for ln in proc.stdout.splitlines()]
    lines = [ln for ln in lines if not ln.startswith("Usage:")]
    return "\n".join(lines).strip("\n")


def block(nb: Path) -> str:
    rel = nb.relative_to(ROOT).as_posix()
    return f"```text\n$ papermill --help-notebook {rel}\n{help_text(nb)}\n```"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", metavar="MARKDOWN", help="rewrite the marked sections of this file in place")
    args = ap.parse_args()
    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    if not notebooks:
        print("no notebooks in notebooks/", file=sys.stderr)
        return 1
    if not args.update:
        for nb in notebooks:
            print(f"### `{nb.relative_to(ROOT).as_posix()}`\n\n{block(nb)}\n")
        return 0
    path = Path(args.update)
    text = path.read_text(encoding="utf-8")
    missing = []
    for nb in notebooks:
        rel = nb.relative_to(ROOT).as_posix()
        pat = re.compile(
            rf"(<!-- papermill-help: {re.escape(rel)} -->\n).*?(<!-- /papermill-help -->)", re.S)
        if not pat.search(text):
            missing.append(rel)
            continue
        text = pat.sub(lambda m: m.group(1) + block(nb) + "\n" + m.group(2), text)
    path.write_text(text, encoding="utf-8")
    for rel in missing:
        print(f"no marker for {rel} in {path}: add '<!-- papermill-help: {rel} -->' "
              f"... '<!-- /papermill-help -->'", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
