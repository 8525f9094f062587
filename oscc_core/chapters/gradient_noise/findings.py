"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the audit's own estimates and the comparison rows' verdicts (paper values read from the claims file), and
the closing table of its counts.

Counts come from `reporting.tally` (the landing page's function), on one basis everywhere: the paper's measured
values, each once however often it is printed, apart from checks, the paper's intervals and values true by
construction (Proposition 3's identity rows have no claim id: they are not counted; settings have a status and
are not counted); the values not compared in size are counted again by the verdict of the ordering the paper
states for them, and the verdicts that depend on the reading of the paper's words are counted.  The box's
sentence (`tally.tally_text`) and the closing table (`counts_frame`) read the same `tally.chapter_tally`.
"""
from __future__ import annotations

from oscc_core.chapters.gradient_noise.arms import LABELS, PAPER_KEY, ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.pooled import POOLED_READING, PooledContrast
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.reporting import claims, comparability
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict
from oscc_core.reporting.ledger_lines import BY_CONSTRUCTION_KEY, section_lines
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import BY_CONSTRUCTION, chapter_tally, measured_key, tally, tally_text

STEM = "03_gradient_noise"
#: The rows of the closing table, in order: the classes `tally.tally` counts, as the box's sentence names them.
COUNT_ROWS = {"measurements": "measured values", "checks": "checks", "intervals": "the paper's intervals",
              BY_CONSTRUCTION: "true by construction"}
#: The row of the closing table that counts the orderings of values not compared in size.
ORDERINGS_ROW = "orderings of values not compared in size"


def counts(rows: list[Row], entries: dict | None = None) -> dict:
    """The chapter's counts: `reporting.tally.chapter_tally` over every row of the chapter (`entries`: the claims
    file's entries, by default the book's)."""
    return chapter_tally(STEM, rows) if entries is None else tally(section_lines(STEM, rows, entries))


def result_counts(rows: list[Row]) -> dict[str, int]:
    """The chapter's measured values by verdict."""
    return counts(rows)["measurements"]


def counts_frame(rows: list[Row], entries: dict | None = None):
    """The closing verdict-count table, from the same counts as the box (`counts`): one row per class of values
    (measured values, checks, the paper's intervals, true by construction) and one for the orderings the paper
    states for the values not compared in size, by verdict (columns that are empty everywhere left out), with each
    row's total; then the reading-dependent verdicts and the printings not counted again."""
    import pandas as pd

    counted = counts(rows, entries)
    table = {label: dict(counted[name]) for name, label in COUNT_ROWS.items()}
    table[ORDERINGS_ROW] = {v: counted["orderings"].get(v, 0) for v in claims.VERDICTS}
    frame = pd.DataFrame.from_dict(table, orient="index")[list(claims.VERDICTS)]
    frame = frame.loc[:, (frame != 0).any(axis=0)]
    frame["total"] = frame.sum(axis=1)
    frame = frame.astype(object)
    frame.loc["verdicts that depend on the reading", :] = ""
    frame.loc["verdicts that depend on the reading", "total"] = counted["reading dependent"]
    frame.loc["further printings, not counted again", :] = ""
    frame.loc["further printings, not counted again", "total"] = counted["printings"]
    return frame


def _row(rows: list[Row], cid: str) -> Row:
    return next(r for r in rows if r.claim_id == cid and r.primary)


#: The rows whose declared relation is the paper's ordering of the fixed arms, one per stage of the noise.
ORDER_ROWS = {q: f"noise_transfer.root_only.{q}_ratio" for q in ("return", "gradient", "update")}


def order_text(rows: list[Row]) -> str:
    """Whether the return, gradient and update ratios follow the paper's ordering of the arms, and what decides
    it (exact values, where a stage has them; else the paired bootstrap), as a phrase ("in the paper's order, ...").
    """
    found = {q: _row(rows, cid) for q, cid in ORDER_ROWS.items()}
    if not all(r.relation_holds for r in found.values()):
        failed = [q for q, r in found.items() if not r.relation_holds]
        return f"but not in the paper's order at the {' and '.join(failed)} stage{'s' if len(failed) > 1 else ''}"
    exact = [q for q, r in found.items() if r.relation_resolved is None]
    boot = [q for q, r in found.items() if r.relation_resolved is not None]
    parts = []
    if exact:
        parts.append(f"on exact values for the {' and '.join(exact)} ratio{'s' if len(exact) > 1 else ''}")
    if boot:
        decided = all(found[q].relation_resolved for q in boot)
        parts.append(f"{'every step decided' if decided else 'not every step decided'} by the paired bootstrap "
                     f"for the {' and '.join(boot)} ratio{'s' if len(boot) > 1 else ''}")
    return "in the paper's order (" + "; ".join(parts) + ")"


