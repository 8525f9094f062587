"""One paper quantity under several readings of the paper's words: the rule that turns their verdicts into one.

Where the paper leaves a choice open (which roots a contrast variance pools, the continuation policy, the clip ε,
the step size η, the opponent, the cost unit), a chapter compares the paper's number under each reading it can
measure, one `reporting.rows.Row` per reading, each naming its `reading`, and `combine` keeps them all on one row
(`readings`).  A reading is an interpretation of the paper's words fixed before looking at the numbers; a
construction found by searching for the paper's numbers is a hypothesis to report beside a verdict, never a
reading.

`unshown_impossible` and `impossible_instead` serve the chapters whose paper numbers break a bound of the game's
rules under some reading: the impossible rows no table showed, and a row replaced by its impossible verdict.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.reporting import claims

IMPOSSIBLE, NOT_COMPARED = claims.IMPOSSIBLE, claims.NOT_COMPARED

__all__ = ["combine", "impossible_instead", "unshown_impossible"]


def combine(rows: list, paper_reading: str | None = None):
    """One paper quantity compared under each reading of the paper's words the book measures (one row per
    reading, each naming its `reading`; the first is the book's own reading, shown when the paper's text
    fixes none).  The row keeps every reading's verdict and our value (`readings`).

    * impossible under the rules only when every reading is impossible;
    * where every reading that the rules allow and that has a number of ours to compare gives one verdict,
      that verdict;
    * where they disagree, the verdict is reading-dependent (`reading_dependent`): the verdict under
      `paper_reading` when the paper's text fixes the reading (it must name one of the rows), else
      "depends on the reading" (`claims.DEPENDS`), with each reading's verdict in the reason.

    Never the most favourable of many readings: that would let one of a dozen readings agree by chance.
    A reading is an interpretation of the paper's words fixed before looking at the numbers."""
    if not rows or any(not (r.reading and r.reading.strip()) for r in rows):
        raise ValueError("under_readings needs one row per reading, each naming its reading.")
    if len({r.claim_id for r in rows}) != 1:
        raise ValueError(f"the readings compare different claims: {sorted({str(r.claim_id) for r in rows})}.")
    named = [r.reading for r in rows]
    if paper_reading is not None and paper_reading not in named:
        raise ValueError(f"paper_reading must be one of the readings {named}, got {paper_reading!r}.")
    listed = tuple({"reading": r.reading, "verdict": r.verdict, "ours": r.ours, "interval": r.interval,
                    "reason": r.reason} for r in rows)
    each = "; ".join(f"{r.verdict} under the reading '{r.reading}'" + (f" ({r.reason})" if r.reason else "")
                     for r in rows)
    if all(r.verdict == IMPOSSIBLE for r in rows):
        reason = "; ".join(f"under the reading '{r.reading}': {r.reason}" for r in rows)
        return replace(rows[0], reason=reason, reading="; ".join(named), readings=listed)
    if all(r.verdict in (IMPOSSIBLE, NOT_COMPARED) for r in rows):   # allowed only where nothing is compared
        allowed = next(r for r in rows if r.verdict == NOT_COMPARED)
        return replace(allowed, reason=f"not impossible under every reading, and no reading the rules allow has "
                                       f"a number of ours to compare: {each}", readings=listed)
    compared = [r for r in rows if r.verdict != NOT_COMPARED]
    verdicts = {r.verdict for r in compared}
    primary = next(r for r in rows if r.reading == paper_reading) if paper_reading else compared[0]
    if len(verdicts) == 1:
        every = "every reading" if len(compared) == len(rows) else "every reading that compares a number"
        reason = primary.reason if len(rows) == 1 else f"{primary.verdict} under {every}: {each}"
        return replace(primary, reason=reason, readings=listed)
    if paper_reading is not None:
        reason = f"the paper's text fixes the reading '{paper_reading}'; by reading: {each}"
        return replace(primary, reason=reason, readings=listed, reading_dependent=True)
    return replace(primary, verdict=claims.DEPENDS, reason=f"depends on the reading: {each}", readings=listed,
                   reading_dependent=True, test=None)


def unshown_impossible(impossible: dict, groups: dict) -> list:
    """The rows of `impossible` (claim id -> impossible row) that no table of `groups` (name -> rows) showed.

    Refuses a claim id named by two primary rows: the claims ledger takes one row per entry (sensitivity rows
    name theirs under another key).
    """
    ids = [r.claim_id for g in groups.values() for r in g if r.claim_id and r.primary]
    doubled = sorted({c for c in ids if ids.count(c) > 1})
    if doubled:
        raise ValueError(f"claim ids named by two rows: {doubled[:5]}")
    return [r for cid, r in impossible.items() if cid not in set(ids)]


def impossible_instead(row, impossible: dict):
    """`row` with verdict impossible under the rules when `impossible` (claim id -> impossible row) holds its
    claim: our value, interval and exact value stay, the reason names the bound the paper's value breaks and the
    reading under which it does.  Where the claim is impossible under some readings only (a row of
    `Row.under_readings` whose verdict is not impossible), that combined row replaces `row`."""
    bound = impossible.get(row.claim_id)
    if bound is None:
        return row
    if bound.verdict != IMPOSSIBLE:
        return bound
    return replace(row, verdict=IMPOSSIBLE, reason=bound.reason, reading=bound.reading, readings=bound.readings,
                   relation=None, relation_holds=None, relation_resolved=None, relation_constructed=False, test=None,
                   reading_dependent=False)
