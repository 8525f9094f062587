#!/usr/bin/env python3
"""Tag the code cells of the chapters so that a chapter reads as prose, tables and figures.

Jupyter Book hides a cell's code by its tags: `remove-input` drops the code from the page,
`hide-input` folds it behind a "Show code" toggle, `hide-cell` folds code and output,
`remove-cell` drops both. This script gives every code cell of notebooks/*.ipynb one of them
by a rule read from the cell's source alone (so a cell merged in and not yet executed is
tagged the same as after execution):

* a cell that already carries one of those four tags keeps it (a choice made by hand wins);
* a cell tagged `show-input` is left alone: its code is meant to be read;
* the `parameters` cell (papermill's tag, kept) gets `hide-cell`: visible, folded;
* a cell that shows something (`shows_output`: a `display(...)`, `print(...)`, a `glue(...)`
  without `display=False`, or a last statement that is an expression other than a call of
  `glue`/`plt.close`) gets `hide-input`: its table or figure stays, and a reader may want the
  call that made it;
* every other cell only imports, validates, computes, glues or writes results: `remove-input`.

Only the cells' metadata tags change (the file is written back in nbformat's own layout: indent
1, sorted keys), and a second run changes nothing, so the lead can rerun it after merging.

Usage: python scripts/tag_cells.py [--check] [NOTEBOOK ...]   (default: notebooks/*.ipynb)
       --check: change nothing, exit 1 when a notebook would change.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HIDE_TAGS = ("remove-cell", "hide-cell", "remove-input", "hide-input")
KEEP_TAG = "show-input"
PARAMETERS_TAG = "parameters"
# Calls whose value is None or is not shown (the last line of a cell that glues or closes a figure).
SILENT_CALLS = {"glue", "close", "glue_box"}


def _call_name(node: ast.AST) -> str | None:
    """'glue' for glue(...), 'close' for plt.close(...); None for anything but a call."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _glue_displays(call: ast.Call) -> bool:
    """A glue(...) call shows its value unless it passes display=False."""
    for kw in call.keywords:
        if kw.arg == "display" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
            return False
    return True


def shows_output(source: str) -> bool:
    """Whether a code cell's source shows something on the page: a display/print call or a glue
    that displays, anywhere in it, or a last statement that is an expression other than a silent call
    (glue(..., display=False), plt.close(...)). Source that does not parse (IPython magics) counts as
    showing, so its code is folded rather than dropped."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        name = _call_name(node)
        if name in ("display", "print") or (name == "glue" and _glue_displays(node)):
            return True
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    last = tree.body[-1].value
    return _call_name(last) not in SILENT_CALLS


def tag_for(cell: dict) -> str | None:
    """The tag the rule adds to a code cell, or None when it keeps its tags."""
    tags = cell.get("metadata", {}).get("tags", [])
    if any(t in tags for t in HIDE_TAGS) or KEEP_TAG in tags:
        return None
    if PARAMETERS_TAG in tags:
        return "hide-cell"
    return "hide-input" if shows_output("".join(cell.get("source", ""))) else "remove-input"


def tag_notebook(nb: dict) -> list[tuple[int, str]]:
    """Add the rule's tag to every code cell of `nb` (in place); returns (cell index, tag) per change."""
    changes = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        tag = tag_for(cell)
        if tag:
            cell.setdefault("metadata", {}).setdefault("tags", []).append(tag)
            changes.append((i, tag))
    return changes


def hidden_share(nb: dict) -> float:
    """The share of `nb`'s code cells whose code is hidden or removed (1.0 without code cells)."""
    code = [c for c in nb["cells"] if c.get("cell_type") == "code"]
    hidden = [c for c in code if any(t in c.get("metadata", {}).get("tags", []) for t in HIDE_TAGS)]
    return len(hidden) / len(code) if code else 1.0


def dumps(nb: dict) -> str:
    """nbformat's own layout (indent 1, sorted keys, UTF-8 kept, a final newline)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Tag the chapters' code cells hide-input/remove-input by rule.")
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a notebook would change")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    stale = 0
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        changes = tag_notebook(nb)
        share = hidden_share(nb)
        summary = ", ".join(f"cell {i}: {t}" for i, t in changes) or "unchanged"
        print(f"{path.name}: {share:.0%} of code cells hidden; {summary}")
        if changes:
            stale += 1
            if not args.check:
                path.write_text(dumps(nb), encoding="utf-8")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
