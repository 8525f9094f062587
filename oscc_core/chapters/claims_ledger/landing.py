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

import html

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.key_claims import key_claims_html
from oscc_core.reporting import claims, tally
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
    out = {KEY_CLAIMS_GLUE: key_claims_html(lines, found)}
    clause = hypothesis_clause(found.get(COVARIANCE_STEM) or {})
    if clause is not None:
        out[HYPOTHESIS_GLUE] = f'<p class="oscc-hypothesis">{html.escape(clause)}</p>'    # HTML: it crosses pages
    for stem in CHAPTERS:
        record = (found.get(stem) or {}).get(RESULTS_KEY)
        if record is None:
            continue
        out[glue_name(stem)] = landing_html(record, counts_line(lines, sections[stem]))
    return out


#: The chapter whose results hold the headline's constructions, and the glue name of the hypothesis clause.
COVARIANCE_STEM, HYPOTHESIS_GLUE = "02_covariance", "landing_hypothesis"


def hypothesis_clause(covariance: dict) -> str | None:
    """The mismatched-construction hypothesis in one clause, with its caveat, for the headline figure: the pair of
    continuations closest to the paper's four variances (`hypothesis` of the covariance chapter's results) and its
    reduction against the paper's, and the proper construction whose ratio alone comes closest to the paper's
    (`construction_grid`, least "ratio gap"), at its own variances: a ratio is cheap to match.  None where the
    results hold no hypothesis."""
    h = covariance.get("hypothesis")
    grid = [r for r in covariance.get("construction_grid") or () if r.get("ratio gap") is not None]
    if not h or not grid:
        return None
    cheap = min(grid, key=lambda r: r["ratio gap"])
    return (f"A hypothesis, not a reading: with the independent arm under the {h['independent_under']} continuation "
            f"and the coupled arms under {h['coupled_under']}, the exact variances at root {h['root']!r} give a "
            f"{h['reduction']:.1f}% reduction, near the paper's {h['paper_reduction']}%; we found it by searching "
            f"for that number, it is not a paired comparison and it changes no verdict, and a ratio alone is cheap "
            f"to match: the {cheap['continuation']} continuation gives {cheap['reduction_percent']:.1f}% at root "
            f"{cheap['root']} with variances of only {cheap['independent']:.2f} and {cheap['full']:.2f} chips².")


def missing_findings(found: dict[str, dict]) -> list[str]:
    """The built chapters whose results file holds no findings (the landing page would have a hole)."""
    return [stem for stem in CHAPTERS if stem in found and RESULTS_KEY not in found[stem]]


def ledger_findings(counted: dict):
    """The ledger chapter's own result box: the paper's values by verdict (each once; measured values, checks,
    the paper's intervals and values true by construction together, as every chapter's box counts), the values
    whose size is not compared and the orderings judged for them, and the verdicts that depend on the reading
    (`reporting.tally`), each statement filed under the line of the verdicts it counts; under them the counts with
    the gaps by cause."""
    from oscc_core.reporting.findings import OPEN, Findings, Statement

    v, st = tally.values_by_verdict(counted), counted["status"]
    orderings = counted["orderings"]
    judged = sum(orderings.values())
    statements = (
        Statement(f"Of the {sum(v.values()):,} values the paper prints (each counted once, however often it is "
                  f"printed), {v['reproduced']:,} are reproduced; of the {v['not compared']:,} not compared (most "
                  f"because their size cannot be set beside ours), {judged:,} carry an ordering the paper states, and "
                  f"it holds for {orderings['reproduced']:,}.", claims.REPRODUCED),
        Statement(f"{v['not reproduced']:,} values are not reproduced and {v['partly']:,} hold only partly (the "
                  f"relation the paper states holds, the size does not); the ordering fails for "
                  f"{orderings['not reproduced']:,} of the values not compared in size.", claims.NOT_REPRODUCED),
        Statement(f"{v['inconclusive']:,} values are inconclusive (the size agrees, the relation is not established) "
                  f"and the ordering is unresolved for {orderings['inconclusive']:,} of the values not compared in "
                  f"size; {v['impossible under the rules']:,} values are impossible under the game's rules under "
                  f"every reading; {v['depends on the reading']:,} have a verdict that depends on the reading of the "
                  f"paper's words, and {counted['reading dependent']:,} verdicts in all rest on a reading another "
                  f"reading would change (each line lists every reading's verdict); counted apart: "
                  f"{counted['printings']:,} further printings of a counted value and {counted['settings']:,} "
                  f"settings ({st['adopted']:,} adopted, {st['differs']:,} differ).", OPEN))
    return Findings.filed(statements, tuple(x.text for x in statements), counts=tally.tally_text(counted))
