"""The ledger: one line per entry of the claims file, with our value and its verdict (a result or a check) or
its status (a setting), or the reason there is neither.

Rules, applied in this order to each entry (the `basis` field names the rule):

1. ``row``: a results file holds the entry's *primary* row (a record whose
   "claim id" names it).  It gives ours, interval, exact, verdict or status,
   relation, relative deviation, reason and readings; the entry keeps the
   paper's value as the claims file prints it.  Sensitivity and detail rows
   name their claim under "sensitivity of" and are never read here; two
   primary rows for one claim id stop the build.
2. ``chapter not built``: the entry's section has no results file yet.  Not
   compared, reason "chapter not built yet".
3. ``same value``: the claims file says the entry is the same quantity as
   others (`same_as`), one of them has a primary row and the paper prints the
   same value for both.  The entry takes that row (`via` names its claim id).
4. ``setting``: an entry of kind ``setup`` (a sample size, a grid, a seed)
   with no row: status *differs*, since no chapter runs it.
5. ``no row``: any other entry of a built chapter with no row: not compared,
   reason "no row in chapter <stem> yet".

Entries of kind ``setup`` get a status (adopted or differs), never a verdict;
every other entry gets a verdict, never a status.  `check_ledger` fails the
build when an entry is missing or doubled, has no verdict (or status) or an
unknown one, lacks a reason its verdict needs, is impossible without the
reading under which it is, or takes the row of an entry printed with another
value.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS, RowRecord
from oscc_core.reporting import claims

REPRODUCED, INCONCLUSIVE, PARTLY = claims.REPRODUCED, claims.INCONCLUSIVE, claims.PARTLY
NOT_REPRODUCED, IMPOSSIBLE, NOT_COMPARED = claims.NOT_REPRODUCED, claims.IMPOSSIBLE, claims.NOT_COMPARED
ADOPTED, DIFFERS = claims.ADOPTED, claims.DIFFERS
#: The verdicts of results and checks, in the order tables and figures show them.
VERDICTS = claims.VERDICTS
#: The statuses of settings.
STATUSES = claims.STATUSES
#: The kind of entry that gets a status instead of a verdict.
SETTING_KIND = "setup"
#: Verdicts (and the status) that need a one-sentence reason.
NEEDS_REASON = (IMPOSSIBLE, NOT_COMPARED, DIFFERS)
BASES = ("row", "same value", "chapter not built", "setting", "no row")

NOT_BUILT_REASON = "chapter not built yet"
SETTING_REASON = "not run: no chapter of this book runs the experiment this setting belongs to"


class LedgerError(ValueError):
    """The ledger is incomplete: an entry is missing, doubled, or lacks a verdict or a reason."""


def _same_value_groups(entries: dict[str, dict]) -> dict[str, list[str]]:
    """Claim id -> every id of its `same_as` group (the union of the links), in claims-file order."""
    parent = {cid: cid for cid in entries}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cid, e in entries.items():
        target = e.get("same_as")
        if target in parent:
            parent[find(cid)] = find(target)
    groups: dict[str, list[str]] = {}
    for cid in entries:
        groups.setdefault(find(cid), []).append(cid)
    return {cid: groups[find(cid)] for cid in entries}


def _from_row(base: dict, row: RowRecord, basis: str, via: str | None, via_paper=None) -> dict:
    first = row.record
    return {**base, "ours": first.get("ours"), "interval": first.get("95% interval"), "exact": first.get("exact"),
            "verdict": first.get("verdict"), "status": first.get("status"),
            "relation": first.get("relation"), "relative deviation": first.get("relative deviation"),
            "reason": first.get("reason"), "reading": first.get("reading"), "readings": first.get("readings"),
            "chapter": row.chapter, "where": row.where, "basis": basis, "via": via, "via paper": via_paper,
            "relation holds": first.get("relation holds"), "relation resolved": first.get("relation resolved")}


def _without_row(base: dict, reason: str, basis: str) -> dict:
    setting = base["kind"] == SETTING_KIND
    return {**base, "ours": None, "interval": None, "exact": None, "verdict": None if setting else NOT_COMPARED,
            "status": DIFFERS if setting else None, "relation": None, "relative deviation": None, "reason": reason,
            "reading": None, "readings": None, "chapter": None, "where": None, "basis": basis, "via": None,
            "via paper": None, "relation holds": None, "relation resolved": None}


def doubled_primaries(rows: dict[str, list[RowRecord]]) -> dict[str, list[str]]:
    """Claim id -> where its primary rows are, for every id that more than one primary row names."""
    return {cid: [f"{r.chapter}:{r.where}" for r in found] for cid, found in rows.items() if len(found) > 1}


def build_ledger(entries: dict[str, dict], rows: dict[str, list[RowRecord]], built: set[str]) -> list[dict]:
    """One ledger line per entry of `entries` (claims-file order), by the rules of the module docstring.

    `rows` maps claim ids to their primary rows (`collect.rows_by_claim`), `built` holds the stems of the
    chapters whose results files exist.  Raises `LedgerError` when a claim id has two primary rows.
    """
    doubled = doubled_primaries(rows)
    if doubled:
        first = next(iter(doubled))
        raise LedgerError(f"{len(doubled)} claim ids have more than one primary row (first: {first} at "
                          f"{', '.join(doubled[first])}); mark all but one as sensitivity rows.")
    groups = _same_value_groups(entries)
    out = []
    for cid, e in entries.items():
        base = {"id": cid, "section": e["section"], "kind": e["kind"], "source": e.get("source"),
                "quantity": f"{e.get('row')}: {e.get('column')}", "paper": e["value"]}
        stem = SECTION_CHAPTERS.get(e["section"])
        if cid in rows:
            out.append(_from_row(base, rows[cid][0], "row", None))
            continue
        if stem not in built:
            out.append(_without_row(base, NOT_BUILT_REASON, "chapter not built"))
            continue
        mates = [m for m in groups[cid] if m != cid and m in rows and entries[m]["value"] == e["value"]]
        if mates:
            out.append(_from_row(base, rows[mates[0]][0], "same value", mates[0], entries[mates[0]]["value"]))
        elif e["kind"] == SETTING_KIND:
            out.append(_without_row(base, SETTING_REASON, "setting"))
        else:
            out.append(_without_row(base, f"no row in chapter {stem} yet", "no row"))
    return out


#: The last part of the claim ids of the paper's wall times (seconds on its machine).
WALL_TIME_KEYS = ("wall_time", "cost")


def is_wall_time(claim_id: str) -> bool:
    """Whether the paper's entry is a wall time (seconds): compared as a ratio of costs, never as seconds."""
    return claim_id.rsplit(".", 1)[-1] in WALL_TIME_KEYS


