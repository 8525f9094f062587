"""The ledger's tables: counts by verdict, the searchable ledger, the disagreements (HTML built here, text only)."""
from __future__ import annotations

import html

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import BASES, STATUSES, VERDICTS, outcome
from oscc_core.reporting import claims, tally
from oscc_core.reporting.paper_refs import source_name
from oscc_core.reporting.tables import (deviation_text, interval_text, relation_outcome, significant_text,
                                        with_notes)
from oscc_core.reporting.why import relation_sentence

SECTION_ORDER = tuple(SECTION_CHAPTERS)


def value_text(x) -> str:
    """A value as the ledger shows it: numbers as the paper prints them, intervals in brackets, None as '—'."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return claims.format_value(x)
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in x) + "]"
    return str(x)


def counts_frame(counts: dict, by: str = "section"):
    """Results (every entry but settings) by `by` (section, kind, chapter or basis) and verdict, or settings by
    section and status (`by="settings by section"`), with row and column totals."""
    import pandas as pd

    groups = counts[by]
    columns = STATUSES if by == "settings by section" else VERDICTS
    order = {"section": SECTION_ORDER, "settings by section": SECTION_ORDER, "basis": BASES}.get(by, sorted(groups))
    index = [g for g in order if g in groups] + [g for g in groups if g not in order]
    frame = pd.DataFrame([[groups[g][v] for v in columns] for g in index], index=index, columns=list(columns))
    frame.loc["total"] = frame.sum()
    frame["total"] = frame.sum(axis=1)
    frame.index.name = "section" if by == "settings by section" else by
    return frame


CLASS_LABELS = tally.CLASS_LABELS   # the classes of values the book counts apart, and how the tables name them


def values_frame(counts: dict):
    """The values of each chapter's section (each counted once, however often the paper prints it; measured
    values, checks, intervals and values true by construction together) by verdict, with the verdicts that depend
    on the reading and the further printings beside them, and a total row: the counts every chapter's box gives."""
    import pandas as pd

    rows = {}
    for stem, counted in counts["tally by chapter"].items():
        rows[stem] = tally.values_by_verdict(counted)
        rows[stem].update({"values": counted["values"], "reading-dependent": counted.get("reading dependent", 0),
                           "further printings": counted["printings"]})
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.loc["total"] = frame.sum()
    frame.index.name = "chapter"
    return frame


def causes_frame(counts: dict):
    """The gaps of each chapter's section (values not reproduced, partly, inconclusive or depending on the reading,
    each counted once) by cause (`reporting.causes`), with a total row and column: what each chapter's box and the
    landing page tally."""
    import pandas as pd

    from oscc_core.reporting import causes

    names = [c.name for c in causes.CAUSES]
    rows = {stem: [counted["causes"][n] for n in names] for stem, counted in counts["tally by chapter"].items()}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=names)
    frame.loc["total"] = frame.sum()
    frame["gaps"] = frame.sum(axis=1)
    frame.index.name = "chapter"
    return frame


def classes_frame(counts: dict):
    """The whole ledger's values by class (measured values, checks, the paper's intervals, values true by
    construction) and verdict, with row totals and a total row."""
    import pandas as pd

    frame = pd.DataFrame([[counts[c][v] for v in VERDICTS] for c in CLASS_LABELS],
                         index=list(CLASS_LABELS.values()), columns=list(VERDICTS))
    frame.loc["all values"] = frame.sum()
    frame["total"] = frame.sum(axis=1)
    frame.index.name = "values"
    return frame


def entries_frame(counts: dict):
    """How many entries of the claims file got their line by each rule (a row of their own, the row of the same
    value printed elsewhere, ...), results and settings apart: counts of entries, not of values."""
    import pandas as pd

    basis = counts["basis"]
    frame = pd.DataFrame({"results": [sum(basis.get(k, {}).values()) for k in BASES]}, index=list(BASES))
    frame.index.name = "line taken from"
    return frame


