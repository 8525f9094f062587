"""The ledger: one line per entry of the claims file, with our value and its verdict (a result or a check) or
its status (a setting), or the reason there is neither.

The rules that turn each entry into a line (row, chapter not built, same value, setting, no row; the
`basis` field names the rule) are `reporting.ledger_lines`'s, applied in its order.

Entries of kind ``setup`` get a status (adopted or differs), never a verdict;
every other entry gets a verdict, never a status.  `check_ledger` fails the
build when an entry is missing or doubled, has no verdict (or status) or an
unknown one, lacks a reason its verdict needs, is a result, check or
interval that names neither the reading it was measured under
(`reporting.open_choices`) nor a reason, is a gap (not reproduced, partly,
inconclusive, depending on the reading) that names no cause of the registry
(`reporting.causes`) with its evidence, gives a value true by construction a
size verdict, is impossible without the
reading under which it is, takes the row of an entry printed with another
value, carries a size verdict although its row declares the quantity not
comparable, or repeats a comparison under another verdict than the entry it
prints.

Counts (`counts`) come from `reporting.tally`, the function every chapter's
result box counts with: measurements apart from checks and the paper's
intervals, each measured value once however many entries print it, values
true by construction apart.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.reporting import causes, claims, comparability, printings, tally
from oscc_core.reporting.ledger_lines import (BASES, BY_CONSTRUCTION_KEY, NOT_BUILT_REASON, NOT_COMPARABLE_KEY,
                                              PRINTING_KEY, SECTION_CHAPTERS, SETTING_KIND, SETTING_REASON,
                                              TEST_KEY, LedgerError, build_lines, doubled_primaries)

REPRODUCED, INCONCLUSIVE, PARTLY = claims.REPRODUCED, claims.INCONCLUSIVE, claims.PARTLY
NOT_REPRODUCED, IMPOSSIBLE, NOT_COMPARED = claims.NOT_REPRODUCED, claims.IMPOSSIBLE, claims.NOT_COMPARED
ADOPTED, DIFFERS = claims.ADOPTED, claims.DIFFERS
#: The verdicts of results and checks, in the order tables and figures show them.
VERDICTS = claims.VERDICTS
#: The statuses of settings.
STATUSES = claims.STATUSES
#: Each verdict as a glue name's last part ("impossible under the rules" -> "impossible").
VERDICT_SLUGS = {v: {claims.IMPOSSIBLE: "impossible", claims.DEPENDS: "depends"}.get(v, v.replace(" ", "_"))
                 for v in VERDICTS}
#: Verdicts (and the status) that need a one-sentence reason.
NEEDS_REASON = (IMPOSSIBLE, NOT_COMPARED, DIFFERS)

__all__ = ["BASES", "BY_CONSTRUCTION_KEY", "LedgerError", "NOT_BUILT_REASON", "NOT_COMPARABLE_KEY", "PRINTING_KEY",
           "SETTING_KIND", "SETTING_REASON", "TEST_KEY", "build_ledger", "check_ledger", "counts",
           "doubled_primaries", "glue_values", "outcome", "payload", "record"]


def build_ledger(entries: dict[str, dict], rows: dict, built: set[str]) -> list[dict]:
    """One ledger line per entry of `entries` (claims-file order), by the rules of the module docstring
    (`reporting.ledger_lines.build_lines`, the function each chapter uses for its own section).

    `rows` maps claim ids to their primary rows (`collect.rows_by_claim`), `built` holds the stems of the
    chapters whose results files exist.  Raises `LedgerError` when a claim id has two primary rows.
    """
    return build_lines(entries, rows, built)


#: The last part of the claim ids of the paper's wall times (seconds on its machine).
WALL_TIME_KEYS = ("wall_time", "cost")


def is_wall_time(claim_id: str) -> bool:
    """Whether the paper's entry is a wall time (seconds): compared as a ratio of costs, never as seconds."""
    return claim_id.rsplit(".", 1)[-1] in WALL_TIME_KEYS