def check_ledger(ledger: list[dict], claim_ids) -> None:
    """Raise `LedgerError` unless every claim id appears exactly once with a known verdict (a setting: status)
    and the reason and reading its verdict needs.

    A partly entry must declare a relation that holds on our numbers; a reproduced one must not declare a
    relation that fails; an impossible one names its reading; a same-value entry takes only the row of an entry
    printed with the same value.
    """
    seen = Counter(r["id"] for r in ledger)
    doubled = sorted(cid for cid, n in seen.items() if n > 1)
    missing = [cid for cid in claim_ids if cid not in seen]
    extra = sorted(set(seen) - set(claim_ids))
    problems = []
    if doubled:
        problems.append(f"{len(doubled)} entries appear more than once (first: {doubled[0]})")
    if missing:
        problems.append(f"{len(missing)} entries are missing (first: {missing[0]})")
    if extra:
        problems.append(f"{len(extra)} rows name no entry of the claims file (first: {extra[0]})")

    def failing(what: str, ids: list[str]) -> None:
        if ids:
            problems.append(f"{len(ids)} {what} (first: {ids[0]})")

    settings = [r for r in ledger if r.get("kind") == SETTING_KIND]
    results = [r for r in ledger if r.get("kind") != SETTING_KIND]
    failing("entries have no verdict or an unknown one",
            [f"{r['id']}, verdict {r.get('verdict')!r}" for r in results if r.get("verdict") not in VERDICTS])
    failing("results or checks carry a status, which only settings have",
            [r["id"] for r in results if r.get("status") is not None])
    failing("settings have a verdict instead of a status (adopted or differs)",
            [f"{r['id']}, verdict {r.get('verdict')!r}, status {r.get('status')!r}" for r in settings
             if r.get("verdict") is not None or r.get("status") not in STATUSES])
    failing("entries are not compared, impossible or differ without a reason",
            [r["id"] for r in ledger if (r.get("verdict") in NEEDS_REASON or r.get("status") in NEEDS_REASON)
             and not (r.get("reason") or "").strip()])
    failing("impossible entries name no reading",
            [r["id"] for r in ledger if r.get("verdict") == IMPOSSIBLE and not (r.get("reading") or "").strip()])
    failing("partly entries declare no relation that holds",
            [r["id"] for r in ledger if r.get("verdict") == PARTLY
             and not (r.get("relation") and r.get("relation holds") is True)])
    failing("reproduced entries declare a relation that fails or is not resolved",
            [r["id"] for r in ledger if r.get("verdict") == REPRODUCED and r.get("relation")
             and (r.get("relation holds") is not True or r.get("relation resolved") is False)])
    failing("same-value entries take the row of an entry the paper prints with another value",
            [f"{r['id']} ({r['paper']!r} vs {r.get('via paper')!r} of {r.get('via')})" for r in ledger
             if r.get("basis") == "same value" and r.get("via paper") != r.get("paper")])
    failing("wall-time entries are not compared without naming what no ratio of costs captures",
            [r["id"] for r in results if is_wall_time(r["id"]) and r.get("verdict") == NOT_COMPARED
             and r.get("basis") in ("row", "same value") and "ratio" not in (r.get("reason") or "")])
    if problems:
        raise LedgerError("The claims ledger is incomplete: " + "; ".join(problems) + ".")


