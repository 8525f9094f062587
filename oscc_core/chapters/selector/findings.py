"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the selectors' own choices, the calibration sweep and the comparison rows' verdicts.

Counts come from `reporting.tally` (the landing page's function): the paper's measured values, each once however
often it is printed, apart from checks and the paper's intervals (settings have a status and are not counted;
rows that compare a selected arm's name carry no claim of the claims file).
"""
from __future__ import annotations

from collections import Counter

from oscc_core.reporting import claims
from oscc_core.reporting.findings import Findings
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import chapter_tally, tally_text

from .sweep import sweep_glue


STEM = "04_selector"


def result_counts(rows: list[Row]) -> Counter:
    """The chapter's measured values by verdict, each once however often the paper prints it (checks, the
    paper's intervals and values true by construction apart): `reporting.tally.chapter_tally` over every row of
    the chapter, the function the landing page counts with."""
    return Counter(chapter_tally(STEM, rows)["measurements"])


def result_glue(rows: list[Row]) -> dict:
    """n_<verdict>_results -> how many of the paper's selector results carry that verdict (zeros too)."""
    counts = result_counts(rows)
    return {f"n_{v.replace(' ', '_')}_results": counts[v] for v in claims.VERDICTS}


def _choice(label: str) -> str:
    """A selector's choice as prose: one arm, or each stratum's arm in parentheses."""
    return f"({label})" if ":" in label else label


def _counts_text(counts: Counter) -> str:
    parts = [f"{counts[v]} {v}" for v in claims.VERDICTS if counts[v]]
    return ", ".join(parts) if parts else "none compared"


def findings(rows: list[Row], three: dict, two: dict, sweep_rows: list[dict], sufficient: dict, delta: float,
             scan) -> Findings:
    """The result box (what holds, what does not, what is impossible or open) and two landing bullets.

    `three` and `two` are the three- and two-action records (`action_support.three_action_record`,
    `two_action_record`), `scan` the root-policy scan (`scan.policy_scan`)."""
    g = sweep_glue(sweep_rows, sufficient)
    sel2, sel3 = ({k: _choice(v) for k, v in rec["selected"].items()} for rec in (two, three))
    counts = result_counts(rows)
    adverse = [r for r in sweep_rows if r["map"] != "semantic"]
    wrong, runs = sum(r["family-wise false selections"] for r in adverse), sum(r["repetitions"] for r in adverse)
    below = "below" if g["false_upper"] <= delta else "not below"
    holds = (f"The certificate keeps Theorem 1's promise: in the near-zero and negative covariance regimes "
             f"{wrong:,} of {runs:,} calibrations select a coupling whose exact gain is not positive (the largest "
             f"rate's exact upper 95% bound is {g['false_upper']:.4f}, {below} delta = {delta:g}), and the "
             f"certification rate grows from {g['cert_first']:.3f} at {g['n_first']} to {g['cert_last']:.3f} at "
             f"{g['n_last']} calibration groups per stratum; with two actions RV-Select picks {sel2['rv']} and "
             f"Oracle-Select {sel2['oracle']}.")
    n_cont = int((scan["noise argmin"] == "continuation_only").sum())
    does_not = (f"The paper's three-action result does not reproduce: OSCC-Select picks {sel3['oscc']}, RV-Select "
                f"{sel3['rv']} and Oracle-Select {sel3['oracle']}, and continuation-only coupling minimises the "
                f"noise for {n_cont} of the {len(scan)} root policies we scan; of the paper's measured selector values, "
                f"{_counts_text(counts)}.")
    n_inc = counts[claims.INCONCLUSIVE]
    inconclusive = "none is inconclusive" if n_inc == 0 else f"{n_inc} {'is' if n_inc == 1 else 'are'} inconclusive"
    open_ = (f"No number is impossible under the rules and {inconclusive}; the paper's noise traces and gain "
             f"bounds are on a scale it does not define (it does not state its root policy), so only their "
             f"orderings against the independent arm can agree with ours, not their sizes.")
    landing = (f"Selector: {wrong:,} of {runs:,} calibrations in the adverse covariance regimes select a coupling "
               f"that does not help (upper 95% bound {g['false_upper']:.4f}, {below} delta = {delta:g}), as "
               f"Theorem 1 promises; certification grows from {g['cert_first']:.3f} to {g['cert_last']:.3f} over "
               f"{g['n_first']} to {g['n_last']} groups per stratum.",
               f"With three actions OSCC-Select picks {sel3['oscc']} and Oracle-Select {sel3['oracle']}, not the "
               f"paper's continuation-only coupling, which minimises the noise for {n_cont} of {len(scan)} scanned "
               f"root policies.")
    return Findings((holds, does_not, open_), landing, counts=tally_text(chapter_tally(STEM, rows)))
