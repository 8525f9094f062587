"""Why a comparison got its verdict, in words built from its own numbers.

`why_text(record)` reads one comparison (a `reporting.rows.Row` record, or a claims-ledger line) and writes what
decided it: where the paper's value lies against ours (inside or outside our interval, how far from our value),
the exact value where there is one, whether the relation the paper states holds on our numbers and whether our
intervals resolve it, the reading of the paper's words the verdict rests on and the verdict under each other
reading, the declarations a row makes (not comparable in size, true by construction, a printing of another
entry) and, for a gap, its cause with the evidence (`reporting.causes`).  Never only the name of the size test,
a pointer to another entry, or a sentence its section shares: a reader sees the line's own numbers that decided.
One template (`why_text`) writes every line, so its defects are fixed once: no relative distance to a zero of
ours, no "depends on the reading" on a line whose verdict does not, a relation said to be decided on the exact
values only where the line has them.
"""
from __future__ import annotations

from collections.abc import Mapping

from oscc_core.reporting import causes, claims
from oscc_core.reporting.numbers import interval_of, is_finite_number, value_text

#: Size-test names (as `claims` and `reporting.rows` record them), by the word that starts them.
CONTAINMENT_WORD, TOLERANCE_WORD, MIDPOINT_WORD = "containment", "within 5%", "midpoint"
BOUND_WORD, EQUALITY_WORD, FINITE_WORD, ENDS_WORD = "bound", "equality", "every one", "each end"

__all__ = ["beside_sentence", "cause_sentence", "relation_sentence", "size_sentence", "why_text"]


_number, _interval = is_finite_number, interval_of


def _text(x) -> str:
    return "—" if x is None else value_text(x)


def size_sentence(record: Mapping) -> str | None:
    """Where the paper's value lies against ours, by the size test the record names; None when the record has no
    numbers to compare (a midpoint test writes its own reason)."""
    test = (record.get("test") or "").lower()
    paper, ours, iv = record.get("paper"), record.get("ours"), _interval(record)
    if test.startswith(MIDPOINT_WORD):
        return None
    if test.startswith(CONTAINMENT_WORD) and iv is not None and _number(paper):
        inside = iv[0] <= float(paper) <= iv[1]
        what = "prediction interval of one more seed" if "prediction" in test else (
            "interval of at least one of our estimates" if "at least one" in test else "interval")
        return (f"the paper's {_text(paper)} lies {'inside' if inside else 'outside'} our 95% {what} "
                f"{_text(iv)} (ours {_text(ours)})")
    if test.startswith(TOLERANCE_WORD) and _number(paper) and _number(ours):
        p, o = float(paper), float(ours)
        close = claims.size_agrees(p, o)           # the verdict rule's own size test: one answer at exactly 5%
        if o == 0 and p != 0:                     # 5% of a zero is zero: no relative distance to print
            return (f"the paper's {_text(paper)} against our 0: 5% of ours is 0, so the size test allows only 0 and "
                    "the paper's value is beyond it")
        gap = "equal" if p == o else f"{abs(p - o) / abs(o):.0%} of ours apart"
        return (f"the paper's {_text(paper)} and our {_text(ours)} are {gap}, "
                f"{'within' if close else 'beyond'} the 5% of ours the size test allows")
    if test.startswith(EQUALITY_WORD):
        same = str(paper) == str(ours) or (_number(paper) and _number(ours) and float(paper) == float(ours))
        return f"the paper counts {_text(paper)}, we count {_text(ours)}: {'equal' if same else 'different'}"
    if test.startswith(BOUND_WORD):
        return f"ours {_text(ours)} against the paper's bound {_text(paper)}"
    if test.startswith(FINITE_WORD):
        return f"our finite values: {_text(ours)}, the paper's: {_text(paper)}"
    if test.startswith(ENDS_WORD):
        return f"the paper's ends {_text(paper)} against ours {_text(ours)}, each within 5% or not"
    if paper is not None and ours not in (None, "—"):
        return f"the paper's {_text(paper)} beside our {_text(ours)}"
    return None


def relation_sentence(record: Mapping) -> str | None:
    """Whether the relation the record declares holds on our numbers, and what decided it: our 95% intervals
    (resolved, or not), the exact values by enumeration, or our values where no interval tests it."""
    text = record.get("relation")
    if not text:
        return None
    if record.get("relation by construction"):
        return f"“{text}” holds by construction, so it decides nothing"
    if not record.get("relation holds"):
        return f"the relation the paper states, “{text}”, fails on our numbers"
    if record.get("relation resolved") is False:
        return f"“{text}” holds on our estimates, but our 95% intervals also hold values that contradict it"
    decided = ("resolved at 95%" if record.get("relation resolved") else
               "decided on the exact values" if _number(record.get("exact")) else
               "decided on our values, which carry no interval here")
    return f"the relation the paper states, “{text}”, holds ({decided})"