def families_frame(ledger: list[dict]):
    """The families of quantities whose size the book does not set beside the paper's (`reporting.comparability`):
    the family, why (the basis and the reason), and how many ledger lines it holds, with how many of those carry an
    ordering the paper states and how many of those hold."""
    import pandas as pd

    from oscc_core.reporting import comparability

    rows = []
    for f in comparability.FAMILIES:
        lines = [r for r in ledger if f.holds(r["id"]) and r.get("kind") != "setup"]
        judged = [r for r in lines if r.get("relation verdict")]
        rows.append({"family": f.name, "basis": f.basis, "reason": f.reason, "lines": len(lines),
                     "orderings judged": len(judged),
                     "orderings that hold": sum(r["relation verdict"] == claims.REPRODUCED for r in judged)})
    return with_notes(pd.DataFrame(rows), after=0).set_index("family")      # each reason a note under the table


def section_label(section: str, built: set[str]) -> str:
    stem = SECTION_CHAPTERS[section]
    return f"{stem}" if stem in built else f"{stem} (not built)"


_CSS = """<style>
.ledger-wrap{max-height:36em;overflow-y:auto;border:1px solid #ccc}
.ledger{border-collapse:collapse;font-size:0.74em;width:100%}
.ledger th{position:sticky;top:0;background:#f3f3f3}
.ledger td,.ledger th{border-bottom:1px solid #e5e5e5;padding:2px 4px;vertical-align:top;text-align:left}
.ledger td.q{min-width:10em}
.ledger td.num{white-space:nowrap}
.ledger tr.ledger-detail td{color:#555;font-size:0.95em;border-bottom:1px solid #ccc;padding-bottom:4px}
.ledger tr.ledger-entry td{border-bottom:none}
.ledger code.ledger-id{font-size:0.95em;color:#444}
.ledger small{color:#666}
.oscc-disagreement{margin:0 0 0.9em 0;font-size:0.9em}
.oscc-disagreement ul{margin:0.2em 0 0 1.2em;padding:0}
</style>"""

_FILTER_BOX = """<p><label>Filter the ledger: <input type="search" id="{id}-q" placeholder="paper value, claim id, verdict, reading…"
 style="width:20em"></label> <span id="{id}-n"></span></p>"""
# The script follows the table.  An entry is its row of numbers and every row after it up to the next entry (its
# line of relation, reading and why, and anything a script of the page inserts there); the filter matches the
# text and tooltips of all of them, and shows or hides them together, so a match never leaves stray lines.
_FILTER_SCRIPT = """<script>(function(){{var q=document.getElementById("{id}-q"),n=document.getElementById("{id}-n"),
t=document.getElementById("{id}");function entries(){{var out=[],cur=null;
Array.prototype.forEach.call(t.tBodies[0].rows,function(r){{if(r.classList.contains("ledger-entry")){{cur=[r];out.push(cur);}}
else if(cur){{cur.push(r);}}}});return out;}}
function f(){{var s=q.value.trim().toLowerCase(),all=entries(),k=0;all.forEach(function(e){{
var text=e.map(function(r){{return r.textContent+" "+(r.title||"")+" "+Array.prototype.map.call(r.querySelectorAll("[title]"),
function(c){{return c.title;}}).join(" ");}}).join(" ").toLowerCase();var hit=!s||text.indexOf(s)>=0;
e.forEach(function(r){{r.style.display=hit?"":"none";}});if(hit)k++;}});n.textContent=k+" of "+all.length+" entries";}}
q.addEventListener("input",f);f();}})();</script>"""

#: What a reader looks for first (the quantity, the paper's value, ours, the verdict) is the entry's row; the claim
#: id, the relation the paper states with its outcome on our numbers, the reading and why the verdict follows run
#: the table's width on a line of their own below it.  Where the paper prints the number and the chapter are the
#: row's tooltip (the filter box searches them).
LEDGER_COLUMNS = ("quantity", "paper", "ours [95% interval]", "verdict (deviation)")
#: The longest line under an entry (claim id, relation, reading and why together, in characters: about four lines
#: of the ledger's type across the table); the why is shortened to fit, its whole text its tooltip and in the
#: results file.
DETAIL_CHARACTERS = 400
#: The fewest characters of the why a line shows, however long its relation and reading.
SHORT_REASON = 120


def verdict_text(r: dict) -> str:
    """The verdict (a setting: its status), "(depends on the reading)" where the verdict is the paper's fixed
    reading's and another reading gives another, and the deviation ours / paper − 1 where it means something."""
    text = outcome(r)
    if r.get("reading dependent") and text != claims.DEPENDS:
        text += " (depends on the reading)"
    deviation = deviation_text(r["relative deviation"])
    return text + ("" if deviation == "—" else f" ({deviation})")


