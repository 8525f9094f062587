"""How the book counts its verdicts: one function for the landing page, the ledger and every chapter's box.

A count means what a reader takes it to mean:

* the paper's *measurements* (claims-file kind ``result``) are counted apart
  from its *checks* (kind ``check``: pass/fail audits, "0/25549 drifts") and
  from the *intervals* it prints (kind ``interval``); *settings* (kind
  ``setup``) have a status and are counted apart again;
* each measured value is counted once, however many times the paper prints
  it: entries that take another entry's row (basis "same value", `via`) and
  rows that declare themselves a printing of another entry's comparison
  ("printing of") are *printings*, listed under the value they repeat;
* a value true by construction (a row that declares "by construction": a
  matched-budget cost ratio of 1, a count fixed by an adopted setting) is
  counted apart from the measurements, by verdict;
* verdicts that depend on the reading of the paper's words (a line that
  declares "reading dependent") are counted, whatever their verdict;
* a value whose size is not compared (`reporting.comparability`) but whose
  row states the relation the paper claims for it is counted again under
  *orderings*, by the verdict of that relation.
* each gap (a value not reproduced, partly, inconclusive or depending on the
  reading) is counted again under its *cause* (`reporting.causes`), each value
  once: the tally of gaps by cause that the landing page, the ledger and every
  chapter's box print.

`tally(lines)` takes ledger lines (`ledger_lines.build_lines`, or
`ledger_lines.section_lines` for one chapter's rows) and returns the counts;
`chapter_tally` counts one chapter's rows; `tally_text` writes the sentence
the landing page and the chapter boxes print (`chapter_counts_text`, from a
chapter's rows).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from oscc_core.reporting import causes, claims, comparability
from oscc_core.reporting.ledger_lines import (BY_CONSTRUCTION_KEY, PRINTING_KEY, READING_DEPENDENT_KEY,
                                              RELATION_VERDICT_KEY, SETTING_KIND, section_lines)

#: Claims-file kinds, and the class each is counted in.
MEASUREMENT, CHECK, INTERVAL = "result", "check", "interval"
CLASSES = {MEASUREMENT: "measurements", CHECK: "checks", INTERVAL: "intervals"}
#: The class of measured values that hold by construction.
BY_CONSTRUCTION = "by construction"
VERDICTS, STATUSES = claims.VERDICTS, claims.STATUSES

__all__ = ["BY_CONSTRUCTION", "CLASSES", "causes_text", "chapter_counts_text", "chapter_tally", "measured_key",
           "printings_of", "tally", "tally_frame", "tally_text", "values_by_verdict"]

#: How a table names each class of values, in the order the box's sentence gives them.
CLASS_LABELS = {"measurements": "measured values", "checks": "checks", "intervals": "the paper's intervals",
                BY_CONSTRUCTION: "true by construction"}


def measured_key(line: Mapping) -> str:
    """The claim id of the comparison a line shows: the entry whose comparison its row repeats ("printing of"),
    else the entry whose row it takes (`via`), else its own id."""
    return line.get(PRINTING_KEY) or line.get("via") or line["id"]


def _class(line: Mapping) -> str:
    """The class a line is counted in: true by construction when its row declares so or its comparability family
    is of that basis (a matched-budget wall time, an estimate of a zero difference), else its kind's class."""
    family = comparability.family_of(measured_key(line))
    if line.get(BY_CONSTRUCTION_KEY) or (family is not None and family.basis == comparability.BY_CONSTRUCTION):
        return BY_CONSTRUCTION
    kind = line["kind"]
    if kind not in CLASSES:
        raise ValueError(f"line {line['id']!r}: kind must be one of {sorted(CLASSES) + [SETTING_KIND]}, "
                         f"got {kind!r}.")
    return CLASSES[kind]


def printings_of(lines: Iterable[Mapping]) -> dict[str, list[str]]:
    """Measured value (the claim id of its comparison) -> the ids of every entry that prints it, the value's own
    entry first when present; settings are left out."""
    out: dict[str, list[str]] = {}
    for line in lines:
        if line["kind"] != SETTING_KIND:
            out.setdefault(measured_key(line), []).append(line["id"])
    for key, ids in out.items():
        if key in ids:
            ids.insert(0, ids.pop(ids.index(key)))
    return out


