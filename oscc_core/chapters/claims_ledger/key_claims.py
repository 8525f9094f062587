"""The landing page's opening: a three-sentence verdict and a table of the paper's key claims.

Both are written from the ledger's lines and counts alone (the verdicts, our values and intervals, the exact
values and the relations the rows declared), so they say what the chapters measured and change when a chapter's
numbers change.  The key claims are the abstract's headline numbers and one claim per later question (learning,
transfer), chosen by what the paper stresses, not by their verdicts; beside them, the guarantees the paper
states (the audit, Theorem 1's false-selection bound, zero leakage, Proposition 3), so that a reader who skims
the table sees what holds as well as what does not.
"""
from __future__ import annotations

import html
from collections import Counter

from oscc_core.reporting import claims, comparability
from oscc_core.reporting.tables import interval_text, significant_text

#: (claim id, what the row is called on the landing page), in the order of the paper's argument.
KEY_CLAIMS = (
    ("abstract.independent.contrast_variance", "Contrast variance, independent rollouts (chips², all roots)"),
    ("abstract.cp_grpo.contrast_variance", "Contrast variance, full coupling CP-GRPO (chips², all roots)"),
    ("abstract.cp_grpo.variance_reduction", "Variance reduction by full coupling (%)"),
    ("abstract.oscc_select.gradient_noise_trace", "Gradient-noise trace of OSCC-Select, three actions"),
    ("abstract.calibration.certification_rate_2048", "Certification rate, 2,048 calibration groups"),
    ("measured_solver.cp_grpo_paired.exploitability", "Leduc exploitability of CP-GRPO at the paper's budget (chips)"),
    ("transfer_text.kuhn.cp_grpo.variance_ratio", "Kuhn: variance ratio of the coupling frozen on Leduc"),
    ("measured_transfer.kuhn.cp_grpo_paired.contrast_variance", "Kuhn: contrast variance of CP-GRPO (chips²)"),
)
#: The paper's guarantees (claim id, label), in the order of its argument: what a reader should see holds or not.
GUARANTEES = (
    ("text_rootbudget.safety.rejected_groups_per_condition",
     "Audit: injected groups rejected per deliberate violation (five violations)"),
    ("method_obs.observation_audit.opponent_card_exposures", "Observation audit: opponent-card exposures"),
    ("calibration.2048.false_selection_rate", "Theorem 1: false-selection rate, 2,048 calibration groups (δ = 0.05)"),
    ("measured_transfer.kuhn.cp_grpo_paired.leakage_violations", "Kuhn: leakage violations of CP-GRPO's checkpoints"),
)
#: Proposition 3's identity has no paper number: its row reads the gradient-noise chapter's identity checks.
PROPOSITION_3 = ("Proposition 3: gradient noise = Σ ⟨g_i, g_j⟩ Σ_ij (identity, exact and sampled)",
                 "03_gradient_noise", "proposition_3")
#: The key claims the verdict's second and third sentences read.
REDUCTION, INDEPENDENT, COUPLED = KEY_CLAIMS[2][0], KEY_CLAIMS[0][0], KEY_CLAIMS[1][0]
LEARNING = KEY_CLAIMS[5][0]
#: Beyond this factor a deviation reads as "N times", within it as a percentage.
TIMES_AFTER = 2.0


def key_lines(ledger: list[dict]) -> list[dict]:
    """The ledger's lines of the key claims, in KEY_CLAIMS order; stops on a key claim the ledger lacks."""
    by_id = {r["id"]: r for r in ledger}
    missing = [cid for cid, _ in KEY_CLAIMS if cid not in by_id]
    if missing:
        raise ValueError(f"key claims missing from the ledger: {', '.join(missing)}.")
    return [by_id[cid] for cid, _ in KEY_CLAIMS]


def number(x) -> str:
    """A value as the key-claims table shows it (four significant figures; counts whole; none as a dash)."""
    if x is None or isinstance(x, str):
        return "—" if x is None else x
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else significant_text(float(x))


def ours_cell(line: dict) -> str:
    """Our value with its 95% interval, or alone where it has none (an exact value, a count)."""
    if line.get("interval") and line.get("ours") is not None:
        return f"{number(line['ours'])} {interval_text(*line['interval'])}"
    return number(line["ours"])


def deviation_phrase(paper: float, ours: float) -> str:
    """How far ours lies from the paper's value: "10.2 times the paper's", "33% lower than the paper's", or
    "the paper's within 5% of ours" (the verdict rule's size test)."""
    if paper == 0 or ours is None:
        return "not comparable in size"
    ratio = ours / paper
    if ratio >= TIMES_AFTER or 0 < ratio <= 1 / TIMES_AFTER:
        return f"{significant_text(ratio, 3)} times the paper's"
    if abs(paper - ours) <= claims.RELATIVE_TOLERANCE * abs(ours):       # the verdict rule's size test
        return "the paper's within 5% of ours"
    deviation = ratio - 1
    return f"{abs(deviation):.0%} {'higher' if deviation > 0 else 'lower'} than the paper's"


