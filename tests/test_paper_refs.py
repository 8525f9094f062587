"""Readable names of the paper's LaTeX labels (oscc_core.reporting.paper_refs)."""
import re
from pathlib import Path

import pytest
import yaml

from oscc_core.reporting import paper_refs

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("label, name", [
    # numbers read by hand off the paper's PDF order of captions
    ("tab:rng-dependency", "the paper's Table 1"),
    ("tab:main", "the paper's Table 2"),
    ("tab:app-implementation-checks", "the paper's Table 13"),
    ("tab:noise-transfer", "the paper's Table 36"),
    ("tab:app-p1-figures", "the paper's Table 44"),
    ("fig:method", "the paper's Figure 1"),
    ("fig:calibration-size", "the paper's Figure 7"),
    ("eq:paired-update", "the paper's paired-update equation"),
    ("tab:no-such-table", "tab:no-such-table"),
])
def test_a_label_reads_as_the_papers_table_figure_or_equation(label, name):
    assert paper_refs.readable(label) == name


def test_numbers_are_one_to_n_without_gaps():
    assert sorted(paper_refs.TABLES.values()) == list(range(1, 45))
    assert sorted(paper_refs.FIGURES.values()) == list(range(1, 11))


def test_labels_inside_a_text_are_replaced_and_the_rest_kept():
    text = "rows of tab:main (see Eq. paired-update and eq:total-cov; fig:diagnostics caption), ratio 0.5"
    assert paper_refs.readable_text(text) == (
        "rows of the paper's Table 2 (see the paper's paired-update equation and the paper's total-covariance "
        "equation; the paper's Figure 2 caption), ratio 0.5")


def test_every_table_and_figure_the_claims_file_cites_has_a_name():
    entries = yaml.safe_load((ROOT / "book" / "paper_claims.yaml").read_text(encoding="utf-8"))
    sources = {e["source"] for e in entries}
    for s in sources:
        assert not re.search(r"\b(tab|fig|eq):", paper_refs.source_name(s)), s
    assert paper_refs.source_name("abstract") == "the paper's abstract"
    assert paper_refs.source_name("text:Results") == "the paper's text, section “Results”"