def _values(rows: list[Row], entries: dict | None = None) -> list[dict]:
    """One ledger line per measured value of the chapter (the line `tally.tally` counts it by)."""
    first: dict[str, dict] = {}
    for line in section_lines(STEM, rows, entries):
        if line["kind"] == "setup":
            continue
        key = measured_key(line)
        if key not in first or line["id"] == key:
            first[key] = line
    return list(first.values())


def not_compared_text(rows: list[Row], entries: dict | None = None) -> str:
    """The values not compared in size, by comparability family (each once), with how many of their orderings
    the paper states and how many hold, e.g. '5 gradient-noise traces (4 of 5 orderings hold)'."""
    families: dict[str, list[dict]] = {}
    for line in _values(rows, entries):
        if line["verdict"] == claims.NOT_COMPARED and not line.get(BY_CONSTRUCTION_KEY):
            family = comparability.family_of(line["id"])
            families.setdefault(family.name if family else "other quantities", []).append(line)
    parts = []
    for name, lines in families.items():
        judged = [ln for ln in lines if ln.get("relation verdict")]
        held = sum(ln["relation verdict"] == claims.REPRODUCED for ln in judged)
        parts.append(f"{len(lines)} {name}" + (f" ({held} of {len(judged)} orderings the paper states hold)"
                                               if judged else ""))
    return "; ".join(parts)


def _contrast_rows(rows: list[Row]) -> dict[str, Row]:
    return {a: _row(rows, f"cost_frontier.{PAPER_KEY[a]}.contrast_variance") for a in ROW_ARMS}


def pooled_order_text(pooled: PooledContrast) -> str:
    """How the fixed arms' contrast variances are ordered on the all-roots pool (exact values), as a phrase:
    'in the paper's order' or 'ordered independent > continuation-only > ..., against the paper's order'."""
    order = sorted(PAPER_ARMS, key=pooled.exact.get, reverse=True)
    if tuple(order) == PAPER_ARMS:
        return "in the paper's order"
    return "ordered " + " > ".join(LABELS[a] for a in order) + ", against the paper's order"


def reading_text(rows: list[Row]) -> str:
    """What the reading of the frontier's contrast variances does to their verdicts: how many depend on it, and
    the independent arm's verdict under each reading."""
    found = _contrast_rows(rows)
    dependent = sum(r.reading_dependent for r in found.values())
    ind = found["independent"]
    each = "; ".join(f"{r['verdict']} under {r['reading']}" for r in ind.readings)
    return (f"{dependent} of the frontier's {len(found)} contrast variances change verdict with the roots they are "
            f"read at, and the paper's reading, {POOLED_READING}, decides (independent sampling: {each})")


def holds_statements(tables: dict[str, list[Row]], front: dict[str, FrontierArm], budget: int) -> list[Statement]:
    """What the paper states about the mechanism, each with its computed verdict: Proposition 3, the noise ordering
    of the coupled arms, the frontier's noise traces and groups at the matched budget, the finite gradients."""
    rows = [r for t in tables.values() for r in t]
    prop3 = tables["proposition_3"]
    n_prop3 = sum(r.verdict == claims.REPRODUCED for r in prop3)
    finite = [r for r in tables["noise_transfer"] if r.claim_id.endswith("finite_gradients")]
    all_finite = all(r.verdict == claims.REPRODUCED for r in finite)
    groups = {a: front[a].groups for a in ("independent", "full")}
    traces = _row(rows, "cost_frontier.root_only.gradient_noise_trace")
    order_rows = [_row(rows, cid) for cid in ORDER_ROWS.values()]
    return [
        Statement(f"Proposition 3 holds ({n_prop3} of {len(prop3)} identity checks).",
                  relation_verdict(n_prop3 == len(prop3))),
        Statement(f"Every coupled arm lowers the return, gradient and update noise {order_text(rows)}.",
                  relation_verdict(all(r.relation_holds for r in order_rows),
                                   all(r.relation_resolved is not False for r in order_rows))),
        Statement(f"At a matched budget of {budget:,} physical draws full coupling gets {groups['full']:,} groups "
                  f"against {groups['independent']:,} for independent sampling, and the noise traces on that "
                  f"frontier {'keep' if traces.relation_holds else 'do not keep'} the paper's order of the fixed "
                  "arms (exact values).", relation_verdict(traces.relation_holds)),
        Statement(f"{'Every' if all_finite else 'Not every'} gradient is finite.", relation_verdict(all_finite))]


