"""The chapter's findings: the three-line result box at its top and its bullets on the landing page.

Every sentence is written from the chapter's own numbers and verdicts (the
headline audit pooled over all roots, its rows, the CFR+ alternative and the construction grids);
the paper's numbers are read from the claims file.  The counts are those of
`reporting.tally.chapter_tally` (each measured value once), the same as the
chapter's closing table.  The mismatched construction that comes near the
paper's headline (`hypothesis_sentence`) is stated as a hypothesis with its
caveat: it was found by searching for the paper's number, so it is not a
reading and changes no verdict.  Units: variances in chips^2, reductions in
percent, ratios unitless.
"""
from __future__ import annotations

from oscc_core.chapters.covariance import equivalence
from oscc_core.chapters.covariance.coupling import ordering
from oscc_core.reporting import claims
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict
from oscc_core.reporting.rows import Relation, Row
from oscc_core.reporting.tally import chapter_tally, tally_text

STEM = "02_covariance"

#: The claims the box cites.
PAPER_REDUCTION, PAPER_FULL, PAPER_IND = ("main.caption.variance_reduction", "main.cp_grpo_paired.variance",
                                          "main.independent.variance")
#: The row whose verdict is the size statement's: the headline reduction.
REDUCTION_ROW = PAPER_REDUCTION


def chapter_counts(tables: dict[str, list[Row]]) -> dict:
    """The chapter's counts (`reporting.tally.chapter_tally` over every row of `tables`, the function the
    landing page counts with)."""
    return chapter_tally(STEM, [r for rows in tables.values() for r in rows])


def verdict_counts(tables: dict[str, list[Row]]) -> dict[str, int]:
    """The measured values the chapter compares with the paper's (each once, however often the paper prints it;
    checks, the paper's intervals and values true by construction apart), by verdict: the size verdicts and
    "depends on the reading" only."""
    measured = chapter_counts(tables)["measurements"]
    return {v: n for v, n in measured.items() if v in (*claims.COMPARED, claims.DEPENDS) and n}


#: The reading each table's reading-dependent rows depend on, as the box names it.
READING_CHOICES = {"seed_precision": "which roots a seed pools", "update_variance": "the step size of an update",
                   "strata": "which cards a private-card stratum holds"}


def _by_claim(tables: dict[str, list[Row]]) -> dict[str, Row]:
    return {r.claim_id: r for rows in tables.values() for r in rows if r.primary and r.claim_id}


def holds_statements(audit, tables: dict[str, list[Row]], eq_records: list[dict]) -> list[Statement]:
    """What the paper states and our numbers judge: the direction of the reduction (the ratio's interval below 1),
    the ordering of the four arms on their exact variances, the branch means (equivalent when every branch's 95%
    interval of full minus independent lies inside the margin) and the identity, each with its computed verdict."""
    ind, full, ratio = audit.contrast_var("independent"), audit.contrast_var("full"), audit.ratio()
    order = ordering(audit, "contrast_var")
    identity = _by_claim(tables)["text_precision.both_arms.variance_identity_residual"]
    equivalent = all(equivalence.equivalent(rec).established for rec in eq_records)
    lowers = ratio.value < 1.0
    return [
        Statement(f"Coupling {'lowers' if lowers else 'does not lower'} the contrast variance: {full.value:.2f} "
                  f"chips² fully coupled against {ind.value:.2f} independent (ratio {ratio.value:.3f}, 95% interval "
                  f"{ratio.low:.3f} to {ratio.high:.3f}).", relation_verdict(lowers, ratio.high < 1.0)),
        Statement("Both partial couplings lower the exact variance and full coupling lowers it most, as the paper "
                  "states." if order.holds else "The relation the paper states for the four arms (both partial "
                  "couplings below independent, full lowest) does not hold in their exact variances.",
                  relation_verdict(order.holds)),
        Statement("Both branch means stay equivalent." if equivalent else "Not every branch mean is shown "
                  "equivalent by our intervals (the exact difference is 0 by marginal preservation).",
                  relation_verdict(True, equivalent)),
        Statement(f"The variance identity {'holds' if identity.verdict == claims.REPRODUCED else 'fails'} to "
                  f"{identity.ours}.", identity.verdict),
    ]