def _readings_sentence(record: Mapping) -> str | None:
    """Each reading's verdict; led by "the verdict depends on the reading" only on a line that says so (its verdict
    is "depends on the reading" or flagged as the paper's fixed reading's)."""
    readings = record.get("readings") or ()
    if not readings:
        return None
    listed = "; ".join(f"{r['reading']}: {r['verdict']}" for r in readings)
    verdicts = {r["verdict"] for r in readings}
    lead = ("the verdict depends on the reading" if record.get("reading dependent") or verdicts_differ(record)
            else "the verdicts by reading" if len(verdicts) > 1
            else "the same verdict under every reading the book measures")
    return f"{lead} ({listed})"


def verdicts_differ(record: Mapping) -> bool:
    """Whether the record's own verdict is "depends on the reading"."""
    return record.get("verdict") == claims.DEPENDS


def beside_sentence(record: Mapping) -> str | None:
    """The line's own numbers where no size test decides (a size not compared, a paper value the rules exclude):
    "the paper's P beside our O [low, high]"; None without both."""
    paper, ours, iv = record.get("paper"), record.get("ours"), _interval(record)
    if paper is None or ours in (None, "—"):
        return None
    return f"the paper's {_text(paper)} beside our {_text(ours)}" + (f" {_text(iv)}" if iv else "")


def cause_sentence(record: Mapping) -> str | None:
    """"cause, <name>: <evidence>" for a gap that names its cause (`reporting.causes`); the evidence without the
    numbers it starts from when the why has just given them."""
    name, evidence = record.get(causes.CAUSE_KEY), record.get(causes.EVIDENCE_KEY)
    if not (name and evidence):
        return None
    lead = causes.own_numbers(record) + ": "
    return f"cause, {name}: {evidence.removeprefix(lead)}"


def why_text(record: Mapping) -> str:
    """Why `record` got its verdict (or status), from one template: a printing's pointer, the line's own decisive
    numbers (where the paper's value lies against ours, or the two beside each other where no size test decides),
    the exact value, the relation and what decided it, the reason, each reading's verdict, the cause of a gap with
    its evidence, and the reading (module docstring)."""
    verdict, status, reason = record.get("verdict"), record.get("status"), record.get("reason")
    parts: list[str] = []
    if record.get("printing of"):
        parts.append(f"a printing of {record['printing of']}, whose verdict it shares")
    if status is not None:
        parts.append(reason or ("our run uses the paper's setting" if status == claims.ADOPTED
                                else "our run differs from the paper's setting"))
        return _once("; ".join(parts))
    if record.get("by construction") and not record.get("not comparable"):   # a family's reason says it then
        parts.append(f"true by construction: {record['by construction']}")
    sized = verdict not in (claims.NOT_COMPARED, claims.IMPOSSIBLE)
    if not sized and reason:
        parts.append(reason)
    numbers = size_sentence(record) if sized else beside_sentence(record)
    if sized and numbers is None and reason and verdict != claims.DEPENDS:
        numbers = reason                       # a midpoint test writes its numbers in the row's reason
    if numbers:
        parts.append(numbers)
    if _number(record.get("exact")):
        parts.append(f"exact {_text(record['exact'])}")
    relation = relation_sentence(record)
    if relation and verdict != claims.IMPOSSIBLE:
        parts.append(relation + (f" (ordering verdict: {record['relation verdict']})"
                                 if verdict == claims.NOT_COMPARED and record.get("relation verdict") else ""))
    listed = "under the reading '" in (reason or "")        # a reason that already gives each reading's verdict
    if sized and reason and verdict != claims.DEPENDS:
        parts.append(reason)
    readings = None if listed and verdict != claims.DEPENDS else _readings_sentence(record)
    if readings:
        parts.append(readings)
    cause = cause_sentence(record)
    if cause:
        parts.append(cause)
    if record.get("reading"):
        parts.append(f"reading: {record['reading']}")
    return _once("; ".join(parts)) or (reason or "—")


def _once(text: str) -> str:
    """`text` with each "; "-separated clause kept once (a reason may repeat what a declaration already says: "a
    printing of X")."""
    return "; ".join(dict.fromkeys(c for c in text.split("; ") if c))
