"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the audits' own numbers and the comparison rows' verdicts (never from the paper's numbers alone).

Counts come from `reporting.tally` (the landing page's function): *checks* (pass/fail audits such as "0/25549
drifts") apart from *measurements* (measured sizes such as a marginal shift), each measured value once however
often the paper prints it; settings have a status and are not counted.
"""
from __future__ import annotations

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.reporting import claims
from oscc_core.reporting.findings import Findings
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import chapter_tally, tally_text

STEM = "01_contract"


def chapter_counts(rows: list[Row], settings: list[Row]) -> dict:
    """The chapter's tally (`reporting.tally.chapter_tally` over every row, settings included): what its box and
    its closing verdict table count."""
    return chapter_tally(STEM, list(rows) + list(settings))


def counts_by_kind(rows: list[Row]) -> dict[str, dict[str, int]]:
    """"check" and "result" (the claims file's kinds) -> the chapter's counts by verdict (`tally.chapter_tally`
    over every row of the chapter, settings included)."""
    counted = chapter_tally(STEM, rows)
    return {"check": counted["checks"], "result": counted["measurements"]}


def _inconclusive_text(rows: list[Row]) -> str:
    names = [r.quantity for r in rows if r.primary and r.verdict == claims.INCONCLUSIVE]
    if not names:
        return "no result is inconclusive"
    return f"{len(names)} {'result is' if len(names) == 1 else 'results are'} inconclusive ({'; '.join(names)})"


def findings(rows: list[Row], settings: list[Row], controls: dict, admissible: dict,
             oa: ObservationAudit) -> Findings:
    """The result box (what holds, what does not, what is impossible or open) and two landing bullets."""
    counted = chapter_counts(rows, settings)
    checks, results = counted["checks"], counted["measurements"]
    rejected = all(c["decision"] == "reject" and c["rejected"] == c["groups"] for c in controls.values())
    accepted = sum(a["decision"] == "accept" for a in admissible.values())
    groups = sorted({c["groups"] for c in controls.values()})
    gate = (f"the safety certificate rejects {'every one' if rejected else 'not every one'} of the "
            f"{len(controls)} controlled violations in all of its {'/'.join(f'{g:,}' for g in groups)} groups and "
            f"accepts {accepted} of the {len(admissible)} admissible arms")
    holds = (f"{gate[0].upper()}{gate[1:]}; the audit of all {oa.states:,} information states finds "
             f"{oa.exposures} opponent-card exposures, and {checks[claims.REPRODUCED]} of the "
             f"{sum(checks.values())} replay, swap and rejection checks reproduce.")
    n_results = sum(results.values())
    does_not = (f"The controls' side effects have the paper's size in only {results[claims.REPRODUCED]} of "
                f"{n_results} measured results (marginal shifts, replay failure rates, variance changes): "
                f"{results[claims.PARTLY]} hold only in direction (partly) and {results[claims.NOT_REPRODUCED]} "
                f"are not reproduced.")
    states = next(s for s in settings if s.claim_id == "method_obs.observation_audit.states")
    scope = (f"the audit covers {oa.states:,} information states where the paper audited "
             f"{claims.format_value(states.paper)}, which is a setting that differs, not a result"
             if states.verdict == claims.DIFFERS else f"the audit covers the paper's {oa.states:,} information states")
    open_ = f"No number is impossible under the rules and {_inconclusive_text(rows)}; {scope}."
    landing = (f"Contract: {gate}; no information state exposes the opponent's card.",
               does_not)
    return Findings((holds, does_not, open_), landing, counts=tally_text(counted))
