"""The ledger: one row per entry of the claims file, with our value and verdict or the reason there is none.

Rules, applied in this order to each entry (the `basis` field names the rule):

1. ``row``: a results file holds a row with the entry's claim id.  The first
   such row in the order of `collect` gives paper, ours, interval, exact,
   verdict, relation, relative deviation and reason; `rows` counts them all and
   `other verdicts` lists the verdicts of the others where they differ.
2. ``chapter not built``: the entry's section has no results file yet.  Not
   compared, reason "chapter not built yet".
3. ``same value``: the claims file says the entry is the same quantity as
   others (`same_as`), one of them has a row and the paper prints the same
   value for both.  The entry takes that row (`via` names its claim id).
4. ``setting``: an entry of kind ``setup`` (a sample size, a grid, a seed)
   with no row: not compared, it is a setting of the paper's run.
5. ``no row``: any other entry of a built chapter with no row: not compared,
   reason "no row in chapter <stem> yet".

`check_ledger` fails the build when an entry is missing or doubled, has no
verdict or an unknown one, or lacks a reason its verdict needs.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS, RowRecord
from oscc_core.reporting import claims

REPRODUCED, PARTLY, NOT_REPRODUCED = claims.REPRODUCED, claims.PARTLY, claims.NOT_REPRODUCED
IMPOSSIBLE, NOT_COMPARED = claims.IMPOSSIBLE, claims.NOT_COMPARED
#: The verdicts of DESIGN.md section 10, in the order tables and figures show them.
VERDICTS = claims.VERDICTS
#: Verdicts that need a one-sentence reason.
NEEDS_REASON = (IMPOSSIBLE, NOT_COMPARED)
BASES = ("row", "same value", "chapter not built", "setting", "no row")

NOT_BUILT_REASON = "chapter not built yet"
SETTING_REASON = "a setting of the paper's run, not a result"


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


def _from_row(base: dict, rows: list[RowRecord], basis: str, via: str | None) -> dict:
    first = rows[0].record
    others = sorted({r.record.get("verdict") for r in rows[1:]} - {first.get("verdict")})
    return {**base, "paper": first.get("paper", base["paper"]), "ours": first.get("ours"),
            "interval": first.get("95% interval"), "exact": first.get("exact"), "verdict": first.get("verdict"),
            "relation": first.get("relation"), "relative deviation": first.get("relative deviation"),
            "reason": first.get("reason"), "chapter": rows[0].chapter, "where": rows[0].where, "basis": basis,
            "via": via, "rows": len(rows), "other verdicts": others or None,
            "relation holds": first.get("relation holds")}


def _not_compared(base: dict, reason: str, basis: str) -> dict:
    return {**base, "ours": None, "interval": None, "exact": None, "verdict": NOT_COMPARED, "relation": None,
            "relative deviation": None, "reason": reason, "chapter": None, "where": None, "basis": basis,
            "via": None, "rows": 0, "other verdicts": None, "relation holds": None}


def build_ledger(entries: dict[str, dict], rows: dict[str, list[RowRecord]], built: set[str]) -> list[dict]:
    """One ledger row per entry of `entries` (claims-file order), by the rules of the module docstring.

    `rows` maps claim ids to their rows (`collect.rows_by_claim`), `built` holds the stems of the chapters
    whose results files exist.
    """
    groups = _same_value_groups(entries)
    out = []
    for cid, e in entries.items():
        base = {"id": cid, "section": e["section"], "kind": e["kind"], "source": e.get("source"),
                "quantity": f"{e.get('row')}: {e.get('column')}", "paper": e["value"]}
        stem = SECTION_CHAPTERS.get(e["section"])
        if cid in rows:
            out.append(_from_row(base, rows[cid], "row", None))
            continue
        if stem not in built:
            out.append(_not_compared(base, NOT_BUILT_REASON, "chapter not built"))
            continue
        mates = [m for m in groups[cid] if m != cid and m in rows and entries[m]["value"] == e["value"]]
        if mates:
            out.append(_from_row(base, rows[mates[0]], "same value", mates[0]))
        elif e["kind"] == "setup":
            out.append(_not_compared(base, SETTING_REASON, "setting"))
        else:
            out.append(_not_compared(base, f"no row in chapter {stem} yet", "no row"))
    return out


def check_ledger(ledger: list[dict], claim_ids) -> None:
    """Raise `LedgerError` unless every claim id appears exactly once with a known verdict and needed reason.

    A partly entry must declare a relation, and the relation must hold on our numbers (DESIGN section 10).
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
    no_verdict = [r["id"] for r in ledger if r.get("verdict") not in VERDICTS]
    if no_verdict:
        problems.append(f"{len(no_verdict)} entries have no verdict or an unknown one (first: {no_verdict[0]}, "
                        f"verdict {next(r.get('verdict') for r in ledger if r['id'] == no_verdict[0])!r})")
    no_reason = [r["id"] for r in ledger if r.get("verdict") in NEEDS_REASON and not (r.get("reason") or "").strip()]
    if no_reason:
        problems.append(f"{len(no_reason)} entries are not compared or impossible without a reason "
                        f"(first: {no_reason[0]})")
    no_relation = [r["id"] for r in ledger
                   if r.get("verdict") == PARTLY and not (r.get("relation") and r.get("relation holds") is True)]
    if no_relation:
        problems.append(f"{len(no_relation)} partly entries declare no relation that holds (first: {no_relation[0]})")
    if problems:
        raise LedgerError("The claims ledger is incomplete: " + "; ".join(problems) + ".")


