"""Why a comparison got its verdict, in words built from its own numbers.

`why_text(record)` reads one comparison (a `reporting.rows.Row` record, or a claims-ledger line) and writes what
decided it: where the paper's value lies against ours (inside or outside our interval, how far from our value),
the exact value where there is one, whether the relation the paper states holds on our numbers and whether our
intervals resolve it, the reading of the paper's words the verdict rests on and the verdict under each other
reading, and the declarations a row makes (not comparable in size, true by construction, a printing of another
entry).  Never only the name of the size test: a reader sees the numbers that decided.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

from oscc_core.reporting import claims
from oscc_core.reporting.numbers import interval_text, significant_text

#: Size-test names (as `claims` and `reporting.rows` record them), by the word that starts them.
CONTAINMENT_WORD, TOLERANCE_WORD, MIDPOINT_WORD = "containment", "within 5%", "midpoint"
BOUND_WORD, EQUALITY_WORD, FINITE_WORD, ENDS_WORD = "bound", "equality", "every one", "each end"

__all__ = ["relation_sentence", "size_sentence", "why_text"]


def _number(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))


def _text(x) -> str:
    if _number(x):
        return f"{x:,}" if isinstance(x, int) else significant_text(float(x))
    if isinstance(x, (list, tuple)) and len(x) == 2 and all(_number(v) for v in x):
        return interval_text(float(x[0]), float(x[1]))
    return "—" if x is None else str(x)


def _interval(record: Mapping):
    iv = record.get("95% interval", record.get("interval"))
    return tuple(iv) if isinstance(iv, (list, tuple)) and len(iv) == 2 and all(_number(v) for v in iv) else None


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
        gap = "equal" if p == o else (f"{abs(p - o) / abs(o):.0%} of ours apart" if o else "ours is 0")
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
    """Whether the relation the record declares holds on our numbers, and whether our intervals resolve it."""
    text = record.get("relation")
    if not text:
        return None
    if record.get("relation by construction"):
        return f"“{text}” holds by construction, so it decides nothing"
    if not record.get("relation holds"):
        return f"the relation the paper states, “{text}”, fails on our numbers"
    if record.get("relation resolved") is False:
        return f"“{text}” holds on our estimates, but our 95% intervals also hold values that contradict it"
    decided = ("decided on exact values or point estimates, no interval enters" if record.get("relation resolved") is None
               else "resolved at 95%")
    return f"the relation the paper states, “{text}”, holds ({decided})"


def _readings_sentence(record: Mapping) -> str | None:
    readings = record.get("readings") or ()
    if not readings:
        return None
    listed = "; ".join(f"{r['reading']}: {r['verdict']}" for r in readings)
    verdicts = {r["verdict"] for r in readings}
    lead = ("the verdict depends on the reading" if len(verdicts) > 1
            else f"the same verdict under every reading the book measures")
    return f"{lead} ({listed})"


def why_text(record: Mapping) -> str:
    """One or two sentences on why `record` got its verdict (or status), built from its numbers and declarations
    (module docstring)."""
    verdict = record.get("verdict")
    status = record.get("status")
    parts: list[str] = []
    if record.get("printing of"):
        parts.append(f"a printing of {record['printing of']}, whose verdict it shares")
    if status is not None:
        parts.append(record.get("reason") or ("our run uses the paper's setting" if status == claims.ADOPTED
                                              else "our run differs from the paper's setting"))
        return "; ".join(parts)
    if record.get("by construction") and not record.get("not comparable"):   # a family's reason says it then
        parts.append(f"true by construction: {record['by construction']}")
    reason = record.get("reason")
    if verdict in (claims.NOT_COMPARED, claims.IMPOSSIBLE):
        if reason and reason not in " ".join(parts):
            parts.append(reason)
        relation = relation_sentence(record)
        if relation and verdict == claims.NOT_COMPARED:
            parts.append(relation + (f" (ordering verdict: {record['relation verdict']})"
                                     if record.get("relation verdict") else ""))
    else:
        size = size_sentence(record)
        if size:
            parts.append(size)
        if _number(record.get("exact")):
            parts.append(f"exact {_text(record['exact'])}")
        relation = relation_sentence(record)
        if relation:
            parts.append(relation)
        if reason and reason not in " ".join(parts):
            parts.append(reason)
    if record.get("reading"):
        parts.append(f"reading: {record['reading']}")
    readings = _readings_sentence(record)
    if readings:
        parts.append(readings)
    return _once("; ".join(parts)) or (reason or "—")


def _once(text: str) -> str:
    """`text` with each "; "-separated clause kept once (a reason may repeat what a declaration already says: "a
    printing of X")."""
    return "; ".join(dict.fromkeys(c for c in text.split("; ") if c))
