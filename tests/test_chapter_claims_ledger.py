"""The claims-ledger chapter (`oscc_core.chapters.claims_ledger`): every claim entry once, with a verdict or reason.

The claims file is read here with yaml directly (not through the library), and results trees are
constructed by hand, so that each expected line is known without the ledger's code.
"""
from __future__ import annotations

import json
from collections import Counter

import papermill as pm
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from notebook_runs import run_notebook

from oscc_core.chapters.claims_ledger import collect, disagreements, ledger, parameters
from oscc_core.reporting.claims import DEFAULT_PATH, REPO_ROOT, load_claims
from oscc_core.reporting.params import ParameterError

RAW = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))   # the claims file, read independently
RAW_IDS = [e["id"] for e in RAW]


def write_results(root, stem: str, body: dict) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{stem}.json").write_text(json.dumps({"manifest": {"sha256": "x"}, **body}, sort_keys=True))


def row(cid, verdict, ours=1.0, **extra) -> dict:
    return {"quantity": "q", "paper": 2.0, "ours": ours, "95% interval": [0.5, 1.5], "exact": None,
            "verdict": verdict, "claim id": cid, **extra}


def build(results_dir):
    entries = load_claims()
    found = collect.read_results(results_dir)
    rows, _ = collect.rows_by_claim(collect.row_records(found), entries)
    return ledger.build_ledger(entries, rows, set(found)), found


def entry_of(section: str, kind: str, with_same_as: bool = False) -> str:
    return next(e["id"] for e in RAW if e["section"] == section and e["kind"] == kind
                and ("same_as" in e) == with_same_as)


def by_id(lines):
    return {r["id"]: r for r in lines}


# --- the committed results -----------------------------------------------------------------

def test_the_committed_ledger_compares_every_result_some_chapter_could_measure():
    lines, _ = build(REPO_ROOT / "results")
    assert [r["id"] for r in lines if r["kind"] != "setup" and r["basis"] == "no row"] == []


def test_every_committed_wall_time_is_a_ratio_or_says_what_no_ratio_captures():
    lines, _ = build(REPO_ROOT / "results")
    walls = [r for r in lines if ledger.is_wall_time(r["id"])]
    assert len(walls) >= 15
    assert all(r["verdict"] != "not compared" or "ratio" in r["reason"] for r in walls)


def test_every_claim_id_once_and_counts_add_up():
    lines, _ = build(REPO_ROOT / "results")
    ids = Counter(r["id"] for r in lines)
    assert set(ids) == set(RAW_IDS) and set(ids.values()) == {1}
    assert len(RAW_IDS) == 799
    ledger.check_ledger(lines, RAW_IDS)
    counted = ledger.counts(lines)
    settings = sum(e["kind"] == "setup" for e in RAW)
    assert counted["total"] == len(RAW_IDS) and counted["settings"] == settings
    assert sum(counted["verdict"].values()) == counted["results"] == len(RAW_IDS) - settings
    assert sum(counted["status"].values()) == settings
    for by in ("section", "kind", "chapter", "basis"):
        assert sum(sum(v.values()) for v in counted[by].values()) == len(RAW_IDS) - settings
    results = Counter(e["section"] for e in RAW if e["kind"] != "setup")
    assert {s: sum(v.values()) for s, v in counted["section"].items()} == results
    assert "setup" not in counted["kind"]


def test_every_line_has_the_fields():
    lines, _ = build(REPO_ROOT / "results")
    for r in lines:
        for key in ("id", "section", "kind", "paper", "ours", "interval", "verdict", "status", "relation", "reason",
                    "reading", "chapter"):
            assert key in r
        if r["kind"] == "setup":
            assert r["verdict"] is None and r["status"] in ("adopted", "differs")
        else:
            assert r["status"] is None and r["verdict"] in ledger.VERDICTS
        if ledger.outcome(r) in ledger.NEEDS_REASON:
            assert r["reason"]


