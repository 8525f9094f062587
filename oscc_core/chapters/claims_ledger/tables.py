"""The ledger's tables: counts by verdict, the searchable ledger, the disagreements (HTML built here, text only)."""
from __future__ import annotations

import html

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import BASES, VERDICTS
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
    """Entries by `by` (section, kind, chapter or basis) and verdict, with row and column totals."""
    import pandas as pd

    groups = counts[by]
    order = {"section": SECTION_ORDER, "basis": BASES}.get(by, sorted(groups))
    index = [g for g in order if g in groups] + [g for g in groups if g not in order]
    frame = pd.DataFrame([[groups[g][v] for v in VERDICTS] for g in index], index=index, columns=list(VERDICTS))
    frame.loc["total"] = frame.sum()
    frame["total"] = frame.sum(axis=1)
    frame.index.name = by
    return frame


def section_label(section: str, built: set[str]) -> str:
    stem = SECTION_CHAPTERS[section]
    return f"{stem}" if stem in built else f"{stem} (not built)"


_CSS = """<style>
.ledger-wrap{max-height:36em;overflow:auto;border:1px solid #ccc}
.ledger{border-collapse:collapse;font-size:0.78em;width:100%}
.ledger th{position:sticky;top:0;background:#f3f3f3}
.ledger td,.ledger th{border-bottom:1px solid #e5e5e5;padding:2px 4px;vertical-align:top;text-align:left}
.ledger td.cid{max-width:12em;word-break:break-all;font-family:monospace;font-size:0.92em}
.ledger td.why{max-width:16em}
</style>"""

_FILTER = """<p><label>Filter the ledger: <input type="search" id="{id}-q" placeholder="claim id, verdict, chapter…"
 style="width:20em"></label> <span id="{id}-n"></span></p>
<script>(function(){{var q=document.getElementById("{id}-q"),n=document.getElementById("{id}-n"),
rows=document.querySelectorAll("#{id} tbody tr");function f(){{var t=q.value.toLowerCase(),k=0;
rows.forEach(function(r){{var s=r.textContent.toLowerCase().indexOf(t)>=0;r.style.display=s?"":"none";if(s)k++;}});
n.textContent=k+" of "+rows.length+" entries";}}q.addEventListener("input",f);f();}})();</script>"""

LEDGER_COLUMNS = ("claim id", "section", "kind", "quantity", "paper", "ours", "95% interval", "deviation",
                  "verdict", "relation", "reason", "chapter")


def _cells(r: dict) -> list[tuple[str, str]]:
    chapter = r["chapter"] or "—"
    if r.get("via"):
        chapter += f" (row of {r['via']})"
    return [("cid", r["id"]), ("", r["section"]), ("", r["kind"]), ("", r["quantity"]), ("", value_text(r["paper"])),
            ("", value_text(r["ours"])), ("", value_text(r["interval"])), ("", deviation_text(r["relative deviation"])),
            ("", r["verdict"]), ("", r["relation"] or "—"), ("why", r["reason"] or "—"), ("", chapter)]


def ledger_html(ledger: list[dict], table_id: str = "claims-ledger") -> str:
    """The full ledger as one plain HTML table, with a text box that filters its rows (a few lines of inline JS).

    Without JavaScript the table is still complete, and the browser's find works on it.
    """
    head = "".join(f"<th>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
    body = "\n".join("<tr>" + "".join(f'<td class="{c}">{html.escape(str(v))}</td>' if c else
                                      f"<td>{html.escape(str(v))}</td>" for c, v in _cells(r)) + "</tr>"
                     for r in ledger)
    return (_CSS + _FILTER.format(id=table_id) + f'<div class="ledger-wrap"><table class="ledger" id="{table_id}">'
            f"<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table></div>")


def disagreements_html(records: list[dict]) -> str:
    """The paper's disagreements as an HTML table: title and sentence, the values, and each claim id with its
    printed value and the ledger's verdict."""
    rows = []
    for i, d in enumerate(records, 1):
        ids = "<br>".join(f'<code>{html.escape(c["id"])}</code> = {html.escape(value_text(c["paper"]))} '
                          f'<small>({html.escape(c["source"] or "")}; {html.escape(c["verdict"] or "—")})</small>'
                          for c in d["claims"])
        rows.append(f"<tr><td>{i}</td><td><b>{html.escape(d['title'])}</b><br>{html.escape(d['note'])}</td>"
                    f"<td>{html.escape(d['values'])}</td><td>{ids}</td></tr>")
    return (_CSS + '<div class="ledger-wrap"><table class="ledger"><thead><tr><th>#</th><th>disagreement</th>'
            "<th>values</th><th>claim ids: printed value (source; ledger verdict)</th></tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table></div>")


def arms_frame(records: list[dict]):
    """Contrast variance by arm: ours with its interval, exact, the paper's (ablation table) and the verdict."""
    import pandas as pd

    return pd.DataFrame([{"arm": r["arm"], "ours": f"{r['ours']:.4f}",
                          "95% interval": f"[{r['interval'][0]:.4f}, {r['interval'][1]:.4f}]",
                          "exact": f"{r['exact']:.4f}", "paper": value_text(r["paper"]), "verdict": r["verdict"],
                          "claim id": r["claim id"]} for r in records])
