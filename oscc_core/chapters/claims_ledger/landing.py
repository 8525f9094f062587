"""The landing page's findings: each chapter's bullets (from its results file) beside its counts.

Each chapter writes two or three sentences about what holds, what does not
and what is impossible (`reporting.findings`) into its results file; the
ledger adds the chapter's counts from the ledger's lines of its section, by
`reporting.tally` (the function the chapter's own result box counts with:
measured values once each, checks and the paper's intervals apart, settings
on their own), and glues one HTML list per chapter, `landing_<stem>`, for the
landing page.
"""
from __future__ import annotations

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.key_claims import key_claims_html
from oscc_core.reporting import tally
from oscc_core.reporting.findings import RESULTS_KEY, landing_html

#: The chapters whose findings the landing page shows, in book order.
CHAPTERS = tuple(SECTION_CHAPTERS.values())


#: The glue name of the landing page's key-claims table.
KEY_CLAIMS_GLUE = "landing_key_claims"


def glue_name(stem: str) -> str:
    """The glue name of a chapter's landing bullets."""
    return f"landing_{stem}"


def counts_line(lines: list[dict], section: str) -> str:
    """The counts of the section's lines as `tally.tally_text` writes them (the sentence of its chapter's box)."""
    return tally.tally_text(tally.tally([r for r in lines if r["section"] == section]))


def landing_values(found: dict[str, dict], lines: list[dict]) -> dict[str, str]:
    """{glue name: HTML}: the key-claims table (`landing_key_claims`, once every key claim has a line) and a list
    for every built chapter that wrote findings into its results file."""
    sections = {stem: section for section, stem in SECTION_CHAPTERS.items()}
    out = {KEY_CLAIMS_GLUE: key_claims_html(lines)}
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
    """The ledger chapter's own result box: measured values by verdict (each once), then checks, the paper's
    intervals, values true by construction and settings, each counted apart (`reporting.tally`)."""
    from oscc_core.reporting.findings import Findings

    m, st = counted["measurements"], counted["status"]
    n = sum(m.values())
    compared = n - m["not compared"]
    checks, intervals = sum(counted["checks"].values()), sum(counted["intervals"].values())
    built = sum(counted["by construction"].values())
    box = (f"Of the {n:,} values the paper measures (each counted once, however often it is printed; "
           f"{compared:,} compared), {m['reproduced']:,} are reproduced and {m['inconclusive']:,} are inconclusive.",
           f"{m['not reproduced']:,} are not reproduced and {m['partly']:,} hold only partly (the relation the paper "
           f"states holds, the size does not).",
           f"{m['impossible under the rules']:,} are impossible under the game's rules and {m['not compared']:,} are "
           f"not compared; counted apart: {checks:,} pass/fail checks ({counted['checks']['reproduced']:,} reproduced), "
           f"{intervals:,} intervals the paper prints, {built:,} values true by construction, "
           f"{counted['printings']:,} further printings of a counted value and {counted['settings']:,} settings "
           f"({st['adopted']:,} adopted, {st['differs']:,} differ).")
    landing = (box[0], box[1])
    return Findings(box, landing)