def test_the_committed_ledger_shows_what_the_issue_asks():
    lines = by_id(build(REPO_ROOT / "results")[0])
    covariance = json.loads((REPO_ROOT / "results" / "02_covariance.json").read_text())
    full = covariance["pooled_roots"]["arms"]["full"]["contrast_var"]   # the paper's all-roots reading, pooled
    assert lines["main.cp_grpo_paired.variance"]["ours"] == full
    assert lines["abstract.cp_grpo.contrast_variance"]["ours"] == full
    assert lines["fig_three_seed.mean_difference"]["verdict"] == "inconclusive"
    assert all(r["reading"] for r in lines.values() if r["verdict"] == "impossible under the rules")
    assert not [r["id"] for r in lines.values() if r["verdict"] == "reproduced" and r["relation"]
                and r["relation holds"] is not True]


# --- constructed results trees --------------------------------------------------------------

def test_a_known_row_gives_its_verdict_and_chapter(tmp_path):
    cid = entry_of("covariance", "result")
    write_results(tmp_path, "02_covariance", {"tables": {"b": [row(cid, "not reproduced", ours=3.5)]}})
    line = by_id(build(tmp_path)[0])[cid]
    assert (line["verdict"], line["ours"], line["interval"], line["chapter"]) == ("not reproduced", 3.5,
                                                                                 [0.5, 1.5], "02_covariance")
    assert line["reason"] is None and line["relation"] is None and line["basis"] == "row"


def test_two_primary_rows_for_one_claim_stop_the_build(tmp_path):
    cid = entry_of("covariance", "result")
    write_results(tmp_path, "02_covariance", {"b": [row(cid, "partly", relation="a < b")],
                                              "a": [row(cid, "reproduced")]})
    with pytest.raises(ledger.LedgerError, match="more than one primary row"):
        build(tmp_path)


def test_a_sensitivity_row_never_gives_the_verdict(tmp_path):
    cid = entry_of("covariance", "result")
    sensitivity = {k: v for k, v in row(cid, "reproduced", ours=17.17).items() if k != "claim id"}
    write_results(tmp_path, "02_covariance", {"a_sensitivity": [{**sensitivity, "sensitivity of": cid}],
                                              "b_primary": [row(cid, "not reproduced", ours=32.55)]})
    line = by_id(build(tmp_path)[0])[cid]
    assert (line["verdict"], line["ours"], line["where"]) == ("not reproduced", 32.55, "b_primary/0")


def test_missing_entries_of_a_built_section_get_reasons(tmp_path):
    write_results(tmp_path, "02_covariance", {"rows": []})
    lines = by_id(build(tmp_path)[0])
    result, setup = entry_of("covariance", "result"), entry_of("covariance", "setup")
    assert lines[result]["verdict"] == "not compared"
    assert lines[result]["reason"] == "no row in chapter 02_covariance yet"
    assert lines[setup]["verdict"] is None and lines[setup]["status"] == "differs"
    assert lines[setup]["reason"] == ledger.SETTING_REASON
    solver = entry_of("solver", "result")
    assert lines[solver]["reason"] == "chapter not built yet" and lines[solver]["chapter"] is None
    ledger.check_ledger(list(lines.values()), RAW_IDS)


def test_an_entry_takes_the_row_of_the_same_value_printed_elsewhere(tmp_path):
    entries = {e["id"]: e for e in RAW}
    cid = next(e["id"] for e in RAW if e["section"] == "covariance" and e["kind"] == "result"
               and e.get("same_as") in entries and entries[e["same_as"]]["value"] == e["value"])
    target = entries[cid]["same_as"]
    write_results(tmp_path, "02_covariance", {"rows": [row(target, "reproduced")]})
    line = by_id(build(tmp_path)[0])[cid]
    assert (line["verdict"], line["via"], line["basis"]) == ("reproduced", target, "same value")
    assert line["paper"] == entries[cid]["value"]