def size_statements(rows: list[Row], gradient: dict[str, float], pooled: PooledContrast) -> list[Statement]:
    """The sizes and the orderings our numbers judge against the paper's, each with its computed verdict, then what
    depends on the reading, what is not compared in size and what is inconclusive."""
    counted = counts(rows)["measurements"]
    select = _row(rows, "noise_transfer.oscc_select.gradient_ratio")
    pooled_ind = _contrast_rows(rows)["independent"]
    rises = _row(rows, "clipping.activated_stress.update_variance").relation_holds
    inconclusive = [r.quantity for r in rows if r.primary and r.verdict == claims.INCONCLUSIVE]
    paper_full = claims.claim("noise_transfer.cp_grpo_full.gradient_ratio")
    out = [
        Statement(f"The sizes do not transfer: full coupling keeps {gradient['full']:.3f} of the independent "
                  f"gradient noise (paper: {claims.format_value(paper_full)}); of the paper's measured values "
                  f"{counted[claims.NOT_REPRODUCED]} are not reproduced and {counted[claims.PARTLY]} hold only "
                  "partly.", _row(rows, "noise_transfer.cp_grpo_full.gradient_ratio").verdict),
        Statement(f"OSCC-Select ({gradient[SELECT]:.3f}) {'is' if select.relation_holds else 'is not'} the lowest "
                  "arm.", relation_verdict(select.relation_holds, select.relation_resolved)),
        Statement(f"The frontier's contrast variances read on {POOLED_READING} are {pooled_order_text(pooled)} "
                  f"(independent {pooled_ind.ours:.2f} against the paper's {claims.format_value(pooled_ind.paper)}).",
                  relation_verdict(tuple(sorted(PAPER_ARMS, key=pooled.exact.get, reverse=True)) == PAPER_ARMS)),
        Statement(f"Our update variance {'rises' if rises else 'does not rise'} from the zero-clipping control to "
                  "the clipping stress as the paper's does.", relation_verdict(rises)),
        Statement(f"{reading_text(rows)[0].upper()}{reading_text(rows)[1:]}; {counted[claims.NOT_COMPARED]} "
                  f"measured values are not compared in size, only the orderings the paper states for them: "
                  f"{not_compared_text(rows)}.", OPEN)]
    if inconclusive:
        out.append(Statement(f"{len(inconclusive)} {'result is' if len(inconclusive) == 1 else 'results are'} "
                             f"inconclusive ({'; '.join(inconclusive)}).", claims.INCONCLUSIVE))
    return out


def findings(tables: dict[str, list[Row]], audit: NoiseAudit, setting: str, front: dict[str, FrontierArm],
             budget: int, pooled: PooledContrast) -> Findings:
    """The result box (each statement under the line of its computed verdict: `holds_statements`,
    `size_statements`) and two landing bullets.

    `tables` maps each comparison table's name to its rows (Proposition 3's under "proposition_3"), `setting`
    names the noise-transfer update setting, `front` is the matched-cost frontier at `budget` draws and `pooled`
    the all-roots pool of its contrast variances."""
    rows = [r for t in tables.values() for r in t]
    gradient = {a: audit.ratio("gradient", a, setting).value for a in ("full", SELECT)}
    select_lowest = _row(rows, "noise_transfer.oscc_select.gradient_ratio").relation_holds
    paper_full = claims.claim("noise_transfer.cp_grpo_full.gradient_ratio")
    landing = (f"Gradient noise: Proposition 3 holds, and coupling lowers the return, gradient and update noise "
               f"{order_text(rows)}.",
               f"The sizes do not transfer: full coupling keeps {gradient['full']:.3f} of the independent gradient "
               f"noise (paper: {claims.format_value(paper_full)}), OSCC-Select "
               f"{'is' if select_lowest else 'is not'} the lowest arm, and on {POOLED_READING}, the paper's "
               f"reading, the frontier's contrast variances are {pooled_order_text(pooled)}.")
    return Findings.filed(holds_statements(tables, front, budget) + size_statements(rows, gradient, pooled), landing,
                          counts=tally_text(counts(rows)))
