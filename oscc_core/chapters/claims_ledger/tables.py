"""The ledger's tables: counts by verdict, the searchable ledger, the disagreements (HTML built here, text only)."""
from __future__ import annotations

import html

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import BASES, STATUSES, VERDICTS, outcome
from oscc_core.reporting import claims
from oscc_core.reporting.paper_refs import source_name
from oscc_core.reporting.tables import deviation_text, interval_text, significant_text

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
.ledger td.why{min-width:15em}
.ledger small{color:#666}
.oscc-disagreement{margin:0 0 0.9em 0;font-size:0.9em}
.oscc-disagreement ul{margin:0.2em 0 0 1.2em;padding:0}
</style>"""

_FILTER_BOX = """<p><label>Filter the ledger: <input type="search" id="{id}-q" placeholder="claim id, verdict, chapter…"
 style="width:20em"></label> <span id="{id}-n"></span></p>"""
# The script follows the table: it must find the table's rows when it runs.
_FILTER_SCRIPT = """<script>(function(){{var q=document.getElementById("{id}-q"),n=document.getElementById("{id}-n"),
rows=document.querySelectorAll("#{id} tbody tr");function f(){{var t=q.value.toLowerCase(),k=0;
rows.forEach(function(r){{var s=(r.textContent+" "+r.title).toLowerCase().indexOf(t)>=0;r.style.display=s?"":"none";if(s)k++;}});
n.textContent=k+" of "+rows.length+" entries";}}q.addEventListener("input",f);f();}})();</script>"""

#: What a reader looks for first (the quantity, the paper's value, ours, the verdict) comes first and the claim id
#: last; where the paper prints the number, the chapter, the kind and the relation are the row's tooltip (and the
#: filter box searches them), so that the ledger fits the text column.
LEDGER_COLUMNS = ("quantity", "paper", "ours [95% interval]", "verdict (deviation)", "why (shortened)", "claim id")
#: The longest reason a ledger cell shows; the whole reason is its tooltip, in the results file, and, for an
#: impossible entry, in the list of readings below the ledger.
SHORT_REASON = 160


def _cells(r: dict) -> list[tuple[str, str]]:
    ours = ours_text(r["ours"])
    if r.get("interval"):
        ours += f" {ours_text(r['interval'])}"
    deviation = deviation_text(r["relative deviation"])
    verdict = outcome(r) + ("" if deviation == "—" else f" ({deviation})")
    return [("q", r["quantity"]), ("num", value_text(r["paper"])), ("", ours), ("", verdict), ("why", why(r)),
            ("cid", r["id"])]


def row_title(r: dict) -> str:
    """The row's tooltip: where the paper prints the number, the chapter (and the row it takes), the kind and the
    relation the row declares."""
    chapter = r["chapter"] or "no chapter"
    if r.get("via"):
        chapter += f", row of {r['via']}"
    parts = [f"printed in {printed_in(r['source'])}", chapter, r["kind"]]
    if r.get("relation"):
        parts.append(f"relation: {r['relation']}")
    return " · ".join(parts)


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


def why(r: dict) -> str:
    """The value true by construction (and why), the reason, the size test that decided a compared verdict (for an
    interval: our interval and the test), and the reading an impossible verdict rests on."""
    parts = [f"true by construction: {r['by construction']}"] if r.get("by construction") else []
    if r.get("reason"):
        parts.append(r["reason"])
    if r.get("test") and r.get("verdict") in claims.COMPARED and "midpoint test" not in (r.get("reason") or ""):
        parts.append(f"test: {r['test'].split(':')[0]}")
    if r.get("reading") and r.get("verdict") == claims.IMPOSSIBLE:
        parts.append(f"reading: {r['reading']}")
    return "; ".join(parts) or "—"


def shortened(text: str, limit: int = SHORT_REASON) -> str:
    """`text` cut at the last word boundary before `limit` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _cell(css: str, value) -> str:
    text = str(value)
    if css == "cid":                                   # break after a dot or an underscore, never inside a word
        shown = html.escape(text).replace(".", ".<wbr>").replace("_", "_<wbr>")
        return f'<td class="cid">{shown}</td>'
    if css == "why":
        return f'<td class="why" title="{html.escape(text, quote=True)}">{html.escape(shortened(text))}</td>'
    return f'<td class="{css}">{html.escape(text)}</td>' if css else f"<td>{html.escape(text)}</td>"


def ledger_html(ledger: list[dict], table_id: str = "claims-ledger") -> str:
    """The full ledger as one plain HTML table, with a text box that filters its rows (a few lines of inline JS).

    Without JavaScript the table is still complete, and the browser's find works on it.  Long reasons are
    shortened in the table (the whole text is the cell's tooltip).
    """
    head = "".join(f"<th>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
    body = "\n".join(f'<tr title="{html.escape(row_title(r), quote=True)}">'
                      + "".join(_cell(c, v) for c, v in _cells(r)) + "</tr>" for r in ledger)
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
