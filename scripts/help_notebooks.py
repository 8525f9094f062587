#!/usr/bin/env python3
"""Print the parameter list of every notebook in notebooks/, as `python -m oscc_core run <chapter> --list` does.

Usage:
    python scripts/help_notebooks.py            # print a Markdown section per notebook
    python scripts/help_notebooks.py --update book/reproduce.md
        # replace the text between each notebook's markers in book/reproduce.md:
        #   <!-- runner-list: notebooks/NAME.ipynb -->
        #   ...
        #   <!-- /runner-list -->

The lists come from the runner's own reader of the cell tagged `parameters`
(`oscc_core.reporting.runner.read_parameters_cell`, which parses the cell with
`ast`), so they hold every name the cell assigns: papermill's `--help-notebook`
skips a line whose comment holds a second `=`. `output_dir` is left out, as in
the runner, which sets it from `-o DIR` (with papermill, pass `-p output_dir DIR`).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oscc_core.reporting import runner  # noqa: E402

START = "<!-- runner-list: {rel} -->"
END = "<!-- /runner-list -->"


def block(nb: Path) -> str:
    name = runner.short_name(nb.stem)
    return f"```text\n$ python -m oscc_core run {name} --list\n{runner.list_parameters(nb.stem)}\n```"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", metavar="MARKDOWN", help="rewrite the marked sections of this file in place")
    args = ap.parse_args()
    notebooks = list(runner.chapters().values())
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
        pat = re.compile(rf"({re.escape(START.format(rel=rel))}\n).*?({re.escape(END)})", re.S)
        if not pat.search(text):
            missing.append(rel)
            continue
        text = pat.sub(lambda m: m.group(1) + block(nb) + "\n" + m.group(2), text)
    path.write_text(text, encoding="utf-8")
    for rel in missing:
        print(f"no marker for {rel} in {path}: add '{START.format(rel=rel)}' ... '{END}'", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
