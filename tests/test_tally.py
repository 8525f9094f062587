"""The book's counting rule (`oscc_core.reporting.tally`): measured values once each, checks and the paper's
intervals apart, values true by construction apart, printings listed under the value they repeat; and the one
function that the landing page, the ledger and every chapter's result box count with.

Expected counts are computed here by a separate enumeration (distinct comparisons by a union of the links each
line names), never by the code under test.
"""
from __future__ import annotations

import importlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.claims_ledger import landing, ledger
from oscc_core.reporting import claims, tally
from oscc_core.reporting.ledger_lines import SECTION_CHAPTERS, RowRecord, section_lines
from oscc_core.reporting.rows import Row

KINDS = ("result", "check", "interval")
CLASS = {"result": "measurements", "check": "checks", "interval": "intervals"}


@st.composite
def ledgers(draw):
    """Lines of a ledger: some values with their own rows (each of a kind and a verdict, perhaps true by
    construction), each printed again by 0-3 entries (same value: `via`; or a row of its own that names it:
    "printing of"), and some settings."""
    n = draw(st.integers(1, 12))
    lines, expected = [], []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        verdict = draw(st.sampled_from(claims.VERDICTS))
        built = draw(st.booleans())
        own = {"id": f"v{i}", "kind": kind, "verdict": verdict, "status": None, "via": None,
               "printing of": None, "by construction": "fixed by a setting" if built else None, "section": "s"}
        lines.append(own)
        expected.append(("by construction" if built else CLASS[kind], verdict))
        for j in range(draw(st.integers(0, 3))):
            how = draw(st.sampled_from(("via", "printing of")))
            copy_kind = draw(st.sampled_from(KINDS))       # a printing may sit in a table of another kind
            lines.append({**own, "id": f"v{i}p{j}", "kind": copy_kind, "via": None, "printing of": None,
                          how: f"v{i}"})
    for k in range(draw(st.integers(0, 4))):
        lines.append({"id": f"s{k}", "kind": "setup", "verdict": None, "status": draw(st.sampled_from(claims.STATUSES)),
                      "via": None, "printing of": None, "by construction": None, "section": "s"})
    order = draw(st.permutations(range(len(lines))))
    return [lines[i] for i in order], expected


@given(ledgers())
def test_each_measured_value_is_counted_once_in_its_own_class_whatever_the_printings(case):
    lines, expected = case
    counted = tally.tally(lines)
    want = Counter(expected)
    for name in ("measurements", "checks", "intervals", "by construction"):
        assert counted[name] == {v: want[(name, v)] for v in claims.VERDICTS}
    results = [r for r in lines if r["kind"] != "setup"]
    assert counted["values"] == len(expected)
    assert counted["printings"] == len(results) - len(expected)
    assert counted["settings"] == {s: sum(r["status"] == s for r in lines if r["kind"] == "setup")
                                   for s in claims.STATUSES}


@given(ledgers())
def test_every_printing_is_listed_under_the_value_it_repeats(case):
    lines, expected = case
    listed = tally.printings_of(lines)
    assert sorted(listed) == sorted(f"v{i}" for i in range(len(expected)))
    for key, ids in listed.items():
        assert ids[0] == key and all(i == key or i.startswith(f"{key}p") for i in ids)


def test_a_printing_of_a_printing_counts_under_the_first_comparison():
    lines = [{"id": "a", "kind": "result", "verdict": "reproduced", "via": None, "printing of": None},
             {"id": "b", "kind": "result", "verdict": "reproduced", "via": None, "printing of": "a"},
             {"id": "c", "kind": "result", "verdict": "reproduced", "via": "b", "printing of": "a"}]
    counted = tally.tally(lines)
    assert counted["measurements"]["reproduced"] == 1 and counted["printings"] == 2


def test_an_unknown_kind_or_verdict_stops_the_count():
    with pytest.raises(ValueError, match="kind"):
        tally.tally([{"id": "a", "kind": "guess", "verdict": "reproduced"}])
    with pytest.raises(ValueError, match="verdict"):
        tally.tally([{"id": "a", "kind": "result", "verdict": "fine"}])


def test_the_counts_sentence_names_each_class_and_the_printings():
    lines = [{"id": "a", "kind": "result", "verdict": "reproduced"},
             {"id": "b", "kind": "result", "verdict": "partly", "via": "a"},
             {"id": "c", "kind": "check", "verdict": "reproduced"},
             {"id": "d", "kind": "result", "verdict": "reproduced", "by construction": "a matched budget"}]
    text = tally.tally_text(tally.tally(lines))
    assert text == ("Measured values, each counted once: 1 (1 reproduced); checks: 1 (1 reproduced); true by "
                    "construction: 1 (1 reproduced); 1 further printing of these values, not counted again.")


# --- one function for the landing page and every chapter's box --------------------------------------------

FINDINGS = ("contract", "covariance", "gradient_noise", "selector", "solver", "transfer")


@pytest.mark.parametrize("package", FINDINGS)
def test_every_chapter_box_counts_with_the_ledgers_function(package, monkeypatch):
    """Each chapter's findings module takes its counts from `reporting.tally` (the function the landing page's
    lines go through), not from a count of its own."""
    module = importlib.import_module(f"oscc_core.chapters.{package}.findings")
    counting = (tally.chapter_tally, tally.chapter_counts_text, tally.tally_text)
    used = [name for name, obj in vars(module).items() if any(obj is f for f in counting)]
    assert used, f"{module.__name__} does not count with reporting.tally"
    assert landing.tally is tally                         # the landing page's counts go through the same module


def _rows_of_a_section(stem: str) -> list[Row]:
    """A few rows of chapter `stem`'s section: one per kind found, a not-comparable one, a sensitivity row."""
    section = next(s for s, c in SECTION_CHAPTERS.items() if c == stem)
    entries = [(cid, e) for cid, e in claims.load_claims().items() if e["section"] == section
               and isinstance(e["value"], (int, float)) and not isinstance(e["value"], bool)]
    rows, kinds = [], set()
    for cid, e in entries:
        if e["kind"] in kinds or e["kind"] == "setup":
            continue
        kinds.add(e["kind"])
        rows.append(Row.compare(f"q {cid}", cid, float(e["value"]) * 1.01))
    rest = [cid for cid, e in entries if e["kind"] == "result" and cid not in {r.claim_id for r in rows}]
    rows.append(Row.compare("incomparable", rest[0], 1.0).incomparable("another design"))
    rows.append(Row.compare("detail", rest[1], 1.0).as_sensitivity())
    return rows


@pytest.mark.parametrize("stem", list(SECTION_CHAPTERS.values()))
def test_a_chapter_box_and_the_landing_page_print_the_same_counts_for_the_same_rows(stem):
    """The box counts the chapter's rows (`tally.chapter_counts_text`); the landing page counts the ledger's lines
    of the section (`landing.counts_line`).  Built from the same rows, the two sentences are the same."""
    rows = _rows_of_a_section(stem)
    section = next(s for s, c in SECTION_CHAPTERS.items() if c == stem)
    entries = {cid: e for cid, e in claims.load_claims().items() if e["section"] == section}
    records = {r.claim_id: [RowRecord(stem, "results file", r.as_dict())] for r in rows if r.primary}
    book = ledger.build_ledger(entries, records, {stem})
    assert landing.counts_line(book, section) == tally.chapter_counts_text(stem, rows)
    mine = [{k: v for k, v in line.items() if k != "where"} for line in section_lines(stem, rows)]
    assert mine == [{k: v for k, v in line.items() if k != "where"} for line in book]
