"""The chapter's findings (`reporting.findings.Findings`): its result box and landing-page bullets, written
from the selectors' own choices, the calibration sweep and the comparison rows' verdicts.

Counts come from `reporting.tally` (the landing page's function): the paper's measured values, each once however
often it is printed, apart from checks and the paper's intervals (settings have a status and are not counted;
rows that compare a selected arm's name carry no claim of the claims file).
"""
from __future__ import annotations

from collections import Counter

from oscc_core.reporting import claims, comparability
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict
from oscc_core.reporting.ledger_lines import section_lines
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import chapter_tally, measured_key, tally_text

from .sweep import sweep_glue


STEM = "04_selector"
#: The comparability families of the chapter's quantities (`reporting.comparability`), in the order the prose
#: names them.
FAMILIES = ("gradient-noise traces", "gain lower bounds", "gradient-noise regret", "selector calls and costs")


def result_counts(rows: list[Row]) -> Counter:
    """The chapter's measured values by verdict, each once however often the paper prints it (checks, the
    paper's intervals and values true by construction apart): `reporting.tally.chapter_tally` over every row of
    the chapter, the function the landing page counts with."""
    return Counter(chapter_tally(STEM, rows)["measurements"])


def result_glue(rows: list[Row]) -> dict:
    """n_<verdict>_results -> how many of the paper's selector results carry that verdict (zeros too)."""
    counts = result_counts(rows)
    return {f"n_{v.replace(' ', '_')}_results": counts[v] for v in claims.VERDICTS}


def not_compared_by_family(rows: list[Row]) -> dict[str, dict]:
    """Comparability family name -> {"values": how many of the paper's values of the chapter it holds (each once,
    however often printed), "orderings": Counter of the verdicts of the relations the paper states for them
    (`Row.relation_verdict`; relations that hold by construction are left out)}, for the families of
    `FAMILIES` (zeros too).  Read from the chapter's ledger lines, as the claims ledger counts them: only lines
    whose row declares its quantity not comparable (an entry with no row is not compared for want of one)."""
    out = {name: {"values": 0, "orderings": Counter()} for name in FAMILIES}
    seen = set()
    for line in section_lines(STEM, rows):
        key = measured_key(line)
        if line["kind"] == "setup" or key in seen or not line.get("not comparable"):
            continue                        # a setting, a printing counted already, or no row declaring it
        family = comparability.family_of(key)
        if family is None or family.name not in out:
            continue
        seen.add(key)
        out[family.name]["values"] += 1
        if line.get("relation verdict"):
            out[family.name]["orderings"][line["relation verdict"]] += 1
    return out


def family_glue(rows: list[Row]) -> dict:
    """Glue name -> text for the prose: each family's reason (`reason_<key>`, from `reporting.comparability`,
    never typed in the chapter) and how many values it holds (`n_nc_<key>`); keys are the family names with
    underscores ("gradient_noise_traces")."""
    counted = not_compared_by_family(rows)
    out = {}
    for name in FAMILIES:
        key = name.replace("-", "_").replace(" ", "_")
        out[f"reason_{key}"] = comparability.reason_of(name)
        out[f"n_nc_{key}"] = counted[name]["values"]
    return out


def _choice(label: str) -> str:
    """A selector's choice as prose: one arm, or each stratum's arm in parentheses."""
    return f"({label})" if ":" in label else label


def _counts_text(counts) -> str:
    parts = [f"{counts[v]} {v}" for v in claims.VERDICTS if counts[v]]
    return ", ".join(parts) if parts else "none"


def _families_text(counted: dict) -> str:
    """'gradient-noise traces (12), gain lower bounds (8), gradient-noise regret (6): the paper leaves its scale
    undefined; selector calls and costs (30): another unit or another design': the families grouped by the basis
    `reporting.comparability` declares for them."""
    by_basis: dict[str, list[str]] = {}
    for name in FAMILIES:
        if counted[name]["values"]:
            basis = next(f.basis for f in comparability.FAMILIES if f.name == name)
            by_basis.setdefault(basis, []).append(f"{name} ({counted[name]['values']})")
    return "; ".join(f"{', '.join(names)}: {basis}" for basis, names in by_basis.items())