def test_an_entry_printed_with_another_value_never_takes_the_row(tmp_path):
    entries = {e["id"]: e for e in RAW}
    cid = next(e["id"] for e in RAW if e["kind"] == "result" and e.get("same_as") in entries
               and entries[e["same_as"]]["value"] != e["value"]
               and not any(x.get("same_as") == e["id"] for x in RAW))
    target = entries[cid]["same_as"]
    stem = collect.SECTION_CHAPTERS[entries[target]["section"]]
    write_results(tmp_path, stem, {"rows": [row(target, "reproduced")]})
    line = by_id(build(tmp_path)[0])[cid]
    assert line["basis"] in ("no row", "chapter not built") and line["via"] is None


def test_the_check_refuses_a_line_that_took_the_row_of_another_printed_value():
    line = {"id": "x", "kind": "result", "verdict": "reproduced", "paper": 18.1441, "via paper": 18.14,
            "basis": "same value", "via": "y", "reason": None, "reading": "r", "relation": None}
    with pytest.raises(ledger.LedgerError, match="another value"):
        ledger.check_ledger([line], ["x"])
    ledger.check_ledger([{**line, "via paper": 18.1441}], ["x"])


def test_a_setting_with_a_verdict_and_a_result_with_a_status_are_refused(tmp_path):
    setup, result = entry_of("covariance", "setup"), entry_of("covariance", "result")
    write_results(tmp_path, "02_covariance", {"rows": [row(setup, "reproduced")]})
    with pytest.raises(ledger.LedgerError, match="settings have a verdict"):
        ledger.check_ledger(build(tmp_path)[0], RAW_IDS)
    status_row = {k: v for k, v in row(result, None).items() if k != "verdict"}
    write_results(tmp_path, "02_covariance", {"rows": [{**status_row, "status": "adopted"}]})
    with pytest.raises(ledger.LedgerError, match="carry a status"):
        ledger.check_ledger(build(tmp_path)[0], RAW_IDS)
    good = {k: v for k, v in row(setup, None).items() if k != "verdict"}
    write_results(tmp_path, "02_covariance", {"rows": [{**good, "status": "adopted"}]})
    line = by_id(build(tmp_path)[0])[setup]
    assert (line["status"], line["verdict"]) == ("adopted", None)


def test_a_wall_time_not_compared_without_naming_what_no_ratio_captures_is_refused():
    line = {"id": "grpo_ppo.independent.cost", "kind": "result", "verdict": "not compared", "basis": "row",
            "reason": "wall time depends on the machine"}
    with pytest.raises(ledger.LedgerError, match="no ratio"):
        ledger.check_ledger([line], [line["id"]])
    ledger.check_ledger([{**line, "reason": "the reference's ratio to itself is 1 by definition"}], [line["id"]])


def test_a_reproduced_entry_whose_relation_fails_and_an_impossible_one_without_reading_are_refused():
    base = {"id": "x", "kind": "result", "reason": "a bound", "basis": "row"}
    with pytest.raises(ledger.LedgerError, match="relation that fails"):
        ledger.check_ledger([{**base, "verdict": "reproduced", "relation": "d < 0", "relation holds": False}], ["x"])
    with pytest.raises(ledger.LedgerError, match="relation that fails"):
        ledger.check_ledger([{**base, "verdict": "reproduced", "relation": "d < 0", "relation holds": True,
                              "relation resolved": False}], ["x"])
    with pytest.raises(ledger.LedgerError, match="name no reading"):
        ledger.check_ledger([{**base, "verdict": "impossible under the rules", "reading": ""}], ["x"])
    ledger.check_ledger([{**base, "verdict": "impossible under the rules", "reading": "whole game"}], ["x"])


