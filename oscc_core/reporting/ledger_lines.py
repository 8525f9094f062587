"""One ledger line per entry of the claims file, from the chapters' primary rows.

The claims-ledger chapter builds its ledger with `build_lines` over every
chapter's rows; each chapter builds the lines of its own section with the
same function (`section_lines`), so that its result box and the landing page
count the same lines (`oscc_core.reporting.tally`).

Rules, applied in this order to each entry (the `basis` field names the rule):

1. ``row``: a results file holds the entry's *primary* row (a record whose
   "claim id" names it).  It gives ours, interval, exact, verdict or status,
   relation, relative deviation, reason, readings, the test that decided the
   size, and the row's declarations (not comparable, true by construction, a
   printing of another entry's comparison); the entry keeps the paper's value
   as the claims file prints it.  Sensitivity and detail rows name their claim
   under "sensitivity of" and are never read here; two primary rows for one
   claim id stop the build.
2. ``chapter not built``: the entry's section has no results file yet.  Not
   compared, reason "chapter not built yet".
3. ``same value``: the claims file says the entry is the same quantity as
   others (`same_as`), one of them has a primary row and the paper prints the
   same value for both.  The entry takes that row (`via` names its claim id).
4. ``setting``: an entry of kind ``setup`` (a sample size, a grid, a seed)
   with no row: status *differs*, since no chapter runs it.
5. ``no row``: any other entry of a built chapter with no row: not compared,
   reason "no row in chapter <stem> yet".

Then every result, check or interval line (not a setting) names the reading it
was measured under: a line whose row names a reading of the paper's words, or
whose verdict carries a reason, keeps its own; any other line takes the reading
`reporting.open_choices` declares for the entry whose row it takes (its own, or
the ``via`` entry of a same-value line), and its why ends with it
(`with_reading`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from oscc_core.reporting import causes, claims, open_choices
from oscc_core.reporting.printings import groups as same_value_groups
from oscc_core.reporting.why import why_text

#: The chapter (notebook stem) of each section of the claims file.
SECTION_CHAPTERS = {"contract": "01_contract", "covariance": "02_covariance", "gradient_noise": "03_gradient_noise",
                    "selector": "04_selector", "solver": "05_solver", "transfer": "06_transfer"}
#: The record keys of a primary row's claim, of a row's declarations, and of the test that decided its size.
CLAIM_KEY, NOT_COMPARABLE_KEY, BY_CONSTRUCTION_KEY, PRINTING_KEY, TEST_KEY = (
    "claim id", "not comparable", "by construction", "printing of", "test")
#: The record keys of a row's reading dependence, its relation's own verdict and its relation by construction.
READING_DEPENDENT_KEY, RELATION_VERDICT_KEY, RELATION_CONSTRUCTED_KEY = (
    "reading dependent", "relation verdict", "relation by construction")
#: Keys a line copies from its row as they are.
COPIED_KEYS = (TEST_KEY, NOT_COMPARABLE_KEY, BY_CONSTRUCTION_KEY, PRINTING_KEY, READING_DEPENDENT_KEY,
               RELATION_VERDICT_KEY, RELATION_CONSTRUCTED_KEY, causes.CAUSE_KEY, causes.EVIDENCE_KEY)
#: The kind of entry that gets a status instead of a verdict.
SETTING_KIND = "setup"
BASES = ("row", "same value", "chapter not built", "setting", "no row")
NOT_BUILT_REASON = "chapter not built yet"
SETTING_REASON = "not run: no chapter of this book runs the experiment this setting belongs to"


class LedgerError(ValueError):
    """The ledger is incomplete: an entry is missing, doubled, or lacks a verdict or a reason."""


@dataclass(frozen=True)
class RowRecord:
    """One comparison row found in a results file: the chapter, where in the file, and the record itself."""

    chapter: str      # notebook stem, e.g. "02_covariance"
    where: str        # JSON path inside the file, e.g. "fixed_root/rows/6"
    record: dict


def _from_row(base: dict, row: RowRecord, basis: str, via: str | None, via_paper=None) -> dict:
    first = row.record
    line = {**base, "ours": first.get("ours"), "interval": first.get("95% interval"), "exact": first.get("exact"),
            "verdict": first.get("verdict"), "status": first.get("status"),
            "relation": first.get("relation"), "relative deviation": first.get("relative deviation"),
            "reason": first.get("reason"), "reading": first.get("reading"), "readings": first.get("readings"),
            "chapter": row.chapter, "where": row.where, "basis": basis, "via": via, "via paper": via_paper,
            "relation holds": first.get("relation holds"), "relation resolved": first.get("relation resolved"),
            **{key: first.get(key) for key in COPIED_KEYS}}
    found = causes.attribute(line)       # the row's cause; a results file written before causes: the registry's
    line[causes.CAUSE_KEY], line[causes.EVIDENCE_KEY] = found if found is not None else (None, None)
    why = why_text(line)
    line["why"] = why if via is None else f"the same value as {via}, whose row it takes; {why}"
    return line


def _without_row(base: dict, reason: str, basis: str) -> dict:
    setting = base["kind"] == SETTING_KIND
    return {**base, "ours": None, "interval": None, "exact": None,
            "verdict": None if setting else claims.NOT_COMPARED, "status": claims.DIFFERS if setting else None,
            "relation": None, "relative deviation": None, "reason": reason, "reading": None, "readings": None,
            "chapter": None, "where": None, "basis": basis, "via": None, "via paper": None, "relation holds": None,
            "relation resolved": None, **{key: None for key in COPIED_KEYS}, "why": reason}


def with_reading(line: dict) -> dict:
    """`line` naming the reading it was measured under: a result, check or interval line with neither a reason nor
    a reading of its own takes the reading `open_choices.reading_of` declares for the entry whose row it takes (the
    ``via`` entry of a same-value line, else its own), and its why ends with "reading: <the reading>".  Any other
    line, or one whose entry no declaration holds (the claims ledger's check then refuses it), is returned as it
    is."""
    if line["kind"] == SETTING_KIND or (line.get("reason") or "").strip() or (line.get("reading") or "").strip():
        return line
    reading = open_choices.reading_of(line.get("via") or line["id"])
    if reading is None:
        return line
    why = line.get("why")
    said = f"reading: {reading}"
    return {**line, "reading": reading, "why": said if why in (None, "", "—") else f"{why}; {said}"}


def doubled_primaries(rows: dict[str, list[RowRecord]]) -> dict[str, list[str]]:
    """Claim id -> where its primary rows are, for every id that more than one primary row names."""
    return {cid: [f"{r.chapter}:{r.where}" for r in found] for cid, found in rows.items() if len(found) > 1}


def build_lines(entries: dict[str, dict], rows: dict[str, list[RowRecord]], built: set[str]) -> list[dict]:
    """One ledger line per entry of `entries` (claims-file order), by the rules of the module docstring, each
    result, check or interval line naming the reading it was measured under (`with_reading`).

    `rows` maps claim ids to their primary rows, `built` holds the stems of the chapters whose results exist.
    Raises `LedgerError` when a claim id has two primary rows.
    """
    doubled = doubled_primaries(rows)
    if doubled:
        first = next(iter(doubled))
        raise LedgerError(f"{len(doubled)} claim ids have more than one primary row (first: {first} at "
                          f"{', '.join(doubled[first])}); mark all but one as sensitivity rows.")
    groups = same_value_groups(entries)
    out = []
    for cid, e in entries.items():
        base = {"id": cid, "section": e["section"], "kind": e["kind"], "source": e.get("source"),
                "quantity": f"{e.get('row')}: {e.get('column')}", "paper": e["value"]}
        stem = SECTION_CHAPTERS.get(e["section"])
        out.append(with_reading(_line(base, cid, e, rows, built, groups, entries, stem)))
    return out


def _line(base: dict, cid: str, e: dict, rows: dict, built: set[str], groups: dict, entries: dict,
          stem: str | None) -> dict:
    """The line of entry `cid` by the first rule of the module docstring that applies."""
    if cid in rows:
        return _from_row(base, rows[cid][0], "row", None)
    if stem not in built:
        return _without_row(base, NOT_BUILT_REASON, "chapter not built")
    mates = [m for m in groups[cid] if m != cid and m in rows and entries[m]["value"] == e["value"]]
    if mates:
        return _from_row(base, rows[mates[0]][0], "same value", mates[0], entries[mates[0]]["value"])
    if e["kind"] == SETTING_KIND:
        return _without_row(base, SETTING_REASON, "setting")
    return _without_row(base, f"no row in chapter {stem} yet", "no row")


def section_lines(stem: str, rows: Iterable[Mapping], entries: dict[str, dict] | None = None) -> list[dict]:
    """The ledger lines of the section that chapter `stem` measures, from that chapter's rows alone (the rows
    it writes into its results file: `Row`s or their records, primary or not).  `entries` defaults to the
    claims file.  The same lines the claims ledger builds for the section, when the chapter's results file
    holds these rows."""
    if stem not in SECTION_CHAPTERS.values():
        raise ValueError(f"stem must be one of the chapters {sorted(SECTION_CHAPTERS.values())}, got {stem!r}.")
    entries = claims.load_claims() if entries is None else entries
    mine = {cid: e for cid, e in entries.items() if SECTION_CHAPTERS.get(e["section"]) == stem}
    found: dict[str, list[RowRecord]] = {}
    for i, row in enumerate(rows):
        record = row.as_dict() if hasattr(row, "as_dict") else dict(row)
        cid = record.get(CLAIM_KEY)
        if cid in mine:
            found.setdefault(cid, []).append(RowRecord(stem, str(i), record))
    return build_lines(mine, found, {stem})
