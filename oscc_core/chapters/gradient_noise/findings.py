"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the audit's own estimates and the comparison rows' verdicts (paper values read from the claims file).

Counts come from `reporting.tally` (the landing page's function): the paper's measured values, each once
however often it is printed, apart from checks, the paper's intervals and values true by construction
(Proposition 3's identity rows have no claim id: they are counted apart; settings have a status and are not
counted).
"""
from __future__ import annotations

from oscc_core.chapters.gradient_noise.arms import SELECT
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.reporting import claims
from oscc_core.reporting.findings import Findings
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import chapter_tally, tally_text

STEM = "03_gradient_noise"


def result_counts(rows: list[Row]) -> dict[str, int]:
    """The chapter's measured values by verdict (`reporting.tally.chapter_tally` over every row of the chapter)."""
    return chapter_tally(STEM, rows)["measurements"]


def _row(rows: list[Row], cid: str) -> Row:
    return next(r for r in rows if r.claim_id == cid and r.primary)


#: The rows whose declared relation is the paper's ordering of the fixed arms, one per stage of the noise.
ORDER_ROWS = tuple(f"noise_transfer.root_only.{q}_ratio" for q in ("return", "gradient", "update"))


def order_text(rows: list[Row]) -> str:
    """Whether the return, gradient and update ratios follow the paper's ordering of the arms, and whether the
    paired bootstrap decides every step of it, as a phrase ("in the paper's order, ...")."""
    found = [_row(rows, cid) for cid in ORDER_ROWS]
    if all(r.relation_holds and r.relation_resolved for r in found):
        return "in the paper's order, every step decided by the paired bootstrap"
    if all(r.relation_holds for r in found):
        return "in the paper's order on our estimates, though the paired bootstrap does not decide every step"
    return "but not in the paper's order at every stage"


def findings(tables: dict[str, list[Row]], audit: NoiseAudit, setting: str, front: dict[str, FrontierArm],
             budget: int) -> Findings:
    """The result box (what holds, what does not, what is impossible or open) and two landing bullets.

    `tables` maps each comparison table's name to its rows (Proposition 3's under "proposition_3"), `setting`
    names the noise-transfer update setting and `front` is the matched-cost frontier at `budget` draws."""
    rows = [r for t in tables.values() for r in t]
    prop3 = tables["proposition_3"]
    n_prop3 = sum(r.verdict == claims.REPRODUCED for r in prop3)
    gradient = {a: audit.ratio("gradient", a, setting).value for a in ("full", SELECT)}
    order = order_text(rows)
    finite = [r for r in tables["noise_transfer"] if r.claim_id.endswith("finite_gradients")]
    all_finite = all(r.verdict == claims.REPRODUCED for r in finite)
    groups = {a: front[a].groups for a in ("independent", "full")}
    holds = (f"Proposition 3 holds ({n_prop3} of {len(prop3)} identity checks); every coupled arm lowers the return, "
             f"gradient and update noise {order}; {'every' if all_finite else 'not every'} gradient is finite; and at "
             f"a matched budget of {budget:,} physical draws full coupling gets {groups['full']:,} groups against "
             f"{groups['independent']:,} for independent sampling.")
    counts = result_counts(rows)
    paper_full = claims.claim("noise_transfer.cp_grpo_full.gradient_ratio")
    select_lowest = _row(rows, "noise_transfer.oscc_select.gradient_ratio").relation_holds
    does_not = (f"The sizes do not: full coupling keeps {gradient['full']:.3f} of the independent gradient noise "
                f"(paper: {claims.format_value(paper_full)}), OSCC-Select ({gradient[SELECT]:.3f}) "
                f"{'is' if select_lowest else 'is not'} the lowest arm, and our update variance "
                f"{'rises' if _row(rows, 'clipping.activated_stress.update_variance').relation_holds else 'falls'} "
                f"from the zero-clipping control to the clipping stress; of the paper's measured values "
                f"{counts[claims.NOT_REPRODUCED]} are not reproduced and {counts[claims.PARTLY]} hold only partly.")
    inconclusive = [r.quantity for r in rows if r.primary and r.verdict == claims.INCONCLUSIVE]
    open_ = (f"No number is impossible under the rules; {len(inconclusive)} "
             f"{'result is' if len(inconclusive) == 1 else 'results are'} inconclusive"
             + (f" ({'; '.join(inconclusive)})" if inconclusive else "")
             + f", {counts[claims.NOT_COMPARED]} measured values are not compared (a reference arm's wall time, "
             f"transition counts the paper does not define), and the noise "
             f"levels are on a scale the paper does not define, so only their ratios and directions are compared.")
    landing = (f"Gradient noise: Proposition 3 holds, and coupling lowers the return, gradient and update noise "
               f"{order}.",
               f"The sizes do not transfer: full coupling keeps {gradient['full']:.3f} of the independent gradient "
               f"noise (paper: {claims.format_value(paper_full)}), and OSCC-Select "
               f"{'is' if select_lowest else 'is not'} the lowest arm.")
    return Findings((holds, does_not, open_), landing, counts=tally_text(chapter_tally(STEM, rows)))