def refused_size_verdicts(ledger: list[dict]) -> list[str]:
    """The lines that give a size verdict to a quantity whose family `reporting.comparability` declares not
    comparable, each named with its verdict and family."""
    return [f"line {r['id']}: size verdict {r.get('verdict')!r} for the family "
            f"'{comparability.family_of(r['id']).name}', declared not comparable "
            f"({comparability.family_of(r['id']).basis})"
            for r in ledger if comparability.size_verdict_refused(r["id"], r.get("verdict"))]


def split_groups(ledger: list[dict], entries: dict[str, dict]) -> dict[str, list[str]]:
    """Group root -> the verdicts of its printings, for every `same_as` group whose lines carry more than one
    verdict (settings are statuses, not verdicts, and are left out)."""
    linked = printings.groups(entries)
    verdict_of = {r["id"]: r.get("verdict") for r in ledger if r.get("kind") != SETTING_KIND}
    out = {}
    for cid in entries:
        group = linked[cid]
        if group[0] != cid or len(group) < 2:
            continue
        verdicts = sorted({str(verdict_of[c]) for c in group if c in verdict_of})
        if len(verdicts) > 1:
            out[printings.root_of(group, entries)] = verdicts
    return out


def check_ledger(ledger: list[dict], claim_ids, entries: dict[str, dict] | None = None) -> None:
    """Raise `LedgerError` unless every claim id appears exactly once with a known verdict (a setting: status)
    and the reason and reading its verdict needs, every result, check or interval line names the reading it was
    measured under (the choices the paper leaves open, `reporting.open_choices`) or a reason, no line gives a size
    verdict to a quantity declared not comparable (`reporting.comparability`), and every printing of one quantity
    (a `same_as` group of `entries`, the claims file by default) has one verdict.

    A partly entry must declare a relation that holds on our numbers; a reproduced one must not declare a
    relation that fails; an impossible one names its reading; a same-value entry takes only the row of an entry
    printed with the same value; an entry whose row declares the quantity not comparable is not compared (no
    size verdict, no bound), with the row's reason; a printing of another entry's comparison names an entry of
    the ledger and has its verdict.
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
    failing("results, checks or intervals name neither the reading they were measured under nor a reason",
            [r["id"] for r in results if not (r.get("reason") or "").strip() and not (r.get("reading") or "").strip()])
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
    failing("entries whose row declares the quantity not comparable carry a verdict other than not compared",
            [f"{r['id']}, verdict {r.get('verdict')!r}" for r in ledger
             if r.get(NOT_COMPARABLE_KEY) and r.get("verdict") != NOT_COMPARED])
    failing("values true by construction carry a size verdict (such a value is not compared in size, everywhere)",
            [f"{r['id']}, verdict {r.get('verdict')!r}" for r in results
             if r.get(BY_CONSTRUCTION_KEY) and r.get("verdict") in comparability.SIZE_VERDICTS])
    failing("gaps (not reproduced, partly, inconclusive, depending on the reading) name no cause of the registry "
            "with its evidence",
            [f"{r['id']}, verdict {r.get('verdict')!r}" for r in results if causes.is_gap(r.get("verdict"))
             and not (r.get(causes.CAUSE_KEY) in {c.name for c in causes.CAUSES}
                      and (r.get(causes.EVIDENCE_KEY) or "").strip())])
    refused = refused_size_verdicts(ledger)
    if refused:
        problems.append(f"{len(refused)} lines give a size verdict to a quantity declared not comparable "
                        f"(first: {refused[0]})")
    split = split_groups(ledger, claims.load_claims() if entries is None else entries)
    failing("quantities printed several times carry several verdicts (one verdict per same_as group)",
            [f"{root}: {', '.join(v)}" for root, v in split.items()])
    failing("lines depend on the reading without readings whose verdicts differ",
            [r["id"] for r in ledger if r.get("verdict") == claims.DEPENDS and not (
                r.get("reading dependent") and len({x["verdict"] for x in r.get("readings") or ()}) > 1)])
    verdict_of = {r["id"]: r.get("verdict") for r in ledger}
    failing("printings name no entry of the ledger or carry another verdict than the entry they print",
            [f"{r['id']} (printing of {r[PRINTING_KEY]})" for r in ledger if r.get(PRINTING_KEY)
             and verdict_of.get(r[PRINTING_KEY], "missing") != r.get("verdict")])
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
    split by verdict; counts of settings by status, by section; and the book's counts (`reporting.tally`):
    measured values by verdict (each once, however many entries print it), checks, the paper's intervals and
    values true by construction, each by verdict, the number of further printings, and the same per chapter.
    """
    results = [r for r in ledger if r["kind"] != SETTING_KIND]
    settings = [r for r in ledger if r["kind"] == SETTING_KIND]
    whole = tally.tally(ledger)
    by_chapter = {stem: tally.tally([r for r in ledger if SECTION_CHAPTERS.get(r["section"]) == stem])
                  for stem in SECTION_CHAPTERS.values()}
    return {"total": len(ledger), "results": len(results), "settings": len(settings),
            "measurements": whole["measurements"], "checks": whole["checks"], "intervals": whole["intervals"],
            "by construction": whole[tally.BY_CONSTRUCTION], "values": whole["values"],
            "printings": whole["printings"], "tally by chapter": by_chapter,
            "reading dependent": whole["reading dependent"], "orderings": whole["orderings"],
            "causes": whole["causes"], "gap lines by chapter and cause": _gap_lines(results),
            "verdict": {v: sum(r["verdict"] == v for r in results) for v in VERDICTS},
            "status": {s: sum(r["status"] == s for r in settings) for s in STATUSES},
            "section": _count(results, lambda r: r["section"], VERDICTS),
            "kind": _count(results, lambda r: r["kind"], VERDICTS),
            "chapter": _count(results, lambda r: r["chapter"] or "none", VERDICTS),
            "basis": _count(results, lambda r: r["basis"], VERDICTS),
            "settings by section": _count(settings, lambda r: r["section"], STATUSES)}