def tally(lines: Iterable[Mapping]) -> dict:
    """The counts of `lines` (ledger lines): measurements, checks, intervals and values true by construction,
    each by verdict and each measured value once; printings (entries that repeat a value counted once), and
    settings by status.

    A measured value takes the verdict and class of its own entry's line when `lines` hold it, else of its first
    printing (the lines of one printing share its row, so its verdict).
    """
    lines = list(lines)
    out = {name: {v: 0 for v in VERDICTS} for name in (*CLASSES.values(), BY_CONSTRUCTION)}
    settings = {s: 0 for s in STATUSES}
    first: dict[str, Mapping] = {}
    for line in lines:
        if line["kind"] == SETTING_KIND:
            settings[line["status"]] += 1
            continue
        key = measured_key(line)
        if key not in first or line["id"] == key:
            first[key] = line
    orderings = {v: 0 for v in claims.COMPARED}
    by_cause = {c.name: 0 for c in causes.CAUSES}
    for line in first.values():
        verdict = line["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"line {line['id']!r}: verdict must be one of {list(VERDICTS)}, got {verdict!r}.")
        out[_class(line)][verdict] += 1
        if verdict == claims.NOT_COMPARED and line.get(RELATION_VERDICT_KEY) in orderings:
            orderings[line[RELATION_VERDICT_KEY]] += 1
        if causes.is_gap(verdict) and line.get(causes.CAUSE_KEY) in by_cause:
            by_cause[line[causes.CAUSE_KEY]] += 1
    results = sum(line["kind"] != SETTING_KIND for line in lines)
    dependent = sum(bool(line.get(READING_DEPENDENT_KEY)) for line in first.values())
    return {**out, "values": len(first), "printings": results - len(first), "results": results,
            "settings": settings, "reading dependent": dependent, "orderings": orderings, "causes": by_cause}


def chapter_tally(stem: str, rows: Iterable[Mapping]) -> dict:
    """The counts of chapter `stem`'s section from the chapter's own rows (every row it writes), by the
    ledger's rules (`ledger_lines.section_lines`) and `tally`: what its result box prints, and what the
    landing page prints for it once the ledger is built."""
    return tally(section_lines(stem, rows))


def chapter_counts_text(stem: str, rows: Iterable[Mapping]) -> str:
    """The counts sentence of chapter `stem`'s result box, from its rows: `tally_text(chapter_tally(...))`."""
    return tally_text(chapter_tally(stem, rows))


def values_by_verdict(counted: Mapping) -> dict[str, int]:
    """Every value of a tally (measured values, checks, intervals and values true by construction together), each
    once, by verdict."""
    return {v: sum(counted[c][v] for c in CLASS_LABELS) for v in VERDICTS}


def tally_frame(counted: Mapping):
    """A chapter's closing verdict table, on the basis of its result box (`tally_text` of the same tally): one row
    per class of values that has any (measured values, checks, the paper's intervals, true by construction), one
    column per verdict that occurs, the row totals, and a total row; the verdicts that depend on the reading and
    the further printings are the frame's `attrs` and its caption sentence (`tally_text`)."""
    import pandas as pd

    rows = {label: counted[c] for c, label in CLASS_LABELS.items() if sum(counted[c].values())}
    used = [v for v in VERDICTS if any(r[v] for r in rows.values())]
    frame = pd.DataFrame([[r[v] for v in used] for r in rows.values()], index=list(rows), columns=used)
    frame.loc["all values"] = frame.sum()
    frame["total"] = frame.sum(axis=1)
    frame.index.name = "values, each counted once"
    frame.attrs.update({"reading dependent": counted.get("reading dependent", 0), "printings": counted["printings"]})
    return frame


#: How a count sentence names a verdict after a number ("2 depending on the reading", not "2 depends ...").
PHRASES = {claims.DEPENDS: "depending on the reading"}


def _phrase(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n:,} {PHRASES.get(v, v)}" for v, n in counts.items() if n) or "none"


def tally_text(counted: Mapping) -> str:
    """The sentence of counts the landing page and each chapter's box print, e.g. 'Measured values, each counted
    once: 12 (5 reproduced, 7 partly); checks: 4 (4 reproduced); the paper's intervals: 2 (2 not reproduced);
    true by construction: 1 (1 reproduced); 3 further printings of these values, not counted again.'  Settings
    are left out: a chapter's box and its landing bullets count results only."""
    parts = []
    for name, label in (("measurements", "Measured values, each counted once"), ("checks", "checks"),
                        ("intervals", "the paper's intervals"), (BY_CONSTRUCTION, "true by construction")):
        n = sum(counted[name].values())
        if n or name == "measurements":
            parts.append(f"{label}: {n:,}" + (f" ({_phrase(counted[name])})" if n else ""))
    text = "; ".join(parts)
    if counted.get("reading dependent"):
        n = counted["reading dependent"]
        text += f"; {n:,} verdict{'s' if n != 1 else ''} depend{'s' if n == 1 else ''} on the reading"
    orderings = counted.get("orderings") or {}
    if sum(orderings.values()):
        text += (f"; of the values not compared in size, {sum(orderings.values()):,} carry the ordering the paper "
                 f"states ({_phrase(orderings)})")
    if counted["printings"]:
        text += (f"; {counted['printings']:,} further printing{'s' if counted['printings'] != 1 else ''} of these "
                 "values, not counted again")
    return text + "." + causes_text(counted)


def causes_text(counted: Mapping) -> str:
    """' The gaps by cause: 12 unexplained, 3 an open parameter.' (most first; registry order between equals), or
    '' where the tally has no gap (a tally of no gap names no cause)."""
    named = sorted(((n, i, name) for i, (name, n) in enumerate((counted.get("causes") or {}).items()) if n),
                   key=lambda t: (-t[0], t[1]))
    if not named:
        return ""
    total = sum(n for n, _, _ in named)
    return (f" The {total:,} gap{'s' if total != 1 else ''} by cause: "
            + ", ".join(f"{n:,} {name}" for n, _, name in named) + ".")