def _cells(r: dict) -> list[tuple[str, str]]:
    ours = ours_text(r["ours"])
    if r.get("interval"):
        ours += f" {ours_text(r['interval'])}"
    return [("q", r["quantity"]), ("num", value_text(r["paper"])), ("", ours), ("", verdict_text(r))]


def row_title(r: dict) -> str:
    """The row's tooltip: where the paper prints the number, the chapter (and the row it takes) and the kind."""
    chapter = r["chapter"] or "no chapter"
    if r.get("via"):
        chapter += f", row of {r['via']}"
    return " · ".join([f"printed in {printed_in(r['source'])}", chapter, r["kind"]])


def ours_text(x) -> str:
    """Our value as the tables show it: four significant figures (the results file keeps ten), an interval with
    both ends at its larger end's decimals, counts whole."""
    if isinstance(x, float):
        return significant_text(x)
    if isinstance(x, (list, tuple)) and len(x) == 2 and all(isinstance(v, float) for v in x):
        return interval_text(*x)
    return value_text(x)


def printed_in(source: str | None) -> str:
    """Where the paper prints the number, as its PDF names it ("abstract", "Table 22", "text, section “…”")."""
    return source_name(source).removeprefix("the paper's ") if source else "—"


def relation_text(r: dict, limit: int | None = None) -> str | None:
    """The relation the line declares (its wording shortened to `limit` characters, if given) and what became of it
    on our numbers (its own verdict where the size is not compared; never shortened), or None."""
    if not r.get("relation"):
        return None
    outcome_ = relation_outcome(r)
    if r.get("relation verdict") and r.get("verdict") == claims.NOT_COMPARED:
        outcome_ += f"; ordering verdict: {r['relation verdict']}"
    wording = r["relation"] if limit is None else shortened(r["relation"], limit)
    return f"“{wording}” {outcome_}"


def why(r: dict) -> str:
    """Why the line has its verdict: the line's own sentence (`reporting.why`, built from its numbers), or its
    reason where it has none."""
    return r.get("why") or r.get("reason") or "—"


#: What may follow a clause inside it: the ordering verdict a not-compared line's relation clause carries.
CLAUSE_TAIL = " ("


def without_clause(text: str, clause: str) -> str:
    """`text` (clauses joined by "; ") without the first clause that is `clause` (or `clause` and a bracketed
    tail, `CLAUSE_TAIL`), cut whole up to the next "; " after it: a relation or a reading may hold "; " itself, so
    the text is never split at every "; ", and a clause that merely begins or ends with `clause` stays."""
    start = text.find(clause)
    while start >= 0:
        after = text[start + len(clause):]
        begins = start == 0 or text[:start].endswith("; ")
        if begins and (not after or after.startswith(("; ", CLAUSE_TAIL))):
            end = text.find("; ", start + len(clause))
            rest = "" if end < 0 else text[end + 2:]
            return (text[:start] + rest).removesuffix("; ") or "—"
        start = text.find(clause, start + 1)
    return text