def size_phrase(line: dict) -> str:
    """What the size test found: where the paper's value lies against our interval, or ours against the paper's
    (a count printed as text, "512/512", is equal or not)."""
    paper, interval = line["paper"], line.get("interval")
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (paper, line["ours"]))
    if not numbers or paper == line["ours"]:
        same = str(paper) == str(line["ours"]) or (numbers and float(paper) == float(line["ours"]))
        return "ours equals the paper's" if same else f"ours is {number(line['ours'])}"
    if interval and isinstance(paper, (int, float)):
        inside = interval[0] <= paper <= interval[1]
        return f"the paper's value lies {'inside' if inside else 'outside'} our 95% interval"
    return f"ours is {deviation_phrase(paper, line['ours'])}"


def relation_phrase(line: dict) -> str | None:
    """The relation the paper states, and whether it holds (and is resolved) on our numbers."""
    if not line.get("relation"):
        return None
    if not line.get("relation holds"):
        return f"“{line['relation']}” fails"
    resolved = line.get("relation resolved")
    return f"“{line['relation']}” holds" + ("" if resolved in (None, True) else ", unresolved at 95%")


def readings_phrase(line: dict) -> str | None:
    """The reading the verdict rests on, and how the other readings' verdicts differ (counted by verdict: a
    quantity may have a dozen readings; the ledger lists each)."""
    readings = line.get("readings") or ()
    if line.get("reading dependent") and readings:
        others = Counter(r["verdict"] for r in readings if r["reading"] != line.get("reading"))
        lead = f"under the reading '{line['reading']}'" if line.get("reading") else "readings differ"
        return f"{lead}; other readings: " + ", ".join(f"{n} {v}" for v, n in others.items())
    return f"reading: {line['reading']}" if line.get("reading") else None


def why(line: dict) -> str:
    """One line on why the key claim got its verdict, from the ledger line's own fields."""
    verdict = line.get("verdict")
    if verdict is None:
        return "its chapter has not been run"
    if verdict == claims.NOT_COMPARED:
        family = comparability.family_of(line["id"]) if line.get("not comparable") else None
        if family is None:
            return line.get("reason") or "not compared"
        relation = relation_phrase(line)
        return f"{family.name}: size not compared ({family.basis})" + (f"; {relation}" if relation else "")
    if verdict == claims.IMPOSSIBLE:
        readings = len(line.get("readings") or ()) or 1
        return (f"the game's rules bound it below the paper's value under {'all ' if readings > 1 else ''}"
                f"{readings} reading{'s' if readings > 1 else ''} of the quantity its chapter computes")
    parts = [f"exact {number(line['exact'])}"] if line.get("exact") is not None else []
    if verdict != claims.DEPENDS:
        parts.append(size_phrase(line))
    relation = relation_phrase(line)
    if relation:
        parts.append(relation)
    readings = readings_phrase(line)
    if readings:
        parts.append(readings)
    return "; ".join(parts)


def verdict_cell(line: dict) -> str:
    """The verdict, marked where it is the paper's fixed reading's and another reading gives another."""
    verdict = line.get("verdict") or "—"
    return verdict + (" (depends on the reading)" if line.get("reading dependent") and verdict != claims.DEPENDS
                      else "")


#: The longest "why" a key-claims row shows (about four lines of its column); the whole text is its tooltip.
SHORT_WHY = 200


