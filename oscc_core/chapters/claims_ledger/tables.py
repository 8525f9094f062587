"""The ledger's tables: counts by verdict, the searchable ledger, the disagreements (HTML built here, text only)."""
from __future__ import annotations

import html

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import BASES, STATUSES, VERDICTS, outcome
from oscc_core.reporting import claims
from oscc_core.reporting.tables import deviation_text

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
.ledger-wrap{max-height:36em;overflow:auto;border:1px solid #ccc}
.ledger{border-collapse:collapse;font-size:0.78em;width:max-content;max-width:none}
.ledger th{position:sticky;top:0;background:#f3f3f3}
.ledger td,.ledger th{border-bottom:1px solid #e5e5e5;padding:2px 4px;vertical-align:top;text-align:left}
.ledger td{max-width:14em}
.ledger td.cid{min-width:12em;max-width:16em;overflow-wrap:normal;word-break:normal;font-family:monospace;
font-size:0.92em}
.ledger td.why{min-width:22em;max-width:30em}
.oscc-disagreement{margin:0 0 0.9em 0;font-size:0.9em}
.oscc-disagreement ul{margin:0.2em 0 0 1.2em;padding:0}
</style>"""

_FILTER_BOX = """<p><label>Filter the ledger: <input type="search" id="{id}-q" placeholder="claim id, verdict, chapter…"
 style="width:20em"></label> <span id="{id}-n"></span></p>"""
# The script follows the table: it must find the table's rows when it runs.
_FILTER_SCRIPT = """<script>(function(){{var q=document.getElementById("{id}-q"),n=document.getElementById("{id}-n"),
rows=document.querySelectorAll("#{id} tbody tr");function f(){{var t=q.value.toLowerCase(),k=0;
rows.forEach(function(r){{var s=r.textContent.toLowerCase().indexOf(t)>=0;r.style.display=s?"":"none";if(s)k++;}});
n.textContent=k+" of "+rows.length+" entries";}}q.addEventListener("input",f);f();}})();</script>"""

LEDGER_COLUMNS = ("claim id", "section", "kind", "quantity", "paper", "ours", "95% interval", "deviation",
                  "verdict or status", "relation", "reason (shortened)", "chapter")
#: The longest reason a ledger cell shows; the whole reason is its tooltip, in the results file, and, for an
#: impossible entry, in the list of readings below the ledger.
SHORT_REASON = 160


def _cells(r: dict) -> list[tuple[str, str]]:
    chapter = r["chapter"] or "—"
    if r.get("via"):
        chapter += f" (row of {r['via']})"
    return [("cid", r["id"]), ("", r["section"]), ("", r["kind"]), ("", r["quantity"]), ("", value_text(r["paper"])),
            ("", value_text(r["ours"])), ("", value_text(r["interval"])), ("", deviation_text(r["relative deviation"])),
            ("", outcome(r)), ("", r["relation"] or "—"), ("why", why(r)), ("", chapter)]


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
    return f"<td>{html.escape(text)}</td>"


def ledger_html(ledger: list[dict], table_id: str = "claims-ledger") -> str:
    """The full ledger as one plain HTML table, with a text box that filters its rows (a few lines of inline JS).

    Without JavaScript the table is still complete, and the browser's find works on it.  Long reasons are
    shortened in the table (the whole text is the cell's tooltip).
    """
    head = "".join(f"<th>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
    body = "\n".join("<tr>" + "".join(_cell(c, v) for c, v in _cells(r)) + "</tr>" for r in ledger)
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
    """Contrast variance by arm: ours with its interval, exact, the paper's (ablation table) and the verdict."""
    import pandas as pd

    return pd.DataFrame([{"arm": r["arm"], "ours": f"{r['ours']:.4f}",
                          "95% interval": f"[{r['interval'][0]:.4f}, {r['interval'][1]:.4f}]",
                          "exact": f"{r['exact']:.4f}", "paper": value_text(r["paper"]), "verdict": r["verdict"],
                          "claim id": r["claim id"]} for r in records])