def _count(ledger: list[dict], key) -> dict:
    out: dict = {}
    for r in ledger:
        group = out.setdefault(key(r), {v: 0 for v in VERDICTS})
        group[r["verdict"]] += 1
    return out


def counts(ledger: list[dict]) -> dict:
    """Counts by verdict, and by section, kind, chapter and basis, each split by verdict."""
    return {"total": len(ledger),
            "verdict": {v: sum(r["verdict"] == v for r in ledger) for v in VERDICTS},
            "section": _count(ledger, lambda r: r["section"]),
            "kind": _count(ledger, lambda r: r["kind"]),
            "chapter": _count(ledger, lambda r: r["chapter"] or "none"),
            "basis": _count(ledger, lambda r: r["basis"]),
            "entries with rows that disagree": sum(bool(r["other verdicts"]) for r in ledger)}


def record(ledger: list[dict]) -> list[dict]:
    """The ledger as the results file keeps it."""
    return [dict(r) for r in ledger]


def payload(ledger: list[dict], counted: dict, disagreements: list[dict], sources: dict) -> dict:
    """What `results/07_claims_ledger.json` keeps besides its manifest."""
    return {"claims": record(ledger), "counts": counted, "disagreements": disagreements, "sources": sources}


def glue_values(counted: dict) -> dict[str, str]:
    """The counts the chapter's prose and the landing page cite, as text (thousands separators)."""
    v, b = counted["verdict"], counted["basis"]
    basis = {k: sum(b.get(k, {}).values()) for k in BASES}
    return {"ledger_total": f"{counted['total']:,}", "ledger_reproduced": f"{v[REPRODUCED]:,}",
            "ledger_partly": f"{v[PARTLY]:,}", "ledger_not_reproduced": f"{v[NOT_REPRODUCED]:,}",
            "ledger_impossible": f"{v[IMPOSSIBLE]:,}", "ledger_not_compared": f"{v[NOT_COMPARED]:,}",
            "ledger_compared": f"{counted['total'] - v[NOT_COMPARED]:,}",
            "ledger_own_row": f"{basis['row']:,}", "ledger_same_value": f"{basis['same value']:,}",
            "ledger_not_built": f"{basis['chapter not built']:,}", "ledger_setting": f"{basis['setting']:,}",
            "ledger_no_row": f"{basis['no row']:,}",
            "ledger_rows_disagree": f"{counted['entries with rows that disagree']:,}"}