@pytest.mark.parametrize("kind", ["result", "check", "interval"])
def test_the_check_refuses_a_line_that_names_neither_the_reading_it_was_measured_under_nor_a_reason(kind):
    line = {"id": "x", "kind": kind, "verdict": "reproduced", "paper": 1.0, "basis": "row", "via": None,
            "relation": None, "reason": None, "reading": None}
    with pytest.raises(ledger.LedgerError, match=r"1 results, checks or intervals name neither the reading they "
                                                 r"were measured under nor a reason \(first: x\)"):
        ledger.check_ledger([{**line, "id": "z", "reading": "r"}, line], ["z", "x"])
    with pytest.raises(ledger.LedgerError, match=r"2 results, checks or intervals name neither .*\(first: x\)"):
        ledger.check_ledger([line, {**line, "id": "y", "reading": " "}], ["x", "y"])
    ledger.check_ledger([{**line, "reading": "root '' alone"}], ["x"])
    ledger.check_ledger([{**line, "reason": "a printing of y, whose verdict it shares"}], ["x"])


def test_the_ledger_page_shows_a_lines_reading_once_in_its_own_place():
    from oscc_core.chapters.claims_ledger.tables import detail_html

    reading = "choices the paper leaves open, as 02_covariance sets them: seed: 13 (seed = 13); roots: all"
    line = {"id": "x", "relation": None, "reading": reading,
            "why": f"the paper's 2 lies outside our 95% interval [0.5, 1.5] (ours 1); reading: {reading}"}
    shown = detail_html(line)
    assert shown.count("roots: all") == 2                    # the reading's text and its tooltip, not the why's
    assert "(ours 1)</span>" in shown and "reading: choices" not in shown


def test_a_relation_holding_a_semicolon_leaves_the_why_whole_and_is_shown_once():
    from oscc_core.chapters.claims_ledger.tables import detail_html
    relation = "variance: root_only < independent; full lowest"
    clause = f"the relation the paper states, “{relation}”, holds (resolved at 95%)"
    line = {"id": "x", "relation": relation, "relation holds": True, "relation resolved": True, "reading": None,
            "why": f"the paper's 2 lies outside our 95% interval [0.5, 1.5] (ours 1); {clause}; exact 1.2"}
    why_shown = detail_html(line).split("<b>why</b>")[1]
    assert "full lowest" not in why_shown and "exact 1.2" in why_shown and "(ours 1)" in why_shown


def test_a_not_compared_line_shows_its_ordering_verdict_however_long_its_relation():
    from oscc_core.chapters.claims_ledger.tables import detail_html
    line = {"id": "x", "relation": "trace: " + "root_only < independent, " * 20 + "full lowest",
            "relation holds": True, "relation resolved": None, "verdict": "not compared",
            "relation verdict": "reproduced", "reading": None, "why": "scales differ"}
    shown = detail_html(line).split("<b>why</b>")[0]
    assert "ordering verdict: reproduced</span>" in shown


CLAUSE_TEXT = st.text(alphabet="abc ,()", min_size=1, max_size=12)
#: A clause around the one to cut: plain, or one that begins or ends with its text without being it.
OTHER_CLAUSE = st.tuples(CLAUSE_TEXT, st.sampled_from(["plain", "begins with it", "ends with it"]),
                         st.text(alphabet="abc", min_size=1, max_size=4))


def _other(said: str, spec) -> str:
    text, kind, letters = spec
    return {"plain": text, "begins with it": said + letters, "ends with it": letters + said}[kind]


@given(before=st.lists(OTHER_CLAUSE, max_size=3), after=st.lists(OTHER_CLAUSE, max_size=3),
       inner=st.lists(st.text(alphabet="xyz ", max_size=6), min_size=1, max_size=3),
       tail=st.sampled_from(["", " (ordering verdict: reproduced)"]))
