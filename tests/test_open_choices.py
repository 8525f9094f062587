"""The reading each ledger line was measured under (`oscc_core.reporting.open_choices`), declared once for the book.

The claims file is read with yaml directly and each notebook's parameters cell with ast, so that what a reading
must cover and the defaults it must name are known without the module's code; lines are built by
`ledger_lines.build_lines` from rows constructed here, against a declaration table the test writes itself.
"""
from __future__ import annotations

import pytest
import yaml
from notebook_runs import parameter_defaults

from oscc_core.reporting import claims, open_choices
from oscc_core.reporting.claims import DEFAULT_PATH
from oscc_core.reporting.ledger_lines import RowRecord, build_lines

RAW = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
ENTRIES = {e["id"]: e for e in RAW}
MEASURED = [e["id"] for e in RAW if e["kind"] != "setup"]      # results, checks and intervals
OURS = "a reading the test declares"
HEADLINE = "the reading of the headline audit, as the test declares it"


def record(cid: str, **extra) -> dict:
    """A primary row of `cid`: ours 0.8 in [0.7, 0.9], decided by containment, reproduced."""
    return {"claim id": cid, "quantity": "q", "ours": 0.8, "95% interval": [0.7, 0.9], "exact": None,
            "verdict": "reproduced", "test": claims.CONTAINMENT, **extra}


def lines_of(ids, rows: dict[str, dict], stem: str) -> dict[str, dict]:
    """The ledger lines of the entries `ids`, from `rows` (claim id -> record) of chapter `stem`."""
    entries = {cid: ENTRIES[cid] for cid in ids}
    found = {cid: [RowRecord(stem, f"rows/{k}", r)] for k, (cid, r) in enumerate(rows.items())}
    return {line["id"]: line for line in build_lines(entries, found, {stem})}


# --- the declaration --------------------------------------------------------------------------------------------

def test_every_section_with_an_entry_that_is_not_a_setting_declares_a_reading_for_each_of_its_entries():
    sections = {cid.split(".")[0] for cid in MEASURED}
    assert len(sections) >= 45
    undeclared = [cid for cid in MEASURED if not open_choices.reading_of(cid)]
    assert undeclared == []


def test_every_declared_prefix_holds_an_entry_of_the_claims_file():
    stale = [p for p in open_choices.BY_PREFIX if not any(cid == p or cid.startswith(p + ".") for cid in MEASURED)]
    assert stale == []


def test_the_longest_declared_prefix_wins_and_a_prefix_is_made_of_whole_components():
    table = {"safety": "the section's", "safety.chance_counter_reuse": "the control's",
             "safety.chance_counter_reuse.marginal_shift": "the entry's own"}
    assert open_choices.reading_of("safety.chance_counter_reuse.marginal_shift", table) == "the entry's own"
    assert open_choices.reading_of("safety.chance_counter_reuse.affected_groups", table) == "the control's"
    assert open_choices.reading_of("safety.shared_policy_side_draw.affected_groups", table) == "the section's"
    assert open_choices.reading_of("safety_x.chance_counter_reuse", table) is None
    assert open_choices.reading_of("seat_swap.branch_swap.group_count", table) is None


def test_an_entry_measured_apart_from_its_section_reads_its_own_declaration():
    # the independent arm's noise ratios are 1 by definition; its clip fraction depends on the update's settings
    ratio = open_choices.reading_of("noise_transfer.independent.return_ratio")
    clip = open_choices.reading_of("noise_transfer.independent.clip_fraction")
    assert ratio.startswith("the paper fixes every choice this quantity depends on") and "1 by definition" in ratio
    assert 'epsilon = 0.2' in clip and 'learning_rate = 0.02' in clip and "1 by definition" not in clip
    # the solver table's exploitability comes from the learning study, its task success from the five-seed screen
    study = open_choices.reading_of("measured_solver.cp_grpo_paired.exploitability")
    screen = open_choices.reading_of("measured_solver.cp_grpo_paired.task_success")
    assert "05_solver_study.json" in study and "05_solver_study.json" not in screen
    assert 'opponent = "uniform"' in screen


