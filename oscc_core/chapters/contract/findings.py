"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the audits' own numbers and the comparison rows' verdicts (never from the paper's numbers alone).

Counts come from `reporting.tally` (the landing page's function): *checks* (pass/fail audits such as "0/25549
drifts") apart from *measurements* (measured sizes such as a marginal shift), each measured value once however
often the paper prints it; settings have a status and are not counted.
"""
from __future__ import annotations

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.reporting import claims
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict
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


def _inconclusive(rows: list[Row]) -> list[str]:
    return [r.quantity for r in rows if r.primary and r.verdict == claims.INCONCLUSIVE]


def findings(rows: list[Row], settings: list[Row], controls: dict, admissible: dict,
             oa: ObservationAudit) -> Findings:
    """The result box (each statement under the line its computed verdict belongs to: `Findings.filed`) and two
    landing bullets."""
    counted = chapter_counts(rows, settings)
    checks, results = counted["checks"], counted["measurements"]
    rejected = all(c["decision"] == "reject" and c["rejected"] == c["groups"] for c in controls.values())
    accepted = sum(a["decision"] == "accept" for a in admissible.values())
    groups = sorted({c["groups"] for c in controls.values()})
    gate = (f"the safety certificate rejects {'every one' if rejected else 'not every one'} of the "
            f"{len(controls)} controlled violations in all of its {'/'.join(f'{g:,}' for g in groups)} groups and "
            f"accepts {accepted} of the {len(admissible)} admissible arms")
    n_checks, n_results = sum(checks.values()), sum(results.values())
    statements = [
        Statement(f"{gate[0].upper()}{gate[1:]}.", relation_verdict(rejected and accepted == len(admissible))),
        Statement(f"The audit of all {oa.states:,} information states finds {oa.exposures} opponent-card exposures.",
                  relation_verdict(oa.exposures == 0)),
        Statement(f"{checks[claims.REPRODUCED]} of the {n_checks} replay, swap and rejection checks reproduce.",
                  relation_verdict(checks[claims.REPRODUCED] == n_checks)),
        Statement(f"The controls' side effects have the paper's size in {results[claims.REPRODUCED]} of {n_results} "
                  f"measured results (marginal shifts, replay failure rates, variance changes): "
                  f"{results[claims.PARTLY]} hold only in direction (partly) and {results[claims.NOT_REPRODUCED]} "
                  f"are not reproduced.", relation_verdict(results[claims.REPRODUCED] == n_results))]
    names = _inconclusive(rows)
    if names:
        statements.append(Statement(f"{len(names)} {'result is' if len(names) == 1 else 'results are'} "
                                    f"inconclusive ({'; '.join(names)}).", claims.INCONCLUSIVE))
    states = next(s for s in settings if s.claim_id == "method_obs.observation_audit.states")
    if states.verdict == claims.DIFFERS:
        statements.append(Statement(f"The audit covers {oa.states:,} information states where the paper audited "
                                    f"{claims.format_value(states.paper)} without saying which: a setting that "
                                    "differs, not a result.", OPEN))
    exposed = ("no information state exposes the opponent's card" if oa.exposures == 0 else
               f"the audit finds {oa.exposures} opponent-card exposures")
    landing = (f"Contract: {gate}; {exposed}.",
               statements[3].text)
    return Findings.filed(statements, landing, counts=tally_text(counted))