def test_cutting_a_clause_that_holds_semicolons_leaves_exactly_the_other_clauses(before, after, inner, tail):
    from oscc_core.chapters.claims_ledger.tables import without_clause
    said = "“" + "; ".join(inner) + "”"
    others = [_other(said, spec) for spec in before], [_other(said, spec) for spec in after]
    text = "; ".join([*others[0], said + tail, *others[1]])
    assert without_clause(text, said) == ("; ".join([*others[0], *others[1]]) or "—")


def test_the_build_fails_on_an_entry_with_no_verdict(tmp_path):
    cid = entry_of("contract", "result")
    write_results(tmp_path, "01_contract", {"rows": [row(cid, None)]})
    lines, _ = build(tmp_path)
    with pytest.raises(ledger.LedgerError, match="no verdict"):
        ledger.check_ledger(lines, RAW_IDS)


def test_the_build_fails_on_a_missing_reason_a_doubled_or_a_missing_entry(tmp_path):
    cid = entry_of("contract", "result")
    write_results(tmp_path, "01_contract", {"rows": [row(cid, "not compared")]})
    lines, _ = build(tmp_path)
    with pytest.raises(ledger.LedgerError, match="without a reason"):
        ledger.check_ledger(lines, RAW_IDS)
    (tmp_path / "empty").mkdir()
    good, _ = build(tmp_path / "empty")  # no results file: every entry "chapter not built"
    with pytest.raises(ledger.LedgerError, match="more than once"):
        ledger.check_ledger(good + good[:1], RAW_IDS)
    with pytest.raises(ledger.LedgerError, match="missing"):
        ledger.check_ledger(good[1:], RAW_IDS)


def test_a_partly_row_that_records_no_relation_fails(tmp_path):
    cid = entry_of("contract", "result")
    write_results(tmp_path, "01_contract", {"rows": [row(cid, "partly", relation=None)]})
    with pytest.raises(ledger.LedgerError, match="declare no relation"):
        ledger.check_ledger(build(tmp_path)[0], RAW_IDS)


def test_the_notebook_fails_on_an_entry_with_no_verdict(tmp_path):
    cid = entry_of("contract", "result")
    write_results(tmp_path / "in", "01_contract", {"rows": [row(cid, None)]})
    with pytest.raises(pm.PapermillExecutionError) as info:
        run_notebook("07_claims_ledger", tmp_path, results_dir=str(tmp_path / "in"))
    assert info.value.ename == "LedgerError"
    assert not (tmp_path / "results" / "07_claims_ledger.json").exists()


# --- parameters and the disagreements file ----------------------------------------------------

def test_parameters_refuse_a_results_dir_without_results(tmp_path):
    with pytest.raises(ParameterError, match="results_dir"):
        parameters.validate({"results_dir": str(tmp_path), "output_dir": str(tmp_path)})
    with pytest.raises(ParameterError, match="output_dir"):
        parameters.validate({"results_dir": str(tmp_path)})


def test_every_disagreement_names_known_claims():
    items = disagreements.load_disagreements(load_claims())
    assert len(items) >= 13
    assert all(set(RAW_IDS) >= set(d["claims"]) for d in items)


def test_a_disagreement_with_an_unknown_claim_id_is_refused(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump([{"title": "t", "claims": ["no.such.id"], "values": "v", "note": "n"}]))
    with pytest.raises(ValueError, match="no.such.id"):
        disagreements.load_disagreements(load_claims(), path)


@pytest.mark.parametrize("relation, holds", [(None, None), ("full < independent", False),
                                             ("full < independent", None)])
def test_a_partly_entry_needs_a_declared_relation_that_holds(relation, holds):
    from oscc_core.chapters.claims_ledger.ledger import LedgerError, check_ledger

    line = {"id": "x", "kind": "result", "verdict": "partly", "relation": relation, "relation holds": holds,
            "reason": None, "reading": "r", "cause": "unexplained", "cause evidence": "the paper's 2 against our 1"}
    with pytest.raises(LedgerError, match="partly entries declare no relation that holds"):
        check_ledger([line], ["x"])
    check_ledger([{**line, "relation": "full < independent", "relation holds": True}], ["x"])


