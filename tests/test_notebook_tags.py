"""The chapters read as prose, tables and figures: scripts/tag_cells.py hides the code of their
cells by rule, and at least 80% of every chapter's code cells carry a hide or remove tag."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("tag_cells", ROOT / "scripts" / "tag_cells.py")
tag_cells = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tag_cells)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
HIDDEN = {"remove-cell", "hide-cell", "remove-input", "hide-input"}
MIN_HIDDEN_SHARE = 0.8


def _code_cells(path):
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_at_least_80_percent_of_a_chapters_code_cells_are_hidden_or_removed(path):
    cells = _code_cells(path)
    hidden = [c for c in cells if HIDDEN & set(c["metadata"].get("tags", []))]
    assert len(hidden) >= MIN_HIDDEN_SHARE * len(cells), (
        f"{path.name}: {len(hidden)} of {len(cells)} code cells hidden; run scripts/tag_cells.py")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_parameters_cell_keeps_papermills_tag_and_is_folded(path):
    (params,) = [c for c in _code_cells(path) if "parameters" in c["metadata"].get("tags", [])]
    assert HIDDEN & set(params["metadata"]["tags"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_committed_tags_are_the_rules(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert tag_cells.tag_notebook(nb) == [], f"{path.name}: run scripts/tag_cells.py"


@pytest.mark.parametrize("source, shows", [
    ("import numpy as np\nfrom x import y", False),
    ("p = parameters.validate(globals())", False),
    ('glue("n", 3, display=False)', False),
    ('for k, v in d.items():\n    glue(k, v, display=False)', False),
    ('fig = f()\nglue("fig", fig, display=False)\nplt.close(fig)', False),
    ("path = write_results(out, 'x', rec, res, dev)", False),
    ("frame(rows)", True),                          # a table: the last expression
    ("rows = f()\ndisplay.frame(rows).set_index('arm')", True),
    ('glue("n", 3)', True),                         # glue that displays
    ('print(f"wrote {path.name}")', True),
    ("display(table())\nx = 1", True),
    ("x", True),
    ("%matplotlib inline", True),                   # not Python: folded rather than dropped
])
def test_which_cells_show_something(source, shows):
    assert tag_cells.shows_output(source) is shows


def _nb(*cells):
    return {"cells": [{"cell_type": t, "metadata": {"tags": list(tags)}, "source": s, "outputs": []}
                      for t, s, tags in cells]}


def test_the_rule_tags_each_kind_of_cell_and_keeps_hand_made_choices():
    nb = _nb(("markdown", "# title", ()),
             ("code", "n: int = 3", ("parameters",)),
             ("code", "import x", ()),
             ("code", "frame(rows)", ()),
             ("code", "frame(rows)", ("remove-cell",)),
             ("code", "frame(rows)", ("hide-output",)),
             ("code", "example(1)", ("show-input",)))
    changes = tag_cells.tag_notebook(nb)
    assert changes == [(1, "hide-cell"), (2, "remove-input"), (3, "hide-input"), (5, "hide-input")]
    assert nb["cells"][1]["metadata"]["tags"] == ["parameters", "hide-cell"]
    assert nb["cells"][4]["metadata"]["tags"] == ["remove-cell"]
    assert nb["cells"][5]["metadata"]["tags"] == ["hide-output", "hide-input"]
    assert nb["cells"][0]["metadata"]["tags"] == [] and nb["cells"][6]["metadata"]["tags"] == ["show-input"]
    assert tag_cells.hidden_share(nb) == pytest.approx(5 / 6)


def test_a_second_run_changes_nothing_and_only_tags_change(tmp_path):
    nb = _nb(("code", "import x", ()), ("code", "frame(rows)", ()))
    path = tmp_path / "n.ipynb"
    path.write_text(tag_cells.dumps(nb), encoding="utf-8")
    assert tag_cells.main([str(path)]) == 0
    once = json.loads(path.read_text(encoding="utf-8"))
    assert tag_cells.main(["--check", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == tag_cells.dumps(once)
    for before, after in zip(nb["cells"], once["cells"]):
        assert {k: v for k, v in after.items() if k != "metadata"} == {k: v for k, v in before.items()
                                                                      if k != "metadata"}


def test_check_mode_reports_a_stale_notebook_and_writes_nothing(tmp_path):
    path = tmp_path / "n.ipynb"
    text = tag_cells.dumps(_nb(("code", "frame(rows)", ())))
    path.write_text(text, encoding="utf-8")
    assert tag_cells.main(["--check", str(path)]) == 1
    assert path.read_text(encoding="utf-8") == text