def test_every_parameter_a_reading_names_has_that_default_in_the_notebook_of_its_chapter():
    defaults = {stem: parameter_defaults(stem) for stem in open_choices.CHAPTERS}
    named = [(r.chapter, name, default) for r, _ in open_choices.DECLARATIONS for c in r.choices
             for name, default in c.parameters]
    assert len(named) >= 60
    wrong = [(stem, name, default, defaults[stem].get(name, "not a parameter")) for stem, name, default in named
             if defaults[stem].get(name, "not a parameter") != default]
    assert wrong == []


def test_a_reading_names_each_open_choice_with_the_parameter_that_sets_it_or_says_the_paper_fixes_every_choice():
    headline = open_choices.reading_of("main.cp_grpo_paired.variance")
    assert headline.startswith("choices the paper leaves open, as 02_covariance sets them: ")
    assert 'continuation = "uniform"' in headline and 'pooled_weighting = "visits"' in headline
    calibration = open_choices.reading_of("learning_boundary.exact_calibration.leduc_max_exploitability")
    assert calibration.startswith("the paper fixes every choice this quantity depends on")
    assert "leduc_cfr_iterations = 300" in calibration


def test_a_choice_names_what_sets_it_once():
    with pytest.raises(ValueError, match="not both and not neither"):
        open_choices.Choice("seed", "13")
    with pytest.raises(ValueError, match="not both and not neither"):
        open_choices.Choice("seed", "13", (("seed", 13),), code="somewhere")


# --- the ledger lines -------------------------------------------------------------------------------------------

def test_a_line_without_reason_or_reading_takes_the_declared_reading_and_its_why_ends_with_it(monkeypatch):
    monkeypatch.setattr(open_choices, "BY_PREFIX", {"noise_transfer": OURS})
    cid = "noise_transfer.root_only.return_ratio"           # the paper prints 0.797
    line = lines_of([cid], {cid: record(cid)}, "03_gradient_noise")[cid]
    assert line["reading"] == OURS and line["reason"] is None
    size, reading = line["why"].split("; ")
    assert size.startswith("the paper's 0.797") and "inside our 95% interval" in size
    assert reading == f"reading: {OURS}"


def test_a_line_that_takes_the_row_of_the_same_value_takes_the_reading_that_row_was_measured_under(monkeypatch):
    monkeypatch.setattr(open_choices, "BY_PREFIX", {"main": HEADLINE, "abstract": OURS})
    printed, measured = "abstract.cp_grpo.contrast_variance", "main.cp_grpo_paired.variance"
    lines = lines_of([printed, measured], {measured: record(measured)}, "02_covariance")
    assert (lines[printed]["basis"], lines[printed]["via"]) == ("same value", measured)
    assert lines[printed]["reading"] == lines[measured]["reading"] == HEADLINE
    assert lines[printed]["why"].startswith(f"the same value as {measured}, whose row it takes; ")
    assert lines[printed]["why"].endswith(f"; reading: {HEADLINE}")


def test_a_line_whose_row_names_a_reading_or_a_reason_keeps_it_and_a_setting_takes_none(monkeypatch):
    monkeypatch.setattr(open_choices, "BY_PREFIX", {"strata": OURS, "main": OURS})
    card, printing = "strata.private_card_a.paired_variance", "strata.all_roots.paired_variance"
    setting = "main.cp_grpo_paired.pairs"
    lines = lines_of([card, printing, setting],
                     {card: record(card, reading="own card Q"),
                      printing: record(printing, reason="a printing of main.cp_grpo_paired.variance")},
                     "02_covariance")
    assert lines[card]["reading"] == "own card Q" and OURS not in lines[card]["why"]
    assert lines[printing]["reading"] is None and OURS not in lines[printing]["why"]
    assert lines[printing]["reason"] == "a printing of main.cp_grpo_paired.variance"
    assert ENTRIES[setting]["kind"] == "setup" and lines[setting]["reading"] is None


def test_a_line_no_declaration_holds_is_left_without_a_reading(monkeypatch):
    monkeypatch.setattr(open_choices, "BY_PREFIX", {"main": OURS})
    cid = "noise_transfer.root_only.return_ratio"
    line = lines_of([cid], {cid: record(cid)}, "03_gradient_noise")[cid]
    assert line["reading"] is None and "reading:" not in line["why"]