# --- not comparable, printings and the counts -----------------------------------------------

NOT_COMPARABLE_IDS = ["coupling_factors.ind.calls", "coupling_factors.root_only.calls",
                      "coupling_factors.stream_only.calls", "coupling_factors.cp_grpo.calls",
                      "one_seed_connectivity.transitions", "cost_frontier.independent.transitions"]


@pytest.mark.parametrize("verdict", ["reproduced", "partly", "not reproduced", "inconclusive",
                                     "impossible under the rules"])
def test_the_check_refuses_any_verdict_but_not_compared_on_an_entry_whose_row_declares_it_not_comparable(
        tmp_path, verdict):
    cid = NOT_COMPARABLE_IDS[0]
    declared = row(cid, verdict, reason="another design", reading="r", **{"not comparable": "another design"})
    write_results(tmp_path, "02_covariance", {"coupling_calls": [declared]})
    with pytest.raises(ledger.LedgerError, match="not comparable"):
        ledger.check_ledger(build(tmp_path)[0], RAW_IDS)


def test_a_not_comparable_row_gives_its_entry_not_compared_with_the_reason_and_the_check_passes(tmp_path):
    from oscc_core.reporting.rows import Row

    rows = [Row.compare("calls", cid, 123.0).incomparable("another design: six roots against one").as_dict()
            for cid in NOT_COMPARABLE_IDS[:4]]
    write_results(tmp_path, "02_covariance", {"coupling_calls": rows})
    lines = by_id(build(tmp_path)[0])
    ledger.check_ledger(list(lines.values()), RAW_IDS)
    for cid in NOT_COMPARABLE_IDS[:4]:
        assert (lines[cid]["verdict"], lines[cid]["reason"], lines[cid]["ours"]) == (
            "not compared", "another design: six roots against one", 123.0)
        assert lines[cid]["not comparable"] == lines[cid]["reason"]


def test_the_check_refuses_a_printing_of_an_entry_with_another_verdict_or_of_no_entry():
    base = {"kind": "interval", "paper": 1.0, "basis": "row", "via": None, "reason": "r", "relation": None}
    prose = {**base, "id": "a", "verdict": "reproduced", "printing of": None}
    end = {**base, "id": "b", "verdict": "reproduced", "printing of": "a"}
    ledger.check_ledger([prose, end], ["a", "b"])
    with pytest.raises(ledger.LedgerError, match="printing"):
        ledger.check_ledger([prose, {**end, "verdict": "partly", "relation": "x", "relation holds": True}], ["a", "b"])
    with pytest.raises(ledger.LedgerError, match="printing"):
        ledger.check_ledger([prose, {**end, "printing of": "nowhere"}], ["a", "b"])


def test_the_counts_give_measurements_by_verdict_apart_from_checks_and_count_a_printed_interval_once(tmp_path):
    from oscc_core.reporting.rows import Row

    prose = Row.interval_pair("check: mean difference", "text_precision.check.bootstrap_interval", -0.0334, 0.0243)
    ends = [prose.printed_as(f"marginal_equivalence.check.{end}", end, f"the {end} of the prose's interval")
            for end in ("ci_low", "ci_high")]
    result, check = entry_of("covariance", "result"), entry_of("covariance", "check")
    write_results(tmp_path, "02_covariance", {"paper_intervals": [r.as_dict() for r in [prose, *ends]],
                                              "rows": [row(result, "not reproduced"), row(check, "reproduced")]})
    lines = build(tmp_path)[0]
    ledger.check_ledger(lines, RAW_IDS)
    counted = ledger.counts(lines)
    # an interval of a difference that is 0 by marginal preservation: true by construction, not compared in size;
    # three entries, one comparison, counted once (in the class of values true by construction)
    from oscc_core.reporting import tally

    assert tally.printings_of(lines)["text_precision.check.bootstrap_interval"] == [
        "text_precision.check.bootstrap_interval", "marginal_equivalence.check.ci_low",
        "marginal_equivalence.check.ci_high"]
    assert all(n == 0 for v, n in counted["intervals"].items() if v != "not compared")    # the rest has no row
    assert counted["checks"]["reproduced"] == 1 and counted["measurements"]["not reproduced"] == 1
    assert counted["tally by chapter"]["02_covariance"]["printings"] >= 2