def findings(rows: list[Row], three: dict, two: dict, sweep_rows: list[dict], sufficient: dict, delta: float,
             scan) -> Findings:
    """The result box (what holds, what does not, what is impossible or open) and two landing bullets.

    `three` and `two` are the three- and two-action records (`action_support.three_action_record`,
    `two_action_record`), `scan` the root-policy scan (`scan.policy_scan`)."""
    g = sweep_glue(sweep_rows, sufficient)
    sel2, sel3 = ({k: _choice(v) for k, v in rec["selected"].items()} for rec in (two, three))
    counts = result_counts(rows)
    counted = not_compared_by_family(rows)
    orderings = sum((c["orderings"] for c in counted.values()), Counter())
    n_not_compared = sum(c["values"] for c in counted.values())
    compared = Counter({v: n for v, n in counts.items() if v != claims.NOT_COMPARED})
    adverse = [r for r in sweep_rows if r["map"] != "semantic"]
    wrong, runs = sum(r["family-wise false selections"] for r in adverse), sum(r["repetitions"] for r in adverse)
    below = "below" if g["false_upper"] <= delta else "not below"
    within = g["false_upper"] <= delta
    rises = g["cert_last"] > g["cert_first"]
    n_cont = int((scan["noise argmin"] == "continuation_only").sum())
    three = _three_action_verdict(rows)
    n_inc = counts[claims.INCONCLUSIVE]
    statements = [
        Statement(f"The certificate keeps Theorem 1's promise: in the near-zero and negative covariance regimes "
                  f"{wrong:,} of {runs:,} calibrations select a coupling whose exact gain is not positive (the "
                  f"largest rate's exact upper 95% bound is {g['false_upper']:.4f}, {below} delta = {delta:g}).",
                  relation_verdict(within)),
        Statement(f"The certification rate {'grows' if rises else 'does not grow'} from {g['cert_first']:.3f} at "
                  f"{g['n_first']} to {g['cert_last']:.3f} at {g['n_last']} calibration groups per stratum.",
                  relation_verdict(rises)),
        Statement(f"With two actions RV-Select picks {sel2['rv']} and Oracle-Select {sel2['oracle']}.",
                  relation_verdict(sel2["rv"] == sel2["oracle"] == FULL_CHOICE)),
        Statement(f"With three actions OSCC-Select picks {sel3['oscc']}, RV-Select {sel3['rv']} and Oracle-Select "
                  f"{sel3['oracle']}, where the paper's OSCC-Select picks continuation-only coupling, and "
                  f"continuation-only coupling minimises the noise for {n_cont} of the {len(scan)} root policies we "
                  "scan.", relation_verdict(sel3["oscc"] == CONTINUATION_CHOICE)),
        Statement(f"The orderings the paper states for the three-action rows (OSCC-Select's noise trace below "
                  f"RV-Select's, its contrast variance above) {three[1]}.", three[0]),
        Statement(f"Of the paper's measured selector values whose size we compare, {_counts_text(compared)}.",
                  claims.REPRODUCED if compared.get(claims.REPRODUCED, 0) == sum(compared.values())
                  else claims.NOT_REPRODUCED),
        Statement(f"{n_not_compared} of the paper's values are not compared in size ({_families_text(counted)}), "
                  f"and of the orderings and signs it states for them {_counts_text(orderings)}.", OPEN)]
    if n_inc:
        statements.append(Statement(f"{n_inc} size comparison{' is' if n_inc == 1 else 's are'} inconclusive.",
                                    claims.INCONCLUSIVE))
    landing = (f"Selector: {wrong:,} of {runs:,} calibrations in the adverse covariance regimes select a coupling "
               f"that does not help (upper 95% bound {g['false_upper']:.4f}, {below} delta = {delta:g}), as "
               f"Theorem 1 promises; certification grows from {g['cert_first']:.3f} to {g['cert_last']:.3f} over "
               f"{g['n_first']} to {g['n_last']} groups per stratum.",
               f"With three actions OSCC-Select picks {sel3['oscc']} and Oracle-Select {sel3['oracle']}, not the "
               f"paper's continuation-only coupling, which minimises the noise for {n_cont} of {len(scan)} scanned "
               f"root policies.")
    return Findings.filed(statements, landing, counts=tally_text(chapter_tally(STEM, rows)))


#: How a selection record names full coupling (the paper: "all two-action selectors choose full coupling") and
#: continuation-only coupling (the paper: with three actions "OSCC-Select chooses continuation-only coupling").
FULL_CHOICE, CONTINUATION_CHOICE = "full", "continuation_only"
#: The three-action rows whose orderings the paper's sentences state (`action_support.STATED_THREE`).
THREE_ACTION_ROWS = ("multi_action.3_actions.oscc_select.gradient_noise_trace",
                     "multi_action.3_actions.oscc_select.contrast_variance")


def _three_action_verdict(rows: list[Row]) -> tuple[str, str]:
    """(the verdict, a phrase) of the orderings the paper states for the three-action rows, judged on our exact
    values: reproduced when all hold, not reproduced when one fails."""
    found = [r for r in rows if r.claim_id in THREE_ACTION_ROWS and r.primary and r.relation]
    held = all(r.relation_holds for r in found) and bool(found)
    return relation_verdict(held), ("hold on our exact values" if held else "do not all hold on our exact values")