def size_statement(audit, tables: dict[str, list[Row]]) -> Statement:
    """The size: the reduction against the paper's, with the verdict of its row; the counts of the chapter's
    measured values (each counted once, `chapter_counts`) and how many verdicts depend on the reading."""
    red, full = audit.reduction(), audit.contrast_var("full")
    n = verdict_counts(tables)
    dependent = chapter_counts(tables)["reading dependent"]
    choices = [text for table, text in READING_CHOICES.items()
               if any(r.reading_dependent and r.primary for r in tables.get(table, ()))]
    inside = full.low <= float(claims.claim(PAPER_FULL)) <= full.high
    text = (f"The size: our reduction is {red.value:.1f}% (95% interval {red.low:.1f} to {red.high:.1f}%, exact "
            f"{red.exact:.1f}%) against the paper's {claims.format_value(claims.claim(PAPER_REDUCTION))}%, and the "
            f"paper's fully coupled {claims.format_value(claims.claim(PAPER_FULL))} chips² lies "
            f"{'inside' if inside else 'outside'} our interval; of {sum(n.values())} measured values compared "
            f"with the paper's (each counted once), "
            f"{n.get(claims.PARTLY, 0)} are partly (the direction holds, the size does not), "
            f"{n.get(claims.REPRODUCED, 0)} reproduced, {n.get(claims.INCONCLUSIVE, 0)} inconclusive, "
            f"{n.get(claims.NOT_REPRODUCED, 0)} not reproduced and {n.get(claims.DEPENDS, 0)} depend on the "
            f"reading; {dependent} verdict{'s' if dependent != 1 else ''} in all change with a reading of the "
            f"paper's words" + (f" ({', '.join(choices)})" if choices else "") + ".")
    row = _by_claim(tables).get(REDUCTION_ROW)
    verdict = row.verdict if row is not None else claims.verdict(       # the rule on the audit, where no row is
        float(claims.claim(PAPER_REDUCTION)), red.value, red.low, red.high,
        relation=Relation.side("variance reduction > 0", red.value, red.low, red.high, above=0.0))
    return Statement(text, verdict)


def hypothesis_values(mixed) -> dict:
    """The mismatched construction nearest the paper's four variances (first row of
    `constructions.mixed_construction_grid`): its continuations, variances, ratio and reduction, and the paper's
    reduction."""
    best = mixed.iloc[0].to_dict()
    return {"independent_under": best["independent arm under"], "coupled_under": best["coupled arms under"],
            "independent": float(best["independent"]), "full": float(best["full"]), "ratio": float(best["ratio"]),
            "reduction": float(best["reduction_percent"]),
            "paper_reduction": claims.format_value(claims.claim(PAPER_REDUCTION))}


def hypothesis_sentence(mixed, root: str) -> str:
    """The hypothesis about how the paper may have built its headline, with its caveat."""
    h = hypothesis_values(mixed)
    return (f"A hypothesis about how the paper may have built its headline: with the independent arm under the "
            f"{h['independent_under']} continuation "
            f"and the coupled arms under {h['coupled_under']}, the exact variances at root {root!r} are "
            f"{h['independent']:.2f} and {h['full']:.2f} chips², a {h['reduction']:.1f}% reduction, close to the "
            f"paper's {h['paper_reduction']}%; we found this mismatch by searching for the paper's number, it would "
            f"not be a paired comparison, and it changes no verdict.")


def open_statements(cfr_audit, grid, mixed, root: str) -> list[Statement]:
    """What is open: the construction (no bound of the rules is involved), with the CFR+ alternative, the nearest
    proper construction and the hypothesis of the mismatched construction."""
    distance = float(grid["level distance"].min())
    return [Statement("Nothing here breaks a rule of the game. Open: the paper does not say which continuation "
                      f"policy plays after the root; under a CFR+ continuation our reduction at the audited root "
                      f"alone is {cfr_audit.reduction().value:.1f}%, and the proper construction closest to the "
                      f"paper's four arm variances among those we enumerate exactly is still {distance:.2f} away from "
                      "them in mean |log ratio| (0 would be the paper's numbers).", OPEN),
            Statement(hypothesis_sentence(mixed, root), OPEN)]


def findings(audit, tables: dict[str, list[Row]], eq_records: list[dict], cfr_audit, grid, mixed,
             root: str) -> Findings:
    """The chapter's result box and landing bullets from the headline `audit` (pooled over all roots), the
    chapter's `tables` of rows, the equivalence decisions `eq_records` (of the same audit), the CFR+ alternative
    `cfr_audit`, the exact construction `grid` and the mismatched constructions `mixed` at `root`."""
    ind, full, red = audit.contrast_var("independent"), audit.contrast_var("full"), audit.reduction()
    paper = {cid: claims.format_value(claims.claim(cid)) for cid in (PAPER_REDUCTION, PAPER_FULL, PAPER_IND)}
    means = ("keeps the branch means" if all(equivalence.equivalent(rec).established for rec in eq_records)
             else "leaves the exact branch means unchanged (our equivalence test does not resolve every branch)")
    landing = (
        f"Coupling the opponent's card and the continuation's chance draws lowers the Leduc return-contrast "
        f"variance pooled over all roots and {means}, as the paper says, but by {red.value:.1f}% ({full.value:.2f} "
        f"against {ind.value:.2f} chips²), not the paper's {paper[PAPER_REDUCTION]}% ({paper[PAPER_FULL]} against "
        f"{paper[PAPER_IND]}).",
        f"The gap is not sampling noise: the exact variances by enumeration are {full.exact:.2f} and "
        f"{ind.exact:.2f} chips²; under a CFR+ continuation the reduction at the audited root alone is "
        f"{cfr_audit.reduction().value:.1f}%, "
        "and no construction we enumerate gives the paper's four arm variances together.",
        hypothesis_sentence(mixed, root),
    )
    statements = (holds_statements(audit, tables, eq_records) + [size_statement(audit, tables)]
                  + open_statements(cfr_audit, grid, mixed, root))
    return Findings.filed(statements, landing, counts=tally_text(chapter_counts(tables)))