def _row(cid: str, label: str, line: dict) -> str:
    text = why(line)
    short = text if len(text) <= SHORT_WHY else text[:SHORT_WHY].rsplit(" ", 1)[0] + " …"
    cells = (f'<td title="{html.escape(cid, quote=True)}">{html.escape(label)}</td>',
             f"<td>{html.escape(claims.format_value(line['paper']))}</td>",
             f"<td>{html.escape(ours_cell(line))}</td>",
             f"<td>{html.escape(verdict_cell(line))}</td>",
             f'<td title="{html.escape(text, quote=True)}">{html.escape(short)}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


def proposition3_line(found: dict[str, dict]) -> dict | None:
    """Proposition 3 as a key-claims line: the gradient-noise chapter's identity checks (rows without a paper
    number), reproduced when every one holds; None when that chapter has not been run."""
    label, stem, table = PROPOSITION_3
    rows = ((found.get(stem) or {}).get("tables") or {}).get(table)
    if not rows:
        return None
    held = sum(r.get("verdict") == claims.REPRODUCED for r in rows)
    return {"paper": "an identity", "ours": f"{held} of {len(rows)} checks hold", "interval": None, "exact": None,
            "verdict": claims.REPRODUCED if held == len(rows) else claims.NOT_REPRODUCED,
            "reason": (f"{held} of {len(rows)} identity checks hold: the exact residual is below 1e-12 and each "
                       "sampled check's interval covers it")}


def key_claims_html(ledger: list[dict], found: dict[str, dict] | None = None) -> str:
    """The key claims as an HTML table: claim | paper | ours [95% interval] | verdict | why (claim id as the
    claim's tooltip), the paper's headline claims first, then its guarantees (`GUARANTEES`, and Proposition 3
    from the gradient-noise chapter's results in `found`)."""
    head = "".join(f"<th>{h}</th>" for h in ("claim", "paper", "ours [95% interval]", "verdict", "why"))
    body = [_row(cid, label, line) for (cid, label), line in zip(KEY_CLAIMS, key_lines(ledger))]
    by_id = {r["id"]: r for r in ledger}
    body.append('<tr class="oscc-key-claims-group"><td colspan="5"><strong>The guarantees the paper states'
                "</strong></td></tr>")
    body += [_row(cid, label, by_id[cid]) for cid, label in GUARANTEES if cid in by_id]
    prop3 = proposition3_line(found or {})
    if prop3 is not None:
        cells = (f"<td>{html.escape(PROPOSITION_3[0])}</td>", f"<td>{html.escape(prop3['paper'])}</td>",
                 f"<td>{html.escape(prop3['ours'])}</td>", f"<td>{html.escape(prop3['verdict'])}</td>",
                 f"<td>{html.escape(prop3['reason'])}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="oscc-key-claims"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def verdict_text(counted: dict, ledger: list[dict]) -> str:
    """Three sentences: how the paper's measured values fare, what the coupling does to the contrast variance,
    and what it does for learning, each from the ledger."""
    return " ".join((counts_sentence(counted), coupling_sentence(ledger), learning_sentence(ledger)))


def counts_sentence(counted: dict) -> str:
    m = counted["measurements"]
    compared = sum(m.values()) - m[claims.NOT_COMPARED]
    dependent = counted.get("reading dependent", 0)
    return (f"Of the {sum(m.values()):,} values the paper measures we compare {compared:,} in size: "
            f"{m[claims.REPRODUCED]:,} are reproduced, {m[claims.PARTLY]:,} hold only in direction (the relation "
            f"the paper states holds, the size does not), {m[claims.NOT_REPRODUCED]:,} are not reproduced, "
            f"{m[claims.INCONCLUSIVE]:,} are inconclusive, {m[claims.DEPENDS]:,} depend on the reading of the "
            f"paper's words and {m[claims.IMPOSSIBLE]:,} are impossible under the game's rules; {dependent:,} "
            f"verdicts of the whole ledger depend on the reading.")


def coupling_sentence(ledger: list[dict]) -> str:
    by_id = {r["id"]: r for r in ledger}
    red, ind, cp = by_id[REDUCTION], by_id[INDEPENDENT], by_id[COUPLED]
    if any(r["ours"] is None for r in (red, ind, cp)):
        return "The covariance chapter has not been run, so the coupling's effect is not stated here."
    lowers = red["interval"][0] > 0 if red.get("interval") else red["ours"] > 0
    verb = "lowers" if lowers else "does not resolvably lower"
    return (f"Coupling the rollouts {verb} the variance of an action contrast: by {number(red['ours'])}% over all "
            f"roots (exact {number(red['exact'])}%) against the paper's {claims.format_value(red['paper'])}% "
            f"(independent rollouts {number(ind['ours'])} chips² against the paper's "
            f"{claims.format_value(ind['paper'])}, full coupling {number(cp['ours'])} against "
            f"{claims.format_value(cp['paper'])}).")


def learning_sentence(ledger: list[dict]) -> str:
    line = next(r for r in ledger if r["id"] == LEARNING)
    if line["ours"] is None:
        return "The solver chapter has not been run, so the learning result is not stated here."
    if line.get("relation holds") and line.get("relation resolved"):
        rank = "it is the best learned arm, resolved at 95%"
    elif line.get("relation holds"):
        rank = "it is the best learned arm on average, but not resolved at 95%"
    else:
        rank = "it is not the best learned arm"
    return (f"For learning, CP-GRPO's exact Leduc exploitability at the paper's budget is {number(line['ours'])} "
            f"chips, {deviation_phrase(line['paper'], line['ours'])} {claims.format_value(line['paper'])}, and {rank} "
            f"({line['verdict']}).")
