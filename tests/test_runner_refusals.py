"""`python -m oscc_core run`: values that start with a minus sign, and a refusal that leaves nothing behind.

A two-cell chapter of this test's own (its parameters, then a validation cell that refuses a negative seed as
every chapter's does, `reporting.params.check_seeds`) stands in for a chapter, as in `test_runner.py`.
"""
from __future__ import annotations

import json

import pytest

from oscc_core.reporting import runner

PARAMETERS = "seeds: list = [13]  # stream seeds\noffset: int = 0  # may be negative\noutput_dir: str = \".\"  # where\n"
VALIDATE = ("from oscc_core.reporting.params import check_seeds\n"
            "check_seeds('seeds', seeds)\n"
            "print(seeds, offset)\n")
SEEDS_REFUSED = "error: seeds must be a non-empty list of integers in [0, 2**63 - 1], got [-211, 223]."


@pytest.fixture
def checked_chapter(tmp_path, monkeypatch):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    cell = {"cell_type": "code", "execution_count": None, "outputs": []}
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                       "language_info": {"name": "python"}},
          "cells": [dict(cell, id="params", metadata={"tags": ["parameters"]}, source=PARAMETERS),
                    dict(cell, id="validate", metadata={}, source=VALIDATE)]}
    (notebooks / "01_checked.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(runner, "NOTEBOOKS", notebooks)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("OSCC_PROGRESS", raising=False)
    return work


def test_the_two_words_after_p_are_its_name_and_value_even_when_the_value_starts_with_a_minus():
    rest, pairs = runner.split_parameters(["run", "covariance", "-p", "seeds", "-211,223", "-o", "out",
                                           "--parameter", "offset", "-5"])
    assert rest == ["run", "covariance", "-o", "out"] and pairs == [("seeds", "-211,223"), ("offset", "-5")]


def test_a_p_without_its_value_is_one_sentence_and_exit_2(capsys):
    assert runner.main(["run", "covariance", "-p", "seeds"]) == 2
    assert capsys.readouterr().err == "error: -p takes a NAME and a VALUE (-p NAME VALUE), got seeds after it.\n"


def test_negative_seeds_are_refused_in_one_sentence_and_leave_no_directory(checked_chapter, capsys):
    assert runner.main(["run", "checked", "-p", "seeds", "-211,223"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == SEEDS_REFUSED
    assert list(checked_chapter.iterdir()) == []                # no runs/01_checked-1/, no runs/


def test_a_refusal_into_a_given_directory_leaves_it_without_a_partial_notebook(checked_chapter, capsys):
    out = checked_chapter / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("kept")
    assert runner.main(["run", "checked", "-p", "seeds", "-211,223", "-o", str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == SEEDS_REFUSED
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_negative_value_a_notebook_allows_is_passed_and_runs(checked_chapter, capsys):
    out = checked_chapter / "out"
    assert runner.main(["run", "checked", "-p", "offset", "-5", "-o", str(out)]) == 0, capsys.readouterr().err
    cells = json.loads((out / "01_checked.ipynb").read_text())["cells"]
    assert "".join("".join(o.get("text", "")) for o in cells[-1]["outputs"]) == "[13] -5\n"