def outcome(line: dict) -> str:
    """A line's verdict, or its status when it is a setting."""
    return line["status"] if line.get("kind") == SETTING_KIND else line["verdict"]


def _count(lines: list[dict], key, outcomes) -> dict:
    out: dict = {}
    for r in lines:
        group = out.setdefault(key(r), {v: 0 for v in outcomes})
        group[outcome(r)] += 1
    return out


def counts(ledger: list[dict]) -> dict:
    """Counts of results (every kind but settings) by verdict, and by section, kind, chapter and basis, each
    split by verdict; counts of settings by status, by section."""
    results = [r for r in ledger if r["kind"] != SETTING_KIND]
    settings = [r for r in ledger if r["kind"] == SETTING_KIND]
    return {"total": len(ledger), "results": len(results), "settings": len(settings),
            "verdict": {v: sum(r["verdict"] == v for r in results) for v in VERDICTS},
            "status": {s: sum(r["status"] == s for r in settings) for s in STATUSES},
            "section": _count(results, lambda r: r["section"], VERDICTS),
            "kind": _count(results, lambda r: r["kind"], VERDICTS),
            "chapter": _count(results, lambda r: r["chapter"] or "none", VERDICTS),
            "basis": _count(results, lambda r: r["basis"], VERDICTS),
            "settings by section": _count(settings, lambda r: r["section"], STATUSES)}


def record(ledger: list[dict]) -> list[dict]:
    """The ledger as the results file keeps it."""
    return [dict(r) for r in ledger]


def payload(ledger: list[dict], counted: dict, disagreements: list[dict], sources: dict) -> dict:
    """What `results/07_claims_ledger.json` keeps besides its manifest."""
    return {"claims": record(ledger), "counts": counted, "disagreements": disagreements, "sources": sources}


def glue_values(counted: dict) -> dict[str, str]:
    """The counts the chapter's prose and the landing page cite, as text (thousands separators)."""
    v, b, st = counted["verdict"], counted["basis"], counted["status"]
    basis = {k: sum(b.get(k, {}).values()) for k in BASES}
    return {"ledger_total": f"{counted['total']:,}", "ledger_results": f"{counted['results']:,}",
            "ledger_settings": f"{counted['settings']:,}",
            "ledger_reproduced": f"{v[REPRODUCED]:,}", "ledger_inconclusive": f"{v[INCONCLUSIVE]:,}",
            "ledger_partly": f"{v[PARTLY]:,}", "ledger_not_reproduced": f"{v[NOT_REPRODUCED]:,}",
            "ledger_impossible": f"{v[IMPOSSIBLE]:,}", "ledger_not_compared": f"{v[NOT_COMPARED]:,}",
            "ledger_compared": f"{counted['results'] - v[NOT_COMPARED]:,}",
            "ledger_adopted": f"{st[ADOPTED]:,}", "ledger_differs": f"{st[DIFFERS]:,}",
            "ledger_own_row": f"{basis['row']:,}", "ledger_same_value": f"{basis['same value']:,}",
            "ledger_not_built": f"{basis['chapter not built']:,}", "ledger_no_row": f"{basis['no row']:,}"}