# --- one comparability rule, one verdict per quantity ------------------------------------------------------------

def test_the_build_refuses_a_size_verdict_for_a_family_declared_not_comparable_and_names_the_line(tmp_path):
    # a results file written as an old chapter wrote it: a noise trace with a size verdict
    trace = "text_action_support.3_actions.oscc_select.gradient_noise_trace"
    write_results(tmp_path, "04_selector", {"rows": [row(trace, "not reproduced")]})
    lines, _ = build(tmp_path)
    with pytest.raises(ledger.LedgerError, match="lines give a size verdict to a quantity declared not comparable "
                                                 r"\(first: line [a-z_.0-9]*gradient_noise_trace: size verdict "
                                                 "'not reproduced' for the family 'gradient-noise traces'"):
        ledger.check_ledger(lines, RAW_IDS)


def test_the_build_refuses_two_verdicts_for_the_printings_of_one_quantity(tmp_path):
    write_results(tmp_path, "02_covariance", {"rows": [
        row("main.independent.variance", "partly", relation="a < b", **{"relation holds": True}),
        row("ablations.ind.variance", "not reproduced")]})
    lines, _ = build(tmp_path)
    with pytest.raises(ledger.LedgerError, match="several verdicts .*main.independent.variance: not reproduced, partly"):
        ledger.check_ledger(lines, RAW_IDS)


def test_a_line_that_depends_on_the_reading_lists_readings_whose_verdicts_differ():
    line = {"id": "main.independent.variance", "kind": "result", "verdict": "depends on the reading",
            "reason": "r", "readings": [{"reading": "a", "verdict": "partly"}, {"reading": "b", "verdict": "partly"}]}
    with pytest.raises(ledger.LedgerError, match="depend on the reading without readings"):
        ledger.check_ledger([line], ["main.independent.variance"], {"main.independent.variance": {"value": 1}})


def test_every_committed_result_line_says_why_beyond_the_name_of_its_size_test():
    lines, _ = build(REPO_ROOT / "results")
    results = [r for r in lines if r["kind"] != "setup"]
    said = [r for r in results if r.get("why") and not r["why"].startswith(("containment", "within 5%"))
            and any(ch.isdigit() for ch in r["why"]) or r.get("reading") or r["verdict"] == "not compared"]
    assert len(said) >= 0.9 * len(results)


def test_every_chapters_box_gives_the_counts_the_ledger_gives_its_section():
    from oscc_core.reporting import tally

    lines, found = build(REPO_ROOT / "results")
    for section, stem in collect.SECTION_CHAPTERS.items():
        box = found[stem]["findings"]["counts"]
        assert box == tally.tally_text(tally.tally([r for r in lines if r["section"] == section])), stem


def test_the_landing_counts_say_how_many_verdicts_depend_on_the_reading():
    lines, _ = build(REPO_ROOT / "results")
    counted = ledger.counts(lines)
    dependent = sum(bool(r.get("reading dependent")) for r in lines if r["kind"] != "setup"
                    and not (r.get("printing of") or r.get("via")))
    assert counted["reading dependent"] == dependent > 0
    assert f"{dependent:,} verdicts of the whole ledger depend on the reading" in \
        __import__("oscc_core.chapters.claims_ledger.key_claims", fromlist=["x"]).counts_sentence(counted)