def _gap_lines(results: list[dict]) -> dict:
    """Chapter -> cause -> the number of gap lines (entries, every printing counted) that name it."""
    out: dict = {}
    for r in results:
        if causes.is_gap(r.get("verdict")):
            chapter = out.setdefault(r["chapter"] or "none", {c.name: 0 for c in causes.CAUSES})
            chapter[r[causes.CAUSE_KEY]] = chapter.get(r[causes.CAUSE_KEY], 0) + 1
    return out


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
            "ledger_not_built": f"{basis['chapter not built']:,}", "ledger_no_row": f"{basis['no row']:,}",
            **_tally_glue(counted)}


def _tally_glue(counted: dict) -> dict[str, str]:
    """ledger_<class>_<verdict> and ledger_<class> (totals) for measurements, checks, intervals and values true
    by construction; ledger_values and ledger_printings."""
    out = {"ledger_values": f"{counted['values']:,}", "ledger_printings": f"{counted['printings']:,}",
           "ledger_counts_text": tally.tally_text(counted),
           "ledger_causes_text": tally.causes_text(counted).strip() or "No value is a gap.",
           **{f"ledger_cause_{c.name.replace(' ', '_').replace(chr(39), '')}": f"{counted['causes'][c.name]:,}"
              for c in causes.CAUSES},
           "ledger_reading_dependent": f"{counted['reading dependent']:,}",
           "ledger_orderings": f"{sum(counted['orderings'].values()):,}",
           **{f"ledger_orderings_{v.replace(' ', '_')}": f"{n:,}" for v, n in counted["orderings"].items()}}
    for name in ("measurements", "checks", "intervals", "by construction"):
        short = name.replace(" ", "_")
        out[f"ledger_{short}"] = f"{sum(counted[name].values()):,}"
        out.update({f"ledger_{short}_{VERDICT_SLUGS[v]}": f"{n:,}" for v, n in counted[name].items()})
    return out