def detail_html(r: dict) -> str:
    """The entry's line below its numbers: its claim id, the relation with its outcome, the reading and why, at
    most `DETAIL_CHARACTERS` long (the why shortened to what is left, at least `SHORT_REASON`; each shortened
    part's whole text is its tooltip).  The relation's and the reading's clauses leave the why, having places of
    their own on the line."""
    text, said, reading = why(r), relation_sentence(r), r.get("reading")
    relation = relation_text(r, DETAIL_CHARACTERS // 4)
    if relation and said:
        text = without_clause(text, said)
    if reading:
        text = without_clause(text, f"reading: {reading}")
        reading = shortened(reading, DETAIL_CHARACTERS // 4)
    used = len(r["id"]) + len(relation or "") + len(reading or "") + 30
    parts = [f'<code class="ledger-id">{html.escape(r["id"]).replace(".", ".<wbr>").replace("_", "_<wbr>")}</code>']
    if relation:
        parts.append(f'<b>relation</b> <span title="{html.escape(relation_text(r), quote=True)}">'
                     f'{html.escape(relation)}</span>')
    if reading:
        parts.append(f'<b>reading</b> <span title="{html.escape(r["reading"], quote=True)}">'
                     f'{html.escape(reading)}</span>')
    short = shortened(text, max(SHORT_REASON, DETAIL_CHARACTERS - used))
    parts.append(f'<b>why</b> <span title="{html.escape(text, quote=True)}">{html.escape(short)}</span>')
    return " · ".join(parts)


def shortened(text: str, limit: int = SHORT_REASON) -> str:
    """`text` cut at the last word boundary before `limit` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _cell(css: str, value) -> str:
    text = str(value)
    return f'<td class="{css}">{html.escape(text)}</td>' if css else f"<td>{html.escape(text)}</td>"


def ledger_html(ledger: list[dict], table_id: str = "claims-ledger") -> str:
    """The full ledger as one plain HTML table, two rows an entry (its numbers; its claim id, relation, reading and
    why across the table), with a text box that filters whole entries (a few lines of inline JS).

    Without JavaScript the table is still complete, and the browser's find works on it.  Long reasons are
    shortened in the table (the whole text is the span's tooltip).
    """
    head = "".join(f"<th>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
    body = "\n".join(f'<tr class="ledger-entry" title="{html.escape(row_title(r), quote=True)}">'
                      + "".join(_cell(c, v) for c, v in _cells(r)) + "</tr>"
                      + f'<tr class="ledger-detail"><td colspan="{len(LEDGER_COLUMNS)}">{detail_html(r)}</td></tr>'
                      for r in ledger)
    return (_CSS + _FILTER_BOX.format(id=table_id) + f'<div class="ledger-wrap"><table class="ledger" id="{table_id}">'
            f"<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table></div>"
            + _FILTER_SCRIPT.format(id=table_id))


def readings_html(ledger: list[dict]) -> str:
    """Every entry whose verdict rests on the readings of the quantity (impossible under some or all of them), as
    a list: the claim id, the verdict, the reason in full and each reading's verdict."""
    items = []
    for r in ledger:
        if r.get("verdict") != claims.IMPOSSIBLE and not r.get("readings"):
            continue
        readings = "".join(f"<li><em>{html.escape(x['reading'])}</em>: {html.escape(x['verdict'])}</li>"
                           for x in r.get("readings") or [])
        items.append(f'<div class="oscc-disagreement"><code>{html.escape(r["id"])}</code> '
                     f"(paper {html.escape(value_text(r['paper']))}): <b>{html.escape(r['verdict'])}</b>. "
                     f"{html.escape(why(r))}" + (f"<ul>{readings}</ul>" if readings else "") + "</div>")
    return _CSS + "".join(items)


def disagreements_html(records: list[dict]) -> str:
    """The paper's disagreements, one block each: title and sentence, the values, and each claim id with its
    printed value and the ledger's verdict (blocks, not a table: a disagreement can involve many ids)."""
    blocks = []
    for i, d in enumerate(records, 1):
        ids = "".join(f'<li><code>{html.escape(c["id"])}</code> = {html.escape(value_text(c["paper"]))} '
                      f'<small>({html.escape(c["source"] or "")}; {html.escape(c["verdict"] or "—")})</small></li>'
                      for c in d["claims"])
        blocks.append(f'<div class="oscc-disagreement"><b>{i}. {html.escape(d["title"])}</b> '
                      f"{html.escape(d['note'])} <i>Values:</i> {html.escape(d['values'])}<ul>{ids}</ul></div>")
    return _CSS + "\n".join(blocks)


def arms_frame(records: list[dict]):
    """Contrast variance by arm: ours over all roots with its interval and exact value, ours at the root '' alone
    (sensitivity) with its exact value, the paper's (ablation table) and the verdict."""
    import pandas as pd

    return pd.DataFrame([{"arm": r["arm"], "paper": value_text(r["paper"]), "ours, all roots": ours_text(r["ours"]),
                          "95% interval": ours_text(list(r["interval"])), "exact": ours_text(r["exact"]),
                          "root '' alone": ours_text(r["one root"]), "exact at ''": ours_text(r["one root exact"]),
                          "verdict": r["verdict"], "claim id": r["claim id"]} for r in records]).set_index("arm")
