"""The landing page's findings: each chapter's bullets (from its results file) beside its result counts.

Each chapter writes two or three sentences about what holds, what does not
and what is impossible (`reporting.findings`) into its results file; the
ledger adds the chapter's result counts by verdict from the ledger itself
(results only: settings are counted on their own line) and glues one HTML
list per chapter, `landing_<stem>`, for the landing page.
"""
from __future__ import annotations

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import SETTING_KIND, STATUSES, VERDICTS
from oscc_core.reporting.findings import RESULTS_KEY, landing_html

#: The chapters whose findings the landing page shows, in book order.
CHAPTERS = tuple(SECTION_CHAPTERS.values())


def glue_name(stem: str) -> str:
    """The glue name of a chapter's landing bullets."""
    return f"landing_{stem}"


def _phrase(counts: dict, order) -> str:
    return ", ".join(f"{n:,} {label}" for label in order if (n := counts.get(label, 0)))


def counts_line(lines: list[dict], section: str) -> str:
    """'Results of this section: 12 reproduced, 3 inconclusive, ...; settings: 5 adopted, 2 differ.'"""
    mine = [r for r in lines if r["section"] == section]
    verdicts = {v: sum(r["verdict"] == v for r in mine if r["kind"] != SETTING_KIND) for v in VERDICTS}
    statuses = {s: sum(r["status"] == s for r in mine if r["kind"] == SETTING_KIND) for s in STATUSES}
    results = sum(verdicts.values())
    text = f"The ledger's {results:,} results of this part: {_phrase(verdicts, VERDICTS) or 'none'}"
    settings = _phrase({"adopted": statuses["adopted"], "differ": statuses["differs"]}, ("adopted", "differ"))
    return text + (f" (settings of the paper's runs, counted apart: {settings})." if settings else ".")


def landing_values(found: dict[str, dict], lines: list[dict]) -> dict[str, str]:
    """{glue name: HTML list} for every built chapter that wrote findings into its results file."""
    sections = {stem: section for section, stem in SECTION_CHAPTERS.items()}
    out = {}
    for stem in CHAPTERS:
        record = (found.get(stem) or {}).get(RESULTS_KEY)
        if record is None:
            continue
        out[glue_name(stem)] = landing_html(record, counts_line(lines, sections[stem]))
    return out


def missing_findings(found: dict[str, dict]) -> list[str]:
    """The built chapters whose results file holds no findings (the landing page would have a hole)."""
    return [stem for stem in CHAPTERS if stem in found and RESULTS_KEY not in found[stem]]


def ledger_findings(counted: dict):
    """The ledger chapter's own result box: the counts of results by verdict, settings apart."""
    from oscc_core.reporting.findings import Findings

    v, st = counted["verdict"], counted["status"]
    compared = counted["results"] - v["not compared"]
    box = (f"{v['reproduced']:,} of the {counted['results']:,} results the paper prints are reproduced "
           f"({compared:,} are compared at all).",
           f"{v['not reproduced']:,} are not reproduced and {v['partly']:,} hold only partly (the relation the paper "
           f"states holds, the size does not).",
           f"{v['impossible under the rules']:,} are impossible under the game's rules, {v['inconclusive']:,} are "
           f"inconclusive and {v['not compared']:,} are not compared; the {counted['settings']:,} settings of the "
           f"paper's runs are counted apart ({st['adopted']:,} adopted, {st['differs']:,} differ).")
    landing = (box[0], box[1])
    return Findings(box, landing)
